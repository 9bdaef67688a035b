// Launcher prefixes, escape codes, tqdm redraws and logger prefixes
// (training-logs.md sec. 1). Every function here runs on every line of a
// many-GiB log, so each test is a byte comparison at a known position.

#include "log/log_line.h"

#include <cstring>
#include <limits>

namespace mfu::log_internal {
namespace {

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

size_t SkipSpaces(std::string_view text, size_t i) {
  while (i < text.size() && IsSpace(text[i]))
    ++i;
  return i;
}

// `srun -l`: "12: " (the task id, then ':' and a space or the end).
size_t SrunPrefix(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && i < 6 && IsDigit(text[i]))
    ++i;
  if (i == 0 || i >= text.size() || text[i] != ':')
    return 0;
  if (i + 1 < text.size() && text[i + 1] != ' ' && text[i + 1] != '\t')
    return 0;
  return i + 1;
}

// torchrun --tee: "[default3]:", "[rank0]:", "[trainer12]:": a name that
// starts with a letter and ends in the local rank, then "]:".
size_t TorchrunPrefix(std::string_view text) {
  if (text.size() < 4 || text[0] != '[' || !IsAlpha(text[1]))
    return 0;
  size_t i = 1;
  while (i < text.size() && i < 64 && (IsAlpha(text[i]) || IsDigit(text[i]) || text[i] == '_' || text[i] == '-'))
    ++i;
  if (i + 1 >= text.size() || text[i] != ']' || text[i + 1] != ':' || !IsDigit(text[i - 1]))
    return 0;
  return i + 2;
}

// nemo-run / TorchX local: the role name's last 12 characters, '/', the
// replica id, a space ("ining-demo/0 "). The name must hold a non-digit so
// that "25/100 " is not taken for one.
size_t NemoRunPrefix(std::string_view text) {
  size_t i = 0;
  bool non_digit = false;
  while (i < text.size() && i < 12 && text[i] != '/' && !IsSpace(text[i]) && text[i] != '[' && text[i] != '(') {
    non_digit |= !IsDigit(text[i]);
    ++i;
  }
  if (i == 0 || !non_digit || i >= text.size() || text[i] != '/')
    return 0;
  size_t j = i + 1;
  while (j < text.size() && IsDigit(text[j]))
    ++j;
  if (j == i + 1 || (j < text.size() && text[j] != ' '))
    return 0;
  return j;
}

// Ray: "(pretraining, pid=4112) " or "(name pid=1, ip=10.0.0.1) ".
size_t RayPrefix(std::string_view text) {
  if (text.empty() || text[0] != '(')
    return 0;
  size_t close = text.find(')');
  if (close == std::string_view::npos || close > 160)
    return 0;
  std::string_view inside = text.substr(1, close - 1);
  if (inside.find("pid=") == std::string_view::npos)
    return 0;
  return close + 1;
}

// pdsh: "worker-0: ", "node001: ", "ip-10-0-1-2: ": a host name that starts
// with a letter and ends in a digit, then ": ".
size_t PdshPrefix(std::string_view text) {
  if (text.empty() || !IsAlpha(text[0]))
    return 0;
  size_t i = 1;
  while (i < text.size() && i < 64 &&
         (IsAlpha(text[i]) || IsDigit(text[i]) || text[i] == '-' || text[i] == '.' || text[i] == '_'))
    ++i;
  if (i + 1 >= text.size() || text[i] != ':' || text[i + 1] != ' ' || !IsDigit(text[i - 1]))
    return 0;
  return i + 1;
}

// A tqdm bar segment: "45%|####      | 9/20 [00:01<00:02,  4.5it/s]".
bool IsProgressBar(std::string_view segment) {
  return FindLog(segment, "it/s]") != std::string_view::npos || FindLog(segment, "s/it]") != std::string_view::npos ||
         FindLog(segment, "%|") != std::string_view::npos;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Reads exactly `n` digits at `text[i]`.
bool Digits(std::string_view text, size_t i, size_t n, int64_t& value) {
  if (i + n > text.size())
    return false;
  value = 0;
  for (size_t k = 0; k < n; ++k) {
    if (!IsDigit(text[i + k]))
      return false;
    value = value * 10 + (text[i + k] - '0');
  }
  return true;
}

// "HH:MM:SS" at `i`, then an optional ".ffffff" / ",fff" fraction; returns
// the end position, 0 on mismatch.
size_t ClockAt(std::string_view text, size_t i, double& seconds) {
  int64_t hh = 0;
  int64_t mm = 0;
  int64_t ss = 0;
  if (!Digits(text, i, 2, hh) || i + 2 >= text.size() || text[i + 2] != ':' || !Digits(text, i + 3, 2, mm) ||
      i + 5 >= text.size() || text[i + 5] != ':' || !Digits(text, i + 6, 2, ss))
    return 0;
  if (hh > 23 || mm > 59 || ss > 60)
    return 0;
  size_t end = i + 8;
  double fraction = 0;
  if (end + 1 < text.size() && (text[end] == '.' || text[end] == ',') && IsDigit(text[end + 1])) {
    double scale = 0.1;
    ++end;
    while (end < text.size() && IsDigit(text[end])) {
      fraction += scale * (text[end] - '0');
      scale /= 10;
      ++end;
    }
  }
  seconds = static_cast<double>(hh * 3600 + mm * 60 + ss) + fraction;
  return end;
}

// A timestamp at the start of `text`: its length, 0 when none.
size_t TimestampAt(std::string_view text, double& time_s) {
  int64_t y = 0;
  int64_t mo = 0;
  int64_t d = 0;
  size_t clock = 0;
  if (Digits(text, 0, 4, y) && text.size() > 10 && text[4] == '-' && Digits(text, 5, 2, mo) && text[7] == '-' &&
      Digits(text, 8, 2, d) && (text[10] == ' ' || text[10] == 'T')) {
    clock = 11;
  } else if (Digits(text, 0, 4, y) && Digits(text, 4, 2, mo) && Digits(text, 6, 2, d) && text.size() > 8 &&
             text[8] == ' ') {
    clock = 9;
  } else {
    return 0;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31)
    return 0;
  double seconds = 0;
  size_t end = ClockAt(text, clock, seconds);
  if (end == 0)
    return 0;
  if (end < text.size() && text[end] == 'Z')
    ++end;
  time_s = static_cast<double>(DaysFromCivil(y, mo, d) * 86400) + seconds;
  return end;
}

char LevelLetter(std::string_view word) {
  word = TrimLog(word);
  if (word.empty())
    return 0;
  static constexpr std::string_view kLevels[] = {"INFO", "WARNING", "WARN", "ERROR", "DEBUG", "CRITICAL", "FATAL"};
  if (word.size() == 1)
    return std::strchr("IWEDCF", word[0]) != nullptr ? word[0] : 0;
  for (std::string_view level : kLevels) {
    if (word == level)
      return level[0];
  }
  return 0;
}

// A "[...]" group after a bracketed timestamp that is part of the logger
// prefix: a level ("[INFO]", "[I]"), a source location ("[timer.py:264:stop]")
// or a rank ("[rank-7/8]"). "[Rank 0]" is the message's own (DeepSpeed
// log_dist) and stays.
bool IsLoggerGroup(std::string_view inside, char& level) {
  if (char l = LevelLetter(inside)) {
    level = l;
    return true;
  }
  if (StartsWith(inside, "rank-"))
    return true;
  size_t colon = inside.find(':');
  return colon != std::string_view::npos && colon + 1 < inside.size() && IsDigit(inside[colon + 1]) &&
         inside.find(' ') == std::string_view::npos;
}

// "[<ts>]" then logger groups, then an optional ": ".
bool BracketedTimestamp(std::string_view text, LoggerPrefix& out) {
  double time_s = 0;
  size_t n = TimestampAt(text.substr(1), time_s);
  if (n == 0 || 1 + n >= text.size() || text[1 + n] != ']')
    return false;
  size_t i = 2 + n;
  while (true) {
    size_t j = SkipSpaces(text, i);
    if (j >= text.size() || text[j] != '[')
      break;
    size_t close = text.find(']', j);
    if (close == std::string_view::npos || !IsLoggerGroup(text.substr(j + 1, close - j - 1), out.level))
      break;
    i = close + 1;
  }
  i = SkipSpaces(text, i);
  if (i + 1 < text.size() && text[i] == ':' && text[i + 1] == ' ')
    i = SkipSpaces(text, i + 1);
  out.message = text.substr(i);
  out.time_s = time_s;
  return true;
}

// Python logging's "<ts> - name - LEVEL - message" (torchtitan).
bool DashedLogger(std::string_view text, LoggerPrefix& out) {
  double time_s = 0;
  size_t n = TimestampAt(text, time_s);
  if (n == 0 || !StartsWith(text.substr(n), " - "))
    return false;
  size_t name_end = text.find(" - ", n + 3);
  if (name_end == std::string_view::npos)
    return false;
  size_t level_end = text.find(" - ", name_end + 3);
  if (level_end == std::string_view::npos)
    return false;
  out.level = LevelLetter(text.substr(name_end + 3, level_end - name_end - 3));
  if (out.level == 0)
    return false;
  out.message = text.substr(level_end + 3);
  out.time_s = time_s;
  return true;
}

// absl/glog: "I0731 09:47:48.898259     514 file.py:123] message".
bool AbslLogger(std::string_view text, LoggerPrefix& out) {
  int64_t mo = 0;
  int64_t d = 0;
  if (text.size() < 16 || std::strchr("IWEF", text[0]) == nullptr || !Digits(text, 1, 2, mo) ||
      !Digits(text, 3, 2, d) || text[5] != ' ' || mo < 1 || mo > 12 || d < 1 || d > 31)
    return false;
  double seconds = 0;
  size_t end = ClockAt(text, 6, seconds);
  if (end == 0)
    return false;
  size_t close = text.find("] ", end);
  if (close == std::string_view::npos || close > end + 120)
    return false;
  out.level = text[0];
  out.message = text.substr(close + 2);
  out.time_s = static_cast<double>(DaysFromCivil(1970, mo, d) * 86400) + seconds;
  out.year_missing = true;
  return true;
}

bool BracketLogger(std::string_view text, LoggerPrefix& out) {
  if (BracketedTimestamp(text, out))
    return true;
  size_t close = text.find(']');
  if (close == std::string_view::npos || close > 200)
    return false;
  std::string_view inside = text.substr(1, close - 1);
  std::string_view rest = text.substr(close + 1);
  // "[NeMo I 2025-03-07 22:33:56 tokenizer_utils:224] "
  if (ConsumePrefix(inside, "NeMo ") && inside.size() > 2 && inside[1] == ' ') {
    out.level = inside[0];
    double time_s = 0;
    if (TimestampAt(inside.substr(2), time_s) > 0)
      out.time_s = time_s;
    out.message = TrimLog(rest);
    return true;
  }
  // "[INFO 2020-02-06 19:53:56] " (DeepSpeed 2020)
  size_t space = inside.find(' ');
  double time_s = 0;
  if (space != std::string_view::npos && LevelLetter(inside.substr(0, space)) != 0 &&
      TimestampAt(inside.substr(space + 1), time_s) == inside.size() - space - 1) {
    out.level = LevelLetter(inside.substr(0, space));
    out.time_s = time_s;
    out.message = TrimLog(rest);
    return true;
  }
  // "[INFO|trainer.py:2128] 2024-07-17 00:18:20,620 >> " (HF)
  size_t bar = inside.find('|');
  if (bar != std::string_view::npos && LevelLetter(inside.substr(0, bar)) != 0) {
    out.level = LevelLetter(inside.substr(0, bar));
    rest = TrimLog(rest);
    size_t n = TimestampAt(rest, time_s);
    if (n > 0) {
      out.time_s = time_s;
      rest = TrimLog(rest.substr(n));
    }
    ConsumePrefix(rest, ">> ");
    out.message = rest;
    return true;
  }
  // "[titan] <ts> - root - INFO - "
  if (inside == "titan")
    return DashedLogger(TrimLog(rest), out);
  return false;
}

}  // namespace

size_t TimestampLength(std::string_view text, double& time_s) {
  return TimestampAt(text, time_s);
}

std::string_view TrimLog(std::string_view text) {
  size_t b = 0;
  size_t e = text.size();
  while (b < e && IsSpace(text[b]))
    ++b;
  while (e > b && IsSpace(text[e - 1]))
    --e;
  return text.substr(b, e - b);
}

size_t FindLog(std::string_view text, std::string_view needle) {
  if (needle.empty())
    return 0;
  const void* at = ::memmem(text.data(), text.size(), needle.data(), needle.size());
  return at == nullptr ? std::string_view::npos : static_cast<size_t>(static_cast<const char*>(at) - text.data());
}

bool ConsumeInt(std::string_view& text, int64_t& value) {
  size_t i = SkipSpaces(text, 0);
  size_t start = i;
  int64_t v = 0;
  while (i < text.size() && IsDigit(text[i])) {
    const int digit = text[i] - '0';
    if (v > (std::numeric_limits<int64_t>::max() - digit) / 10)
      return false;
    v = v * 10 + digit;
    ++i;
  }
  if (i == start)
    return false;
  value = v;
  text.remove_prefix(i);
  return true;
}

size_t LauncherPrefixLength(std::string_view text) {
  size_t n = SrunPrefix(text);
  if (n == 0)
    n = TorchrunPrefix(text);
  if (n == 0)
    n = RayPrefix(text);
  if (n == 0)
    n = NemoRunPrefix(text);
  if (n == 0)
    n = PdshPrefix(text);
  return n;
}

void StripAnsi(std::string_view text, std::string& out) {
  out.clear();
  size_t i = 0;
  while (i < text.size()) {
    const void* esc = std::memchr(text.data() + i, '\x1b', text.size() - i);
    size_t at = esc == nullptr ? text.size() : static_cast<size_t>(static_cast<const char*>(esc) - text.data());
    out.append(text.data() + i, at - i);
    if (at >= text.size())
      break;
    i = at + 1;
    if (i < text.size() && text[i] == '[') {
      ++i;
      while (i < text.size() && text[i] >= 0x30 && text[i] <= 0x3f)
        ++i;
      while (i < text.size() && text[i] >= 0x20 && text[i] <= 0x2f)
        ++i;
      if (i < text.size() && text[i] >= 0x40 && text[i] <= 0x7e)
        ++i;
    } else if (i < text.size()) {
      ++i;
    }
  }
}

std::string_view LastRedraw(std::string_view text) {
  std::string_view fallback;
  size_t end = text.size();
  while (true) {
    size_t cr = end == 0 ? std::string_view::npos : text.rfind('\r', end - 1);
    size_t begin = cr == std::string_view::npos ? 0 : cr + 1;
    std::string_view segment = text.substr(begin, end - begin);
    if (!TrimLog(segment).empty()) {
      if (!IsProgressBar(segment))
        return segment;
      if (fallback.empty())
        fallback = segment;
    }
    if (cr == std::string_view::npos)
      return fallback;
    end = cr;
  }
}

CleanLine CleanLogLine(std::string_view raw, int64_t line, std::string& scratch) {
  CleanLine out;
  out.raw = raw;
  out.line = line;
  std::string_view text = raw;
  while (!text.empty() && text.back() == '\r')
    text.remove_suffix(1);
  // memchr on an empty view may see a null data(): UB even for size 0.
  if (!text.empty() && std::memchr(text.data(), '\r', text.size()) != nullptr)
    text = LastRedraw(text);
  if (!text.empty() && std::memchr(text.data(), '\x1b', text.size()) != nullptr) {
    StripAnsi(text, scratch);
    text = scratch;
  }
  size_t begin = SkipSpaces(text, 0);
  size_t at = begin;
  for (int stacked = 0; stacked < 6 && at < text.size(); ++stacked) {
    size_t n = LauncherPrefixLength(text.substr(at));
    if (n == 0)
      break;
    at += n;
    out.rank = TrimLog(text.substr(begin, at - begin));
    at = SkipSpaces(text, at);
  }
  out.text = TrimLog(text.substr(at));
  return out;
}

LoggerPrefix StripLoggerPrefix(std::string_view text) {
  LoggerPrefix out;
  out.message = text;
  if (text.empty())
    return out;
  const char c = text[0];
  bool matched = false;
  if (c == '[')
    matched = BracketLogger(text, out);
  else if (IsDigit(c))
    matched = DashedLogger(text, out);
  else if (c == 'I' || c == 'W' || c == 'E' || c == 'F')
    matched = AbslLogger(text, out);
  if (!matched)
    out = LoggerPrefix{text};
  out.message = TrimLog(out.message);
  return out;
}

std::string EventDetail(std::string_view text, size_t max_chars) {
  text = TrimLog(text);
  if (text.size() > max_chars) {
    // Never cut a UTF-8 sequence in two.
    size_t n = max_chars;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80)
      --n;
    text = text.substr(0, n);
  }
  return std::string(text);
}

