#include "testing/telemetry_gen.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <utility>

namespace mfu::testing {

namespace {

// HELP texts: dcgm-exporter's etc/default-counters.csv and
// etc/dcp-metrics-included.csv (tests/data/telemetry/), commented-out rows
// included; the rows those files lack take the DCGM 4.6 field description
// (dcgm_fields_4.6.0.tsv, id in the comment).
const std::vector<TelemetryGenField> kFields = {
    {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."},
    {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."},
    {"DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned."},
    {"DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM."},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
     "Ratio of cycles the device memory interface is active sending or receiving data."},
    {"DCGM_FI_PROF_PIPE_FP64_ACTIVE", "gauge", "Ratio of cycles the fp64 pipes are active."},
    {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", "gauge", "Ratio of cycles the fp32 pipes are active."},
    {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", "gauge", "Ratio of cycles the fp16 pipes are active."},
    // 112
    {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gauge",
     "Current clock event reasons (bitmask of DCGM_CLOCKS_EVENT_REASON_*)."},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."},
    // 160
    {"DCGM_FI_DEV_POWER_MGMT_LIMIT", "gauge", "Current power limit for the device (in W)."},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."},
    {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."},
    {"DCGM_FI_DEV_POWER_VIOLATION", "counter", "Throttling duration due to power constraints (in us)."},
    {"DCGM_FI_DEV_THERMAL_VIOLATION", "counter", "Throttling duration due to thermal constraints (in us)."},
    {"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", "gauge",
     "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes "
     "per second."},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", "gauge",
     "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per "
     "second."},
    // 1011, 1012
    {"DCGM_FI_PROF_NVLINK_TX_BYTES", "gauge",
     "The rate of data transmitted over NVLink, not including protocol headers, in bytes per second."},
    {"DCGM_FI_PROF_NVLINK_RX_BYTES", "gauge",
     "The rate of data received over NVLink, not including protocol headers, in bytes per second."},
    // 1014, 1013, 1015
    {"DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."},
    {"DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE", "gauge", "Ratio of cycles the tensor (IMMA) pipe is active."},
    {"DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE", "gauge", "Ratio of cycles the tensor (DFMA) pipe is active."},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."},
    {"DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %)."},
    {"DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %)."},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."},
    {"DCGM_FI_DEV_SYNC_BOOST_VIOLATION", "counter", "Throttling duration due to sync-boost constraints (in us)."},
    {"DCGM_FI_DEV_BOARD_LIMIT_VIOLATION", "counter", "Throttling duration due to board limit constraints (in us)."},
    {"DCGM_FI_DEV_LOW_UTIL_VIOLATION", "counter", "Throttling duration due to low utilization (in us)."},
    {"DCGM_FI_DEV_RELIABILITY_VIOLATION", "counter", "Throttling duration due to reliability constraints (in us)."},
    {"DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB)."},
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors."},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors."},
    {"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "counter", "Total number of single-bit persistent ECC errors."},
    {"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter", "Total number of double-bit persistent ECC errors."},
    {"DCGM_FI_DEV_RETIRED_SBE", "counter", "Total number of retired pages due to single-bit errors."},
    {"DCGM_FI_DEV_RETIRED_DBE", "counter", "Total number of retired pages due to double-bit errors."},
    {"DCGM_FI_DEV_RETIRED_PENDING", "counter", "Total number of pages pending retirement."},
    {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink flow-control CRC errors."},
    {"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink data CRC errors."},
    {"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries."},
    {"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink recovery errors."},
    {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth counters for all lanes."},
    {"DCGM_FI_DEV_NVLINK_BANDWIDTH_L0", "counter",
     "The number of bytes of active NVLink rx or tx data including both header and payload."},
    {"DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status"},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors"},
    {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"},
    // 158, 250, 164, 157, 190
    {"DCGM_FI_DEV_SLOWDOWN_TEMP", "gauge", "Slowdown temperature for the device (in C)."},
    {"DCGM_FI_DEV_FB_TOTAL", "gauge", "Framebuffer memory total (in MiB)."},
    {"DCGM_FI_DEV_ENFORCED_POWER_LIMIT", "gauge",
     "Effective power limit that the driver enforces after taking into account all limiters (in W)."},
    {"DCGM_FI_DEV_POWER_USAGE_INSTANT", "gauge", "Current instantaneous power usage of the device (in W)."},
    {"DCGM_FI_DEV_PSTATE", "gauge", "Performance state (P-State) 0-15. 0=highest"},
};

// splitmix64: a seeded, platform-independent sequence for uuids.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void AppendNumber(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[64];
  std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  out.append(buf, r.ptr);
}

void AppendLabel(std::string& out, bool& first, std::string_view name, std::string_view value) {
  if (!first)
    out += ',';
  first = false;
  out += name;
  out += "=\"";
  for (char c : value) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
}

std::vector<std::pair<std::string, std::string>> Labels(const TelemetryGenGpu& g, std::string_view hostname_label,
                                                        std::string_view driver) {
  std::vector<std::pair<std::string, std::string>> l;
  l.emplace_back("gpu", std::to_string(g.index));
  l.emplace_back("UUID", g.uuid);
  l.emplace_back("pci_bus_id", g.pci_bus_id);
  l.emplace_back("device", "nvidia" + std::to_string(g.index));
  l.emplace_back("modelName", g.model_name);
  if (!g.mig_profile.empty())
    l.emplace_back("GPU_I_PROFILE", g.mig_profile);
  if (!g.mig_instance.empty())
    l.emplace_back("GPU_I_ID", g.mig_instance);
  l.emplace_back(std::string(hostname_label), g.hostname);
  l.emplace_back("DCGM_FI_DRIVER_VERSION", std::string(driver));
  if (!g.pod.empty()) {
    l.emplace_back("container", g.container);
    l.emplace_back("namespace", g.k8s_namespace);
    l.emplace_back("pod", g.pod);
    l.emplace_back("pod_uid", g.pod_uid);
  }
  if (!g.hpc_job.empty())
    l.emplace_back("hpc_job", g.hpc_job);
  return l;
}

std::string LabelText(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::string out;
  bool first = true;
  for (const auto& [k, v] : labels)
    AppendLabel(out, first, k, v);
  return out;
}

}  // namespace

const std::vector<TelemetryGenField>& TelemetryGenFields() {
  return kFields;
}

std::vector<TelemetryGenGpu> MakeTelemetryGpus(int num_gpus, int gpus_per_host, int num_jobs,
                                               TelemetryGenJobLabels jobs, uint64_t seed) {
  std::vector<TelemetryGenGpu> gpus(static_cast<size_t>(std::max(num_gpus, 0)));
  const int per_host = std::max(gpus_per_host, 1);
  const int per_job = std::max(1, (num_gpus + std::max(num_jobs, 1) - 1) / std::max(num_jobs, 1));
  for (int i = 0; i < num_gpus; ++i) {
    TelemetryGenGpu& g = gpus[static_cast<size_t>(i)];
    const uint64_t a = Mix(seed * uint64_t{1000003} + static_cast<uint64_t>(static_cast<unsigned>(i)));
    const uint64_t b = Mix(a);
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "GPU-%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%012" PRIx64, a >> 32,
                  (a >> 16) & 0xffff, a & 0xffff, b >> 48, b & uint64_t{0xffffffffffff});
    g.uuid = uuid;
    g.index = i % per_host;
    g.hostname = "node-" + std::to_string(i / per_host);
    char bus[32];
    std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x18 + 0x10 * g.index);
    g.pci_bus_id = bus;
    const int job = i / per_job;
    const int rank = i % per_job;
    if (jobs == TelemetryGenJobLabels::kPod) {
      g.k8s_namespace = "team-" + std::to_string(job);
      g.pod = "train-" + std::to_string(job) + "-" + std::to_string(rank / per_host);
      g.container = "trainer";
      g.pod_uid = "";
    } else if (jobs == TelemetryGenJobLabels::kHpcJob) {
      g.hpc_job = std::to_string(1000 + job);
    }
  }
  return gpus;
}

double TelemetryGenValue(const TelemetryGenGpu& g, std::string_view metric) {
  if (auto it = g.overrides.find(metric); it != g.overrides.end())
    return it->second;
  const std::pair<std::string_view, double> named[] = {
      {"DCGM_FI_DEV_GPU_UTIL", g.gpu_util_percent},
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", g.gr_engine_active},
      {"DCGM_FI_PROF_SM_ACTIVE", g.sm_active},
      {"DCGM_FI_PROF_SM_OCCUPANCY", g.sm_occupancy},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", g.tensor_active},
      {"DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", g.tensor_active},
      {"DCGM_FI_PROF_DRAM_ACTIVE", g.dram_active},
      {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", g.fp16_active},
      {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", g.fp32_active},
      {"DCGM_FI_PROF_PIPE_FP64_ACTIVE", g.fp64_active},
      {"DCGM_FI_DEV_SM_CLOCK", g.sm_clock_mhz},
      {"DCGM_FI_DEV_MEM_CLOCK", g.mem_clock_mhz},
      {"DCGM_FI_DEV_POWER_USAGE", g.power_w},
      {"DCGM_FI_DEV_POWER_USAGE_INSTANT", g.power_w},
      {"DCGM_FI_DEV_POWER_MGMT_LIMIT", g.power_limit_w},
      {"DCGM_FI_DEV_ENFORCED_POWER_LIMIT", g.power_limit_w},
      {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", g.clocks_event_reasons},
      {"DCGM_FI_DEV_XID_ERRORS", g.xid},
      {"DCGM_FI_DEV_GPU_TEMP", 40 + g.index % 7},
      {"DCGM_FI_DEV_MEMORY_TEMP", 45 + g.index % 5},
      {"DCGM_FI_DEV_SLOWDOWN_TEMP", 87},
      {"DCGM_FI_DEV_FB_TOTAL", 81559},
      {"DCGM_FI_DEV_FB_USED", 61440},
      {"DCGM_FI_DEV_FB_FREE", 19600},
      {"DCGM_FI_DEV_FB_RESERVED", 519},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", 5551899580.0 + 1000.0 * g.index},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", 100 * g.dram_active},
      {"DCGM_FI_PROF_PCIE_TX_BYTES", 4791810},
      {"DCGM_FI_PROF_PCIE_RX_BYTES", 6935930},
      {"DCGM_FI_PROF_NVLINK_TX_BYTES", 1.5e10},
      {"DCGM_FI_PROF_NVLINK_RX_BYTES", 1.5e10},
  };
  for (const auto& [name, value] : named) {
    if (name == metric)
      return value;
  }
  return 0;
}

std::string GenerateExposition(const ExpositionGenOptions& options) {
  std::vector<std::string> names = options.fields;
  if (names.empty()) {
    const size_t n = std::min(kFields.size(), static_cast<size_t>(std::max(options.num_fields, 0)));
    for (size_t i = 0; i < n; ++i)
      names.emplace_back(kFields[i].name);
  }
  std::vector<std::string> labels;
  labels.reserve(options.gpus.size());
  for (const TelemetryGenGpu& g : options.gpus)
    labels.push_back(LabelText(Labels(g, options.hostname_label, options.driver_version)));
  std::string out;
  out.reserve(names.size() * options.gpus.size() * 300 + 4096);
  for (const std::string& name : names) {
    if (options.help_and_type) {
      auto it =
          std::find_if(kFields.begin(), kFields.end(), [&](const TelemetryGenField& f) { return f.name == name; });
      const char* help = it == kFields.end() ? "Generated field." : it->help;
      const char* type = it == kFields.end() ? "gauge" : it->type;
      out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    }
    for (size_t i = 0; i < options.gpus.size(); ++i) {
      out += name;
      out += '{';
      out += labels[i];
      out += "} ";
      AppendNumber(out, TelemetryGenValue(options.gpus[i], name));
      if (options.timestamp_ms > 0)
        out += " " + std::to_string(options.timestamp_ms);
      out += '\n';
    }
  }
  return out;
}

std::string GenerateQueryRange(const QueryRangeGenOptions& options) {
  const int64_t steps = options.step_s > 0 ? static_cast<int64_t>(options.duration_s / options.step_s) + 1 : 1;
  std::vector<std::string> names = options.fields;
  std::sort(names.begin(), names.end());
  std::string out = R"({"status":"success","data":{"resultType":"matrix","result":[)";
  out.reserve(static_cast<size_t>(steps) * names.size() * options.gpus.size() * 26 + out.size() + 4096);
  bool first_series = true;
  for (const std::string& name : names) {
    for (size_t i = 0; i < options.gpus.size(); ++i) {
      const TelemetryGenGpu& g = options.gpus[i];
      auto labels = Labels(g, "Hostname", "570.124.06");
      labels.emplace_back("__name__", name);
      labels.emplace_back("instance", g.hostname + ":9400");
      labels.emplace_back("job", "dcgm-exporter");
      std::sort(labels.begin(), labels.end());
      out += first_series ? "{\"metric\":{" : ",{\"metric\":{";
      first_series = false;
      for (size_t k = 0; k < labels.size(); ++k) {
        out += k ? ",\"" : "\"";
        out += labels[k].first + "\":\"" + labels[k].second + "\"";
      }
      out += "},\"values\":[";
      for (int64_t s = 0; s < steps; ++s) {
        out += s ? ",[" : "[";
        AppendNumber(out, options.start_s + static_cast<double>(s) * options.step_s);
        out += ",\"";
        AppendNumber(out, options.value ? options.value(i, s, name) : TelemetryGenValue(g, name));
        out += "\"]";
      }
      out += "]}";
    }
  }
  out += "]}}";
  return out;
}

}  // namespace mfu::testing
