// A job's training logs as its reported throughput in the fleet view: the
// logs read and analysed by the log library (AnalyzeTrainingLogFiles) with
// the --jobs entry's model, gpu, gpus and seq_len, else the log's header,
// else what the telemetry shows for the job's GPUs; the steady-state
// model-FLOPs MFU is the job's reported MFU, and the log's findings an
// operator acts on (restarts, a logged MFU that is wrong) become job
// findings.

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "fleet/fleet_internal.h"
#include "mfu/log_analysis.h"
#include "mfu/model.h"

namespace mfu::fleet {
namespace {

constexpr char kTelemetry[] = "telemetry";

// The log findings a job report carries (docs/fleet.md "Reported MFU from a
// training log"): restarts, the logged figure against the recomputed one and
// its cause, impossible figures, and throughput that dropped and stayed down.
// Warm-up, single spikes and fp16 overflow steps stay in `mfu log`.
const std::set<std::string>& OperatorKinds() {
  static const std::set<std::string> kKinds = {
      "restart",         "logged_mfu_mismatch", "logged_tflops_mismatch", "peak_a100_fallback",    "peak_sparse",
      "peak_tf32",       "peak_other",          "quantized_vs_bf16_peak", "per_job_vs_per_device", "attention_factor",
      "padding_counted", "world_size",          "sharded_parameters",     "mfu_above_100",         "tflops_above_peak",
      "regression"};
  return kKinds;
}

// The accelerator ids and the physical GPU count of the job's devices.
struct TelemetryView {
  std::set<std::string> accelerators;
  int64_t gpus = 0;
};

TelemetryView ViewOf(const JobEstimate& job, const std::vector<GpuEstimate>& gpus) {
  TelemetryView view;
  const std::set<std::string> keys(job.gpus.begin(), job.gpus.end());
  std::set<std::pair<std::string, std::string>> physical;
  for (const GpuEstimate& g : gpus) {
    if (keys.count(g.device.Key()) == 0)
      continue;
    if (!g.accelerator.empty())
      view.accelerators.insert(g.accelerator);
    physical.insert({g.device.hostname, g.device.uuid.empty() ? g.device.gpu : g.device.uuid});
  }
  view.gpus = static_cast<int64_t>(physical.size());
  return view;
}

// The source names a fleet user reads: the entry's fields are "jobs file",
// not the log command's "flag".
std::string SourceName(const std::string& source) {
  return source == "flag" ? "jobs file" : source;
}

// The read or analysis error with the flag (or jobs-file field) and file
// that named the failing log in front of it.
Status NameTheLog(const Status& error, const FleetJobReport& report) {
  for (const FleetJobLog& log : report.log) {
    if (base::StartsWith(error.message(), log.path + ":") || error.message().find(log.path) != std::string::npos)
      return Status(error.code(), log.given_by + ": " + error.message());
  }
  // A request field of the --jobs entry (an unknown gpu, a precision the
  // device lacks): the jobs file is wrong, a data error like its others.
  const StatusCode code = error.code() == StatusCode::kInvalidArgument ? StatusCode::kParse : error.code();
  return Status(code, "parameter 'jobs' entry '" + report.id + "': " + error.message());
}

// The --jobs fields that would let the log give an MFU.
std::vector<std::string> MissingFields(const LogAnalysis& a) {
  std::vector<std::string> fields;
  if (a.model_source.empty())
    fields.push_back("model");
  if (a.gpu == nullptr)
    fields.push_back("gpu");
  if (a.seq_len <= 0)
    fields.push_back("seq_len");
  if (a.throughput_source == "none" && a.gpus <= 0)
    fields.push_back("gpus");
  else if (a.throughput_source == "none" && a.seq_len > 0 && a.global_batch <= 0)
    fields.push_back("global_batch");
  return fields;
}

std::string Where(const LogFinding& f) {
  if (f.origin.empty() || f.line <= 0)
    return f.origin.empty() ? "header" : f.origin;
  return fmt::format("{}:{}", f.origin, f.line);
}

// One job finding per operator kind: the first occurrence, with the count.
void AddLogFindings(const LogAnalysis& a, std::vector<FleetFinding>& out) {
  std::map<std::string, std::pair<const LogFinding*, int>> by_kind;
  std::vector<std::string> order;
  for (const LogFinding& f : a.findings) {
    if (OperatorKinds().count(f.kind) == 0)
      continue;
    auto [it, inserted] = by_kind.try_emplace(f.kind, &f, 0);
    ++it->second.second;
    if (inserted)
      order.push_back(f.kind);
  }
  for (const std::string& kind : order) {
    const auto& [first, count] = by_kind[kind];
    std::string message;
    if (kind == "restart") {
      message = fmt::format("the log shows {} restart{} ({} attempts); first at {}: {}", count, count == 1 ? "" : "s",
                            a.timeline.attempts, Where(*first), first->message);
    } else {
      message = fmt::format("{}: {}", Where(*first), first->message);
      if (count > 1)
        message += fmt::format(" ({} more in the log)", count - 1);
    }
    out.push_back({"log_" + kind, std::move(message)});
  }
}

void FillSummary(const LogAnalysis& a, const std::vector<std::string>& paths, JobLogSummary& s) {
  s.files = paths;
  s.format = LogFormatId(a.timeline.format);
  s.attempts = a.timeline.attempts;
  s.first_step = a.steady_state.first_step;
  s.last_step = a.steady_state.last_step;
  s.step_lines = a.steady_state.step_lines;
  s.convention = ConventionName(a.convention);
  s.tokens_per_s_per_gpu = a.steady_state.tokens_per_s_per_gpu;
  s.mfu = a.steady_state.mfu;
  s.logged_mfu = a.steady_state.logged_mfu;
  s.model = a.model_name;
  s.model_source = SourceName(a.model_source);
  s.model_spec = a.model;
  s.gpu = a.gpu != nullptr ? a.gpu->id : "";
  s.gpu_name = a.gpu != nullptr ? a.gpu->display_name() : "";
  s.gpu_source = SourceName(a.gpu_source);
  s.gpus = a.gpus;
  s.gpus_source = SourceName(a.gpus_source);
  s.seq_len = a.seq_len;
  s.seq_len_source = SourceName(a.seq_len_source);
}

}  // namespace

Status CheckJobLogs(const FleetJobReport& report, const FileSystem& fs) {
  for (const FleetJobLog& log : report.log) {
    MFU_ASSIGN_OR_RETURN(FileInfo info, fs.Stat(log.path));
    if (info.kind == FileKind::kMissing)
      return NotFoundError(log.given_by + ": " + log.path + ": no such file");
    if (info.kind != FileKind::kRegular)
      return NotFoundError(log.given_by + ": " + log.path + ": not a regular file (" + info.description + ")");
  }
  return Status::Ok();
}

JobLogResult JobLogCache::Get(const FleetJobReport& report, const JobEstimate& job,
                              const std::vector<GpuEstimate>& gpus, const HardwareDb& hardware, const FileSystem& fs) {
  const TelemetryView view = ViewOf(job, gpus);
  const std::string telemetry =
      base::Join({view.accelerators.begin(), view.accelerators.end()}, ",") + "/" + std::to_string(view.gpus);
  std::vector<uint64_t> sizes;
  for (const FleetJobLog& log : report.log) {
    StatusOr<FileInfo> info = fs.Stat(log.path);
    sizes.push_back(info.ok() && info->kind == FileKind::kRegular ? info->size_bytes : ~uint64_t{0});
  }
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mu_);
  auto it = entries_.find(report.id);
  if (it != entries_.end() && it->second.sizes == sizes && it->second.telemetry == telemetry &&
      std::chrono::duration<double>(now - it->second.read_at).count() < kRereadS)
    return it->second.result;
  StatusOr<JobLogResult> fresh = AnalyzeJobLog(report, job, gpus, hardware, fs);
  if (fresh.ok()) {
    entries_[report.id] = {sizes, telemetry, now, *fresh};
    return *std::move(fresh);
  }
  if (it == entries_.end()) {
    JobLogResult failed;
    failed.findings.push_back({"log_error", fresh.status().message() + ": no reported MFU"});
    return failed;
  }
  JobLogResult kept = it->second.result;
  kept.findings.push_back({"log_stale", fresh.status().message() + ": the last good read's reported MFU is kept"});
  return kept;
}