bool MatchFailureLine(const CleanLine& line, double time_s, TimelineBuilder& out) {
  std::string_view text = line.text;
  if (text.empty())
    return false;
  bool failure = false;
  switch (text[0]) {
    case 'T':
      failure = StartsWith(text, "Traceback (most recent call last)");
      break;
    case 'K':
      failure = text == "Killed" || StartsWith(text, "Killed ");
      break;
    case 't':
      failure = StartsWith(text, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError") ||
                StartsWith(text, "torch.OutOfMemoryError") || StartsWith(text, "torch.cuda.OutOfMemoryError");
      break;
    case 'R':
      failure = StartsWith(text, "RuntimeError: CUDA error") || StartsWith(text, "RuntimeError: NCCL");
      break;
    case 's':
      failure = StartsWith(text, "srun: error: ") || StartsWith(text, "slurmstepd: error: ");
      break;
    default:
      break;
  }
  if (!failure && (text[0] == '[' || text[0] == 'E'))
    failure = FindLog(text, "Watchdog caught collective operation timeout") != std::string_view::npos;
  if (!failure)
    return false;
  LogEvent event;
  event.kind = LogEventKind::kFailure;
  event.line = line.line;
  event.time_s = time_s;
  event.detail = EventDetail(text);
  out.AddEvent(std::move(event));
  return true;
}

}  // namespace mfu::log_internal
