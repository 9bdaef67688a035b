// mfu calibrate: fit the efficiency parameters to measured runs and report
// the model's accuracy per source, before and after; --hold-out and
// --cross-validate measure how well the fit predicts runs it did not see.

#include <CLI/CLI.hpp>
#include <cmath>
#include <fstream>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "mfu/calibrate.h"
#include "mfu/catalog.h"
#include "mfu/operator_profiles.h"
#include "mfu/report_calibrate.h"

namespace mfu::cli {
namespace {

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
    app.add_option("--framework-file", framework_files_,
                   "CSV adding or changing the framework profiles the runs name; repeatable")
        ->allow_extra_args(false);
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
    const RealFileSystem fs{};
    MFU_ASSIGN_OR_RETURN(TrainingRunSet runs, ReadTrainingRuns(fs, runs_path_));
    CatalogFiles files;
    if (!cluster_file_.empty())
      files.clusters.push_back(cluster_file_);
    files.efficiency = efficiency_files_;
    files.frameworks = framework_files_;
    MFU_ASSIGN_OR_RETURN(Catalog catalog, Catalog::Load(fs, files));
    MFU_ASSIGN_OR_RETURN(EfficiencyDb prior,
                         Catalog::LoadEfficiency(fs, prior_files_, EfficiencyBase::kKernelGrounded));
    if (runs.runs.empty())
      return InvalidArgumentError(runs_path_ + ": no usable runs (" + std::to_string(runs.skipped.size()) +
                                  " skipped)");
    CalibrateOptions options = options_;
    options.prior = &prior;
    options.frameworks = &catalog.frameworks;
    OperatorProfiles profiles;
    if (!operators_dir_.empty()) {
      MFU_ASSIGN_OR_RETURN(profiles, ReadOperatorProfiles(fs, operators_dir_));
      options.operators = &profiles;
    }
    CrossValidation cv;
    CalibrationResult& result = cv.fit;
    if (cross_validate_) {
      options.prior = nullptr;
      MFU_ASSIGN_OR_RETURN(cv, CrossValidate(runs, catalog.hardware, catalog.clusters, prior, options));
    } else if (no_fit_) {
      MFU_ASSIGN_OR_RETURN(
          result, AssessAccuracy(runs, catalog.hardware, catalog.clusters, catalog.efficiency, &catalog.frameworks));
    } else {
      MFU_ASSIGN_OR_RETURN(result, Calibrate(runs, catalog.hardware, catalog.clusters, catalog.efficiency, options));
    }
    MFU_RETURN_IF_ERROR(WriteTables(result.fitted));
    ctx.out << ctx.reporter(json_).Report(runs, cv, View());
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

  CalibrationView View() const {
    CalibrationView v;
    v.runs_path = runs_path_;
    v.fitted = !no_fit_;
    v.cross_validated = cross_validate_;
    v.hold_out = options_.hold_out;
    v.regularization = options_.regularization;
    v.prior_files = prior_files_;
    v.operators_dir = operators_dir_;
    v.runs_table = per_run_;
    return v;
  }

  std::string runs_path_, write_path_, write_kernels_path_, cluster_file_, operators_dir_;
  std::vector<std::string> efficiency_files_, prior_files_, framework_files_;
  CalibrateOptions options_;
  bool no_fit_ = false, per_run_ = false, json_ = false, cross_validate_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeCalibrateCommand() {
  return std::make_unique<CalibrateCommand>();
}

}  // namespace mfu::cli
