#pragma once

// The fleet view: GPU telemetry (mfu/telemetry.h) to an estimate of the
// hardware FLOP/s each GPU delivers, its estimated MFU against the dense peak
// of the job's precision, memory-bandwidth utilization, throttling and health
// findings; GPUs grouped into jobs (Kubernetes, Slurm hpc_job labels,
// dcgm-exporter's --hpc-job-mapping-dir files) with stragglers and, where a
// job reports its throughput, the model-FLOPs MFU beside the estimate; fleet
// totals with GPU-hours by MFU band.
//
// Every estimated figure is an estimate of *hardware* FLOPs from tensor-pipe
// activity: achieved FLOP/s = tensor_active x SMs x dense FLOP per clock per
// SM (dense peak / (SMs x boost clock)) x SM clock. It misses non-tensor
// FLOPs, counts recompute and padding, and cannot know the precision, which
// comes from the request (stated as an assumption when defaulted).

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/note.h"
#include "mfu/status.h"
#include "mfu/telemetry.h"

namespace mfu {
namespace fleet {
class JobLogCache;  // fleet/fleet_internal.h
}  // namespace fleet

inline constexpr int kFleetSchemaVersion = 3;  // the JSON schema of every command (docs/cli.md)

// dcgm's clock-event (throttle) reason bits, DCGM_CLOCKS_EVENT_REASON_* /
// nvml's nvmlClocksEventReason*: 0x1 gpu_idle, 0x2 applications_clocks_setting,
// 0x4 sw_power_cap, 0x8 hw_slowdown, 0x10 sync_boost, 0x20 sw_thermal,
// 0x40 hw_thermal, 0x80 hw_power_brake, 0x100 display_clock_setting.
// Returns the names of the set bits in bit order; unknown bits as
// "unknown_0x...".
std::vector<std::string> DecodeClocksEventReasons(uint64_t bits);

// A health finding on one GPU or job: a stable code scripts may test and one
// sentence saying what is wrong and, where one exists, the exporter setting
// or fix. Codes: "profiling_stuck_zero" (GR_ENGINE/TENSOR at 0 while GPU_UTIL
// is high, dcgm-exporter#662), "time_sliced_identical" (identical values on
// every pod of one GPU, #587), "stale" (newest sample older than the
// staleness limit), "sentinel" (blank values dropped), "missing_field"
// (e.g. no PIPE_TENSOR_ACTIVE: enable DCGM_FI_PROF_* in the counters CSV),
// "no_gpu_util_on_mig", "throttled", "xid", "unknown_accelerator",
// "straggler"; also "low_tensor_while_busy" (GPU_UTIL high, tensor pipes
// nearly idle: "GPU_UTIL 91% but tensor pipes 0.6% busy"),
// and "unsupported_precision" (the device has no dense peak at the
// precision). Sentinels are counted by the reader, so "sentinel" is a
// report Note, not a per-GPU finding.
struct FleetFinding {
  std::string code;
  std::string message;
};

// GPU-hours by estimated-MFU band: idle (tensor activity and GPU_UTIL ~ 0),
// below 30%, 30-60%, above 60%.
enum class MfuBand : uint8_t { kIdle = 0, kBelow30, k30To60, kAbove60, kCount };
inline constexpr size_t kNumMfuBands = static_cast<size_t>(MfuBand::kCount);
const char* MfuBandId(MfuBand band);  // "idle", "below_30", "30_to_60", "above_60"

struct GpuEstimate {
  TelemetryDevice device;
  std::string accelerator;       // hardware database id; "" when modelName is unknown
  std::string accelerator_name;  // its display name ("NVIDIA H100 SXM5 80GB"); "" without one
  std::string job_id;            // "" when no job label or mapping names it
  double seconds = 0;            // time covered by the samples (a snapshot: the interval)
  int64_t last_sample_ms = 0;
  // Time-weighted means over the covered time; NaN where the field is absent.
  double gpu_util = 0;
  double tensor_active = 0;
  double dram_active = 0;
  double sm_clock_mhz = 0;
  double boost_clock_mhz = 0;  // from the hardware database
  double power_watts = 0;
  double estimated_flops = 0;      // FLOP/s (hardware, estimated); NaN when unknown
  double estimated_mfu = 0;        // fraction of the dense peak at the precision
  double estimated_mbu = 0;        // fraction of the memory bandwidth (DRAM_ACTIVE)
  double peak_flops = 0;           // the denominator: dense peak at the precision
  DType precision = DType::kBf16;  // the analysis precision or its job's
  // The fraction of a physical GPU this series stands for: a MIG instance's
  // compute slices (3g.40gb -> 3/7), 1/n for n time-sliced pods reporting one
  // GPU's identical values. GPU-hours and fleet sums are weighted by it.
  double gpu_share = 1;
  std::array<double, kNumMfuBands> gpu_hours_by_band{};
  std::vector<std::string> throttle_reasons;  // union over the covered time
  std::vector<FleetFinding> findings;
};

// One training log of a job: its path and who named it, for errors
// ("--job-log 501=train.log", "jobs.json: jobs[0].log").
struct FleetJobLog {
  std::string path;
  std::string given_by;
};

// A job's own report of its throughput (the --jobs file): the model-FLOPs
// MFU beside the telemetry estimate. The throughput is `tokens_per_sec`,
// `step_time_s` with `global_batch`, or the job's training logs (`log`:
// read and analysed by AnalyzeTrainingLogFiles, mfu/log_analysis.h; its
// steady-state MFU is the reported MFU).
struct FleetJobReport {
  std::string id;             // matches a job id from labels or mapping
  std::string model;          // a model preset, alias or config path ("" with a log: its header's)
  double tokens_per_sec = 0;  // whole job; or
  double step_time_s = 0;     // with global_batch x seq_len tokens per step
  int64_t global_batch = 0;
  int64_t seq_len = 0;     // 0 only with a log: its header's
  std::string precision;   // "" -> the analysis precision (with a log: the log's, else bf16)
  std::string convention;  // FLOPs convention of reported_mfu; "" -> megatron (with a log: its framework's)
  // Training logs of the job, in order (attempts of one run). With a log,
  // `gpu` (an accelerator name) and `gpus` (the job's GPU count) override
  // the log's header; "" / 0: the header's, else what the telemetry shows
  // for the job's GPUs.
  std::vector<FleetJobLog> log;
  std::string gpu;
  int64_t gpus = 0;
  // Selects the job's GPUs when labels do not name it: a prefix of
  // "namespace/pod", or an hpc_job value ("" -> `id` is matched as the job id).
  std::string match;
};

// What a job's training log gave the fleet view (reported MFU from a log).
struct JobLogSummary {
  std::vector<std::string> files;
  std::string format;  // LogFormatId
  int32_t attempts = 1;
  int64_t first_step = -1, last_step = -1;  // the steady-state window
  int64_t step_lines = 0;                   // timeline entries in the window
  std::string convention;                   // ConventionName of the MFU
  double tokens_per_s_per_gpu = 0;          // steady-state median; NaN when unknown
  double mfu = 0;                           // steady-state MFU; NaN when the log cannot give one
  double logged_mfu = 0;                    // the framework's own figure, steady state; NaN when not printed
  std::string model, model_source;          // sources: "jobs file", "header", "telemetry"
  std::optional<ModelSpec> model_spec;      // the model `model` names; nullopt when unknown
  std::string gpu, gpu_source;              // hardware database id
  std::string gpu_name;                     // its display name
  int64_t gpus = 0;
  std::string gpus_source;
  int64_t seq_len = 0;
  std::string seq_len_source;
};

struct JobEstimate {
  std::string id;
  std::string source;             // "kubernetes", "slurm", "mapping_file"
  std::vector<std::string> gpus;  // device keys
  double estimated_mfu = 0;       // time-weighted over its GPUs
  double mfu_min = 0, mfu_median = 0, mfu_max = 0;
  double tensor_active_median = 0;
  std::vector<std::string> stragglers;          // device keys far below the median
  std::optional<double> reported_mfu;           // model FLOPs MFU from the job's throughput
  std::optional<double> reported_to_estimated;  // reported / estimated
  // Where reported_mfu came from: "jobs file: tokens_per_sec, convention
  // megatron", "log train.log: steady state steps 100-900, convention palm";
  // "" without a report.
  std::string reported_source;
  std::optional<JobLogSummary> reported_log;  // set when the report is a log
  std::vector<FleetFinding> findings;
};

struct NodeEstimate {
  std::string hostname;
  int gpus = 0;
  double estimated_mfu = 0;
  double power_watts = 0;
};

struct FleetTotals {
  int gpus = 0;
  double estimated_mfu = 0;  // GPU-time weighted
  double gpu_hours = 0;
  std::array<double, kNumMfuBands> gpu_hours_by_band{};
};

struct FleetReport {
  int schema_version = kFleetSchemaVersion;
  std::string origin;
  DType precision = DType::kBf16;
  std::vector<GpuEstimate> gpus;
  std::vector<JobEstimate> jobs;
  std::vector<NodeEstimate> nodes;
  FleetTotals fleet;
  TelemetryReadStats read;
  std::vector<Note> notes;  // default_precision, snapshot interval, ...
};

struct FleetOptions {
  const HardwareDb* hardware = nullptr;     // required
  std::optional<DType> precision;           // nullopt: bf16, stated as a note
  double snapshot_interval_s = 30;          // time one exposition snapshot stands for
  double stale_after_s = 120;               // newest sample older than this vs `now_ms`
  int64_t now_ms = 0;                       // 0: the newest sample in the input
  double straggler_fraction = 0.8;          // below this x the job median tensor activity
  std::vector<FleetJobReport> job_reports;  // --jobs
  // dcgm-exporter --hpc-job-mapping-dir (internal/pkg/transformation/hpc.go):
  // one file per GPU named by its index on the host ("0", "1", ...; other
  // names are skipped), each line a job id. Read through `file_system`.
  std::string hpc_job_mapping_dir;
  // Reads the mapping directory and --jobs model config paths; nullptr: no
  // files (model presets only, no mapping directory).
  const FileSystem* file_system = nullptr;
  // Keeps each job's log analysis across analyses that share it (the
  // exporter's refreshes): a job's logs are read again only when a file's
  // size, or the accelerator or GPU count the telemetry shows for the job,
  // changed, or 30 s after the last read; a read that then fails keeps the
  // last result (with a log_stale finding) instead of failing the analysis.
  // nullptr: read on every analysis, a failure is the analysis' error.
  std::shared_ptr<fleet::JobLogCache> job_log_cache;
};

// Streams a telemetry input into a FleetReport: a TelemetryVisitor that keeps
// per-device accumulators only.
class FleetAnalyzer final : public TelemetryVisitor {
 public:
  explicit FleetAnalyzer(FleetOptions options);
  ~FleetAnalyzer() override;
  Status OnDevice(const TelemetryDevice& device, std::span<const TelemetryPoint> points) override;
  // Groups jobs and nodes, computes totals. Call once after reading.
  StatusOr<FleetReport> Finish(const TelemetryReadStats& read, std::string_view origin);

