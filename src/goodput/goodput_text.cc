#include "goodput/goodput_text.h"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "log/log_parser.h"

namespace mfu::goodput_internal {

bool LineCursor::Next(std::string_view& line) {
  if (at_ >= text_.size())
    return false;
  size_t end = text_.find('\n', at_);
  if (end == std::string_view::npos)
    end = text_.size();
  line = text_.substr(at_, end - at_);
  if (!line.empty() && line.back() == '\r')
    line.remove_suffix(1);
  at_ = end + 1;
  ++line_;
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string Clip(std::string_view s) {
  std::string out(s.substr(0, 40));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      c = '?';
  }
  return s.size() > 40 ? out + "..." : out;
}

std::optional<int64_t> ParseInteger(std::string_view s) {
  s = Trim(s);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty())
    return std::nullopt;
  return v;
}

std::optional<double> ParseTimestamp(std::string_view s) {
  return log_internal::ParseLogTimestamp(Trim(s));
}

}  // namespace mfu::goodput_internal
