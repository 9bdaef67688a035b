// mfu calibrate: fit the efficiency parameters to measured runs and report
// the model's accuracy per source, before and after.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <fstream>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "cli/command.h"
#include "cli/output.h"
#include "mfu/calibrate.h"
#include "mfu/operator_profiles.h"
#include "report/table.h"

namespace mfu::cli {
namespace {

nlohmann::json AccuracyJson(const SourceAccuracy& a) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"source", a.source},        {"runs", a.runs},      {"not_predicted", a.not_predicted}, {"mape", num(a.mape)},
          {"max_ape", num(a.max_ape)}, {"bias", num(a.bias)}, {"spearman", num(a.spearman)}};
}

nlohmann::json ReportJson(const AccuracyReport& r) {
  nlohmann::json j;
  j["overall"] = AccuracyJson(r.overall);
  j["by_source"] = nlohmann::json::array();
  for (const SourceAccuracy& a : r.by_source)
    j["by_source"].push_back(AccuracyJson(a));
  return j;
}

// One table; with `fitted`, the MAPE before the fit is a column too.
void PrintReport(std::ostream& out, const AccuracyReport& before, const AccuracyReport& after, bool fitted) {
  std::vector<std::string> header = {"source", "runs"};
  if (fitted)
    header.push_back("MAPE before");
  for (const char* h : {"MAPE", "max APE", "bias", "Spearman"})
    header.push_back(h);
  report::Table t(header);
  auto row = [&](const SourceAccuracy& b, const SourceAccuracy& a) {
    std::vector<std::string> r = {
        a.source, std::to_string(a.runs) + (a.not_predicted > 0 ? fmt::format(" (+{} n/a)", a.not_predicted) : "")};
    if (fitted)
      r.push_back(report::Percent(b.mape));
    r.push_back(report::Percent(a.mape));
    r.push_back(report::Percent(a.max_ape));
    r.push_back((a.bias >= 0 ? "+" : "") + report::Percent(a.bias));
    r.push_back(std::isfinite(a.spearman) ? report::Fixed(a.spearman, 3) : "-");
    t.AddRow(r);
  };
  for (size_t i = 0; i < after.by_source.size(); ++i)
    row(before.by_source[i], after.by_source[i]);
  t.AddSeparator();
  row(before.overall, after.overall);
  t.Print(out);
}

class CalibrateCommand final : public Command {
 public:
  const char* name() const override { return "calibrate"; }
  const char* summary() const override { return "Fit the performance model's efficiency parameters to measured runs"; }

