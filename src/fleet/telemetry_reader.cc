// ReadTelemetry's dispatch, ReadTelemetryCapture, and what both readers share
// (device table, number parser).
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "fleet/telemetry_internal.h"
#include "mfu/telemetry.h"

namespace mfu {

namespace fleet {

StatusOr<size_t> DeviceTable::Intern(TelemetryDevice&& d, std::string_view origin) {
  std::string key = d.Key();
  if (auto it = index_.find(key); it != index_.end())
    return it->second;
  if (static_cast<int64_t>(devices_.size()) >= max_devices_) {
    return OutOfRangeError(std::string(origin) + ": more than " + std::to_string(max_devices_) +
                           " devices (max_devices)");
  }
  index_.emplace(std::move(key), devices_.size());
  devices_.push_back(std::move(d));
  return devices_.size() - 1;
}

namespace {

// 10^0 .. 10^22: exactly representable, so m / 10^k with m < 2^53 is one
// correctly rounded division (Clinger's fast path).
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

bool FastDecimal(std::string_view s, double* out) {
  size_t i = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (negative)
    ++i;
  uint64_t m = 0;
  int digits = 0;
  int frac = 0;
  bool dot = false;
  const size_t start = i;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      if (++digits > 15)
        return false;
      m = m * 10 + static_cast<uint64_t>(c - '0');
      frac += dot ? 1 : 0;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  if (digits == 0 || i == start)
    return false;
  const double v = static_cast<double>(m) / kPow10[frac];
  *out = negative ? -v : v;
  return true;
}

bool EqualsNoCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char c = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (c != lower[i])
      return false;
  }
  return true;
}

}  // namespace

bool ParseSampleValue(std::string_view s, double* out) {
  if (FastDecimal(s, out))
    return true;
  std::string_view body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (EqualsNoCase(body, "inf") || EqualsNoCase(body, "infinity")) {
    *out = negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  if (EqualsNoCase(body, "nan")) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (body.empty() || !((body[0] >= '0' && body[0] <= '9') || body[0] == '.'))
    return false;
  double v = 0;
  const std::from_chars_result r = std::from_chars(body.data(), body.data() + body.size(), v);
  if (r.ec == std::errc::result_out_of_range) {
    // from_chars leaves `v` alone on overflow/underflow; Go's ParseFloat
    // gives +-Inf / 0, and so does this.
    v = 0;
    for (char c : body) {
      if (c == 'e' || c == 'E')
        break;
      if (c >= '1' && c <= '9') {
        v = std::numeric_limits<double>::infinity();
        break;
      }
    }
    const size_t e = body.find_first_of("eE");
    if (e != std::string_view::npos && e + 1 < body.size() && body[e + 1] == '-')
      v = 0;
  } else if (r.ec != std::errc() || r.ptr != body.data() + body.size()) {
    return false;
  }
  *out = negative ? -v : v;
  return true;
}

}  // namespace fleet

Status ReadTelemetry(std::string_view text, std::string_view origin, const TelemetryReadOptions& options,
                     TelemetryVisitor& visitor, TelemetryReadStats* stats) {
  TelemetryFormat format = options.format;
  if (format == TelemetryFormat::kAuto) {
    const size_t first = text.find_first_not_of(" \t\r\n");
    format = first != std::string_view::npos && text[first] == '{' ? TelemetryFormat::kQueryRange
                                                                   : TelemetryFormat::kExposition;
  }
  fleet::StatsBuilder builder;
  builder.stats.bytes = static_cast<int64_t>(text.size());
  Status status = format == TelemetryFormat::kQueryRange
                      ? fleet::ReadQueryRange(text, origin, options, visitor, builder)
                      : fleet::ReadExposition(text, origin, options, visitor, builder);
  if (stats)
    *stats = builder.Finish();
  return status;
}

namespace {

class CaptureVisitor : public TelemetryVisitor {
 public:
  explicit CaptureVisitor(TelemetryCapture& capture) : capture_(capture) {}
  Status OnDevice(const TelemetryDevice& device, std::span<const TelemetryPoint> points) override {
    capture_.devices.push_back(device);
    capture_.points.emplace_back(points.begin(), points.end());
    return Status::Ok();
  }

 private:
  TelemetryCapture& capture_;
};

}  // namespace

StatusOr<TelemetryCapture> ReadTelemetryCapture(std::string_view text, std::string_view origin,
                                                const TelemetryReadOptions& options) {
  TelemetryCapture capture;
  CaptureVisitor visitor(capture);
  MFU_RETURN_IF_ERROR(ReadTelemetry(text, origin, options, visitor, &capture.stats));
  return capture;
}

}  // namespace mfu
