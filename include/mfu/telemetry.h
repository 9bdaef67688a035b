#pragma once

// GPU telemetry as exporters publish it: dcgm-exporter (legacy and DCGM 4.6
// field names) and AMD's device-metrics-exporter, read from Prometheus
// exposition text (a /metrics body, with or without # HELP / # TYPE) or from
// a Prometheus HTTP API `query_range` JSON answer. The reader resolves each
// metric to a TelemetryField, each label set to a TelemetryDevice, drops
// sentinel values (DCGM_INT64_BLANK family, DCGM_FP64_BLANK) as "no value"
// and counts them, and hands the caller one device at a time with its points
// in time order, so memory follows devices, not samples.

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/status.h"

namespace mfu {

// What a telemetry value measures, independent of the exporter's spelling.
// Ratios are fractions 0..1 (AMD's *_PERCENT fields and DCGM's GPU_UTIL
// percent are divided by 100 when read); clocks MHz; power W; energy mJ;
// memory MiB; byte counters bytes.
enum class TelemetryField : uint8_t {
  kGpuUtil = 0,         // DCGM_FI_DEV_GPU_UTIL (percent -> ratio), AMD gpu_gfx_activity
  kGrEngineActive,      // DCGM_FI_PROF_GR_ENGINE_ACTIVE
  kSmActive,            // DCGM_FI_PROF_SM_ACTIVE, AMD GPU_PROF_SM_ACTIVE
  kSmOccupancy,         // DCGM_FI_PROF_SM_OCCUPANCY, AMD GPU_PROF_OCCUPANCY_PERCENT
  kTensorActive,        // DCGM_FI_PROF_PIPE_TENSOR_ACTIVE / TENSOR_UTIL_RATIO, AMD GPU_PROF_TENSOR_ACTIVE_PERCENT
  kTensorDfmaActive,    // DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE
  kTensorHmmaActive,    // DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE
  kTensorImmaActive,    // DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE
  kFp64Active,          // DCGM_FI_PROF_PIPE_FP64_ACTIVE
  kFp32Active,          // DCGM_FI_PROF_PIPE_FP32_ACTIVE
  kFp16Active,          // DCGM_FI_PROF_PIPE_FP16_ACTIVE
  kDramActive,          // DCGM_FI_PROF_DRAM_ACTIVE
  kSmClockMhz,          // DCGM_FI_DEV_SM_CLOCK, AMD gpu_clock (type GPU_CLOCK_TYPE_SYSTEM)
  kMemClockMhz,         // DCGM_FI_DEV_MEM_CLOCK
  kPowerWatts,          // DCGM_FI_DEV_POWER_USAGE / BOARD_POWER_WATTS, AMD gpu_power_usage
  kPowerLimitWatts,     // DCGM_FI_DEV_POWER_MGMT_LIMIT / ENFORCED_LIMIT
  kEnergyMillijoules,   // DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (counter)
  kGpuTempC,            // DCGM_FI_DEV_GPU_TEMP, AMD gpu_junction_temperature
  kMemoryTempC,         // DCGM_FI_DEV_MEMORY_TEMP
  kClocksEventReasons,  // DCGM_FI_DEV_CLOCKS_EVENT_REASONS / CLOCK_THROTTLE_REASONS (bit mask)
  kPowerViolationUs,    // DCGM_FI_DEV_POWER_VIOLATION (counter, microseconds)
  kThermalViolationUs,  // DCGM_FI_DEV_THERMAL_VIOLATION (counter, microseconds)
  kXidErrors,           // DCGM_FI_DEV_XID_ERRORS (last XID)
  kFbUsedMib,           // DCGM_FI_DEV_FB_USED
  kFbFreeMib,           // DCGM_FI_DEV_FB_FREE
  kPcieTxBytes,         // DCGM_FI_PROF_PCIE_TX_BYTES (rate, bytes/s)
  kPcieRxBytes,         // DCGM_FI_PROF_PCIE_RX_BYTES
  kNvlinkTxBytes,       // DCGM_FI_PROF_NVLINK_TX_BYTES
  kNvlinkRxBytes,       // DCGM_FI_PROF_NVLINK_RX_BYTES
  kAmdTotal16Ops,       // AMD GPU_PROF_TOTAL_16_OPS (counter)
  kAmdTotal32Ops,       // AMD GPU_PROF_TOTAL_32_OPS (counter)
  kAmdTotal64Ops,       // AMD GPU_PROF_TOTAL_64_OPS (counter)
  kCount,
};
inline constexpr size_t kNumTelemetryFields = static_cast<size_t>(TelemetryField::kCount);

// Stable snake_case id of a field ("tensor_active", "sm_clock_mhz"), used in
// JSON, CSV and findings.
const char* TelemetryFieldId(TelemetryField field);

// The field an exporter's metric name measures, or nullopt when mfu does not
// use it. Accepts dcgm-exporter's legacy names, DCGM 4.6 names and aliases,
// AMD's field names in upper or lower case with or without the "amd_" prefix.
// `scale` (optional) receives the factor that brings the exported value to
// the field's unit (0.01 for a percent field).
std::optional<TelemetryField> ResolveTelemetryMetric(std::string_view metric_name, double* scale = nullptr);

// True for DCGM's blank / not-found / not-supported / permission sentinels
// (DCGM_INT32_BLANK, DCGM_INT64_BLANK and the +1..+n family, DCGM_FP64_BLANK
// family) and for non-finite values: "no value", never data.
bool IsTelemetrySentinel(double value);

// Where a device's series came from, as the exporter labels it. Empty strings
// are labels the capture did not have.
struct TelemetryDevice {
  std::string vendor;    // "nvidia" (dcgm-exporter) or "amd"
  std::string uuid;      // UUID / gpu_uuid / GPU_UUID
  std::string hostname;  // Hostname / hostname
  std::string gpu;       // gpu / gpu_id: the index on its host
  std::string pci_bus_id;
  std::string device;        // "nvidia0"
  std::string model_name;    // modelName / card_model: "NVIDIA H100 80GB HBM3"
  std::string mig_profile;   // GPU_I_PROFILE / gpu_partition_id
  std::string mig_instance;  // GPU_I_ID
  std::string k8s_namespace;
  std::string pod;
  std::string container;
  std::string pod_uid;
  std::string hpc_job;  // dcgm-exporter's Slurm/HPC job label
  std::string driver_version;

