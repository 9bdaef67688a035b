// Prometheus HTTP API answers (`/api/v1/query_range`, `/api/v1/query`):
//   {"status":"success","data":{"resultType":"matrix","result":[
//     {"metric":{"__name__":...,labels},"values":[[t,"v"],...]}, ...]}}
// ("vector": "value":[t,"v"]) and {"status":"error","errorType","error"}.
//
// Memory follows devices, not samples: Prometheus sorts series by name, so
// one device's series lie far apart. Pass 1 walks the document once with a
// hand scanner, keeps each series' labels as a device and the byte range of
// its values array (skipped, not parsed). Pass 2 takes one device at a time,
// parses its series' arrays in lockstep by timestamp into one reused point
// buffer and hands it to the visitor. Beyond the input, the reader holds
// one index row per series, the devices, and one device's points.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "fleet/telemetry_internal.h"

namespace mfu::fleet {

namespace {

constexpr int kMaxDepth = 512;

// Bytes that end a number or literal token: , ] } and JSON whitespace.
constexpr bool IsTokenEnd(char c) {
  return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// One `metric`+`values` object of data.result.
struct Series {
  uint32_t device = 0;
  uint32_t name = 0;  // index into QueryRangeReader::names_
  TelemetryField field = TelemetryField::kCount;
  double scale = 1;
  const char* values = nullptr;  // the values array ('[' .. ']') or the value pair
  const char* values_end = nullptr;
  bool single = false;  // "value": one [t, "v"] pair (resultType vector)
  uint32_t index = 0;   // position in data.result, for error paths
};

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
std::string Quote(std::string_view s) {
  std::string out(s.substr(0, 40));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20)
      c = '?';
  }
  return s.size() > 40 ? out + "..." : out;
}

// Seconds as Prometheus writes them ("1700000000", "1700000000.5") to ms;
// other spellings (exponent, more digits) through a double, rounded.
bool ParseTimestampMs(std::string_view s, int64_t* ms) {
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
const char* FastTime(const char* p, const char* end, int64_t* ms) {
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
const char* FastPair(const char* p, const char* end, int64_t* ms, std::string_view* value) {
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
constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

// FastPair with the value parsed in the same scan: a plain decimal of up to
// 15 digits is m / 10^k (exactly what ParseSampleValue computes), a longer
// one goes to from_chars, anything else to ParseSampleValue. Returns the
// byte after ']', or nullptr when the pair is not of this shape or its
// value not a number (Next then names the error).
const char* FastSample(const char* p, const char* end, int64_t* ms, double* out) {
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
const char* SkipPairsFast(const char* p, const char* end) {
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

class QueryRangeReader {
 public:
  QueryRangeReader(std::string_view text, std::string_view origin, const TelemetryReadOptions& options,
                   StatsBuilder& stats)
      : text_(text), origin_(origin), devices_(options.max_devices), stats_(stats) {}

  Status Index() {
    Json j(text_.data(), text_.data() + text_.size());
    if (!j.Consume('{'))
      return Error("", "expected a JSON object");
    std::string key;
    std::string status, error_type, error;
    bool have_data = false;
    if (!j.Consume('}')) {
      do {
        if (!j.String(key) || !j.Consume(':'))
          return Error("", "expected a key");
        if (key == "status" || key == "errorType" || key == "error") {
          std::string& out = key == "status" ? status : key == "error" ? error : error_type;
          if (!j.String(out))
            return Error(Quote(key), "expected a string");
        } else if (key == "data" && j.Peek('{')) {
          have_data = true;
          MFU_RETURN_IF_ERROR(Data(j));
        } else if (!j.SkipValue()) {
          return Error(Quote(key), "malformed value");
        }
      } while (j.Consume(','));
      if (!j.Consume('}'))
        return Error("", "expected ',' or '}' (truncated JSON?)");
    }
    if (!j.AtEnd())
      return Error("", "unexpected bytes after the JSON object");
    if (status == "error") {
      return ParseError(std::string(origin_) + ": status: prometheus answered error" +
                        (error_type.empty() ? "" : " (" + Quote(error_type) + ")") + ": " + Quote(error));
    }
    if (status != "success")
      return Error("status", status.empty() ? "missing" : "expected \"success\", got \"" + Quote(status) + "\"");
    if (!have_data)
      return Error("data", "missing");
    if (result_type_ != "matrix" && result_type_ != "vector") {
      return Error("data.resultType", result_type_.empty() ? "missing"
                                                           : "'" + Quote(result_type_) +
                                                                 "' is not a series answer (want matrix or vector)");
    }
    return Status::Ok();
  }

  Status Deliver(TelemetryVisitor& visitor) {
    stats_.stats.devices = static_cast<int64_t>(devices_.size());
    // Series of each device, in document order (the first of two duplicate
    // series wins, as in the exposition reader).
    std::vector<uint32_t> order(series_.size());
    for (uint32_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return series_[a].device < series_[b].device; });
    std::vector<TelemetryPoint> points;
    size_t k = 0;
    for (uint32_t d = 0; d < devices_.size(); ++d) {
      const size_t begin = k;
      while (k < order.size() && series_[order[k]].device == d)
        ++k;
      MFU_RETURN_IF_ERROR(Merge(std::span<const uint32_t>(order.data() + begin, k - begin), points));
      MFU_RETURN_IF_ERROR(visitor.OnDevice(devices_.device(d), points));
    }
    return Status::Ok();
  }

 private:
  Status Error(std::string_view path, const std::string& what) const {
    return ParseError(std::string(origin_) + ": " + (path.empty() ? "" : std::string(path) + ": ") + what);
  }

  Status Data(Json& j) {
    j.Consume('{');
    std::string key;
    if (j.Consume('}'))
      return Status::Ok();
    do {
      if (!j.String(key) || !j.Consume(':'))
        return Error("data", "expected a key");
      if (key == "resultType") {
        if (!j.String(result_type_))
          return Error("data.resultType", "expected a string");
      } else if (key == "result" && j.Peek('[')) {
        MFU_RETURN_IF_ERROR(Result(j));
      } else if (!j.SkipValue()) {
        return Error("data." + Quote(key), "malformed value");
      }
    } while (j.Consume(','));
    if (!j.Consume('}'))
      return Error("data", "expected ',' or '}' (truncated JSON?)");
    return Status::Ok();
  }

  Status Result(Json& j) {
    j.Consume('[');
    if (j.Consume(']'))
      return Status::Ok();
    uint32_t index = 0;
    do {
      MFU_RETURN_IF_ERROR(OneSeries(j, index++));
    } while (j.Consume(','));
    if (!j.Consume(']'))
      return Error("data.result", "expected ',' or ']' (truncated JSON?)");
    return Status::Ok();
  }

  std::string Path(uint32_t index, std::string_view rest = {}) const {
    return "data.result[" + std::to_string(index) + "]" + std::string(rest);
  }

  Status OneSeries(Json& j, uint32_t index) {
    if (!j.Consume('{'))
      return Error(Path(index), "expected an object");
    ++stats_.stats.series;
    std::string key, name, value;
    TelemetryDevice d;
    std::string clock_type, clock_index;
    Series s;
    s.index = index;
    bool have_values = false;
    if (!j.Consume('}')) {
      do {
        if (!j.String(key) || !j.Consume(':'))
          return Error(Path(index), "expected a key");
        if (key == "metric") {
          if (!j.Consume('{'))
            return Error(Path(index, ".metric"), "expected an object");
          if (!j.Consume('}')) {
            do {
              if (!j.String(key) || !j.Consume(':') || !j.String(value))
                return Error(Path(index, ".metric"), "expected \"label\": \"value\"");
              if (key == "__name__")
                name = value;
              else if (key == "clock_type")
                clock_type = value;
              else if (key == "clock_index")
                clock_index = value;
              else
                ApplyTelemetryLabel(key, value, d);
            } while (j.Consume(','));
            if (!j.Consume('}'))
              return Error(Path(index, ".metric"), "expected ',' or '}'");
          }
        } else if ((key == "values" || key == "value") && j.Peek('[')) {
          s.single = key == "value";
          s.values = j.pos();
          if (const char* after = s.single ? nullptr : SkipPairsFast(j.pos(), j.end()))
            j.set_pos(after);
          else if (!j.SkipValue())
            return Error(Path(index, "." + key), "malformed array (truncated JSON?)");
          s.values_end = j.pos();
          have_values = true;
        } else if (!j.SkipValue()) {
          return Error(Path(index, "." + Quote(key)), "malformed value");
        }
      } while (j.Consume(','));
      if (!j.Consume('}'))
        return Error(Path(index), "expected ',' or '}' (truncated JSON?)");
    }
    if (!have_values)
      return Status::Ok();  // a native histogram or an empty series: nothing mfu reads
    std::optional<TelemetryField> field = ResolveTelemetryMetric(name, &s.scale);
    if (!field) {
      stats_.Unknown(name.empty() ? "(no __name__)" : name);
      stats_.stats.unknown_metric_samples += CountSamples(s) - 1;
      stats_.stats.samples += CountSamples(s);
      return Status::Ok();
    }
    const bool amd = IsAmdMetric(name);
    if (amd && *field == TelemetryField::kSmClockMhz && !IsAmdSmClockSeries(clock_type, clock_index))
      return Status::Ok();
    d.vendor = amd ? "amd" : "nvidia";
    s.field = *field;
    MFU_ASSIGN_OR_RETURN(size_t device, devices_.Intern(std::move(d), origin_));
    s.device = static_cast<uint32_t>(device);
    s.name = InternName(name);
    series_.push_back(s);
    return Status::Ok();
  }

  // Samples of an unknown series, counted without parsing: one per "[" pair.
  static int64_t CountSamples(const Series& s) {
    if (s.single)
      return 1;
    int64_t n = 0;
    for (const char* p = s.values + 1; p < s.values_end; ++p)
      n += *p == '[';
    return n;
  }

  uint32_t InternName(const std::string& name) {
    for (uint32_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == name)
        return i;
    }
    names_.push_back(name);
    return static_cast<uint32_t>(names_.size() - 1);
  }

  // A cursor over one series' [t, "v"] pairs.
  struct Cursor {
    const Series* s;
    Json j;
    int64_t element = 0;
    bool has = false;
    int64_t t = 0;
    double v = 0;
  };

  // The next pair of `c`: `has` false past the end.
  Status Next(Cursor& c) {
    // The common case, ",[t,\"v\"]" with a later time, inline; anything else
    // (first pair, end, spaces, errors) through NextSlow.
    const char* p = c.j.pos();
    if (!c.s->single && c.element > 0 && p < c.j.end() && *p == ',') {
      int64_t t = 0;
      double v = 0;
      const char* after = FastSample(p + 1, c.j.end(), &t, &v);
      if (after != nullptr && t > c.t) {
        c.j.set_pos(after);
        c.t = t;
        c.v = v;
        ++c.element;
        return Status::Ok();
      }
    }
    return NextSlow(c);
  }

  Status NextSlow(Cursor& c) {
    Json& j = c.j;
    if (c.s->single) {
      if (c.element > 0) {
        c.has = false;
        return Status::Ok();
      }
    } else if (c.element == 0) {
      j.Consume('[');
      if (j.Consume(']')) {
        c.has = false;
        return Status::Ok();
      }
    } else if (!j.Consume(',')) {
      if (!j.Consume(']'))
        return Error(ElementPath(c), "expected ',' or ']'");
      c.has = false;
      return Status::Ok();
    }
    std::string_view value;
    int64_t t = 0;
    if (const char* after = FastPair(j.pos(), j.end(), &t, &value)) {
      j.set_pos(after);
    } else {
      if (!j.Consume('['))
        return Error(ElementPath(c), "expected a [time, \"value\"] pair");
      std::string_view ts = j.Token();
      if (!ParseTimestampMs(ts, &t))
        return Error(ElementPath(c), "time '" + Quote(ts) + "' is not a number of seconds");
      if (!j.Consume(',') || !j.RawString(&value) || !j.Consume(']'))
        return Error(ElementPath(c), "expected a [time, \"value\"] pair");
    }
    if (!ParseSampleValue(value, &c.v))
      return Error(ElementPath(c), "value \"" + Quote(value) + "\" is not a number");
    if (c.element > 0 && t <= c.t)
      return Error(ElementPath(c), "times do not increase");
    c.t = t;
    c.has = true;
    ++c.element;
    return Status::Ok();
  }

  std::string ElementPath(const Cursor& c) const {
    return Path(c.s->index, c.s->single ? ".value" : ".values[" + std::to_string(c.element) + "]");
  }

  Status Merge(std::span<const uint32_t> series, std::vector<TelemetryPoint>& points) {
    points.clear();
    cursors_.clear();
    for (uint32_t i : series) {
      const Series& s = series_[i];
      cursors_.push_back(Cursor{&s, Json(s.values, s.values_end)});
      MFU_RETURN_IF_ERROR(Next(cursors_.back()));
    }
    while (true) {
      int64_t t = 0;
      bool any = false;
      for (const Cursor& c : cursors_) {
        if (c.has && (!any || c.t < t)) {
          t = c.t;
          any = true;
        }
      }
      if (!any)
        return Status::Ok();
      TelemetryPoint& p = points.emplace_back();
      p.time_ms = t;
      uint64_t filled = 0;
      for (Cursor& c : cursors_) {
        if (!c.has || c.t != t)
          continue;
        Apply(c, p, filled);
        MFU_RETURN_IF_ERROR(Next(c));
      }
    }
  }

  void Apply(const Cursor& c, TelemetryPoint& p, uint64_t& filled) {
    ++stats_.stats.samples;
    stats_.Store(names_[c.s->name], c.s->field, c.v, c.s->scale, p, filled);
  }

  std::string_view text_;
  std::string_view origin_;
  DeviceTable devices_;
  StatsBuilder& stats_;
  std::string result_type_;
  std::vector<Series> series_;
  std::vector<std::string> names_;
  std::vector<Cursor> cursors_;
};

}  // namespace

Status ReadQueryRange(std::string_view text, std::string_view origin, const TelemetryReadOptions& options,
                      TelemetryVisitor& visitor, StatsBuilder& stats) {
  QueryRangeReader reader(text, origin, options, stats);
  MFU_RETURN_IF_ERROR(reader.Index());
  return reader.Deliver(visitor);
}

}  // namespace mfu::fleet
