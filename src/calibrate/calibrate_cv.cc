// Leave-one-source-out cross-validation of the calibration (calibrate.h):
// one fit to every source, then one per source to the others, each
// evaluated on the runs it did not see.

#include <algorithm>
#include <cstddef>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/parallel.h"
#include "mfu/calibrate.h"

namespace mfu {
namespace {

double MeanMape(const AccuracyReport& report) {
  double sum = 0;
  for (const SourceAccuracy& a : report.by_source)
    sum += a.mape;
  return report.by_source.empty() ? 0 : sum / static_cast<double>(report.by_source.size());
}

}  // namespace

StatusOr<CrossValidation> CrossValidate(const TrainingRunSet& runs, const HardwareDb& hw, const ClusterDb& clusters,
                                        const EfficiencyDb& prior, const CalibrateOptions& options) {
  if (options.prior != nullptr || !options.hold_out.empty())
    return InvalidArgumentError(
        "cross-validation: options.prior and options.hold_out must be unset (the prior is an argument, every "
        "source is held out in turn)");
  const std::vector<std::string> sources = runs.Sources();
  if (sources.size() < 2)
    return InvalidArgumentError("cross-validation: needs runs from two sources or more");
  // Fold 0 fits every source; fold k + 1 all but sources[k]. Folds are
  // independent (each prepares its own runs), so the threads share nothing
  // but the read-only inputs, and the result does not depend on their number.
  std::vector<StatusOr<CalibrationResult>> folds(sources.size() + 1, InternalError("fold not run"));
  const unsigned cores = std::thread::hardware_concurrency();
  ParallelFor(folds.size(), cores == 0 ? 1 : static_cast<int>(cores), [&](size_t k) {
    CalibrateOptions fold = options;
    if (k > 0)
      fold.hold_out = {sources[k - 1]};
    folds[k] = Calibrate(runs, hw, clusters, prior, fold);
  });
  for (const StatusOr<CalibrationResult>& f : folds)
    MFU_RETURN_IF_ERROR(f.status());
  CrossValidation cv;
  cv.fit = std::move(folds[0]).value();
  cv.in_sample = cv.fit.after;
  // Each run as predicted by the fold that held out its source.
  std::vector<RunPrediction> held_out = cv.in_sample.runs;
  for (size_t i = 0; i < held_out.size(); ++i) {
    const size_t k =
        static_cast<size_t>(std::find(sources.begin(), sources.end(), held_out[i].run->source) - sources.begin());
    held_out[i] = folds[k + 1]->after.runs[i];
  }
  cv.held_out = SummarizeRuns(std::move(held_out));
  cv.in_sample_source_mape = MeanMape(cv.in_sample);
  cv.held_out_source_mape = MeanMape(cv.held_out);
  return cv;
}

}  // namespace mfu