  // One key per series set: uuid (or hostname/gpu), MIG instance and pod.
  // Two pods time-sharing one GPU are two devices with one uuid.
  std::string Key() const;
};

// Every field's value of one device at one time; NaN where the field had no
// sample (absent, or a sentinel).
struct TelemetryPoint {
  int64_t time_ms = 0;  // 0 when the capture had no timestamp
  std::array<double, kNumTelemetryFields> value;
  TelemetryPoint() { value.fill(std::numeric_limits<double>::quiet_NaN()); }
  double Get(TelemetryField f) const { return value[static_cast<size_t>(f)]; }
  bool Has(TelemetryField f) const { return !std::isnan(Get(f)); }
};

// What the reader saw, for diagnostics and findings.
struct TelemetryReadStats {
  int64_t bytes = 0;
  int64_t lines = 0;      // exposition lines (0 for query_range)
  int64_t samples = 0;    // values read, sentinels included
  int64_t sentinels = 0;  // dropped as "no value"
  int64_t unknown_metric_samples = 0;
  // Values for a field a device's point already had (a repeated series, the
  // same GPU scraped under two jobs, or two exporter names of one field):
  // the first is kept.
  int64_t duplicate_samples = 0;
  int64_t devices = 0;
  int64_t series = 0;
  std::vector<std::string> fields_seen;       // TelemetryFieldId of every field with data
  std::vector<std::string> sentinel_metrics;  // first metric names with a sentinel (<= 16)
  std::vector<std::string> unknown_metrics;   // first names mfu does not use (<= 16)
};

enum class TelemetryFormat : uint8_t { kAuto = 0, kExposition, kQueryRange };

struct TelemetryReadOptions {
  TelemetryFormat format = TelemetryFormat::kAuto;
  // Refuse a document with more devices than this (bounded memory on
  // hostile input): kOutOfRange naming the origin.
  int64_t max_devices = 1'000'000;
};

// Receives each device once, with all its points in time order (one point
// for a single exposition snapshot). The span is valid during the call only.
class TelemetryVisitor {
 public:
  virtual ~TelemetryVisitor() = default;
  virtual Status OnDevice(const TelemetryDevice& device, std::span<const TelemetryPoint> points) = 0;
};

// Reads `text` (exposition or query_range JSON; kAuto sniffs the first
// non-space byte: '{' is JSON). `origin` names the input in errors:
// "<origin>:<line>: <what>" for exposition, "<origin>: <json path>: <what>"
// for JSON. Malformed input is kParse; the visitor's error is returned as is.
Status ReadTelemetry(std::string_view text, std::string_view origin, const TelemetryReadOptions& options,
                     TelemetryVisitor& visitor, TelemetryReadStats* stats = nullptr);

// A whole capture held in memory (small inputs, the exporter's snapshot,
// tests): every device with its points.
struct TelemetryCapture {
  std::vector<TelemetryDevice> devices;
  std::vector<std::vector<TelemetryPoint>> points;  // parallel to devices
  TelemetryReadStats stats;
};
StatusOr<TelemetryCapture> ReadTelemetryCapture(std::string_view text, std::string_view origin,
                                                const TelemetryReadOptions& options = {});

}  // namespace mfu
