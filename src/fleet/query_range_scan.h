#pragma once

// The hand scanner behind query_range_reader.cc (Prometheus HTTP API
// answers): a JSON cursor that validates and skips values without
// building a tree, and the fast paths for the shapes Prometheus writes
// ([t,"v"] pairs with no spaces, SWAR digit runs). Inline so that the
// reader's per-sample loop keeps them inlined; private to src/fleet.

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fleet/telemetry_internal.h"  // ParseSampleValue

namespace mfu::fleet::query_range_internal {

inline constexpr int kMaxDepth = 512;

// Bytes that end a number or literal token: , ] } and JSON whitespace.
constexpr bool IsTokenEnd(char c) {
  return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

class Json {
 public:
  Json(const char* p, const char* end) : p_(p), end_(end) {}

  const char* pos() const { return p_; }
  const char* end() const { return end_; }
  void set_pos(const char* p) { p_ = p; }
  void SkipWs() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t'))
      ++p_;
  }
  bool Peek(char c) {
    SkipWs();
    return p_ < end_ && *p_ == c;
  }
  bool Consume(char c) {
    if (!Peek(c))
      return false;
    ++p_;
    return true;
  }
  bool AtEnd() {
    SkipWs();
    return p_ >= end_;
  }

  // A string, unescaped into `out`.
  bool String(std::string& out) {
    out.clear();
    if (!Consume('"'))
      return false;
    while (p_ < end_) {
      const char c = *p_++;
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return false;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p_ >= end_)
        return false;
      const char e = *p_++;
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          if (!Unicode(out))
            return false;
          break;
        default:
          return false;
      }
    }
    return false;
  }

  // Skips any value (loosely: brackets balanced, strings closed); what is
  // skipped is never read.
  bool SkipValue() {
    SkipWs();
    if (p_ >= end_)
      return false;
    const char c = *p_;
    if (c == '"')
      return SkipString();
    if (c != '{' && c != '[') {
      const char* start = p_;
      while (p_ < end_ && !IsTokenEnd(*p_))
        ++p_;
      return p_ > start;
    }
    int depth = 0;
    while (p_ < end_) {
      const char ch = *p_;
      if (ch == '"') {
        if (!SkipString())
          return false;
        continue;
      }
      if (ch == '[' || ch == '{') {
        if (++depth > kMaxDepth)
          return false;
      } else if (ch == ']' || ch == '}') {
        if (--depth == 0) {
          ++p_;
          return true;
        }
      }
      ++p_;
    }
    return false;
  }

  // The raw text of a number (or literal) token.
  std::string_view Token() {
    SkipWs();
    const char* start = p_;
    while (p_ < end_ && !IsTokenEnd(*p_))
      ++p_;
    return std::string_view(start, static_cast<size_t>(p_ - start));
  }

  // A string without escapes, as a view into the input.
  bool RawString(std::string_view* out) {
    if (!Consume('"'))
      return false;
    for (const char* q = p_; q < end_; ++q) {
      if (*q == '\\')
        return false;
      if (*q == '"') {
        *out = std::string_view(p_, static_cast<size_t>(q - p_));
        p_ = q + 1;
        return true;
      }
    }
    return false;
  }

 private:
  // Strings here are short (label values, "0.5"): a loop beats memchr's call.
  bool SkipString() {
    ++p_;
    while (p_ < end_) {
      const char c = *p_++;
      if (c == '"')
        return true;
      if (c == '\\') {
        if (p_ >= end_)
          return false;
        ++p_;
      }
    }
    return false;
  }

  bool Hex4(uint32_t* v) {
    if (end_ - p_ < 4)
      return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      uint32_t d = 0;
      if (c >= '0' && c <= '9')
        d = static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        d = static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        d = static_cast<uint32_t>(c - 'A' + 10);
      else
        return false;
      *v = *v * 16 + d;
    }
    return true;
  }

  bool Unicode(std::string& out) {
    uint32_t cp = 0;
    if (!Hex4(&cp))
      return false;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t lo = 0;
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
        return false;
      p_ += 2;
      if (!Hex4(&lo) || lo < 0xDC00 || lo > 0xDFFF)
        return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return false;
    }
    auto put = [&](uint32_t b) { out += static_cast<char>(b); };
    if (cp < 0x80) {
      put(cp);
    } else if (cp < 0x800) {
      put(0xC0 | (cp >> 6));
      put(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      put(0xE0 | (cp >> 12));
      put(0x80 | ((cp >> 6) & 0x3F));
      put(0x80 | (cp & 0x3F));
    } else {
      put(0xF0 | (cp >> 18));
      put(0x80 | ((cp >> 12) & 0x3F));
      put(0x80 | ((cp >> 6) & 0x3F));
      put(0x80 | (cp & 0x3F));
    }
    return true;
  }

  const char* p_;
  const char* end_;
};