  void Register(CLI::App& app) override {
    app.add_option("runs", runs_path_, "CSV of measured runs (columns of training-runs-calibration.csv)")->required();
    app.add_option("--write,-w", write_path_, "Write the fitted efficiency table (CSV) to this file");
    app.add_option("--write-vector-kernels", write_kernels_path_,
                   "Write the vector kernel table (CSV, data/efficiency/vector_kernels.csv's columns) to this file");
    app.add_option("--efficiency-file", efficiency_files_,
                   "Start from the built-in tables overridden by this efficiency or vector kernel CSV (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--cluster-file", cluster_file_, "CSV adding or overriding clusters");
    app.add_option("--sweeps", options_.sweeps, "Coordinate-descent passes")->capture_default_str();
    app.add_option("--operators", operators_dir_,
                   "Directory of operator profiles (compute.csv, collectives.csv; e.g. tests/data/vidur): fit the "
                   "GEMM, vector and NVLink parameters to them first");
    app.add_option("--fix", options_.fixed, "Parameters to keep at their starting values")->delimiter(',');
    app.add_flag("--no-fit", no_fit_, "Only report the accuracy of the current parameters");
    app.add_flag("--runs-table", per_run_, "Also list every run's measured and predicted throughput");
    app.add_flag("--json", json_, "Machine-readable output (docs/plan.md)");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(TrainingRunSet runs, ReadTrainingRuns(runs_path_));
    MFU_ASSIGN_OR_RETURN(HardwareDb hw, HardwareDb::LoadBuiltin());
    MFU_ASSIGN_OR_RETURN(ClusterDb clusters, ClusterDb::LoadBuiltin());
    if (!cluster_file_.empty())
      MFU_RETURN_IF_ERROR(clusters.AddFile(cluster_file_));
    MFU_ASSIGN_OR_RETURN(EfficiencyDb start, EfficiencyDb::LoadBuiltin());
    for (const std::string& file : efficiency_files_)
      MFU_RETURN_IF_ERROR(start.AddFile(file));
    if (runs.runs.empty())
      return InvalidArgumentError(runs_path_ + ": no usable runs (" + std::to_string(runs.skipped.size()) +
                                  " skipped)");
    CalibrateOptions options = options_;
    OperatorProfiles profiles;
    if (!operators_dir_.empty()) {
      MFU_ASSIGN_OR_RETURN(profiles, ReadOperatorProfiles(operators_dir_));
      options.operators = &profiles;
    }
    CalibrationResult result;
    if (no_fit_) {
      MFU_ASSIGN_OR_RETURN(RunSet set, RunSet::Prepare(runs, hw, clusters, start));
      result.fitted = start;
      result.before = set.Evaluate(start);
      result.after = result.before;
    } else {
      MFU_ASSIGN_OR_RETURN(result, Calibrate(runs, hw, clusters, start, options));
    }
    for (const auto& [path, text] : {std::pair{write_path_, &EfficiencyDb::ToCsv},
                                     std::pair{write_kernels_path_, &EfficiencyDb::VectorKernelsToCsv}}) {
      if (path.empty())
        continue;
      std::ofstream f(path);
      f << (result.fitted.*text)();
      if (!f)
        return NotFoundError(path + ": cannot write");
    }
    if (json_) {
      nlohmann::json j = JsonEnvelope();
      j["runs_file"] = runs_path_;
      j["skipped"] = nlohmann::json::array();
      for (const SkippedRun& s : runs.skipped)
        j["skipped"].push_back({{"row_id", s.row_id}, {"reason", s.reason}});
      j["before"] = ReportJson(result.before);
      j["after"] = ReportJson(result.after);
      j["families"] = nlohmann::json::array();
      for (const EfficiencyParams& p : result.fitted.families()) {
        nlohmann::json f = {{"family", p.family}, {"source", p.source}};
        for (const EfficiencyParamInfo& info : EfficiencyParamInfos())
          f[info.name] = p.*info.field;
        for (size_t k = 0; k < kNumVectorKernels; ++k) {
          nlohmann::json v = {{"source", p.vector_kernels[k].source}};
          for (const VectorKernelParamInfo& info : VectorKernelParamInfos())
            v[info.name] = p.vector_kernels[k].*info.field;
          f["vector_kernels"][VectorKernelName(static_cast<VectorKernel>(k))] = v;
        }
        j["families"].push_back(f);
      }
      j["runs"] = nlohmann::json::array();
      for (const RunPrediction& r : result.after.runs) {
        j["runs"].push_back({{"row_id", r.run->row_id},
                             {"source", r.run->source},
                             {"model", r.run->model_name},
                             {"measured_tokens_per_s_per_gpu", r.run->measured_tokens_per_s_per_gpu},
                             {"predicted_tokens_per_s_per_gpu", r.predicted_tokens_per_s_per_gpu},
                             {"ape", r.ape},
                             {"problem", r.problem}});
      }
      PrintJson(ctx.out, j);
      return Status::Ok();
    }
    ctx.out << fmt::format("runs        {} usable, {} skipped ({})\n", runs.runs.size(), runs.skipped.size(),
                           runs_path_);
    for (const SkippedRun& s : runs.skipped)
      ctx.out << "  skipped " << s.reason << "\n";
    ctx.out << "error of predicted tokens/s per GPU (= TFLOP/s per GPU in the source's convention, or step time)\n\n";
    PrintReport(ctx.out, result.before, result.after, !no_fit_);
    if (!result.operator_fits.empty()) {
      ctx.out << "\noperator profiles (" << operators_dir_ << "): error of predicted kernel time\n";
      report::Table t({"family", "GEMMs", "MAPE before", "after", "vector ops", "before", "after", "collectives",
                       "before", "after", "fitted"});
      for (const OperatorFamilyFit& f : result.operator_fits) {
        t.AddRow({f.family, std::to_string(f.gemms), report::Percent(f.gemm_mape_before),
                  report::Percent(f.gemm_mape_after), std::to_string(f.vectors), report::Percent(f.vector_mape_before),
                  report::Percent(f.vector_mape_after), std::to_string(f.collectives),
                  report::Percent(f.collective_mape_before), report::Percent(f.collective_mape_after),
                  base::Join(f.fitted, " ")});
      }
      t.Print(ctx.out);
      ctx.out
          << "\nvector kernels: max(min_us + row KiB x row_ns_per_kib, bytes / (HBM x bw_fraction)); median error\n";
      report::Table k(
          {"family", "kernel", "samples", "median before", "after", "min_us", "row_ns_per_kib", "bw_fraction"});
      for (const OperatorFamilyFit& f : result.operator_fits) {
        for (const VectorKernelFit& v : f.kernels) {
          k.AddRow({f.family, VectorKernelName(v.kernel), std::to_string(v.samples), report::Percent(v.median_before),
                    report::Percent(v.median_after), report::Fixed(v.params.min_us, 2),
                    report::Fixed(v.params.row_ns_per_kib, 1), report::Fixed(v.params.bw_fraction, 3)});
        }
      }
      k.Print(ctx.out);
    }
    if (!no_fit_) {
      ctx.out << "\nfitted parameters\n";
      std::vector<std::string> header = {"family"};
      for (const EfficiencyParamInfo& info : EfficiencyParamInfos())
        header.push_back(info.name);
      report::Table t(header);
      for (const std::string& family : result.families) {
        const EfficiencyParams* p = result.fitted.Mutable(family);
        std::vector<std::string> row = {family};
        for (const EfficiencyParamInfo& info : EfficiencyParamInfos())
          row.push_back(report::Fixed((*p).*info.field, 3));
        t.AddRow(row);
      }
      t.Print(ctx.out);
    }
    if (per_run_) {
      ctx.out << "\n";
      report::Table t({"row", "source", "model", "gpus", "config", "measured tok/s/GPU", "predicted", "error"});
      for (const RunPrediction& r : result.after.runs) {
        t.AddRow({std::to_string(r.run->row_id), r.run->source, r.run->model_name, std::to_string(r.run->gpus),
                  fmt::format("tp{} pp{} dp{} mbs{}", r.run->tp, r.run->pp, r.prediction.config.dp,
                              r.prediction.config.micro_batch),
                  report::Fixed(r.run->measured_tokens_per_s_per_gpu, 1),
                  r.problem.empty() ? report::Fixed(r.predicted_tokens_per_s_per_gpu, 1) : r.problem,
                  r.problem.empty()
                      ? report::Percent(r.predicted_tokens_per_s_per_gpu / r.run->measured_tokens_per_s_per_gpu - 1)
                      : ""});
      }
      t.Print(ctx.out);
    }
    return Status::Ok();
  }

 private:
  std::string runs_path_, write_path_, write_kernels_path_, cluster_file_, operators_dir_;
  std::vector<std::string> efficiency_files_;
  CalibrateOptions options_;
  bool no_fit_ = false, per_run_ = false, json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeCalibrateCommand() {
  return std::make_unique<CalibrateCommand>();
}

}  // namespace mfu::cli
