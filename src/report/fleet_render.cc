// Text, JSON and CSV of `mfu fleet analyze` (report_fleet.h).

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "mfu/report_fleet.h"
#include "report/json_common.h"
#include "report/table.h"

namespace mfu {
namespace {

using nlohmann::json;
using report::Table;

std::string CsvNum(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "";
}
std::string CsvText(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos)
    return s;
  std::string out = "\"";
  for (char c : s)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// "node-a gpu 3", "node-a gpu 3 mig 2", with the pod when there is one.
std::string GpuLabel(const TelemetryDevice& d) {
  std::string label = d.hostname.empty() && d.gpu.empty() ? d.uuid
                                                          : (d.hostname.empty() ? std::string("?") : d.hostname) +
                                                                " gpu " + (d.gpu.empty() ? "?" : d.gpu);
  if (!d.mig_instance.empty())
    label += " mig " + d.mig_instance;
  if (!d.pod.empty())
    label += " " + d.pod;
  return label;
}

json BandsJson(const std::array<double, kNumMfuBands>& hours) {
  json j = json::object();
  for (size_t b = 0; b < kNumMfuBands; ++b)
    j[MfuBandId(static_cast<MfuBand>(b))] = hours[b];
  return j;
}

json FindingsJson(const std::vector<FleetFinding>& findings) {
  json j = json::array();
  for (const FleetFinding& f : findings)
    j.push_back({{"code", f.code}, {"message", f.message}});
  return j;
}

json GpuJson(const GpuEstimate& g) {
  const TelemetryDevice& d = g.device;
  return {{"key", d.Key()},
          {"uuid", d.uuid},
          {"hostname", d.hostname},
          {"gpu_index", d.gpu},
          {"gpu_model", d.model_name},
          {"gpu", g.accelerator.empty() ? json(nullptr) : json{{"id", g.accelerator}, {"name", g.accelerator_name}}},
          {"vendor", d.vendor},
          {"mig_profile", d.mig_profile},
          {"namespace", d.k8s_namespace},
          {"pod", d.pod},
          {"job", g.job_id.empty() ? json(nullptr) : json(g.job_id)},
          {"precision", DTypeName(g.precision)},
          {"covered_s", g.seconds},
          {"gpu_share", g.gpu_share},
          {"gpu_util", report::JsonNumber(g.gpu_util)},
          {"tensor_active", report::JsonNumber(g.tensor_active)},
          {"dram_active", report::JsonNumber(g.dram_active)},
          {"sm_clock_mhz", report::JsonNumber(g.sm_clock_mhz)},
          {"boost_clock_mhz", report::JsonNumber(g.boost_clock_mhz)},
          {"power_watts", report::JsonNumber(g.power_watts)},
          {"peak_flops_per_s", g.peak_flops > 0 ? json(g.peak_flops) : json(nullptr)},
          {"estimated_flops_per_s", report::JsonNumber(g.estimated_flops)},
          {"estimated_mfu", report::JsonNumber(g.estimated_mfu)},
          {"estimated_mbu", report::JsonNumber(g.estimated_mbu)},
          {"gpu_hours_by_band", BandsJson(g.gpu_hours_by_band)},
          {"throttle_reasons", g.throttle_reasons},
          {"findings", FindingsJson(g.findings)}};
}

json NonEmpty(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

// The training log a job's reported MFU came from; null for none.
json JobLogJson(const std::optional<JobLogSummary>& log) {
  if (!log)
    return nullptr;
  auto step = [](int64_t s) { return s >= 0 ? json(s) : json(nullptr); };
  return {{"files", log->files},
          {"format", log->format},
          {"attempts", log->attempts},
          {"first_step", step(log->first_step)},
          {"last_step", step(log->last_step)},
          {"step_lines", log->step_lines},
          {"convention", log->convention},
          {"mfu", report::JsonNumber(log->mfu)},
          {"logged_mfu", report::JsonNumber(log->logged_mfu)},
          {"tokens_per_s_per_gpu", report::JsonNumber(log->tokens_per_s_per_gpu)},
          {"model", log->model_spec ? report::ModelJson(*log->model_spec) : json(nullptr)},
          {"model_source", NonEmpty(log->model_source)},
          {"gpu", log->gpu.empty() ? json(nullptr) : json{{"id", log->gpu}, {"name", log->gpu_name}}},
          {"gpu_source", NonEmpty(log->gpu_source)},
          {"gpus", log->gpus > 0 ? json(log->gpus) : json(nullptr)},
          {"gpus_source", NonEmpty(log->gpus_source)},
          {"seq_len", log->seq_len > 0 ? json(log->seq_len) : json(nullptr)},
          {"seq_len_source", NonEmpty(log->seq_len_source)}};
}

json JobJson(const JobEstimate& j) {
  return {
      {"id", j.id},
      {"source", j.source},
      {"gpus", j.gpus.size()},
      {"gpu_keys", j.gpus},
      {"estimated_mfu", report::JsonNumber(j.estimated_mfu)},
      {"mfu_min", report::JsonNumber(j.mfu_min)},
      {"mfu_median", report::JsonNumber(j.mfu_median)},
      {"mfu_max", report::JsonNumber(j.mfu_max)},
      {"tensor_active_median", report::JsonNumber(j.tensor_active_median)},
      {"reported_mfu", j.reported_mfu ? report::JsonNumber(*j.reported_mfu) : json(nullptr)},
      {"reported_to_estimated", j.reported_to_estimated ? report::JsonNumber(*j.reported_to_estimated) : json(nullptr)},
      {"reported_source", NonEmpty(j.reported_source)},
      {"reported_log", JobLogJson(j.reported_log)},
      {"stragglers", j.stragglers},
      {"findings", FindingsJson(j.findings)}};
}

std::string Bands(const std::array<double, kNumMfuBands>& h) {
  return fmt::format("idle {:.2f}, < 30% {:.2f}, 30-60% {:.2f}, > 60% {:.2f}", h[0], h[1], h[2], h[3]);
}

void PrintGpus(std::ostream& out, const FleetReport& r, int width) {
  // The GPU's index first (a table's first column never wraps), its node,
  // pod and job in text columns that wrap; the figures are the estimate
  // line's estimates.
  const bool pods =
      std::any_of(r.gpus.begin(), r.gpus.end(), [](const GpuEstimate& g) { return !g.device.pod.empty(); });
  std::vector<std::string> header = {"GPU", "node", "model", "job"};
  if (pods)
    header.push_back("pod");
  for (const char* h : {"util", "tensor", "SM MHz", "TFLOP/s", "MFU", "MBU", "throttle"})
    header.push_back(h);
  Table t(header);
  for (const GpuEstimate& g : r.gpus) {
    const TelemetryDevice& d = g.device;
    std::string gpu = d.gpu.empty() ? (d.uuid.empty() ? "?" : d.uuid) : d.gpu;
    if (!d.mig_instance.empty())
      gpu += " mig " + d.mig_instance;
    std::vector<std::string> row = {gpu, d.hostname.empty() ? "-" : d.hostname,
                                    g.accelerator.empty() ? d.model_name : g.accelerator,
                                    g.job_id.empty() ? "-" : g.job_id};
    if (pods)
      row.push_back(d.pod.empty() ? "-" : d.pod);
    for (std::string cell : {report::PercentOrDash(g.gpu_util), report::PercentOrDash(g.tensor_active),
                             report::FixedOrDash(g.sm_clock_mhz, 0), report::FixedOrDash(g.estimated_flops / 1e12, 1),
                             report::PercentOrDash(g.estimated_mfu), report::PercentOrDash(g.estimated_mbu),
                             g.throttle_reasons.empty() ? "-" : base::Join(g.throttle_reasons, " ")})
      row.push_back(std::move(cell));
    t.AddRow(row);
  }
  t.Print(out, width);
}

void PrintJobs(std::ostream& out, const FleetReport& r, int width) {
  Table t({"job", "source", "GPUs", "est. MFU", "min", "median", "max", "reported MFU", "ratio", "stragglers"});
  for (const JobEstimate& j : r.jobs) {
    t.AddRow({j.id, j.source, std::to_string(j.gpus.size()), report::PercentOrDash(j.estimated_mfu),
              report::PercentOrDash(j.mfu_min), report::PercentOrDash(j.mfu_median), report::PercentOrDash(j.mfu_max),
              j.reported_mfu ? report::PercentOrDash(*j.reported_mfu) : "-",
              j.reported_to_estimated ? report::FixedOrDash(*j.reported_to_estimated, 2) : "-",
              j.stragglers.empty() ? "-" : base::Join(j.stragglers, " ")});
  }
  t.Print(out, width);
  for (const JobEstimate& j : r.jobs) {
    if (!j.reported_source.empty())
      out << report::LabelLine("reported " + j.id, j.reported_source, width);
  }
}

void PrintNodes(std::ostream& out, const FleetReport& r, int width) {
  Table t({"node", "GPUs", "est. MFU", "power W"});
  for (const NodeEstimate& n : r.nodes)
    t.AddRow({n.hostname.empty() ? "?" : n.hostname, std::to_string(n.gpus), report::PercentOrDash(n.estimated_mfu),
              report::FixedOrDash(n.power_watts, 0)});
  t.Print(out, width);
}

void PrintFindings(std::ostream& out, const FleetReport& r, int width) {
  Table t({"where", "code", "finding"});
  size_t rows = 0;
  for (const GpuEstimate& g : r.gpus) {
    for (const FleetFinding& f : g.findings) {
      t.AddRow({GpuLabel(g.device), f.code, f.message});
      ++rows;
    }
  }
  for (const JobEstimate& j : r.jobs) {
    for (const FleetFinding& f : j.findings) {
      t.AddRow({"job " + j.id, f.code, f.message});
      ++rows;
    }
  }
  if (rows == 0) {
    out << "none\n";
    return;
  }
  t.Print(out, width);
}

}  // namespace

std::string RenderFleetText(const FleetReport& r, const TextOptions& options) {
  std::ostringstream out;
  const int width = options.width;
  out << report::LabelLine("telemetry",
                           fmt::format("{}: {} device{}, {} samples ({} sentinels dropped)", r.origin, r.gpus.size(),
                                       r.gpus.size() == 1 ? "" : "s", r.read.samples, r.read.sentinels),
                           width);
  out << report::LabelLine(
      "estimate",
      fmt::format("hardware FLOPs from tensor activity x SM clock, against the dense {} peak", DTypeName(r.precision)),
      width);
  out << report::LabelLine(
      "fleet",
      fmt::format("{} GPU{}, estimated MFU {}, {:.2f} GPU-hours ({})", r.fleet.gpus, r.fleet.gpus == 1 ? "" : "s",
                  report::PercentOrDash(r.fleet.estimated_mfu), r.fleet.gpu_hours, Bands(r.fleet.gpu_hours_by_band)),
      width);
  out << "\nGPUs\n";
  PrintGpus(out, r, width);
  if (!r.jobs.empty()) {
    out << "\nJobs\n";
    PrintJobs(out, r, width);
  }
  out << "\nNodes\n";
  PrintNodes(out, r, width);
  out << "\nFindings\n";
  PrintFindings(out, r, width);
  if (!r.notes.empty()) {
    out << "\n";
    report::PrintNotes(out, r.notes, options);
  }
  return out.str();
}

std::string RenderFleetJson(const FleetReport& r) {
  json j = report::JsonEnvelope();
  j["schema_version"] = r.schema_version;
  j["origin"] = r.origin;
  j["precision"] = DTypeName(r.precision);
  j["gpus"] = json::array();
  for (const GpuEstimate& g : r.gpus)
    j["gpus"].push_back(GpuJson(g));
  j["jobs"] = json::array();
  for (const JobEstimate& job : r.jobs)
    j["jobs"].push_back(JobJson(job));
  j["nodes"] = json::array();
  for (const NodeEstimate& n : r.nodes)
    j["nodes"].push_back({{"hostname", n.hostname},
                          {"gpus", n.gpus},
                          {"estimated_mfu", report::JsonNumber(n.estimated_mfu)},
                          {"power_watts", n.power_watts}});
  j["fleet"] = {{"gpus", r.fleet.gpus},
                {"estimated_mfu", report::JsonNumber(r.fleet.estimated_mfu)},
                {"gpu_hours", r.fleet.gpu_hours},
                {"gpu_hours_by_band", BandsJson(r.fleet.gpu_hours_by_band)}};
  j["telemetry"] = {{"bytes", r.read.bytes},
                    {"samples", r.read.samples},
                    {"sentinels", r.read.sentinels},
                    {"unknown_metric_samples", r.read.unknown_metric_samples},
                    {"devices", r.read.devices},
                    {"series", r.read.series},
                    {"fields_seen", r.read.fields_seen},
                    {"sentinel_metrics", r.read.sentinel_metrics}};
  j["notes"] = report::NotesJson(r.notes);
  return report::JsonText(j);
}

std::vector<std::pair<std::string, std::string>> RenderFleetCsv(const FleetReport& r) {
  std::string gpus =
      "key,uuid,hostname,gpu,gpu_model,accelerator,mig_profile,namespace,pod,job,precision,seconds,gpu_share,"
      "gpu_util,tensor_active,dram_active,sm_clock_mhz,power_watts,estimated_tflops,estimated_mfu,estimated_mbu,"
      "throttle_reasons,findings\n";
  for (const GpuEstimate& g : r.gpus) {
    const TelemetryDevice& d = g.device;
    std::vector<std::string> codes;
    for (const FleetFinding& f : g.findings)
      codes.push_back(f.code);
    gpus += base::Join({CsvText(d.Key()),
                        CsvText(d.uuid),
                        CsvText(d.hostname),
                        CsvText(d.gpu),
                        CsvText(d.model_name),
                        g.accelerator,
                        CsvText(d.mig_profile),
                        CsvText(d.k8s_namespace),
                        CsvText(d.pod),
                        CsvText(g.job_id),
                        DTypeName(g.precision),
                        CsvNum(g.seconds),
                        CsvNum(g.gpu_share),
                        CsvNum(g.gpu_util),
                        CsvNum(g.tensor_active),
                        CsvNum(g.dram_active),
                        CsvNum(g.sm_clock_mhz),
                        CsvNum(g.power_watts),
                        CsvNum(g.estimated_flops / 1e12),
                        CsvNum(g.estimated_mfu),
                        CsvNum(g.estimated_mbu),
                        base::Join(g.throttle_reasons, " "),
                        base::Join(codes, " ")},
                       ",") +
            "\n";
  }
  std::string jobs =
      "id,source,gpus,estimated_mfu,mfu_min,mfu_median,mfu_max,reported_mfu,reported_to_estimated,"
      "stragglers,reported_source\n";
  for (const JobEstimate& j : r.jobs) {
    jobs +=
        base::Join({CsvText(j.id), j.source, std::to_string(j.gpus.size()), CsvNum(j.estimated_mfu), CsvNum(j.mfu_min),
                    CsvNum(j.mfu_median), CsvNum(j.mfu_max), j.reported_mfu ? CsvNum(*j.reported_mfu) : "",
                    j.reported_to_estimated ? CsvNum(*j.reported_to_estimated) : "",
                    CsvText(base::Join(j.stragglers, " ")), CsvText(j.reported_source)},
                   ",") +
        "\n";
  }
  std::string nodes = "hostname,gpus,estimated_mfu,power_watts\n";
  for (const NodeEstimate& n : r.nodes)
    nodes += fmt::format("{},{},{},{}\n", CsvText(n.hostname), n.gpus, CsvNum(n.estimated_mfu), CsvNum(n.power_watts));
  return {{"gpus.csv", gpus}, {"jobs.csv", jobs}, {"nodes.csv", nodes}};
}

}  // namespace mfu
