#pragma once

// Rendering of performance-model results (predict, plan): text tables and
// JSON. Field definitions are in docs/plan.md.

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/plan_flags.h"
#include "mfu/perf_model.h"

namespace mfu::cli {

// "tp=8 pp=4 dp=16 cp=1 vpp=2 mbs=1 gbs=512 recompute=selective zero=1 sp"
std::string ConfigText(const TrainingConfig& c);

// The step as the waterfall buckets of `mfu trace` (name, seconds), summing
// to the step time: idle (bubble + kernel gaps), exposed_communication,
// non_matrix_kernels (vector work, optimizer), matrix_below_peak,
// matrix_at_peak.
std::vector<std::pair<std::string, double>> WaterfallBuckets(const Prediction& p);

nlohmann::json SetupJson(const ResolvedSetup& s);
nlohmann::json ConfigJson(const TrainingConfig& c);
nlohmann::json PredictionJson(const Prediction& p);

void PrintSetup(std::ostream& out, const ResolvedSetup& s);
void PrintPrediction(std::ostream& out, const Prediction& p, const ResolvedSetup& s);

}  // namespace mfu::cli
