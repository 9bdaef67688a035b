#pragma once

// Accuracy of the performance model on measured runs, and the fit of the
// efficiency parameters to them (`mfu calibrate`). Errors are of predicted
// tokens/s per GPU, which equal the errors of predicted TFLOP/s per GPU in
// each source's own FLOP convention (the same FLOPs per token on both
// sides) and of step time where that was measured.

#include <cstddef>
#include <string>
#include <vector>

#include "mfu/cluster.h"
#include "mfu/framework.h"
#include "mfu/hwdb.h"
#include "mfu/operator_profiles.h"
#include "mfu/perf_model.h"
#include "mfu/status.h"
#include "mfu/training_runs.h"

namespace mfu {

// The configuration a measured run used: the row's layout, the rest from
// its framework profile (`framework`, frameworks.csv).
TrainingConfig ConfigOfRun(const TrainingRun& run, const FrameworkProfile& framework);
// The run's framework profile (column framework_profile) from `frameworks`
// (null: the built-in table); kInvalidArgument for an unknown name or
// attention kernel.
StatusOr<const FrameworkProfile*> FindRunFramework(const TrainingRun& run, const FrameworkDb* frameworks = nullptr);

struct RunPrediction {
  const TrainingRun* run = nullptr;
  Prediction prediction;
  double predicted_tokens_per_s_per_gpu = 0;
  double ape = 0;       // |predicted / measured - 1|
  std::string problem;  // non-empty: not predicted (and why)
};

struct SourceAccuracy {
  std::string source;
  size_t runs = 0;  // predicted
  size_t not_predicted = 0;
  double mape = 0;  // mean absolute percentage error, as a fraction
  double max_ape = 0;
  double spearman = 0;  // rank correlation of predicted vs measured; NaN below 3 runs
  double bias = 0;      // mean of predicted / measured - 1 (sign: over- or under-prediction)
};

struct AccuracyReport {
  std::vector<RunPrediction> runs;
  std::vector<SourceAccuracy> by_source;  // in first-appearance order
  SourceAccuracy overall;
};

// The accuracy summary of `runs` (by source in first-appearance order, and
// overall): RunSet::Evaluate's, for predictions gathered elsewhere (the
// held-out folds of CrossValidate).
AccuracyReport SummarizeRuns(std::vector<RunPrediction> runs);

// Prepared runs: one PerfModel per run, built once, so that calibration
// evaluates many parameter sets (and subsets of the runs) without
// rebuilding them. Not thread-safe: evaluation sets the models' parameters.
class RunSet {
 public:
  // Each run's family is `efficiency`'s for its accelerator. Runs with an
  // unknown accelerator or cluster, or that the model rejects, are kept
  // with their problem (never predicted).
  // Framework profiles from `frameworks` (null: the built-in table).
  static StatusOr<RunSet> Prepare(const TrainingRunSet& runs, const HardwareDb& hw, const ClusterDb& clusters,
                                  const EfficiencyDb& efficiency, const FrameworkDb* frameworks = nullptr);
  // Every run under `efficiency` (each run its family's parameters).
  AccuracyReport Evaluate(const EfficiencyDb& efficiency);
  // Only the runs `i` with `mask[i]` (mask.size() == size()).
  AccuracyReport Evaluate(const EfficiencyDb& efficiency, const std::vector<bool>& mask);
  // Run `i` (in the order of the runs) under `params`.
  RunPrediction Predict(size_t i, const EfficiencyParams& params);
  size_t size() const { return entries_.size(); }
  const TrainingRun& run(size_t i) const { return *entries_[i].run; }
  // The efficiency family of run `i`; "" when its accelerator is unknown.
  const std::string& family(size_t i) const { return entries_[i].family; }

