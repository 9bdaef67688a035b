// JSON of `mfu calibrate` (report_calibrate.h).

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "mfu/report_calibrate.h"
#include "report/json_common.h"

namespace mfu::report {
namespace {

nlohmann::json AccuracyJson(const SourceAccuracy& a) {
  return {{"source", a.source},
          {"runs", a.runs},
          {"not_predicted", a.not_predicted},
          {"mape", report::JsonNumber(a.mape)},
          {"max_ape", report::JsonNumber(a.max_ape)},
          {"bias", report::JsonNumber(a.bias)},
          {"spearman", report::JsonNumber(a.spearman)}};
}

nlohmann::json ReportJson(const AccuracyReport& r) {
  nlohmann::json j;
  j["overall"] = AccuracyJson(r.overall);
  j["by_source"] = nlohmann::json::array();
  for (const SourceAccuracy& a : r.by_source)
    j["by_source"].push_back(AccuracyJson(a));
  return j;
}

nlohmann::json FamiliesJson(const EfficiencyDb& db) {
  nlohmann::json families = nlohmann::json::array();
  for (const EfficiencyParams& p : db.all()) {
    nlohmann::json f = {{"family", p.family}, {"source", p.source}};
    for (const EfficiencyParamInfo& info : EfficiencyParamInfos())
      f[info.name] = p.*info.field;
    for (size_t k = 0; k < kNumVectorKernels; ++k) {
      nlohmann::json v = {{"source", p.vector_kernels[k].source}};
      for (const VectorKernelParamInfo& info : VectorKernelParamInfos())
        v[info.name] = p.vector_kernels[k].*info.field;
      f["vector_kernels"][VectorKernelName(static_cast<VectorKernel>(k))] = v;
    }
    families.push_back(f);
  }
  return families;
}

// The fit's own record: each parameter's prior, fitted value and move, and
// each family's search.
nlohmann::json FitJson(const CalibrationResult& result) {
  nlohmann::json j;
  j["parameters"] = nlohmann::json::array();
  for (const ParameterFit& p : result.parameters) {
    j["parameters"].push_back({{"family", p.family},
                               {"name", p.name},
                               {"prior", p.prior},
                               {"fitted", p.fitted},
                               {"move", p.move},
                               {"how", p.how}});
  }
  j["searches"] = nlohmann::json::array();
  for (const FamilySearch& s : result.searches) {
    j["searches"].push_back({{"family", s.family},
                             {"runs", s.runs},
                             {"passes", s.passes},
                             {"converged", s.converged},
                             {"error", s.error},
                             {"penalty", s.penalty}});
  }
  return j;
}

nlohmann::json RunsJson(const AccuracyReport& report) {
  nlohmann::json runs = nlohmann::json::array();
  for (const RunPrediction& r : report.runs) {
    runs.push_back({{"row_id", r.run->row_id},
                    {"source", r.run->source},
                    {"model", r.run->model_name},
                    {"measured_tokens_per_s_per_gpu", r.run->measured_tokens_per_s_per_gpu},
                    {"predicted_tokens_per_s_per_gpu", r.predicted_tokens_per_s_per_gpu},
                    {"ape", r.ape},
                    {"problem", r.problem}});
  }
  return runs;
}

nlohmann::json CrossValidationJson(const CrossValidation& cv) {
  nlohmann::json j;
  j["by_source"] = nlohmann::json::array();
  for (size_t i = 0; i < cv.held_out.by_source.size(); ++i) {
    const SourceAccuracy &in = cv.in_sample.by_source[i], &out = cv.held_out.by_source[i];
    j["by_source"].push_back(
        {{"source", out.source}, {"in_sample", AccuracyJson(in)}, {"held_out", AccuracyJson(out)}});
  }
  j["mean_over_runs"] = {{"in_sample", AccuracyJson(cv.in_sample.overall)},
                         {"held_out", AccuracyJson(cv.held_out.overall)}};
  j["mean_over_sources"] = {{"in_sample_mape", report::JsonNumber(cv.in_sample_source_mape)},
                            {"held_out_mape", report::JsonNumber(cv.held_out_source_mape)}};
  return j;
}

}  // namespace
}  // namespace mfu::report

namespace mfu {
using namespace report;  // this file's helpers and the shared JSON shapes

std::string RenderCalibrationJson(const TrainingRunSet& runs, const CrossValidation& cv, const CalibrationView& v) {
  const CalibrationResult& result = cv.fit;
  nlohmann::json j = JsonEnvelope();
  j["runs_file"] = v.runs_path;
  j["skipped"] = nlohmann::json::array();
  for (const SkippedRun& s : runs.skipped)
    j["skipped"].push_back({{"row_id", s.row_id}, {"reason", s.reason}});
  j["before"] = ReportJson(result.before);
  j["after"] = ReportJson(result.after);
  if (v.fitted) {
    j["regularization"] = v.regularization;
    j["prior_files"] = v.prior_files;
    j.update(FitJson(result));
  }
  if (!v.hold_out.empty()) {
    j["hold_out"] = v.hold_out;
    j["held_out"] = AccuracyJson(result.held_out);
    j["fitted_on"] = AccuracyJson(result.fitted_on);
  }
  if (v.cross_validated)
    j["cross_validation"] = CrossValidationJson(cv);
  j["families"] = FamiliesJson(result.fitted);
  j["runs"] = RunsJson(result.after);
  return JsonText(j);
}

}  // namespace mfu
