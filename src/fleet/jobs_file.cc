// The job side of the fleet view: the --jobs file (a job's own report of its
// throughput), dcgm-exporter's --hpc-job-mapping-dir files, and the
// model-FLOPs MFU a job's throughput gives, to set beside the telemetry's
// hardware-FLOPs estimate.

#include <fmt/format.h>

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

bool IsPositiveNumber(const nlohmann::json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0;
}
bool IsPositiveInteger(const nlohmann::json& v) {
  return v.is_number_integer() && v.get<int64_t>() > 0;
}

Status ParseJob(const nlohmann::json& entry, const std::string& where, FleetJobReport& job) {
  static const std::set<std::string> kKeys = {"id",      "model",     "tokens_per_sec", "step_time_s", "global_batch",
                                              "seq_len", "precision", "convention",     "match"};
  if (!entry.is_object())
    return ParseError(where + " must be an object");
  for (const auto& [key, value] : entry.items()) {
    if (kKeys.count(key) == 0)
      return ParseError(fmt::format("{}: unknown field '{}' (fields: {})", where, key,
                                    base::Join({kKeys.begin(), kKeys.end()}, ", ")));
  }
  for (const char* key : {"id", "model", "precision", "convention", "match"}) {
    if (!entry.contains(key))
      continue;
    if (!entry[key].is_string() || entry[key].get<std::string>().empty())
      return ParseError(fmt::format("{}.{} must be a non-empty string", where, key));
  }
  for (const char* key : {"id", "model", "seq_len"}) {
    if (!entry.contains(key))
      return ParseError(fmt::format("{}: missing '{}'", where, key));
  }
  job.id = entry["id"].get<std::string>();
  job.model = entry["model"].get<std::string>();
  job.precision = entry.value("precision", "");
  job.convention = entry.value("convention", "");
  job.match = entry.value("match", "");
  if (!IsPositiveInteger(entry["seq_len"]))
    return ParseError(where + ".seq_len must be a positive integer");
  job.seq_len = entry["seq_len"].get<int64_t>();
  if (entry.contains("tokens_per_sec")) {
    if (entry.contains("step_time_s"))
      return ParseError(where + ": give tokens_per_sec or step_time_s with global_batch, not both");
    if (!IsPositiveNumber(entry["tokens_per_sec"]))
      return ParseError(where + ".tokens_per_sec must be a positive number");
    job.tokens_per_sec = entry["tokens_per_sec"].get<double>();
  } else if (entry.contains("step_time_s")) {
    if (!IsPositiveNumber(entry["step_time_s"]))
      return ParseError(where + ".step_time_s must be a positive number");
    if (!entry.contains("global_batch") || !IsPositiveInteger(entry["global_batch"]))
      return ParseError(where + ".global_batch must be a positive integer (with step_time_s)");
    job.step_time_s = entry["step_time_s"].get<double>();
    job.global_batch = entry["global_batch"].get<int64_t>();
  } else {
    return ParseError(where + ": give tokens_per_sec, or step_time_s with global_batch");
  }
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

StatusOr<std::vector<FleetJobReport>> ParseFleetJobs(std::string_view text, std::string_view origin) {
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
    MFU_RETURN_IF_ERROR(ParseJob(root["jobs"][i], where, job));
    if (!ids.insert(job.id).second)
      return ParseError(fmt::format("{}.id '{}' appears twice", where, job.id));
    jobs.push_back(std::move(job));
  }
  return jobs;
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
  const std::string where = "--jobs entry '" + report.id + "'";
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
