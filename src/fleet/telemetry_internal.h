#pragma once

// What the two telemetry readers (exposition_reader.cc, query_range_reader.cc)
// share: label -> TelemetryDevice, the device table with its max_devices
// bound, the statistics builder and a fast exact number parser.

#include <absl/container/flat_hash_map.h>

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/status.h"
#include "mfu/telemetry.h"

namespace mfu::fleet {

// True for AMD's names (anything but DCGM_FI_*): sets TelemetryDevice::vendor.
bool IsAmdMetric(std::string_view metric);

// Stores label `name`=`value` into the member of `d` it names (UUID,
// gpu_uuid, Hostname, modelName, card_model, GPU_I_ID, pod, hpc_job, ...,
// matched case-insensitively); false for labels that do not identify a
// device (instance, job, clock_type, nvlink, ...).
bool ApplyTelemetryLabel(std::string_view name, std::string_view value, TelemetryDevice& d);

// AMD's gpu_clock comes as one series per clock type (GPU_CLOCK_TYPE_SYSTEM,
// _MEMORY, _VIDEO, _DATA, ...) and, on multi-XCD parts, per clock index.
// kSmClockMhz is the system (GFX engine, "sclk") clock of index 0: the XCDs
// of one GPU run one clock domain. The others are not used.
bool IsAmdSmClockSeries(std::string_view clock_type, std::string_view clock_index);

// Devices by TelemetryDevice::Key(), in first-seen order.
class DeviceTable {
 public:
  explicit DeviceTable(int64_t max_devices) : max_devices_(max_devices) {}
  // The index of `d`'s device, adding it when new; kOutOfRange naming
  // `origin` past max_devices.
  StatusOr<size_t> Intern(TelemetryDevice&& d, std::string_view origin);
  size_t size() const { return devices_.size(); }
  const TelemetryDevice& device(size_t i) const { return devices_[i]; }
  TelemetryDevice& device(size_t i) { return devices_[i]; }

 private:
  int64_t max_devices_;
  absl::flat_hash_map<std::string, size_t> index_;
  std::vector<TelemetryDevice> devices_;
};

class StatsBuilder {
 public:
  static constexpr size_t kMaxStatNames = 16;
  TelemetryReadStats stats;
  std::bitset<kNumTelemetryFields> seen;

  void Unknown(std::string_view metric);   // one sample of a metric mfu does not use
  void Sentinel(std::string_view metric);  // one sentinel dropped
  void Seen(TelemetryField f) { seen.set(static_cast<size_t>(f)); }
  TelemetryReadStats Finish();

  // The one rule both readers store a value by: a sentinel (raw value) is
  // dropped and counted; a field `filled` (a bit per field) already holds
  // keeps its first value; otherwise `raw` x `scale` goes into `point`.
  void Store(std::string_view metric, TelemetryField field, double raw, double scale, TelemetryPoint& point,
             uint64_t& filled);

 private:
  static void AddName(std::vector<std::string>& names, std::string_view metric);
};

// Parses all of `s` as a Prometheus sample value (Go ParseFloat syntax:
// decimal, exponent, "NaN", "+Inf", "-Inf", "Inf"); false when it is not a
// number. Decimals of up to 15 significant digits take an exact fast path.
bool ParseSampleValue(std::string_view s, double* out);

// Reads exposition text / query_range JSON (ReadTelemetry dispatches).
Status ReadExposition(std::string_view text, std::string_view origin, const TelemetryReadOptions& options,
                      TelemetryVisitor& visitor, StatsBuilder& stats);
Status ReadQueryRange(std::string_view text, std::string_view origin, const TelemetryReadOptions& options,
                      TelemetryVisitor& visitor, StatsBuilder& stats);

}  // namespace mfu::fleet