// Text from the input quoted in an error: at most 40 bytes, control bytes
// as '?', so the message stays one line.
inline std::string Quote(std::string_view s) {
  std::string out(s.substr(0, 40));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20)
      c = '?';
  }
  return s.size() > 40 ? out + "..." : out;
}

// Seconds as Prometheus writes them ("1700000000", "1700000000.5") to ms;
// other spellings (exponent, more digits) through a double, rounded.
inline bool ParseTimestampMs(std::string_view s, int64_t* ms) {
  int64_t whole = 0;
  size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i < 15)
    whole = whole * 10 + (s[i++] - '0');
  if (i > 0 && i == s.size()) {
    *ms = whole * 1000;
    return true;
  }
  if (i > 0 && s[i] == '.' && s.size() - i - 1 <= 3 && s.size() - i - 1 >= 1) {
    int64_t frac = 0;
    size_t n = 0;
    bool digits = true;
    for (size_t j = i + 1; j < s.size(); ++j, ++n) {
      digits = digits && s[j] >= '0' && s[j] <= '9';
      frac = frac * 10 + (s[j] - '0');
    }
    if (digits) {
      for (; n < 3; ++n)
        frac *= 10;
      *ms = whole * 1000 + frac;
      return true;
    }
  }
  double v = 0;
  const std::from_chars_result r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v) || std::fabs(v) > 9.0e15)
    return false;
  *ms = std::llround(v * 1000);
  return true;
}

