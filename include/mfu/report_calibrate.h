#pragma once

// Renderers of `mfu calibrate` (mfu/calibrate.h): the accuracy per source
// before and after the fit, the fitted parameters, the operator fits,
// cross-validation and every run, as terminal text and as JSON (the exact
// bytes a front end writes; fields in docs/plan.md).

#include <string>
#include <vector>

#include "mfu/calibrate.h"
#include "mfu/text_options.h"
#include "mfu/training_runs.h"

namespace mfu {

// What the report states beside the results.
struct CalibrationView {
  std::string runs_path;
  bool fitted = true;            // false: --no-fit, the accuracy of the starting table only
  bool cross_validated = false;  // cv.held_out / in_sample are filled
  std::vector<std::string> hold_out;
  double regularization = 0;
  std::vector<std::string> prior_files;
  std::string operators_dir;
  bool runs_table = false;  // also every run (text)
};

std::string RenderCalibrationText(const TrainingRunSet& runs, const CrossValidation& cv, const CalibrationView& view,
                                  const TextOptions& options = {});
std::string RenderCalibrationJson(const TrainingRunSet& runs, const CrossValidation& cv, const CalibrationView& view);

}  // namespace mfu
