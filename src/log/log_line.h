#pragma once

// Line cleaning shared by every log parser: what launchers and terminals add
// around a framework's text (training-logs.md sec. 1). Two layers:
//  - CleanLogLine: the launcher prefixes (`srun -l` "1: ", torchrun
//    "[default3]:" / "[rank0]:", nemo-run "ining-demo/0 ", Ray
//    "(pretraining, pid=4112) ", pdsh "worker-0: ", stacked in any order),
//    ANSI escape sequences, tqdm's `\r` redraws and a CRLF ending;
//  - StripLoggerPrefix: the logging prefix of the framework's logger, which
//    carries the line's timestamp (DeepSpeed, NeMo, torchtitan, ezpz, absl,
//    HF, the AMD Megatron fork).
// Neither allocates per line: results are views into the raw line or into a
// caller-owned scratch buffer reused across lines.

#include <cstdint>
#include <string>
#include <string_view>

#include "log/log_parser.h"

namespace mfu::log_internal {

// Cleans one physical line (`raw`, without its '\n'). `scratch` receives
// the text when escape sequences had to be cut out; the returned views
// point into `raw` or `scratch` and live until either changes. `text` is
// trimmed of surrounding whitespace; `rank` is the stacked launcher prefix
// as printed (e.g. "ining-demo/0 [default0]:"), trimmed, "" when none.
CleanLine CleanLogLine(std::string_view raw, int64_t line, std::string& scratch);

// The launcher prefix at the start of `text` (already without leading
// whitespace): its length including the separator and following spaces,
// 0 when `text` does not start with one.
size_t LauncherPrefixLength(std::string_view text);

// Removes ANSI escape sequences (CSI `ESC [ params final`, e.g. SGR
// `\x1b[36m`, and two-byte `ESC x`) from `text` into `out`.
void StripAnsi(std::string_view text, std::string& out);

// Of a line holding tqdm `\r` redraws, the last segment that holds log text
// (a segment that is not a progress bar), else the last non-blank one.
std::string_view LastRedraw(std::string_view text);

// A framework logger's prefix removed from a cleaned line.
struct LoggerPrefix {
  std::string_view message;   // the text after the prefix (the whole text when none)
  double time_s = kLogNaN;    // the prefix's timestamp, seconds since the epoch (UTC)
  char level = 0;             // 'I', 'W', 'E', 'D', 'C' where the prefix names one
  bool year_missing = false;  // absl "I0731 ...": time_s counts from 1970-01-01 (no year printed)
};

// Recognises the logger prefixes of training-logs.md sec. 1: DeepSpeed "[<ts>]
// [INFO] [timer.py:264:stop] ", DeepSpeed 2020 "[INFO <ts>] ", NeMo "[NeMo I
// <ts> file:224] ", torchtitan "[titan] <ts> - root - INFO - " (and the form
// without "[titan]"), ezpz "[<ts>][I][file:437:log] ", absl "I0731
// 09:47:48.898259  514 file.py:12] ", HF "[INFO|trainer.py:2128] <ts> >> ",
// the AMD fork "[20251202 09:12:08][rank-7/8][INFO ] [--trainer.py:2560] : "
// and a bare "[<ts>] " (Megatron-LM). Text without one comes back whole.
LoggerPrefix StripLoggerPrefix(std::string_view text);

// A timestamp at the start of `text` ("2024-07-16 22:14:01" with an
// optional ".123456"/",441" fraction, ISO "2024-07-16T22:14:01Z", AMD's
// "20251202 09:12:08"), read as UTC: its length and `time_s` (seconds since
// the epoch); 0 when `text` does not start with one.
size_t TimestampLength(std::string_view text, double& time_s);

// Whitespace trimming (space, tab, \r, \v, \f).
std::string_view TrimLog(std::string_view text);

// True when `text` starts with `prefix`; ConsumePrefix also removes it.
inline bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}
inline bool ConsumePrefix(std::string_view& text, std::string_view prefix) {
  if (!StartsWith(text, prefix))
    return false;
  text.remove_prefix(prefix.size());
  return true;
}
// Position of `needle` in `text` (memmem), npos when absent.
size_t FindLog(std::string_view text, std::string_view needle);

// Reads a leading unsigned decimal integer (after optional spaces) from
// `text`, removing it; false when none or it overflows int64.
bool ConsumeInt(std::string_view& text, int64_t& value);

// Splits `text` at `separator` ('|' for Megatron and NeMo) into fields and
// each field at its last ": " into key and value (trimmed), calling
// `fn(key, value)`; fields without ": " are passed with an empty key.
template <typename Fn>
void ForEachLogField(std::string_view text, char separator, Fn&& fn) {
  while (!text.empty()) {
    size_t end = text.find(separator);
    std::string_view field = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    size_t colon = field.rfind(": ");
    if (colon == std::string_view::npos) {
      std::string_view trimmed = TrimLog(field);
      if (!trimmed.empty() && trimmed.back() == ':')
        fn(TrimLog(trimmed.substr(0, trimmed.size() - 1)), std::string_view());
      else if (!trimmed.empty())
        fn(std::string_view(), trimmed);
      continue;
    }
    fn(TrimLog(field.substr(0, colon)), TrimLog(field.substr(colon + 2)));
  }
}

// The first `max_chars` characters of `text`, trimmed: LogEvent::detail.
std::string EventDetail(std::string_view text, size_t max_chars = 200);

// Failures any log can show: a Python traceback, an NCCL watchdog timeout,
// "Killed", CUDA out of memory, a torchelastic ChildFailedError. Adds a
// kFailure event for the first line of each and returns true.
bool MatchFailureLine(const CleanLine& line, double time_s, TimelineBuilder& out);

}  // namespace mfu::log_internal