// Whether the 8 bytes of `w` (little-endian, as loaded by memcpy) are all
// ASCII digits, and their value (Lemire's SWAR conversion).
constexpr bool IsEightDigits(uint64_t w) {
  return ((w & 0xF0F0F0F0F0F0F0F0ull) | (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) ==
         0x3333333333333333ull;
}
constexpr uint64_t EightDigits(uint64_t w) {
  w -= 0x3030303030303030ull;
  w = w * 10 + (w >> 8);
  return ((w & 0x000000FF000000FFull) * (100 + (1000000ull << 32)) +
          ((w >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32))) >>
         32;
}
static_assert(std::endian::native == std::endian::little);

// The "[t," of a pair as Prometheus writes it, [1700000000.5,"0.25"] with
// no spaces: returns the byte after the value's opening quote, or nullptr.
inline const char* FastTime(const char* p, const char* end, int64_t* ms) {
  if (end - p < 6 || *p != '[')
    return nullptr;
  ++p;
  int64_t whole = 0;
  int digits = 0;
  if (end - p >= 8) {
    // Epoch seconds have 10 digits: the first 8 in one word (SWAR).
    uint64_t w = 0;
    std::memcpy(&w, p, 8);
    if (IsEightDigits(w)) {
      whole = static_cast<int64_t>(EightDigits(w));
      digits = 8;
      p += 8;
    }
  }
  while (p < end && *p >= '0' && *p <= '9' && digits < 15) {
    whole = whole * 10 + (*p++ - '0');
    ++digits;
  }
  if (digits == 0 || p >= end)
    return nullptr;
  int64_t frac = 0;
  if (*p == '.') {
    ++p;
    int n = 0;
    while (p < end && *p >= '0' && *p <= '9' && n < 3) {
      frac = frac * 10 + (*p++ - '0');
      ++n;
    }
    if (n == 0)
      return nullptr;
    for (; n < 3; ++n)
      frac *= 10;
  }
  if (end - p < 4 || p[0] != ',' || p[1] != '"')
    return nullptr;
  *ms = whole * 1000 + frac;
  return p + 2;
}

// The whole pair in that shape, parsed in one pass; returns the byte after
// ']', or nullptr for anything else (the general path then parses it or
// names the error).
inline const char* FastPair(const char* p, const char* end, int64_t* ms, std::string_view* value) {
  p = FastTime(p, end, ms);
  if (p == nullptr)
    return nullptr;
  const char* v = p;
  while (p < end && *p != '"') {
    if (*p == '\\' || static_cast<unsigned char>(*p) < 0x20)
      return nullptr;
    ++p;
  }
  if (end - p < 2 || p[1] != ']')
    return nullptr;
  *value = std::string_view(v, static_cast<size_t>(p - v));
  return p + 2;
}

// 10^0 .. 10^15, for FastSample's decimals (ParseSampleValue's fast path).
inline constexpr double kPow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                    1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

// FastPair with the value parsed in the same scan: a plain decimal of up to
// 15 digits is m / 10^k (exactly what ParseSampleValue computes), a longer
// one goes to from_chars, anything else to ParseSampleValue. Returns the
// byte after ']', or nullptr when the pair is not of this shape or its
// value not a number (Next then names the error).
inline const char* FastSample(const char* p, const char* end, int64_t* ms, double* out) {
  p = FastTime(p, end, ms);
  if (p == nullptr)
    return nullptr;
  const char* v = p;
  uint64_t m = 0;
  int digits = 0, frac = 0;
  bool dot = false, plain = true;
  for (; p < end; ++p) {
    const char c = *p;
    const auto digit = static_cast<unsigned>(static_cast<unsigned char>(c)) - unsigned{'0'};
    if (digit < 10) {
      m = m * 10 + digit;  // wraps past 19 digits: then unused
      ++digits;
      frac += dot ? 1 : 0;
    } else if (c == '"') {
      break;
    } else if (c == '.' && !dot) {
      dot = true;
    } else if (c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      return nullptr;
    } else {
      plain = false;
    }
  }
  if (end - p < 2 || p[1] != ']')
    return nullptr;
  const std::string_view value(v, static_cast<size_t>(p - v));
  plain = plain && digits > 0;
  if (plain && digits <= 15) {
    *out = static_cast<double>(m) / kPow10[frac];
  } else if (plain && *v != '.') {
    // Digits and one dot at most; out of range (hundreds of digits) goes
    // to the general path, which maps it as Go does.
    const std::from_chars_result r = std::from_chars(value.data(), value.data() + value.size(), *out);
    if (r.ec != std::errc() || r.ptr != value.data() + value.size())
      return nullptr;
  } else if (!ParseSampleValue(value, out)) {
    return nullptr;
  }
  return p + 2;
}

// The values array as Prometheus writes it, [[1700000000.5,"0.25"],...] with
// no spaces and no escapes: skipped pair by pair, which is what the index
// pass spends its time on. Returns the byte after the closing ']', or
// nullptr for any other shape (SkipValue then decides).
inline const char* SkipPairsFast(const char* p, const char* end) {
  if (end - p < 2 || *p != '[')
    return nullptr;
  ++p;
  if (*p == ']')
    return p + 1;
  while (true) {
    if (end - p < 6 || *p != '[')
      return nullptr;
    ++p;
    uint64_t w = 0;
    if (end - p >= 8 && (std::memcpy(&w, p, 8), IsEightDigits(w)))
      p += 8;
    while (p < end && ((*p >= '0' && *p <= '9') || *p == '.'))
      ++p;
    if (end - p < 4 || p[0] != ',' || p[1] != '"')
      return nullptr;
    p += 2;
    // The first quote closes the string unless a backslash precedes it.
    const auto* quote = static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(end - p)));
    if (quote == nullptr || quote[-1] == '\\')
      return nullptr;
    p = quote;
    if (end - p < 3 || p[1] != ']')
      return nullptr;
    p += 2;
    if (*p == ']')
      return p + 1;
    if (*p != ',')
      return nullptr;
    ++p;
  }
}

}  // namespace mfu::fleet::query_range_internal
