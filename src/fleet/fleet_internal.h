#pragma once

// The pieces of the fleet analysis (mfu/fleet.h), one file each: the
// per-GPU estimate (estimate.cc), throttle reasons (throttle.cc), health
// findings (findings.cc), job and node grouping with fleet totals (jobs.cc),
// the --jobs file, the mapping directory and the reported MFU
// (jobs_file.cc). FleetAnalyzer (analyzer.cc) strings them together.

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/fleet.h"

namespace mfu::fleet {

// Below this tensor activity (and GPU_UTIL) an interval counts as idle.
inline constexpr double kIdleActivity = 0.01;

// What EstimateGpu needs beyond the series: the device from the database
// (nullptr when modelName is unknown) and the precision of its job.
struct EstimateInputs {
  const Accelerator* accelerator = nullptr;
  DType precision = DType::kBf16;
  double snapshot_interval_s = 30;
};

// The time-weighted figures of one device over its points (time order):
// each point stands for the time to the next one; the last for the median
// step (a single point: `snapshot_interval_s`). Fills every GpuEstimate
// field but job_id, throttle findings beyond the decode, and the
// cross-device findings; adds the per-GPU findings of findings.cc.
GpuEstimate EstimateGpu(const TelemetryDevice& device, std::span<const TelemetryPoint> points,
                        const EstimateInputs& inputs);

// The seconds each point stands for (see EstimateGpu).
std::vector<double> PointDurations(std::span<const TelemetryPoint> points, double snapshot_interval_s);

// The fraction of a GPU a MIG profile's compute slices stand for ("3g.40gb"
// -> 3/7; A30's profiles out of 4); 1 for no profile or one that does not
// parse.
double MigShare(std::string_view mig_profile, const Accelerator* accelerator);

// The clock-event bits that mean the clocks are held below what the work
// asks for: all but gpu_idle (0x1), applications_clocks_setting (0x2) and
// display_clock_setting (0x100).
inline constexpr uint64_t kThrottleMask = ~uint64_t{0x1 | 0x2 | 0x100};

// The per-GPU findings of one device's series (findings.cc): missing
// fields, profiling stuck at zero, low tensor activity while busy, MIG
// without GPU_UTIL, XIDs, throttling, unknown accelerator, unsupported
// precision.
// `seconds`: PointDurations of `points`.
void AddGpuFindings(std::span<const TelemetryPoint> points, std::span<const double> seconds,
                    const EstimateInputs& inputs, GpuEstimate& gpu);

// A hash of a device's values over time, equal for two pods to which
// time-slicing copies one GPU's series.
uint64_t SeriesFingerprint(std::span<const TelemetryPoint> points);

// Stale samples against `now_ms` and identical series on pods of one GPU
// (`fingerprints` parallel to `gpus`): findings, and gpu_share 1/n.
void AddFleetFindings(int64_t now_ms, double stale_after_s, const std::vector<uint64_t>& fingerprints,
                      std::vector<GpuEstimate>& gpus);

// The job a device belongs to, with where the id came from ("kubernetes",
// "slurm", "mapping_file", "jobs_file"); empty when nothing names one.
struct JobAssignment {
  std::string id;
  std::string source;
};
// `mapping`: GPU index -> job ids (the mapping directory).
JobAssignment AssignJob(const TelemetryDevice& device, const std::vector<FleetJobReport>& reports,
                        const std::map<std::string, std::vector<std::string>>& mapping);

// A pod's job: the pod name without its ordinal, hash and role suffixes
// ("llama-train-worker-3" -> "llama-train", "bert-7d9f8c6b5-x2x7q" ->
// "bert"), prefixed with the namespace ("team-a/llama-train").
std::string PodJobId(std::string_view k8s_namespace, std::string_view pod);

// Jobs (sorted by id) with their spread and stragglers; adds "straggler"
// findings to the GPUs.
std::vector<JobEstimate> GroupJobs(std::vector<GpuEstimate>& gpus, const std::vector<std::string>& sources,
                                   double straggler_fraction);
// Nodes by hostname (sorted) and the fleet totals, weighted by gpu_share.
std::vector<NodeEstimate> GroupNodes(const std::vector<GpuEstimate>& gpus);
FleetTotals ComputeTotals(const std::vector<GpuEstimate>& gpus);

// dcgm-exporter's --hpc-job-mapping-dir: GPU index -> job ids. Errors name
// the directory or file.
StatusOr<std::map<std::string, std::vector<std::string>>> ReadHpcJobMapping(const FileSystem& fs,
                                                                            const std::string& dir);

// The model-FLOPs MFU a job's reported throughput gives on its GPUs:
// tokens/s x training FLOPs per token (the convention, at seq_len) /
// (GPUs x dense peak at the job's precision). Errors name the --jobs entry.
StatusOr<double> ReportedMfu(const FleetJobReport& report, const JobEstimate& job, const std::vector<GpuEstimate>& gpus,
                             const FileSystem& fs);

// A job's training logs as its report (job_log.cc): the steady-state MFU
// (nullopt when the log cannot give one: a "log_missing_input" finding
// names the --jobs fields to add), where it came from, what the log said,
// and the job findings its log findings make ("log_restart",
// "log_peak_a100_fallback", ...).
struct JobLogResult {
  std::optional<double> mfu;
  std::string source;  // "log FILE: steady state steps a-b, convention c"
  JobLogSummary summary;
  std::vector<FleetFinding> findings;
};
// Reads and analyses `report.log` (AnalyzeTrainingLogFiles) with the
// entry's model, gpu, gpus, seq_len, global_batch, precision and
// convention, else the log's header, else the accelerator and GPU count
// the telemetry shows for `job`. Errors name the flag or jobs-file field
// and the file: a read error (kNotFound), a file without step lines
// (kParse), a bad entry field (kParse, "--jobs entry 'ID': ...").
StatusOr<JobLogResult> AnalyzeJobLog(const FleetJobReport& report, const JobEstimate& job,
                                     const std::vector<GpuEstimate>& gpus, const HardwareDb& hardware,
                                     const FileSystem& fs);
// FleetOptions::job_log_cache: the last analysis of each job's logs with
// what it depended on. Locked: one analysis at a time may use it.
class JobLogCache {
 public:
  static constexpr double kRereadS = 30;
  // AnalyzeJobLog, or the kept result when nothing it depends on changed.
  // A failed read with a kept result returns that result with a
  // "log_stale" finding; with none, a result holding only a "log_error"
  // finding (the exporter keeps serving the telemetry).
  JobLogResult Get(const FleetJobReport& report, const JobEstimate& job, const std::vector<GpuEstimate>& gpus,
                   const HardwareDb& hardware, const FileSystem& fs);

 private:
  struct Entry {
    std::vector<uint64_t> sizes;
    std::string telemetry;  // accelerators and GPU count of the job
    std::chrono::steady_clock::time_point read_at;
    JobLogResult result;
  };
  std::mutex mu_;
  std::map<std::string, Entry> entries_;  // by job id
};

// Every log of `report` is a regular file: kNotFound naming the flag or
// field and the file otherwise (checked when an analysis starts).
Status CheckJobLogs(const FleetJobReport& report, const FileSystem& fs);

// The time-weighted median of `values` (weights > 0); NaN when empty.
double Median(std::vector<double> values);

}  // namespace mfu::fleet
