#include "goodput/goodput_text.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mfu::goodput_internal {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool Digits(std::string_view s, size_t at, size_t n, int64_t& out) {
  if (at + n > s.size())
    return false;
  out = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

}  // namespace

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
  s = Trim(s);
  int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (s.size() < 19 || !Digits(s, 0, 4, y) || s[4] != '-' || !Digits(s, 5, 2, mo) || s[7] != '-' ||
      !Digits(s, 8, 2, d) || (s[10] != ' ' && s[10] != 'T') || !Digits(s, 11, 2, h) || s[13] != ':' ||
      !Digits(s, 14, 2, mi) || s[16] != ':' || !Digits(s, 17, 2, sec))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
    return std::nullopt;
  double fraction = 0;
  size_t at = 19;
  if (at < s.size() && s[at] == '.') {
    double scale = 0.1;
    ++at;
    const size_t begin = at;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
      fraction += (s[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (at == begin)
      return std::nullopt;
  }
  if (at < s.size() && s[at] == 'Z')
    ++at;
  if (at != s.size())
    return std::nullopt;
  const int64_t days = DaysFromCivil(y, mo, d);
  return static_cast<double>(days * 86400 + h * 3600 + mi * 60 + sec) + fraction;
}

std::string FormatTimestamp(int64_t epoch_s) {
  // civil_from_days (Hinnant).
  int64_t z = (epoch_s >= 0 ? epoch_s : epoch_s - 86399) / 86400;
  const int64_t secs = epoch_s - z * 86400;
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp + (mp < 10 ? 3 : -9);
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return fmt::format("{:04d}-{:02d}-{:02d} {:02d}:{:02d}:{:02d}", y, m, d, secs / 3600, secs / 60 % 60, secs % 60);
}

}  // namespace mfu::goodput_internal
