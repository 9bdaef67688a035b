// FleetAnalyzer: a TelemetryVisitor that turns each device's series into a
// GpuEstimate as the reader hands it over (so memory follows devices, not
// samples), then groups jobs and nodes and sums the fleet in Finish.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "fleet/fleet_internal.h"
#include "mfu/fleet.h"

namespace mfu {

struct FleetAnalyzer::State {
  explicit State(FleetOptions o) : options(std::move(o)) {}
  FleetOptions options;
  bool started = false;
  std::map<std::string, std::vector<std::string>> mapping;
  std::map<std::string, DType> job_precision;
  std::map<std::string, const Accelerator*> accelerators;  // by modelName; nullptr: unknown
  std::vector<GpuEstimate> gpus;
  std::vector<std::string> sources;
  std::vector<uint64_t> fingerprints;
  bool default_precision_used = false;
  bool snapshot_used = false;

  Status Start() {
    started = true;
    if (options.hardware == nullptr)
      return InternalError("FleetOptions.hardware is required");
    if (!options.hpc_job_mapping_dir.empty()) {
      if (options.file_system == nullptr)
        return InternalError("FleetOptions.file_system is required with hpc_job_mapping_dir");
      MFU_ASSIGN_OR_RETURN(mapping, fleet::ReadHpcJobMapping(*options.file_system, options.hpc_job_mapping_dir));
    }
    for (const FleetJobReport& r : options.job_reports) {
      // With a cache (the exporter) the logs were checked once, at its start.
      if (!r.log.empty() && options.job_log_cache == nullptr) {
        if (options.file_system == nullptr)
          return InternalError("FleetOptions.file_system is required with a job's log");
        MFU_RETURN_IF_ERROR(fleet::CheckJobLogs(r, *options.file_system));
      }
      if (!r.precision.empty()) {
        StatusOr<DType> d = ParseDType(r.precision);
        if (!d.ok())
          return InvalidArgumentError("parameter 'jobs' entry '" + r.id + "': precision: " + d.status().message());
        job_precision[r.id] = *d;
      }
    }
    return Status::Ok();
  }

  // The job's reported MFU: from its --jobs throughput or its logs.
  Status Report(const FleetJobReport& r, const std::vector<GpuEstimate>& estimates, JobEstimate& job) const {
    const InMemoryFileSystem no_files;
    const FileSystem& fs = options.file_system != nullptr ? *options.file_system : no_files;
    std::optional<double> mfu;
    if (!r.log.empty()) {
      fleet::JobLogResult log;
      if (options.job_log_cache != nullptr) {
        log = options.job_log_cache->Get(r, job, estimates, *options.hardware, fs);
      } else {
        MFU_ASSIGN_OR_RETURN(log, fleet::AnalyzeJobLog(r, job, estimates, *options.hardware, fs));
      }
      mfu = log.mfu;
      job.reported_source = std::move(log.source);
      job.reported_log = std::move(log.summary);
      job.findings.insert(job.findings.end(), log.findings.begin(), log.findings.end());
      if (!mfu)
        return Status::Ok();  // a log_missing_input finding says what to add
    } else {
      MFU_ASSIGN_OR_RETURN(mfu, fleet::ReportedMfu(r, job, estimates, fs));
      job.reported_source =
          fmt::format("jobs file: {}, convention {}",
                      r.tokens_per_sec > 0 ? "tokens_per_sec" : "step_time_s x global_batch x seq_len",
                      r.convention.empty() ? "megatron" : r.convention);
    }
    if (std::isnan(*mfu)) {
      job.findings.push_back({"unknown_accelerator",
                              "a GPU of the job has no dense peak at its precision: no "
                              "reported MFU"});
      return Status::Ok();
    }
    job.reported_mfu = *mfu;
    if (job.estimated_mfu > 0)
      job.reported_to_estimated = *mfu / job.estimated_mfu;
    return Status::Ok();
  }

