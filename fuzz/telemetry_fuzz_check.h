#pragma once

// The invariants both telemetry fuzzers check (include/mfu/telemetry.h):
// every device once, points in strictly increasing time, values finite and
// never a sentinel, statistics consistent.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "mfu/telemetry.h"

namespace mfu::fuzz {

inline void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "telemetry fuzzer: invariant violated: %s\n", what);
    std::abort();
  }
}

class CheckingVisitor : public TelemetryVisitor {
 public:
  Status OnDevice(const TelemetryDevice& device, std::span<const TelemetryPoint> points) override {
    Check(keys_.insert(device.Key()).second, "each device is delivered once");
    Check(device.vendor == "nvidia" || device.vendor == "amd", "vendor is nvidia or amd");
    for (size_t i = 0; i < points.size(); ++i) {
      if (i > 0)
        Check(points[i - 1].time_ms < points[i].time_ms, "points in strictly increasing time");
      for (double v : points[i].value)
        Check(std::isnan(v) || std::isfinite(v), "values are finite or NaN");
    }
    ++devices;
    return Status::Ok();
  }
  int64_t devices = 0;

 private:
  std::set<std::string> keys_;
};

inline void RunTelemetryFuzz(std::string_view text, TelemetryFormat format) {
  TelemetryReadOptions options;
  options.format = format;
  options.max_devices = 4096;
  CheckingVisitor visitor;
  TelemetryReadStats stats;
  Status s = ReadTelemetry(text, "fuzz", options, visitor, &stats);
  Check(s.ok() || !s.message().empty(), "an error has a message");
  Check(s.ok() || s.code() == StatusCode::kParse || s.code() == StatusCode::kOutOfRange,
        "errors are kParse or kOutOfRange");
  Check(s.ok() || (s.message().find('\n') == std::string::npos && s.message().starts_with("fuzz")),
        "one-line errors name the origin");
  Check(stats.bytes == static_cast<int64_t>(text.size()), "bytes counts the input");
  Check(stats.unknown_metrics.size() <= 16 && stats.sentinel_metrics.size() <= 16, "name lists are capped");
  Check(stats.sentinels + stats.unknown_metric_samples + stats.duplicate_samples <= stats.samples,
        "dropped samples are samples");
  Check(stats.fields_seen.size() <= kNumTelemetryFields, "fields_seen within the fields");
  if (s.ok())
    Check(visitor.devices == stats.devices, "every device counted is delivered");
}

}  // namespace mfu::fuzz