 private:
  struct State;
  State* state_;
};

// Reads and analyzes in one call (exposition or query_range text).
StatusOr<FleetReport> AnalyzeFleet(std::string_view text, std::string_view origin, const FleetOptions& options);

// Reads a --jobs file (JSON: {"jobs": [{"id", "model", "tokens_per_sec" |
// "step_time_s" + "global_batch" + "seq_len" | "log", "precision",
// "convention", "match", "gpu", "gpus"}]}; `log` a path or an array of
// paths, relative paths as written); errors name the file and field.
// `job_logs`: the --job-log JOB=FILE values, added by AddFleetJobLogs (an
// entry whose job they name needs no throughput of its own).
StatusOr<std::vector<FleetJobReport>> ParseFleetJobs(std::string_view text, std::string_view origin,
                                                     const std::vector<std::string>& job_logs = {});

// Adds `--job-log JOB=FILE` values to `reports`, in order: FILE is appended
// to the `log` of JOB's entry, or of a new entry {id: JOB} when the jobs
// file has none. kInvalidArgument (a usage error) naming the flag for a
// value without '=', an empty JOB or FILE, or a JOB whose --jobs entry
// gives its throughput (tokens_per_sec or step_time_s) already.
Status AddFleetJobLogs(const std::vector<std::string>& job_logs, std::vector<FleetJobReport>& reports);

}  // namespace mfu
