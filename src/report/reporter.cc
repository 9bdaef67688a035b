// Reporter (mfu/reporter.h): each result's text and JSON renderer, and its
// CSV as the JSON flattened (JsonToCsv) or, for trace, fleet and log, the
// first table they write with --csv.

#include "mfu/reporter.h"

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "base/param.h"
#include "base/table.h"

namespace mfu {
namespace reporter {

using Json = nlohmann::json;

// A scalar leaf as a CSV cell: numbers as JSON writes them (integers exact,
// doubles shortest round-trip), strings as they are, bools true/false,
// null empty; a list of scalars joined by ';'.
std::string Cell(const Json& v) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_null())
    return "";
  if (v.is_array()) {
    std::string out;
    for (const Json& item : v)
      out += (out.empty() ? "" : ";") + Cell(item);
    return out;
  }
  return v.dump();
}

bool IsScalarList(const Json& v) {
  if (!v.is_array())
    return false;
  for (const Json& item : v) {
    if (item.is_object() || item.is_array())
      return false;
  }
  return true;
}

// The scalar leaves of `v` under `prefix` ("a.b"), in key order; lists
// of objects are left out.
void Flatten(const Json& v, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      Flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else if (!v.is_array() || IsScalarList(v)) {
    out.emplace_back(prefix, Cell(v));
  }
}

std::vector<std::pair<std::string, std::string>> Row(const Json& v, bool envelope) {
  Json copy = v;
  if (envelope && copy.is_object()) {
    copy.erase("schema_version");
    copy.erase("mfu_version");
  }
  std::vector<std::pair<std::string, std::string>> row;
  Flatten(copy, "", row);
  return row;
}

std::string CsvTable(const std::vector<std::vector<std::pair<std::string, std::string>>>& rows) {
  std::vector<std::string> columns;
  std::map<std::string, size_t> index;
  for (const auto& row : rows) {
    for (const auto& [name, value] : row) {
      if (index.emplace(name, columns.size()).second)
        columns.push_back(name);
    }
  }
  std::string out;
  for (size_t c = 0; c < columns.size(); ++c)
    out += (c > 0 ? "," : "") + base::CsvField(columns[c]);
  out += "\n";
  for (const auto& row : rows) {
    std::vector<std::string> cells(columns.size());
    for (const auto& [name, value] : row)
      cells[index.at(name)] = value;
    for (size_t c = 0; c < cells.size(); ++c)
      out += (c > 0 ? "," : "") + base::CsvField(cells[c]);
    out += "\n";
  }
  return out;
}

// The first table a command writes into its --csv directory.
std::string FirstTable(const std::vector<std::pair<std::string, std::string>>& tables) {
  return tables.empty() ? std::string() : tables.front().second;
}

}  // namespace reporter

using namespace reporter;  // NOLINT: this file's helpers

const char* ReportFormatName(ReportFormat format) {
  switch (format) {
    case ReportFormat::kText:
      return "text";
    case ReportFormat::kJson:
      return "json";
    case ReportFormat::kCsv:
      return "csv";
  }
  return "?";
}

StatusOr<ReportFormat> ParseReportFormat(std::string_view name) {
  for (ReportFormat f : {ReportFormat::kText, ReportFormat::kJson, ReportFormat::kCsv}) {
    if (name == ReportFormatName(f))
      return f;
  }
  return InvalidArgumentError(base::Param("output_format") + ": '" + std::string(name) + "' is not text, json or csv");
}

std::string JsonToCsv(std::string_view json, std::string_view rows) {
  const Json doc = Json::parse(json);
  std::vector<std::vector<std::pair<std::string, std::string>>> table;
  const Json::json_pointer pointer(rows.empty() ? "" : std::string(rows));
  if (!rows.empty() && doc.contains(pointer) && doc.at(pointer).is_array()) {
    for (const Json& item : doc.at(pointer))
      table.push_back(Row(item, false));
  } else {
    table.push_back(Row(doc, true));
  }
  return CsvTable(table);
}

// Each result: its text renderer, its JSON renderer, and the JSON list that
// is its CSV's rows ("" for one row).
template <typename TextFn, typename JsonFn>
std::string Rendered(ReportFormat format, const TextFn& text, const JsonFn& json, std::string_view rows) {
  switch (format) {
    case ReportFormat::kText:
      return text();
    case ReportFormat::kJson:
      return json();
    case ReportFormat::kCsv:
      return JsonToCsv(json(), rows);
  }
  return {};
}

