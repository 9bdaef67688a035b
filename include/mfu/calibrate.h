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
// The run's framework profile (column framework_profile) from the built-in
// table; kInvalidArgument for an unknown name or attention kernel.
StatusOr<const FrameworkProfile*> FindRunFramework(const TrainingRun& run);

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

// Prepared runs: one PerfModel per run, built once.
class RunSet {
 public:
  static StatusOr<RunSet> Prepare(const TrainingRunSet& runs, const HardwareDb& hw, const ClusterDb& clusters,
                                  const EfficiencyDb& efficiency);
  AccuracyReport Evaluate(const EfficiencyDb& efficiency);
  size_t size() const { return entries_.size(); }

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
  int sweeps = 4;  // coordinate-descent passes over the parameters
  // Parameters (EfficiencyParamInfos names) kept at their starting values.
  std::vector<std::string> fixed;
  // Operator profiles fitted first (FitOperatorProfiles); the parameters
  // they measure are then fixed for the end-to-end fit.
  const OperatorProfiles* operators = nullptr;
};

struct CalibrationResult {
  EfficiencyDb fitted;
  AccuracyReport before;
  AccuracyReport after;
  std::vector<std::string> families;  // fitted (families with measured runs)
  std::vector<OperatorFamilyFit> operator_fits;
};

// With options.operators, first fits the parameters operator profiles
// measure (per family that has profiles). Then fits each family's other
// parameters (EfficiencyParamInfos, within their bounds, minus
// options.fixed) to minimise the mean over sources of each source's mean |log(predicted /
// measured)|, so that no source dominates by its row count. Families with
// no runs keep their values.
StatusOr<CalibrationResult> Calibrate(const TrainingRunSet& runs, const HardwareDb& hw, const ClusterDb& clusters,
                                      const EfficiencyDb& start, const CalibrateOptions& options = {});

// Spearman rank correlation (average ranks for ties); NaN when n < 3 or a
// side is constant.
double SpearmanCorrelation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace mfu
