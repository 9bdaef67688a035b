#include "base/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace mfu::base {

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos)
      break;
    start = pos + 1;
  }
  return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix_lower) {
  if (s.size() < prefix_lower.size())
    return false;
  for (size_t i = 0; i < prefix_lower.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix_lower[i])
      return false;
  }
  return true;
}

int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  int best_distance = 1 << 30;
  for (const auto& c : candidates) {
    int d = EditDistance(ToLower(word), ToLower(c));
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  // Accept a typo of up to a third of the word (at least 1, at most 3 edits).
  int limit = std::clamp(static_cast<int>(word.size()) / 3, 1, 3);
  return best_distance <= limit ? best : std::string();
}

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += sep;
    out += items[i];
  }
  return out;
}

StatusOr<double> ParseScaledNumber(std::string_view text, std::string_view what) {
  std::string_view t = Trim(text);
  std::string label(what);
  if (t.empty())
    return InvalidArgumentError(label + ": expected a number, got an empty value");
  double scale = 1.0;
  char last = static_cast<char>(std::tolower(static_cast<unsigned char>(t.back())));
  switch (last) {
    case 'k':
      scale = 1e3;
      break;
    case 'm':
      scale = 1e6;
      break;
    case 'g':
    case 'b':
      scale = 1e9;
      break;
    case 't':
      scale = 1e12;
      break;
    case 'p':
      scale = 1e15;
      break;
    default:
      break;
  }
  if (scale > 1.0)
    t.remove_suffix(1);
  double value = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ec != std::errc() || ptr != t.data() + t.size()) {
    return InvalidArgumentError(label + ": '" + std::string(text) + "' is not a number");
  }
  value *= scale;
  if (!std::isfinite(value))
    return InvalidArgumentError(label + ": '" + std::string(text) + "' is not finite");
  if (value < 0)
    return InvalidArgumentError(label + ": must not be negative, got " + std::string(text));
  return value;
}

std::string FormatSi(double value, int digits) {
  static constexpr struct {
    double scale;
    const char* suffix;
  } kUnits[] = {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  char buf[64];
  // Beyond the largest prefix's range ("6.03e+03E"), plain scientific.
  if (std::fabs(value) >= kUnits[0].scale * std::pow(10.0, digits) || !std::isfinite(value)) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, value);
    return buf;
  }
  for (const auto& u : kUnits) {
    if (std::fabs(value) >= u.scale) {
      std::snprintf(buf, sizeof buf, "%.*g%s", digits, value / u.scale, u.suffix);
      return buf;
    }
  }
  std::snprintf(buf, sizeof buf, "%.*g", digits, value);
  return buf;
}

std::string FormatThousands(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", value);
  std::string digits(buf);
  bool negative = !digits.empty() && digits[0] == '-';
  if (negative)
    digits.erase(0, 1);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count && count % 3 == 0)
      out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return negative ? "-" + out : out;
}

std::string FormatNumber(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(value);
}

}  // namespace mfu::base