std::string Reporter::Report(const FlopsReport& r) const {
  return Rendered(
      format_, [&] { return RenderFlopsText(r, text_); }, [&] { return RenderFlopsJson(r); }, "/conventions");
}
std::string Reporter::Report(const CalcReport& r) const {
  return Rendered(
      format_, [&] { return RenderCalcText(r, text_); }, [&] { return RenderCalcJson(r); }, "");
}
std::string Reporter::Report(const MemoryReport& r) const {
  return Rendered(
      format_, [&] { return RenderMemoryText(r, text_); }, [&] { return RenderMemoryJson(r); }, "");
}
std::string Reporter::Report(const std::vector<const Accelerator*>& a) const {
  return Rendered(
      format_, [&] { return RenderAcceleratorListText(a, text_); }, [&] { return RenderAcceleratorListJson(a); },
      "/accelerators");
}
std::string Reporter::Report(const Accelerator& a) const {
  return Rendered(
      format_, [&] { return RenderAcceleratorText(a, text_); }, [&] { return RenderAcceleratorJson(a); }, "");
}
std::string Reporter::Report(const std::vector<PresetCount>& p) const {
  return Rendered(
      format_, [&] { return RenderPresetListText(p, text_); }, [&] { return RenderPresetListJson(p); }, "/models");
}
std::string Reporter::Report(const std::vector<const Cluster*>& c) const {
  return Rendered(
      format_, [&] { return RenderClusterListText(c, text_); }, [&] { return RenderClusterListJson(c); }, "/clusters");
}
std::string Reporter::Report(const Cluster& c) const {
  return Rendered(
      format_, [&] { return RenderClusterText(c, text_); }, [&] { return RenderClusterJson(c); }, "");
}
std::string Reporter::Report(const ResolvedTraining& s, const PredictResult& r) const {
  return Rendered(
      format_, [&] { return RenderPredictText(s, r, text_); }, [&] { return RenderPredictJson(s, r); }, "");
}
std::string Reporter::Report(const ResolvedTraining& s, const PlanStudy& study, bool timing) const {
  return Rendered(
      format_, [&] { return RenderPlanText(s, study, timing, text_); }, [&] { return RenderPlanJson(s, study); },
      "/top");
}
std::string Reporter::Report(const InferenceResult& r) const {
  return Rendered(
      format_, [&] { return RenderInferenceText(r, text_); }, [&] { return RenderInferenceJson(r); },
      r.single_shape ? "/decode_sweep" : "/workload/pairs");
}
std::string Reporter::Report(const TrainingRunSet& runs, const CrossValidation& cv, const CalibrationView& v) const {
  return Rendered(
      format_, [&] { return RenderCalibrationText(runs, cv, v, text_); },
      [&] { return RenderCalibrationJson(runs, cv, v); }, "/runs");
}
std::string Reporter::Report(const std::vector<KernelFigure>& figures, const KernelValidation& v,
                             const std::string& path, bool summary_only) const {
  return Rendered(
      format_, [&] { return RenderKernelValidationText(figures, v, path, summary_only, text_); },
      [&] { return RenderKernelValidationJson(v, path); }, summary_only ? "/groups" : "/figures");
}
std::string Reporter::Report(const GoodputReport& r, const std::vector<std::string>& sources) const {
  return Rendered(
      format_, [&] { return RenderGoodputText(r, sources, text_); }, [&] { return RenderGoodputJson(r, sources); }, "");
}
std::string Reporter::Report(const GoodputWhatIf& study) const {
  return Rendered(
      format_, [&] { return RenderGoodputWhatIfText(study, text_); }, [&] { return RenderGoodputWhatIfJson(study); },
      "");
}

std::string Reporter::Report(const JobAnalysis& job, const TraceJobOptions& options, bool verbose) const {
  if (format_ == ReportFormat::kCsv)
    return FirstTable(RenderTraceJobCsv(job));
  return format_ == ReportFormat::kJson ? RenderTraceJobJson(job, options)
                                        : RenderTraceJobText(job, options, verbose, text_);
}
std::string Reporter::Report(const FleetReport& r) const {
  if (format_ == ReportFormat::kCsv)
    return FirstTable(RenderFleetCsv(r));
  return format_ == ReportFormat::kJson ? RenderFleetJson(r) : RenderFleetText(r, text_);
}
std::string Reporter::Report(const LogAnalysis& a) const {
  std::ostringstream out;
  Write(a, out);
  return out.str();
}

void Reporter::Write(const LogAnalysis& a, std::ostream& out) const {
  if (format_ == ReportFormat::kCsv)
    WriteLogStepsCsv(a, out);  // steps.csv of --csv
  else if (format_ == ReportFormat::kJson)
    WriteLogJson(a, out);
  else
    out << RenderLogText(a, text_);
}

}  // namespace mfu