 private:
  struct Entry {
    const TrainingRun* run = nullptr;
    std::string family;
    const FrameworkProfile* framework = nullptr;  // the built-in table's (lives as long as the program)
    std::string problem;                          // why it cannot be predicted
    std::vector<PerfModel> model;                 // empty or one
  };
  std::vector<Entry> entries_;
};

struct CalibrateOptions {
  // Coordinate-descent passes at most (a pass moves each fitted parameter
  // once). The search usually stops first, when its step is below
  // `tolerance` (CalibrationResult::searches says which).
  int sweeps = 100;
  // The weight of the pull towards the prior: the objective adds
  // `regularization` x the mean over fitted parameters of ((value - prior)
  // / scale)^2, scale = a tenth of the parameter's bounds (max - min). At
  // 0.01, moving every parameter by one scale costs as much as 1% of mean
  // |log error|. 0: no pull (the fit can wander along flat directions).
  double regularization = 0.01;
  // The search stops once its step, in units of scale, is below this.
  double tolerance = 1e-3;
  // Parameters (EfficiencyParamInfos names) kept at the starting table's
  // values, in both stages.
  std::vector<std::string> fixed;
  // Operator profiles fitted first (FitOperatorProfiles, from the prior);
  // the parameters they measure are then fixed for the end-to-end fit.
  const OperatorProfiles* operators = nullptr;
  // The values the fit starts from and is pulled towards (by family name;
  // a family the prior lacks uses the starting table's). Null: the
  // starting table. Not owned.
  const EfficiencyDb* prior = nullptr;
  // Sources whose runs are left out of the fit and only evaluated.
  std::vector<std::string> hold_out;
  // The framework profiles the runs name (a Catalog's, with the user's
  // files). Null: the built-in table. Not owned.
  const FrameworkDb* frameworks = nullptr;
};

// How far one parameter of one family moved from its prior.
struct ParameterFit {
  std::string family;
  std::string name;  // EfficiencyParamInfos name
  double prior = 0;
  double fitted = 0;
  double move = 0;  // (fitted - prior) / scale: how far the data moved it
  // "runs" (the end-to-end fit), "operators" (the operator profiles),
  // "fixed" (options.fixed: the starting table's value), "prior" (every
  // run of the family is held out).
  std::string how;
};

// The end-to-end search of one family.
struct FamilySearch {
  std::string family;
  size_t runs = 0;  // fitted to
  int passes = 0;
  bool converged = false;  // the step narrowed below the tolerance (else: sweeps ran out)
  double error = 0;        // mean over sources of mean |log(predicted / measured)|
  double penalty = 0;      // the regularization term
};

struct CalibrationResult {
  EfficiencyDb fitted;
  AccuracyReport before;               // the starting table
  AccuracyReport after;                // every run, held-out ones included
  std::vector<std::string> families;   // fitted (families with runs to fit)
  std::vector<FamilySearch> searches;  // by `families`
  // By family (those with runs, held out or not), then EfficiencyParamInfos.
  std::vector<ParameterFit> parameters;
  std::vector<OperatorFamilyFit> operator_fits;
  // With options.hold_out: `after` pooled over the held-out sources' runs
  // (source "held out") and over the others' ("fitted").
  SourceAccuracy held_out;
  SourceAccuracy fitted_on;
};

// With options.operators, first fits the parameters operator profiles
// measure (per family that has profiles), from the prior. Then fits each
// family's other parameters (EfficiencyParamInfos, within their bounds,
// minus options.fixed), from the prior, to the runs of every source but
// options.hold_out: it minimises the mean over sources of each source's
// mean |log(predicted / measured)| (so that no source dominates by its row
// count) plus the regularization term, by coordinate descent on a grid
// that narrows only after a pass without a move. Deterministic, and the
// result depends on `start` only through what is not fitted (accelerators,
// memory_reserved_gib, fixed parameters, the vector kernels without
// operators): refitting from the result with the same prior gives the same
// parameters. Families with runs only in held-out sources take the prior's
// values; families with no runs keep `start`'s. kInvalidArgument: no runs,
// sweeps outside [1, 1000], regularization negative or NaN, tolerance not
// positive, an unknown fixed parameter, a held-out source no run has (the
// message lists the sources), or every source held out.
StatusOr<CalibrationResult> Calibrate(const TrainingRunSet& runs, const HardwareDb& hw, const ClusterDb& clusters,
                                      const EfficiencyDb& start, const CalibrateOptions& options = {});

// Calibration without fitting (`mfu calibrate --no-fit`): the accuracy of
// `start` on every run; fitted = start, after = before, nothing fitted.
StatusOr<CalibrationResult> AssessAccuracy(const TrainingRunSet& runs, const HardwareDb& hw, const ClusterDb& clusters,
                                           const EfficiencyDb& start, const FrameworkDb* frameworks = nullptr);

// Leave-one-source-out cross-validation of Calibrate.
struct CrossValidation {
  // Every run under the fit to all sources (in-sample) and under the fit
  // to the sources other than its own (held out); by_source in the same
  // order, overall pooled over runs.
  AccuracyReport in_sample;
  AccuracyReport held_out;
  // The mean over sources of each source's MAPE (each source counts once).
  double in_sample_source_mape = 0;
  double held_out_source_mape = 0;
  CalibrationResult fit;  // the fit to all sources
};

// Fits from `prior` to all sources, and once per source to the others, on
// up to two threads. Errors: Calibrate's, and kInvalidArgument for fewer
// than two sources or options.prior or options.hold_out set.
StatusOr<CrossValidation> CrossValidate(const TrainingRunSet& runs, const HardwareDb& hw, const ClusterDb& clusters,
                                        const EfficiencyDb& prior, const CalibrateOptions& options = {});

// Spearman rank correlation (average ranks for ties); NaN when n < 3 or a
// side is constant.
double SpearmanCorrelation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace mfu
