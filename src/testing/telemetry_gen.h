#pragma once

// Telemetry fixtures (test and benchmark only): real-format dcgm-exporter
// `/metrics` bodies and Prometheus `query_range` JSON answers for any number
// of GPUs, built from the field names, HELP texts and label shapes of the
// captures in tests/data/telemetry/ (dcgm-exporter's default-counters.csv and
// dcp-metrics-included.csv; the L40S and RTX 4000 Ada captures' labels).
// Deterministic: the same options give the same bytes.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mfu::testing {

// One exported metric: its dcgm-exporter name, Prometheus type and HELP text.
struct TelemetryGenField {
  const char* name;
  const char* type;  // "gauge" or "counter"
  const char* help;
};

// The 60 metrics GenerateExposition knows, the estimation inputs first
// (SM clock, utilization and profiling ratios, clocks-event reasons, power),
// then the rest of dcgm-exporter's default and commented-out counters.
const std::vector<TelemetryGenField>& TelemetryGenFields();

// One GPU as dcgm-exporter labels it, and its values in the exporter's units
// (GPU_UTIL in percent 0..100, profiling ratios 0..1, clocks MHz, power W).
struct TelemetryGenGpu {
  // Labels. Empty strings are left out (pod labels, MIG, hpc_job).
  std::string uuid;
  std::string hostname;
  int index = 0;  // gpu="<index>", device="nvidia<index>"
  std::string pci_bus_id;
  std::string model_name = "NVIDIA H100 80GB HBM3";
  std::string mig_profile;   // GPU_I_PROFILE, e.g. "1g.10gb"
  std::string mig_instance;  // GPU_I_ID
  std::string container;
  std::string k8s_namespace;
  std::string pod;
  std::string pod_uid;
  std::string hpc_job;

  // Values of the estimation inputs.
  double gpu_util_percent = 98;
  double gr_engine_active = 0.95;
  double sm_active = 0.9;
  double sm_occupancy = 0.45;
  double tensor_active = 0.5;
  double dram_active = 0.3;
  double fp16_active = 0.01;
  double fp32_active = 0.05;
  double fp64_active = 0;
  double sm_clock_mhz = 1980;
  double mem_clock_mhz = 2619;
  double power_w = 620;
  double power_limit_w = 700;
  double clocks_event_reasons = 0;  // bit mask (DCGM_CLOCKS_EVENT_REASON_*)
  double xid = 0;
  // Any metric's value by name, overriding the above and the defaults
  // (e.g. {"DCGM_FI_DEV_MEMORY_TEMP", 9223372036854775794.0}: a sentinel).
  std::map<std::string, double, std::less<>> overrides;
};

// How GPUs are grouped into jobs by labels.
enum class TelemetryGenJobLabels : uint8_t { kNone, kPod, kHpcJob };

// `num_gpus` GPUs, `gpus_per_host` to a host ("node-<h>"), with uuids
// "GPU-<8 hex>-..." derived from `seed`, split into `num_jobs` contiguous
// jobs: pods "train-<j>-<rank>" in namespace "team-<j>" (kPod) or hpc_job
// "<1000+j>" (kHpcJob). Values are the defaults above.
std::vector<TelemetryGenGpu> MakeTelemetryGpus(int num_gpus, int gpus_per_host = 8, int num_jobs = 2,
                                               TelemetryGenJobLabels jobs = TelemetryGenJobLabels::kPod,
                                               uint64_t seed = 1);

struct ExpositionGenOptions {
  std::vector<TelemetryGenGpu> gpus;
  // The first `num_fields` of TelemetryGenFields() (at most 60), or, when
  // `fields` is not empty, exactly those metric names.
  int num_fields = 60;
  std::vector<std::string> fields;
  bool help_and_type = true;                // "# HELP" / "# TYPE" lines, as the L40S capture
  std::string hostname_label = "Hostname";  // "hostname" in dcgm-exporter after #655
  std::string driver_version = "570.124.06";
  int64_t timestamp_ms = 0;  // appended to every sample when > 0
};

// A dcgm-exporter `/metrics` body: for each metric, HELP and TYPE (when
// asked), then one sample per GPU with the labels in the exporter's order
// (gpu, UUID, pci_bus_id, device, modelName, GPU_I_PROFILE, GPU_I_ID,
// Hostname, DCGM_FI_DRIVER_VERSION, container, namespace, pod, pod_uid,
// hpc_job).
std::string GenerateExposition(const ExpositionGenOptions& options);

// The value of `metric` for GPU `gpu` (index into the list) at step `step`.
using TelemetryGenValueFn = std::function<double(size_t gpu, int64_t step, std::string_view metric)>;

struct QueryRangeGenOptions {
  std::vector<TelemetryGenGpu> gpus;
  std::vector<std::string> fields;  // metric names
  double start_s = 1700000000;
  double duration_s = 3600;
  double step_s = 30;
  TelemetryGenValueFn value;  // when empty: each GPU's TelemetryGenGpu values
};

// A Prometheus HTTP API answer to `query_range` over `fields`:
// {"status":"success","data":{"resultType":"matrix","result":[...]}} with
// one series per (metric, GPU) carrying __name__, the exporter's labels and
// instance/job as Prometheus adds them, sorted by metric name as Prometheus
// returns them, values [t, "v"] with t in seconds. duration_s / step_s + 1
// samples per series.
std::string GenerateQueryRange(const QueryRangeGenOptions& options);

// The value GenerateExposition writes for `metric` of `gpu` (the named
// fields, an override, or a deterministic default for the others).
double TelemetryGenValue(const TelemetryGenGpu& gpu, std::string_view metric);

}  // namespace mfu::testing