StatusOr<JobLogResult> AnalyzeJobLog(const FleetJobReport& report, const JobEstimate& job,
                                     const std::vector<GpuEstimate>& gpus, const HardwareDb& hardware,
                                     const FileSystem& fs) {
  LogAnalysisRequest request;
  if (!report.model.empty()) {
    StatusOr<ModelSpec> spec = LoadModel(fs, report.model);
    if (!spec.ok())
      return Status(spec.status().code(),
                    "parameter 'jobs' entry '" + report.id + "': model: " + spec.status().message());
    request.model = std::move(*spec);
  }
  request.gpu = report.gpu;
  request.gpus = report.gpus;
  request.seq_len = report.seq_len;
  request.global_batch = report.global_batch;
  request.precision = report.precision;
  request.convention = report.convention;
  const TelemetryView view = ViewOf(job, gpus);
  if (view.accelerators.size() == 1)
    request.fallback_gpu = *view.accelerators.begin();
  request.fallback_gpus = view.gpus;
  request.fallback_source = kTelemetry;
  std::vector<std::string> paths;
  for (const FleetJobLog& log : report.log)
    paths.push_back(log.path);
  StatusOr<LogAnalysis> analysis = AnalyzeTrainingLogFiles(fs, paths, LogReadOptions{}, hardware, request);
  if (!analysis.ok())
    return NameTheLog(analysis.status(), report);
  const LogAnalysis& a = *analysis;
  JobLogResult out;
  FillSummary(a, paths, out.summary);
  const std::string files = base::Join(paths, ", ");
  if (std::isfinite(a.steady_state.mfu)) {
    out.mfu = a.steady_state.mfu;
    out.source = fmt::format("log {}: steady state steps {}-{}, convention {}", files, a.steady_state.first_step,
                             a.steady_state.last_step, ConventionName(a.convention));
  } else {
    const std::vector<std::string> fields = MissingFields(a);
    std::string message = "the log (" + files + ") gives no MFU: ";
    if (!fields.empty()) {
      message += "add " + base::Join(fields, ", ") +
                 " to the job's parameter 'jobs' entry (the log's header does not give " +
                 (fields.size() == 1 ? "it" : "them") + ")";
      if (view.accelerators.size() > 1 && a.gpu == nullptr)
        message += "; the job's GPUs are of several models (" +
                   base::Join({view.accelerators.begin(), view.accelerators.end()}, ", ") + ")";
    } else {
      message += "its step lines give no throughput figure (" + a.throughput_source + ") or no steady state";
    }
    out.findings.push_back({"log_missing_input", message});
  }
  if (a.gpu != nullptr && a.gpu_source == "header" && view.accelerators.size() == 1 &&
      *view.accelerators.begin() != a.gpu->id) {
    out.findings.push_back({"log_gpu_mismatch", "the log's header names " + std::string(a.gpu->id) +
                                                    " but the telemetry shows " + *view.accelerators.begin() +
                                                    " for the job's GPUs: the reported MFU uses the log's (add "
                                                    "'gpu' to the parameter 'jobs' entry to choose)"});
  }
  AddLogFindings(a, out.findings);
  return out;
}

}  // namespace mfu::fleet
