// Exporter metric names -> TelemetryField, DCGM's sentinels, and the device
// key. Every NVIDIA name below was checked against the DCGM 4.6.0 field table
// (tests/data/telemetry/README.md: dcgm_fields_4.6.0.tsv from NVIDIA/DCGM @
// 72fa3fe, columns name_dcgm_4_6 and legacy_aliases); the number after each
// row is its DCGM field id. dcgm-exporter emits the legacy names, DCGM 4.6
// tools the new ones; both resolve. AMD names come from
// ROCm/device-metrics-exporter @ afd0fe8 docs/configuration/metricslist.md
// (amd-device-metrics-exporter_fields.tsv).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/strings.h"
#include "fleet/telemetry_internal.h"
#include "mfu/telemetry.h"

namespace mfu {

namespace {

struct MetricName {
  std::string_view name;
  TelemetryField field;
  double scale;
};

using F = TelemetryField;

// dcgm-exporter: legacy name first, then the DCGM 4.6 name of the same id.
constexpr MetricName kDcgmNames[] = {
    // 203: an INT64 "ratio" that still carries 0..100 percent (NVML's
    // nvmlUtilization_t.gpu); an integer field cannot hold a fraction.
    {"DCGM_FI_DEV_GPU_UTIL", F::kGpuUtil, 0.01},
    {"DCGM_FI_DEV_GPU_UTIL_RATIO", F::kGpuUtil, 0.01},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", F::kGrEngineActive, 1},  // 1001
    {"DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", F::kGrEngineActive, 1},
    {"DCGM_FI_PROF_SM_ACTIVE", F::kSmActive, 1},  // 1002
    {"DCGM_FI_PROF_SM_UTIL_RATIO", F::kSmActive, 1},
    {"DCGM_FI_PROF_SM_OCCUPANCY", F::kSmOccupancy, 1},  // 1003
    {"DCGM_FI_PROF_SM_OCCUPANCY_RATIO", F::kSmOccupancy, 1},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", F::kTensorActive, 1},  // 1004
    {"DCGM_FI_PROF_TENSOR_UTIL_RATIO", F::kTensorActive, 1},
    {"DCGM_FI_PROF_DRAM_ACTIVE", F::kDramActive, 1},  // 1005
    {"DCGM_FI_PROF_DRAM_UTIL_RATIO", F::kDramActive, 1},
    {"DCGM_FI_PROF_PIPE_FP64_ACTIVE", F::kFp64Active, 1},  // 1006
    {"DCGM_FI_PROF_FP64_UTIL_RATIO", F::kFp64Active, 1},
    {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", F::kFp32Active, 1},  // 1007
    {"DCGM_FI_PROF_FP32_UTIL_RATIO", F::kFp32Active, 1},
    {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", F::kFp16Active, 1},  // 1008
    {"DCGM_FI_PROF_FP16_UTIL_RATIO", F::kFp16Active, 1},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", F::kPcieTxBytes, 1},                 // 1009
    {"DCGM_FI_PROF_PCIE_RX_BYTES", F::kPcieRxBytes, 1},                 // 1010
    {"DCGM_FI_PROF_NVLINK_TX_BYTES", F::kNvlinkTxBytes, 1},             // 1011
    {"DCGM_FI_PROF_NVLINK_RX_BYTES", F::kNvlinkRxBytes, 1},             // 1012
    {"DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE", F::kTensorImmaActive, 1},  // 1013
    {"DCGM_FI_PROF_IMMA_UTIL_RATIO", F::kTensorImmaActive, 1},
    {"DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", F::kTensorHmmaActive, 1},  // 1014
    {"DCGM_FI_PROF_HMMA_UTIL_RATIO", F::kTensorHmmaActive, 1},
    {"DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE", F::kTensorDfmaActive, 1},  // 1015
    {"DCGM_FI_PROF_DFMA_UTIL_RATIO", F::kTensorDfmaActive, 1},
    {"DCGM_FI_DEV_SM_CLOCK", F::kSmClockMhz, 1},                      // 100
    {"DCGM_FI_DEV_MEM_CLOCK", F::kMemClockMhz, 1},                    // 101
    {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", F::kClocksEventReasons, 1},  // 112
    {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", F::kClocksEventReasons, 1},
    {"DCGM_FI_DEV_MEMORY_TEMP", F::kMemoryTempC, 1},  // 140
    {"DCGM_FI_DEV_MEMORY_TEMP_CELSIUS", F::kMemoryTempC, 1},
    {"DCGM_FI_DEV_GPU_TEMP", F::kGpuTempC, 1},  // 150
    {"DCGM_FI_DEV_GPU_TEMP_CELSIUS", F::kGpuTempC, 1},
    {"DCGM_FI_DEV_POWER_USAGE", F::kPowerWatts, 1},  // 155
    {"DCGM_FI_DEV_BOARD_POWER_WATTS", F::kPowerWatts, 1},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", F::kEnergyMillijoules, 1},  // 156
    {"DCGM_FI_DEV_POWER_MGMT_LIMIT", F::kPowerLimitWatts, 1},            // 160
    {"DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS", F::kPowerLimitWatts, 1},
    {"DCGM_FI_DEV_ENFORCED_POWER_LIMIT", F::kPowerLimitWatts, 1},  // 164
    {"DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS", F::kPowerLimitWatts, 1},
    {"DCGM_FI_DEV_XID_ERRORS", F::kXidErrors, 1},  // 230
    {"DCGM_FI_DEV_XID_ERROR", F::kXidErrors, 1},
    {"DCGM_FI_DEV_POWER_VIOLATION", F::kPowerViolationUs, 1},      // 240
    {"DCGM_FI_DEV_THERMAL_VIOLATION", F::kThermalViolationUs, 1},  // 241
    {"DCGM_FI_DEV_FB_FREE", F::kFbFreeMib, 1},                     // 251
    {"DCGM_FI_DEV_FB_USED", F::kFbUsedMib, 1},                     // 252
};

// AMD device-metrics-exporter, upper case as in its configuration (the
// exporter lower-cases them and may prefix "amd_"). Percent fields are 0..100
// per metricslist.md. GPU_CLOCK is kept only for its system (GFX/SCLK) clock
// type, see IsAmdSmClockSeries. GPU_UMC_ACTIVITY (memory engine busy %) is
// AMD's closest counterpart of DRAM_ACTIVE; GPU_ENERGY_CONSUMED is in uJ.
constexpr MetricName kAmdNames[] = {
    {"GPU_GFX_ACTIVITY", F::kGpuUtil, 0.01},
    {"GPU_USAGE", F::kGpuUtil, 0.01},  // older exporters (metrics_mini.txt)
    {"GPU_UMC_ACTIVITY", F::kDramActive, 0.01},
    {"GPU_PROF_SM_ACTIVE", F::kSmActive, 0.01},
    {"GPU_PROF_OCCUPANCY_PERCENT", F::kSmOccupancy, 0.01},
    {"GPU_PROF_TENSOR_ACTIVE_PERCENT", F::kTensorActive, 0.01},
    {"GPU_PROF_TOTAL_16_OPS", F::kAmdTotal16Ops, 1},
    {"GPU_PROF_TOTAL_32_OPS", F::kAmdTotal32Ops, 1},
    {"GPU_PROF_TOTAL_64_OPS", F::kAmdTotal64Ops, 1},
    {"GPU_CLOCK", F::kSmClockMhz, 1},
    {"GPU_POWER_USAGE", F::kPowerWatts, 1},
    {"GPU_ENERGY_CONSUMED", F::kEnergyMillijoules, 0.001},
    {"GPU_JUNCTION_TEMPERATURE", F::kGpuTempC, 1},
    {"GPU_MEMORY_TEMPERATURE", F::kMemoryTempC, 1},
    {"GPU_USED_VRAM", F::kFbUsedMib, 1},
    {"GPU_FREE_VRAM", F::kFbFreeMib, 1},
};

constexpr const char* kFieldIds[] = {
    "gpu_util",           "gr_engine_active",     "sm_active",          "sm_occupancy",    "tensor_active",
    "tensor_dfma_active", "tensor_hmma_active",   "tensor_imma_active", "fp64_active",     "fp32_active",
    "fp16_active",        "dram_active",          "sm_clock_mhz",       "mem_clock_mhz",   "power_watts",
    "power_limit_watts",  "energy_millijoules",   "gpu_temp_c",         "memory_temp_c",   "clocks_event_reasons",
    "power_violation_us", "thermal_violation_us", "xid_errors",         "fb_used_mib",     "fb_free_mib",
    "pcie_tx_bytes",      "pcie_rx_bytes",        "nvlink_tx_bytes",    "nvlink_rx_bytes", "amd_total_16_ops",
    "amd_total_32_ops",   "amd_total_64_ops",
};
static_assert(std::size(kFieldIds) == kNumTelemetryFields);

bool EqualsUpper(std::string_view upper, std::string_view s) {
  if (upper.size() != s.size())
    return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(s[i])) != upper[i])
      return false;
  }
  return true;
}

// DCGM's blank values (NVIDIA/DCGM dcgmlib/dcgm_structs.h, nvcmvalue.h):
// DCGM_INT32_BLANK 0x7ffffff0, DCGM_INT64_BLANK 0x7ffffffffffffff0,
// DCGM_FP64_BLANK 140737488355328.0 (2^47), each followed by NOT_FOUND (+1),
// NOT_SUPPORTED (+2), NOT_PERMISSIONED (+3) and room to +15 ("47 bits can
// still increment by 1 and represent each value from 0-15").
constexpr double kInt32Blank = 2147483632.0;  // 0x7ffffff0
constexpr double kFp64Blank = 140737488355328.0;
// DCGM_INT64_BLANK .. +15 lie within 16 of 2^63, where doubles are 1024
// apart: read as a double, every one of them is 2^63 exactly
// (9223372036854775794, the quickstart excerpt's NOT_SUPPORTED, included).
constexpr double kTwoTo63 = 9223372036854775808.0;

}  // namespace

const char* TelemetryFieldId(TelemetryField field) {
  const size_t i = static_cast<size_t>(field);
  return i < kNumTelemetryFields ? kFieldIds[i] : "unknown";
}

std::optional<TelemetryField> ResolveTelemetryMetric(std::string_view name, double* scale) {
  if (name.starts_with("DCGM_FI_")) {
    for (const MetricName& m : kDcgmNames) {
      if (m.name == name) {
        if (scale)
          *scale = m.scale;
        return m.field;
      }
    }
    return std::nullopt;
  }
  if (base::StartsWithNoCase(name, "amd_"))
    name.remove_prefix(4);
  for (const MetricName& m : kAmdNames) {
    if (EqualsUpper(m.name, name)) {
      if (scale)
        *scale = m.scale;
      return m.field;
    }
  }
  return std::nullopt;
}

bool IsTelemetrySentinel(double value) {
  if (!std::isfinite(value))
    return true;
  if (value >= kInt32Blank && value <= kInt32Blank + 15)
    return true;
  if (value >= kFp64Blank && value <= kFp64Blank + 15)
    return true;
  return value >= kTwoTo63 && value <= kTwoTo63;
}

std::string TelemetryDevice::Key() const {
  std::string key = uuid.empty() ? hostname + "/" + gpu : uuid;
  key += '|';
  key += mig_profile;
  key += '|';
  key += mig_instance;
  key += '|';
  key += k8s_namespace;
  key += '/';
  key += pod;
  key += '/';
  key += container;
  return key;
}

namespace fleet {

bool IsAmdMetric(std::string_view name) {
  return !name.starts_with("DCGM_FI_");
}

bool ApplyTelemetryLabel(std::string_view name, std::string_view value, TelemetryDevice& d) {
  struct LabelSlot {
    std::string_view upper;
    std::string TelemetryDevice::*member;
  };
  // Matched case-insensitively: dcgm-exporter's camelCase and upper-case
  // labels, AMD's lower-case ones and its older upper-case style.
  static constexpr LabelSlot kSlots[] = {
      {"UUID", &TelemetryDevice::uuid},
      {"GPU_UUID", &TelemetryDevice::uuid},  // AMD; dcgm-exporter's NVLink template
      {"HOSTNAME", &TelemetryDevice::hostname},
      {"GPU", &TelemetryDevice::gpu},
      {"GPU_ID", &TelemetryDevice::gpu},  // AMD
      {"PCI_BUS_ID", &TelemetryDevice::pci_bus_id},
      {"DEVICE", &TelemetryDevice::device},
      {"MODELNAME", &TelemetryDevice::model_name},
      {"MODEL_NAME", &TelemetryDevice::model_name},  // NVLink template
      {"CARD_MODEL", &TelemetryDevice::model_name},  // AMD
      {"GPU_I_PROFILE", &TelemetryDevice::mig_profile},
      {"GPU_PARTITION_ID", &TelemetryDevice::mig_profile},  // AMD
      {"GPU_I_ID", &TelemetryDevice::mig_instance},
      {"NAMESPACE", &TelemetryDevice::k8s_namespace},
      {"POD", &TelemetryDevice::pod},
      {"CONTAINER", &TelemetryDevice::container},
      {"POD_UID", &TelemetryDevice::pod_uid},
      {"POD_UUID", &TelemetryDevice::pod_uid},  // AMD
      {"HPC_JOB", &TelemetryDevice::hpc_job},
      {"JOB_ID", &TelemetryDevice::hpc_job},  // AMD's Slurm integration
      {"DCGM_FI_DRIVER_VERSION", &TelemetryDevice::driver_version},
      {"DRIVER_VERSION", &TelemetryDevice::driver_version},  // AMD
  };
  for (const LabelSlot& slot : kSlots) {
    if (EqualsUpper(slot.upper, name)) {
      d.*slot.member = std::string(value);
      return true;
    }
  }
  return false;
}

bool IsAmdSmClockSeries(std::string_view clock_type, std::string_view clock_index) {
  const bool system = clock_type.empty() || EqualsUpper("GPU_CLOCK_TYPE_SYSTEM", clock_type);
  return system && (clock_index.empty() || clock_index == "0");
}

void StatsBuilder::Unknown(std::string_view metric) {
  ++stats.unknown_metric_samples;
  AddName(stats.unknown_metrics, metric);
}

void StatsBuilder::Sentinel(std::string_view metric) {
  ++stats.sentinels;
  AddName(stats.sentinel_metrics, metric);
}

void StatsBuilder::AddName(std::vector<std::string>& names, std::string_view metric) {
  if (names.size() >= kMaxStatNames || std::find(names.begin(), names.end(), metric) != names.end())
    return;
  names.emplace_back(metric);
}

void StatsBuilder::Store(std::string_view metric, TelemetryField field, double raw, double scale, TelemetryPoint& point,
                         uint64_t& filled) {
  static_assert(kNumTelemetryFields <= 64);
  if (IsTelemetrySentinel(raw)) {
    Sentinel(metric);
    return;
  }
  const size_t f = static_cast<size_t>(field);
  const uint64_t bit = uint64_t{1} << f;
  if (filled & bit) {
    ++stats.duplicate_samples;
    return;
  }
  filled |= bit;
  point.value[f] = raw * scale;
  seen.set(f);
}

TelemetryReadStats StatsBuilder::Finish() {
  stats.fields_seen.clear();
  for (size_t i = 0; i < kNumTelemetryFields; ++i) {
    if (seen[i])
      stats.fields_seen.emplace_back(kFieldIds[i]);
  }
  return std::move(stats);
}

}  // namespace fleet
}  // namespace mfu
