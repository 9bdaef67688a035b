#include "log/format_common.h"

#include <cmath>

namespace mfu::log_internal {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view SkipBlanks(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) {
    ++i;
  }
  return s.substr(i);
}

// "YYYY-MM-DD HH:MM:SS" followed by ",fff"/".ffffff": its length, 0 if not.
size_t TimestampLength(std::string_view s) {
  if (s.size() < 19 || !IsDigit(s[0]) || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':') {
    return 0;
  }
  size_t n = 19;
  if (n < s.size() && (s[n] == ',' || s[n] == '.')) {
    ++n;
    while (n < s.size() && IsDigit(s[n])) {
      ++n;
    }
  }
  return n;
}

double TimestampOf(std::string_view s) {
  std::optional<double> t = ParseLogTimestamp(s);
  return t ? *t : kLogNaN;
}

// "2025-03-04 00:44:44,441 - root - INFO - " (Python logging's default
// "%(asctime)s - %(name)s - %(levelname)s - %(message)s").
bool StripPythonLogging(LoggerPrefix& t) {
  size_t n = TimestampLength(t.message);
  if (n == 0 || t.message.substr(n, 3) != " - ") {
    return false;
  }
  size_t name_end = t.message.find(" - ", n + 3);
  if (name_end == std::string_view::npos) {
    return false;
  }
  size_t level_end = t.message.find(" - ", name_end + 3);
  if (level_end == std::string_view::npos || level_end - name_end > 12) {
    return false;
  }
  t.time_s = TimestampOf(t.message.substr(0, n));
  t.message = t.message.substr(level_end + 3);
  return true;
}

// ezpz: "[2025-09-11 14:09:46,954794][I][components/metrics:437:log] ".
bool StripEzpz(LoggerPrefix& t) {
  if (t.message.size() < 2 || t.message[0] != '[') {
    return false;
  }
  size_t n = TimestampLength(t.message.substr(1));
  if (n == 0 || t.message.substr(1 + n, 2) != "][") {
    return false;
  }
  size_t end = t.message.find("] ", 1 + n + 2);
  if (end == std::string_view::npos) {
    return false;
  }
  t.time_s = TimestampOf(t.message.substr(1, n));
  t.message = t.message.substr(end + 2);
  return true;
}

// HF: "[INFO|trainer.py:2128] 2024-07-17 00:18:20,620 >> ".
bool StripHf(LoggerPrefix& t) {
  if (t.message.size() < 2 || t.message[0] != '[') {
    return false;
  }
  size_t bar = t.message.find('|');
  size_t close = t.message.find("] ");
  if (bar == std::string_view::npos || close == std::string_view::npos || bar > close || bar > 10) {
    return false;
  }
  std::string_view rest = t.message.substr(close + 2);
  size_t n = TimestampLength(rest);
  if (n == 0 || rest.substr(n, 3) != " >>") {
    return false;
  }
  t.time_s = TimestampOf(rest.substr(0, n));
  t.message = SkipBlanks(rest.substr(n + 3));
  return true;
}

// absl/glog: "I0731 09:47:48.898259     514 file.py:493] ".
bool StripGlog(LoggerPrefix& t) {
  std::string_view s = t.message;
  if (s.size() < 22 || (s[0] != 'I' && s[0] != 'W' && s[0] != 'E' && s[0] != 'F')) {
    return false;
  }
  for (size_t i = 1; i <= 4; ++i) {
    if (!IsDigit(s[i])) {
      return false;
    }
  }
  if (s[5] != ' ' || s[8] != ':' || s[11] != ':') {
    return false;
  }
  size_t close = s.find("] ");
  if (close == std::string_view::npos || close > 120) {
    return false;
  }
  t.message = s.substr(close + 2);
  return true;
}

}  // namespace

LoggerPrefix StripLoggerPrefix(std::string_view text) {
  LoggerPrefix t{SkipBlanks(text), kLogNaN};
  for (int round = 0; round < 4; ++round) {
    if (t.message.starts_with("[titan] ")) {
      t.message = t.message.substr(8);
      continue;
    }
    if (StripPythonLogging(t) || StripEzpz(t) || StripHf(t) || StripGlog(t)) {
      t.message = SkipBlanks(t.message);
      continue;
    }
    break;
  }
  return t;
}

std::optional<std::string_view> After(std::string_view text, std::string_view key) {
  size_t at = text.find(key);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  return SkipBlanks(text.substr(at + key.size()));
}

std::string_view Token(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '|' || c == ')' || c == ']' || (c == ',' && !(i + 1 < text.size() && IsDigit(text[i + 1])))) {
      break;
    }
    ++i;
  }
  return text.substr(0, i);
}

std::optional<double> NumberAfter(std::string_view text, std::string_view key) {
  std::optional<std::string_view> rest = After(text, key);
  if (!rest) {
    return std::nullopt;
  }
  return ParseLogNumber(Token(*rest));
}

std::optional<int64_t> AsInt(std::optional<double> value) {
  if (!value || !std::isfinite(*value) || *value < 0 || *value > 9007199254740992.0 || !IsWhole(*value)) {
    return std::nullopt;
  }
  return static_cast<int64_t>(*value);
}

std::optional<int64_t> IntAfter(std::string_view text, std::string_view key) {
  return AsInt(NumberAfter(text, key));
}

void FillThroughputScopes(TimelineBuilder& out) {
  int64_t world = out.header().world_size;
  if (world <= 0) {
    return;
  }
  double n = static_cast<double>(world);
  for (LogStep& s : out.mutable_steps()) {
    if (std::isnan(s.tokens_per_s) && !std::isnan(s.tokens_per_s_per_gpu)) {
      s.tokens_per_s = s.tokens_per_s_per_gpu * n;
    } else if (std::isnan(s.tokens_per_s_per_gpu) && !std::isnan(s.tokens_per_s)) {
      s.tokens_per_s_per_gpu = s.tokens_per_s / n;
    }
  }
}

void FillStepTimesFromTimestamps(TimelineBuilder& out, const std::vector<double>& attempt_start_time_s) {
  const LogStep* prev = nullptr;
  for (LogStep& s : out.mutable_steps()) {
    if (s.validation) {
      continue;
    }
    bool same_attempt = prev != nullptr && prev->attempt == s.attempt;
    if (std::isnan(s.step_time_s) && !std::isnan(s.time_s)) {
      if (same_attempt && !std::isnan(prev->time_s) && s.step > prev->step && s.time_s >= prev->time_s) {
        int64_t covered = s.step - prev->step;
        s.step_time_s = (s.time_s - prev->time_s) / static_cast<double>(covered);
        s.steps_covered = static_cast<int32_t>(covered < (1 << 30) ? covered : (1 << 30));
      } else if (!same_attempt && s.attempt >= 0 && static_cast<size_t>(s.attempt) < attempt_start_time_s.size()) {
        double start = attempt_start_time_s[static_cast<size_t>(s.attempt)];
        if (!std::isnan(start) && s.time_s >= start) {
          s.step_time_s = s.time_s - start;
        }
      }
    }
    prev = &s;
  }
}

}  // namespace mfu::log_internal
