// The job side of the fleet view: the --jobs file (a job's own report of its
// throughput), dcgm-exporter's --hpc-job-mapping-dir files, and the
// model-FLOPs MFU a job's throughput gives, to set beside the telemetry's
// hardware-FLOPs estimate.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "base/strings.h"
#include "fleet/fleet_internal.h"
#include "mfu/flops.h"
#include "mfu/model.h"

namespace mfu {
namespace {

constexpr uint64_t kMaxMappingFileBytes = uint64_t{1} << 20;
// The log analysis' own bound on a world size (LogAnalysisRequest::gpus).
constexpr int64_t kMaxJobGpus = 10'000'000;

bool IsPositiveNumber(const nlohmann::json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0;
}
bool IsPositiveInteger(const nlohmann::json& v) {
  return v.is_number_integer() && v.get<int64_t>() > 0;
}

// `log`: a path or a non-empty array of paths.
Status ParseLogField(const nlohmann::json& value, const std::string& where, FleetJobReport& job) {
  const std::string field = where + ".log";
  auto add = [&](const nlohmann::json& v, const std::string& name) {
    if (!v.is_string() || v.get<std::string>().empty())
      return ParseError(name + " must be a non-empty string (a log file path)");
    job.log.push_back({v.get<std::string>(), name});
    return Status::Ok();
  };
  if (!value.is_array())
    return add(value, field);
  if (value.empty())
    return ParseError(field + " must be a path or a non-empty array of paths");
  for (size_t i = 0; i < value.size(); ++i)
    MFU_RETURN_IF_ERROR(add(value[i], fmt::format("{}[{}]", field, i)));
  return Status::Ok();
}

// tokens_per_sec, or step_time_s with global_batch, or (with a log) neither.
Status ParseThroughput(const nlohmann::json& entry, const std::string& where, bool flag_log, FleetJobReport& job) {
  const bool log = !job.log.empty();  // conflicts with a throughput; --job-log's is AddFleetJobLogs' error
  if (entry.contains("tokens_per_sec")) {
    if (entry.contains("step_time_s") || log)
      return ParseError(where + ": give one of tokens_per_sec, step_time_s with global_batch, or log, not two");
    if (!IsPositiveNumber(entry["tokens_per_sec"]))
      return ParseError(where + ".tokens_per_sec must be a positive number");
    job.tokens_per_sec = entry["tokens_per_sec"].get<double>();
  } else if (entry.contains("step_time_s")) {
    if (log)
      return ParseError(where + ": give one of tokens_per_sec, step_time_s with global_batch, or log, not two");
    if (!IsPositiveNumber(entry["step_time_s"]))
      return ParseError(where + ".step_time_s must be a positive number");
    if (!entry.contains("global_batch") || !IsPositiveInteger(entry["global_batch"]))
      return ParseError(where + ".global_batch must be a positive integer (with step_time_s)");
    job.step_time_s = entry["step_time_s"].get<double>();
  } else if (!log && !flag_log) {
    return ParseError(where +
                      ": give tokens_per_sec, or step_time_s with global_batch, or log (or parameter 'job_log' " +
                      job.id + "=FILE)");
  }
  if (entry.contains("global_batch")) {
    if (!IsPositiveInteger(entry["global_batch"]))
      return ParseError(where + ".global_batch must be a positive integer");
    job.global_batch = entry["global_batch"].get<int64_t>();
  }
  return Status::Ok();
}

// `flag_logs`: job ids --job-log gives logs for (their entries need no
// throughput of their own).
Status ParseJob(const nlohmann::json& entry, const std::string& where, const std::set<std::string>& flag_logs,
                FleetJobReport& job) {
  static const std::set<std::string> kKeys = {"id",      "model",     "tokens_per_sec", "step_time_s", "global_batch",
                                              "seq_len", "precision", "convention",     "match",       "log",
                                              "gpu",     "gpus"};
  if (!entry.is_object())
    return ParseError(where + " must be an object");
  for (const auto& [key, value] : entry.items()) {
    if (kKeys.count(key) == 0)
      return ParseError(fmt::format("{}: unknown field '{}' (fields: {})", where, key,
                                    base::Join({kKeys.begin(), kKeys.end()}, ", ")));
  }
  for (const char* key : {"id", "model", "precision", "convention", "match", "gpu"}) {
    if (!entry.contains(key))
      continue;
    if (!entry[key].is_string() || entry[key].get<std::string>().empty())
      return ParseError(fmt::format("{}.{} must be a non-empty string", where, key));
  }
  if (!entry.contains("id"))
    return ParseError(where + ": missing 'id'");
  job.id = entry["id"].get<std::string>();
  if (entry.contains("log"))
    MFU_RETURN_IF_ERROR(ParseLogField(entry["log"], where, job));
  const bool flag_log = flag_logs.count(job.id) != 0;
  // With a log, the model and sequence length may come from its header.
  for (const char* key : {"model", "seq_len"}) {
    if (!entry.contains(key) && job.log.empty() && !flag_log)
      return ParseError(fmt::format("{}: missing '{}'", where, key));
  }
  job.model = entry.value("model", "");
  job.precision = entry.value("precision", "");
  job.convention = entry.value("convention", "");
  job.match = entry.value("match", "");
  job.gpu = entry.value("gpu", "");
  if (entry.contains("seq_len")) {
    if (!IsPositiveInteger(entry["seq_len"]))
      return ParseError(where + ".seq_len must be a positive integer");
    job.seq_len = entry["seq_len"].get<int64_t>();
  }
  if (entry.contains("gpus")) {
    if (!IsPositiveInteger(entry["gpus"]) || entry["gpus"].get<int64_t>() > kMaxJobGpus)
      return ParseError(fmt::format("{}.gpus must be an integer between 1 and {}", where, kMaxJobGpus));
    job.gpus = entry["gpus"].get<int64_t>();
  }
  if (job.log.empty() && !flag_log && (!job.gpu.empty() || job.gpus > 0))
    return ParseError(where + ": gpu and gpus are read with a log only (the telemetry shows the job's GPUs)");
  MFU_RETURN_IF_ERROR(ParseThroughput(entry, where, flag_log, job));
  if (!job.precision.empty()) {
    StatusOr<DType> d = ParseDType(job.precision);
    if (!d.ok())
      return ParseError(where + ".precision: " + d.status().message());
  }
  if (!job.convention.empty()) {
    StatusOr<Convention> c = ParseConvention(job.convention);
    if (!c.ok())
      return ParseError(where + ".convention: " + c.status().message());
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<FleetJobReport>> ParseFleetJobs(std::string_view text, std::string_view origin,
                                                     const std::vector<std::string>& job_logs) {
  std::set<std::string> flag_logs;
  for (const std::string& value : job_logs) {
    if (const size_t eq = value.find('='); eq != std::string::npos)
      flag_logs.insert(value.substr(0, eq));
  }
  const std::string name(origin);
  nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return ParseError(name + ": not valid JSON");
  if (!root.is_object() || !root.contains("jobs") || !root["jobs"].is_array())
    return ParseError(name + ": expected {\"jobs\": [...]}");
  std::vector<FleetJobReport> jobs;
  std::set<std::string> ids;
  for (size_t i = 0; i < root["jobs"].size(); ++i) {
    const std::string where = fmt::format("{}: jobs[{}]", name, i);
    FleetJobReport job;
    MFU_RETURN_IF_ERROR(ParseJob(root["jobs"][i], where, flag_logs, job));
    if (!ids.insert(job.id).second)
      return ParseError(fmt::format("{}.id '{}' appears twice", where, job.id));
    jobs.push_back(std::move(job));
  }
  MFU_RETURN_IF_ERROR(AddFleetJobLogs(job_logs, jobs));
  return jobs;
}

Status AddFleetJobLogs(const std::vector<std::string>& job_logs, std::vector<FleetJobReport>& reports) {
  for (const std::string& value : job_logs) {
    const size_t eq = value.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == value.size())
      return InvalidArgumentError("parameter 'job_log' '" + value + "': expected JOB=FILE (a job id, '=', a log file)");
    const std::string id = value.substr(0, eq);
    auto it = std::find_if(reports.begin(), reports.end(), [&](const FleetJobReport& r) { return r.id == id; });
    if (it == reports.end()) {
      reports.push_back({});
      it = reports.end() - 1;
      it->id = id;
    }
    if (it->tokens_per_sec > 0 || it->step_time_s > 0)
      return InvalidArgumentError("parameter 'job_log' " + value + ": the parameter 'jobs' entry '" + id +
                                  "' gives its throughput already (tokens_per_sec or step_time_s): give one");
    it->log.push_back({value.substr(eq + 1), "parameter 'job_log' " + value});
  }
  return Status::Ok();
}

namespace fleet {

StatusOr<std::map<std::string, std::vector<std::string>>> ReadHpcJobMapping(const FileSystem& fs,
                                                                            const std::string& dir) {
  MFU_ASSIGN_OR_RETURN(std::vector<DirectoryEntry> entries, fs.ListDirectory(dir));
  std::map<std::string, std::vector<std::string>> mapping;
  for (const DirectoryEntry& e : entries) {
    const bool index = !e.name.empty() && e.name.find_first_not_of("0123456789") == std::string::npos;
    if (e.kind != FileKind::kRegular || !index)
      continue;  // dcgm-exporter skips what is not a GPU index too
    MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(dir + "/" + e.name, kMaxMappingFileBytes));
    for (const std::string& line : base::Split(text, '\n')) {
      std::string_view id = base::Trim(line);
      if (!id.empty())
        mapping[e.name].emplace_back(id);
    }
  }
  return mapping;
}

StatusOr<double> ReportedMfu(const FleetJobReport& report, const JobEstimate& job, const std::vector<GpuEstimate>& gpus,
                             const FileSystem& fs) {
  const std::string where = "parameter 'jobs' entry '" + report.id + "'";
  StatusOr<ModelSpec> spec = LoadModel(fs, report.model);
  if (!spec.ok())
    return Status(spec.status().code(), where + ": model: " + spec.status().message());
  StatusOr<Convention> convention =
      report.convention.empty() ? Convention::kMegatron : ParseConvention(report.convention);
  if (!convention.ok())
    return Status(convention.status().code(), where + ": convention: " + convention.status().message());
  StatusOr<TrainingFlops> flops = ComputeTrainingFlops(*spec, *convention, report.seq_len, Recompute::kNone);
  if (!flops.ok())
    return Status(flops.status().code(), where + ": " + flops.status().message());
  const double tokens_per_s = report.tokens_per_sec > 0 ? report.tokens_per_sec
                                                        : static_cast<double>(report.global_batch) *
                                                              static_cast<double>(report.seq_len) / report.step_time_s;
  // Each physical GPU (or MIG instance) once: time-sliced pods share one.
  std::set<std::tuple<std::string, std::string, std::string>> counted;
  double peak = 0;
  std::set<std::string> keys(job.gpus.begin(), job.gpus.end());
  for (const GpuEstimate& g : gpus) {
    if (keys.count(g.device.Key()) == 0)
      continue;
    if (!(g.peak_flops > 0))
      return std::nan("");
    if (counted.insert({g.device.hostname, g.device.uuid.empty() ? g.device.gpu : g.device.uuid, g.device.mig_instance})
            .second)
      peak += g.peak_flops;
  }
  return peak > 0 ? tokens_per_s * flops->model_per_token / peak : std::nan("");
}

}  // namespace fleet
}  // namespace mfu
