// mfu calibrate: fit the efficiency parameters to measured runs and report
// the model's accuracy per source, before and after; --hold-out and
// --cross-validate measure how well the fit predicts runs it did not see.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "cli/command.h"
#include "report/json_common.h"
#include "mfu/calibrate.h"
#include "mfu/operator_profiles.h"
#include "report/table.h"

namespace mfu::cli {
namespace {

nlohmann::json Num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

std::string Signed(double fraction) {
  return (fraction >= 0 ? "+" : "") + report::Percent(fraction);
}

nlohmann::json AccuracyJson(const SourceAccuracy& a) {
  return {{"source", a.source},        {"runs", a.runs},      {"not_predicted", a.not_predicted}, {"mape", Num(a.mape)},
          {"max_ape", Num(a.max_ape)}, {"bias", Num(a.bias)}, {"spearman", Num(a.spearman)}};
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
  for (const EfficiencyParams& p : db.families()) {
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
  j["mean_over_sources"] = {{"in_sample_mape", Num(cv.in_sample_source_mape)},
                            {"held_out_mape", Num(cv.held_out_source_mape)}};
  return j;
}

std::string RunsCell(const SourceAccuracy& a) {
  return std::to_string(a.runs) + (a.not_predicted > 0 ? fmt::format(" (+{} n/a)", a.not_predicted) : "");
}

// One table; with `fitted`, the MAPE before the fit is a column too.
// Sources in `held_out` are marked, and pooled below the overall row.
void PrintReport(std::ostream& out, const CalibrationResult& result, bool fitted,
                 const std::vector<std::string>& held_out) {
  std::vector<std::string> header = {"source", "runs"};
  if (fitted)
    header.push_back("MAPE before");
  for (const char* h : {"MAPE", "max APE", "bias", "Spearman"})
    header.push_back(h);
  report::Table t(header);
  auto row = [&](const SourceAccuracy* b, const SourceAccuracy& a, const std::string& name) {
    std::vector<std::string> r = {name, RunsCell(a)};
    if (fitted)
      r.push_back(b != nullptr ? report::Percent(b->mape) : "");
    r.push_back(report::Percent(a.mape));
    r.push_back(report::Percent(a.max_ape));
    r.push_back(Signed(a.bias));
    r.push_back(std::isfinite(a.spearman) ? report::Fixed(a.spearman, 3) : "-");
    t.AddRow(r);
  };
  for (size_t i = 0; i < result.after.by_source.size(); ++i) {
    const SourceAccuracy& a = result.after.by_source[i];
    const bool out_of_fit = std::find(held_out.begin(), held_out.end(), a.source) != held_out.end();
    row(&result.before.by_source[i], a, out_of_fit ? a.source + " (held out)" : a.source);
  }
  t.AddSeparator();
  row(&result.before.overall, result.after.overall, "overall");
  if (!held_out.empty()) {
    row(nullptr, result.fitted_on, "fitted sources");
    row(nullptr, result.held_out, "held-out sources");
  }
  t.Print(out);
}

// Per family and parameter: the prior, the fitted value and the move in
// units of a tenth of the parameter's bounds; then each search.
void PrintParameters(std::ostream& out, const CalibrationResult& result, double regularization) {
  out << fmt::format("\nfitted parameters (move: (fitted - prior) / (a tenth of the bounds); regularization {})\n",
                     regularization);
  report::Table t({"family", "parameter", "prior", "fitted", "move", "from"});
  std::string family;
  for (const ParameterFit& p : result.parameters) {
    if (!family.empty() && p.family != family)
      t.AddSeparator();
    family = p.family;
    t.AddRow({p.family, p.name, report::Fixed(p.prior, 4), report::Fixed(p.fitted, 4), fmt::format("{:+.2f}", p.move),
              p.how});
  }
  t.Print(out);
  for (const FamilySearch& s : result.searches) {
    out << fmt::format("{}: {} runs, {} passes{}, error {:.4f} + penalty {:.4f}\n", s.family, s.runs, s.passes,
                       s.converged ? "" : " (sweeps ran out before convergence)", s.error, s.penalty);
  }
}

void PrintOperatorFits(std::ostream& out, const std::vector<OperatorFamilyFit>& fits, const std::string& dir) {
  out << "\noperator profiles (" << dir << "): error of predicted kernel time\n";
  report::Table t({"family", "GEMMs", "MAPE before", "after", "vector ops", "before", "after", "collectives", "before",
                   "after", "fitted"});
  for (const OperatorFamilyFit& f : fits) {
    t.AddRow({f.family, std::to_string(f.gemms), report::Percent(f.gemm_mape_before),
              report::Percent(f.gemm_mape_after), std::to_string(f.vectors), report::Percent(f.vector_mape_before),
              report::Percent(f.vector_mape_after), std::to_string(f.collectives),
              report::Percent(f.collective_mape_before), report::Percent(f.collective_mape_after),
              base::Join(f.fitted, " ")});
  }
  t.Print(out);
  out << "\nvector kernels: max(min_us + row KiB x row_ns_per_kib, bytes / (HBM x bw_fraction)); median error\n";
  report::Table k({"family", "kernel", "samples", "median before", "after", "min_us", "row_ns_per_kib", "bw_fraction"});
  for (const OperatorFamilyFit& f : fits) {
    for (const VectorKernelFit& v : f.kernels) {
      k.AddRow({f.family, VectorKernelName(v.kernel), std::to_string(v.samples), report::Percent(v.median_before),
                report::Percent(v.median_after), report::Fixed(v.params.min_us, 2),
                report::Fixed(v.params.row_ns_per_kib, 1), report::Fixed(v.params.bw_fraction, 3)});
    }
  }
  k.Print(out);
}

void PrintRunsTable(std::ostream& out, const AccuracyReport& report) {
  out << "\n";
  report::Table t({"row", "source", "model", "gpus", "config", "measured tok/s/GPU", "predicted", "error"});
  for (const RunPrediction& r : report.runs) {
    t.AddRow(
        {std::to_string(r.run->row_id), r.run->source, r.run->model_name, std::to_string(r.run->gpus),
         fmt::format("tp{} pp{} dp{} mbs{}", r.run->tp, r.run->pp, r.prediction.config.dp,
                     r.prediction.config.micro_batch),
         report::Fixed(r.run->measured_tokens_per_s_per_gpu, 1),
         r.problem.empty() ? report::Fixed(r.predicted_tokens_per_s_per_gpu, 1) : r.problem,
         r.problem.empty() ? Signed(r.predicted_tokens_per_s_per_gpu / r.run->measured_tokens_per_s_per_gpu - 1) : ""});
  }
  t.Print(out);
}

// Per source: the in-sample error (fit to every source) and the error when
// the source is left out of the fit; then both means.
void PrintCrossValidation(std::ostream& out, const CrossValidation& cv) {
  out << "leave-one-source-out cross-validation: each source predicted by a fit (from the prior) to the others\n\n";
  report::Table t({"source", "runs", "in-sample MAPE", "bias", "held-out MAPE", "bias", "max APE", "Spearman"});
  auto row = [&](const std::string& name, const std::string& runs, const SourceAccuracy& in,
                 const SourceAccuracy& held) {
    t.AddRow({name, runs, report::Percent(in.mape), Signed(in.bias), report::Percent(held.mape), Signed(held.bias),
              report::Percent(held.max_ape), std::isfinite(held.spearman) ? report::Fixed(held.spearman, 3) : "-"});
  };
  for (size_t i = 0; i < cv.held_out.by_source.size(); ++i)
    row(cv.held_out.by_source[i].source, RunsCell(cv.held_out.by_source[i]), cv.in_sample.by_source[i],
        cv.held_out.by_source[i]);
  t.AddSeparator();
  row("mean over runs", RunsCell(cv.held_out.overall), cv.in_sample.overall, cv.held_out.overall);
  t.AddRow({"mean over sources", std::to_string(cv.held_out.by_source.size()),
            report::Percent(cv.in_sample_source_mape), "", report::Percent(cv.held_out_source_mape), "", "", ""});
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
    app.add_option("--prior", prior_files_,
                   "The values the fit starts from and is pulled towards: the built-in tables overridden by this "
                   "efficiency or vector kernel CSV (repeatable) [default: the built-in kernel-grounded values, "
                   "data/efficiency/kernel_grounded.csv]")
        ->allow_extra_args(false);
    app.add_option("--regularization", options_.regularization,
                   "Pull towards the prior: adds this x the mean over fitted parameters of ((value - prior) / "
                   "(a tenth of its bounds))^2 to the mean |log error| (0: none)")
        ->capture_default_str();
    app.add_option("--cluster-file", cluster_file_, "CSV adding or overriding clusters");
    app.add_option("--sweeps", options_.sweeps, "Coordinate-descent passes at most (the search stops when converged)")
        ->capture_default_str();
    app.add_option("--operators", operators_dir_,
                   "Directory of operator profiles (compute.csv, collectives.csv; e.g. tests/data/vidur): fit the "
                   "GEMM, vector and NVLink parameters to them first");
    app.add_option("--fix", options_.fixed, "Parameters to keep at their starting values")->delimiter(',');
    app.add_option("--hold-out", options_.hold_out,
                   "Leave this source's runs out of the fit and report the error on them (repeatable)")
        ->allow_extra_args(false);
    app.add_flag("--cross-validate", cross_validate_,
                 "Fit once per source to the other sources and report each source's held-out error");
    app.add_flag("--no-fit", no_fit_, "Only report the accuracy of the current parameters");
    app.add_flag("--runs-table", per_run_, "Also list every run's measured and predicted throughput");
    app.add_flag("--json", json_, "Machine-readable output (docs/plan.md)");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_RETURN_IF_ERROR(CheckFlags());
    MFU_ASSIGN_OR_RETURN(TrainingRunSet runs, ReadTrainingRuns(runs_path_));
    MFU_ASSIGN_OR_RETURN(HardwareDb hw, HardwareDb::LoadBuiltin());
    MFU_ASSIGN_OR_RETURN(ClusterDb clusters, ClusterDb::LoadBuiltin());
    if (!cluster_file_.empty())
      MFU_RETURN_IF_ERROR(clusters.AddFile(cluster_file_));
    MFU_ASSIGN_OR_RETURN(EfficiencyDb start, LoadTables(efficiency_files_));
    MFU_ASSIGN_OR_RETURN(EfficiencyDb prior, LoadTables(prior_files_, /*prior=*/true));
    if (runs.runs.empty())
      return InvalidArgumentError(runs_path_ + ": no usable runs (" + std::to_string(runs.skipped.size()) +
                                  " skipped)");
    CalibrateOptions options = options_;
    options.prior = &prior;
    OperatorProfiles profiles;
    if (!operators_dir_.empty()) {
      MFU_ASSIGN_OR_RETURN(profiles, ReadOperatorProfiles(operators_dir_));
      options.operators = &profiles;
    }
    CrossValidation cv;
    CalibrationResult& result = cv.fit;
    if (cross_validate_) {
      options.prior = nullptr;
      MFU_ASSIGN_OR_RETURN(cv, CrossValidate(runs, hw, clusters, prior, options));
    } else if (no_fit_) {
      MFU_ASSIGN_OR_RETURN(RunSet set, RunSet::Prepare(runs, hw, clusters, start));
      result.fitted = start;
      result.before = set.Evaluate(start);
      result.after = result.before;
    } else {
      MFU_ASSIGN_OR_RETURN(result, Calibrate(runs, hw, clusters, start, options));
    }
    MFU_RETURN_IF_ERROR(WriteTables(result.fitted));
    if (json_) {
      report::PrintJson(ctx.out, ToJson(runs, cv));
      return Status::Ok();
    }
    PrintText(ctx.out, runs, cv);
    return Status::Ok();
  }

 private:
  Status CheckFlags() const {
    if (!(options_.regularization >= 0) || !std::isfinite(options_.regularization))
      return InvalidArgumentError("--regularization must be a finite number >= 0");
    if (cross_validate_ && !options_.hold_out.empty())
      return InvalidArgumentError(
          "--cross-validate holds out every source in turn: it cannot be combined with --hold-out");
    if (no_fit_ && (cross_validate_ || !options_.hold_out.empty()))
      return InvalidArgumentError("--no-fit cannot be combined with --cross-validate or --hold-out");
    return Status::Ok();
  }

  // The built-in tables overridden by `files`.
  static StatusOr<EfficiencyDb> LoadTables(const std::vector<std::string>& files, bool prior = false) {
    MFU_ASSIGN_OR_RETURN(EfficiencyDb db, prior ? EfficiencyDb::LoadBuiltinPrior() : EfficiencyDb::LoadBuiltin());
    for (const std::string& file : files)
      MFU_RETURN_IF_ERROR(db.AddFile(file));
    return db;
  }

  Status WriteTables(const EfficiencyDb& fitted) const {
    for (const auto& [path, text] : {std::pair{write_path_, &EfficiencyDb::ToCsv},
                                     std::pair{write_kernels_path_, &EfficiencyDb::VectorKernelsToCsv}}) {
      if (path.empty())
        continue;
      std::ofstream f(path);
      f << (fitted.*text)();
      if (!f)
        return NotFoundError(path + ": cannot write");
    }
    return Status::Ok();
  }

  nlohmann::json ToJson(const TrainingRunSet& runs, const CrossValidation& cv) const {
    const CalibrationResult& result = cv.fit;
    nlohmann::json j = report::JsonEnvelope();
    j["runs_file"] = runs_path_;
    j["skipped"] = nlohmann::json::array();
    for (const SkippedRun& s : runs.skipped)
      j["skipped"].push_back({{"row_id", s.row_id}, {"reason", s.reason}});
    j["before"] = ReportJson(result.before);
    j["after"] = ReportJson(result.after);
    if (!no_fit_) {
      j["regularization"] = options_.regularization;
      j["prior_files"] = prior_files_;
      j.update(FitJson(result));
    }
    if (!options_.hold_out.empty()) {
      j["hold_out"] = options_.hold_out;
      j["held_out"] = AccuracyJson(result.held_out);
      j["fitted_on"] = AccuracyJson(result.fitted_on);
    }
    if (cross_validate_)
      j["cross_validation"] = CrossValidationJson(cv);
    j["families"] = FamiliesJson(result.fitted);
    j["runs"] = RunsJson(result.after);
    return j;
  }

  void PrintText(std::ostream& out, const TrainingRunSet& runs, const CrossValidation& cv) const {
    const CalibrationResult& result = cv.fit;
    out << fmt::format("runs        {} usable, {} skipped ({})\n", runs.runs.size(), runs.skipped.size(), runs_path_);
    for (const SkippedRun& s : runs.skipped)
      out << "  skipped " << s.reason << "\n";
    out << "error of predicted tokens/s per GPU (= TFLOP/s per GPU in the source's convention, or step time)\n\n";
    if (cross_validate_)
      PrintCrossValidation(out, cv);
    else
      PrintReport(out, result, !no_fit_, options_.hold_out);
    if (!result.operator_fits.empty())
      PrintOperatorFits(out, result.operator_fits, operators_dir_);
    if (!no_fit_)
      PrintParameters(out, result, options_.regularization);
    if (per_run_)
      PrintRunsTable(out, result.after);
  }

  std::string runs_path_, write_path_, write_kernels_path_, cluster_file_, operators_dir_;
  std::vector<std::string> efficiency_files_, prior_files_;
  CalibrateOptions options_;
  bool no_fit_ = false, per_run_ = false, json_ = false, cross_validate_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeCalibrateCommand() {
  return std::make_unique<CalibrateCommand>();
}

}  // namespace mfu::cli