  const Accelerator* Find(const std::string& model_name) {
    auto [it, inserted] = accelerators.try_emplace(model_name, nullptr);
    if (inserted && !model_name.empty()) {
      StatusOr<const Accelerator*> a = options.hardware->Find(model_name);
      it->second = a.ok() ? *a : nullptr;  // unknown: a finding, never a guess
    }
    return it->second;
  }
};

FleetAnalyzer::FleetAnalyzer(FleetOptions options) : state_(new State(std::move(options))) {}
FleetAnalyzer::~FleetAnalyzer() {
  delete state_;
}

Status FleetAnalyzer::OnDevice(const TelemetryDevice& device, std::span<const TelemetryPoint> points) {
  State& s = *state_;
  if (!s.started)
    MFU_RETURN_IF_ERROR(s.Start());
  const fleet::JobAssignment job = fleet::AssignJob(device, s.options.job_reports, s.mapping);
  fleet::EstimateInputs inputs;
  inputs.accelerator = s.Find(device.model_name);
  inputs.snapshot_interval_s = s.options.snapshot_interval_s;
  if (auto it = s.job_precision.find(job.id); it != s.job_precision.end()) {
    inputs.precision = it->second;
  } else {
    inputs.precision = s.options.precision.value_or(DType::kBf16);
    s.default_precision_used = s.default_precision_used || !s.options.precision.has_value();
  }
  const bool timed = points.size() >= 2 && points.front().time_ms > 0;
  s.snapshot_used = s.snapshot_used || !timed;
  GpuEstimate gpu = fleet::EstimateGpu(device, points, inputs);
  gpu.job_id = job.id;
  s.gpus.push_back(std::move(gpu));
  s.sources.push_back(job.source);
  s.fingerprints.push_back(fleet::SeriesFingerprint(points));
  return Status::Ok();
}

namespace {

// GPUs by host, numeric index, MIG instance, pod: a stable report order.
std::vector<size_t> ReportOrder(const std::vector<GpuEstimate>& gpus) {
  std::vector<size_t> order(gpus.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto key = [&](size_t i) {
    const TelemetryDevice& d = gpus[i].device;
    return std::make_tuple(d.hostname, d.gpu.size(), d.gpu, d.uuid, d.mig_instance, d.k8s_namespace, d.pod);
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  return order;
}

template <typename T>
std::vector<T> Permute(std::vector<T>& v, const std::vector<size_t>& order) {
  std::vector<T> out;
  out.reserve(v.size());
  for (size_t i : order)
    out.push_back(std::move(v[i]));
  return out;
}

void AddNotes(const FleetOptions& options, bool default_precision, bool snapshot, const TelemetryReadStats& read,
              std::vector<Note>& notes) {
  notes.push_back({NoteKind::kAssumption, "hardware_flops_estimate",
                   "estimated FLOP/s are hardware FLOPs from tensor-pipe activity x SM clock against the dense peak: "
                   "they count recompute and padding and miss non-tensor FLOPs (docs/fleet.md)"});
  if (default_precision)
    notes.push_back({NoteKind::kAssumption, "default_precision",
                     "precision not given: the dense bf16 peak is the denominator (telemetry cannot tell the "
                     "precision; pass parameter 'precision' or a parameter 'jobs' entry's precision)"});
  if (snapshot)
    notes.push_back({NoteKind::kAssumption, "snapshot_interval",
                     fmt::format("a single snapshot (or samples without time stamps) stands for {:g} s each "
                                 "(parameter 'interval'); the last sample of a series stands for its median step",
                                 options.snapshot_interval_s)});
  if (read.sentinels > 0)
    notes.push_back({NoteKind::kWarning, "sentinel",
                     fmt::format("{} sentinel value(s) (DCGM blank / not supported) dropped as no value: {}",
                                 read.sentinels, base::Join(read.sentinel_metrics, ", "))});
}

}  // namespace

StatusOr<FleetReport> FleetAnalyzer::Finish(const TelemetryReadStats& read, std::string_view origin) {
  State& s = *state_;
  if (!s.started)
    MFU_RETURN_IF_ERROR(s.Start());
  const std::vector<size_t> order = ReportOrder(s.gpus);
  FleetReport report;
  report.origin = std::string(origin);
  report.precision = s.options.precision.value_or(DType::kBf16);
  report.read = read;
  report.gpus = Permute(s.gpus, order);
  const std::vector<std::string> sources = Permute(s.sources, order);
  const std::vector<uint64_t> fingerprints = Permute(s.fingerprints, order);
  fleet::AddFleetFindings(s.options.now_ms, s.options.stale_after_s, fingerprints, report.gpus);
  report.jobs = fleet::GroupJobs(report.gpus, sources, s.options.straggler_fraction);
  std::set<std::string> matched;
  for (JobEstimate& job : report.jobs) {
    for (const FleetJobReport& r : s.options.job_reports) {
      if (r.id != job.id)
        continue;
      matched.insert(r.id);
      MFU_RETURN_IF_ERROR(s.Report(r, report.gpus, job));
    }
  }
  report.nodes = fleet::GroupNodes(report.gpus);
  report.fleet = fleet::ComputeTotals(report.gpus);
  AddNotes(s.options, s.default_precision_used, s.snapshot_used, read, report.notes);
  for (const FleetJobReport& r : s.options.job_reports) {
    if (matched.count(r.id) == 0) {
      // An entry only --job-log made has no jobs-file line to point at.
      const bool flag_only =
          !r.log.empty() && r.model.empty() && base::StartsWith(r.log.front().given_by, "parameter 'job_log'");
      report.notes.push_back({NoteKind::kWarning, "jobs_file_unmatched",
                              (flag_only ? "parameter 'job_log' job '" : "parameter 'jobs' entry '") + r.id +
                                  "' names no job in the telemetry (give it a 'match' in parameter 'jobs')"});
    }
  }
  return report;
}

}  // namespace mfu
