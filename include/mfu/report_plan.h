#pragma once

// Renderers of the training jobs (mfu/training_setup.h): `mfu predict` and
// `mfu plan` as terminal text and as JSON, each the exact bytes a front end
// writes. Fields: docs/plan.md; the JSON layout: docs/cli.md.

#include <string>

#include "mfu/plan_studies.h"
#include "mfu/text_options.h"
#include "mfu/training_setup.h"

namespace mfu {

std::string RenderPredictText(const ResolvedTraining& setup, const PredictResult& result,
                              const TextOptions& options = {});
std::string RenderPredictJson(const ResolvedTraining& setup, const PredictResult& result);

// With `timing`, the search line states how long the search took.
std::string RenderPlanText(const ResolvedTraining& setup, const PlanStudy& study, bool timing,
                           const TextOptions& options = {});
std::string RenderPlanJson(const ResolvedTraining& setup, const PlanStudy& study);

// "tp 8 vs 4, mbs 1 vs 2; runner-up step differs by +0.123 s TP comm, ...":
// the fields, then the three components with the largest |difference|.
std::string DifferenceSummary(const ConfigDifference& difference);

}  // namespace mfu
