#pragma once

// Small text helpers the goodput readers share: line iteration with
// 1-based numbers, trimming, integers, and the timestamps they carry.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mfu::goodput_internal {

// Lines of `text` (LF or CRLF), numbered from 1.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : text_(text) {}
  bool Next(std::string_view& line);
  int64_t line_number() const { return line_; }

 private:
  std::string_view text_;
  size_t at_ = 0;
  int64_t line_ = 0;
};

std::string_view Trim(std::string_view s);
// At most 40 characters of `s`, for error messages.
std::string Clip(std::string_view s);
std::optional<int64_t> ParseInteger(std::string_view s);
// "%Y-%m-%d %H:%M:%S", ISO "YYYY-MM-DDTHH:MM:SS" and the other forms of
// log_internal::ParseLogTimestamp, read as UTC: seconds since the epoch.
std::optional<double> ParseTimestamp(std::string_view s);

}  // namespace mfu::goodput_internal
