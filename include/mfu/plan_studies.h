#pragma once

// The studies `mfu plan` reports around its search (planner.h): the same
// search at other GPU counts (weak and strong scaling), the smallest GPU
// count at which anything fits, the time and cost to train a token budget,
// and what separates the best configuration from the runner-up.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mfu/perf_model.h"
#include "mfu/planner.h"
#include "mfu/status.h"

namespace mfu {

// The best configuration at one GPU count.
struct ScalePoint {
  int64_t gpus = 0;
  bool weak = true;  // global batch scaled with the GPUs (weak) or kept (strong)
  int64_t gbs = 0;
  bool found = false;  // false: nothing fits
  Prediction best;
};

// For each count, weak then strong scaling from `model`'s GPU count and
// `options.global_batch`. kInvalidArgument: a count outside [1, 2^24].
StatusOr<std::vector<ScalePoint>> PlanScaling(const PerfModel& model, const PlanOptions& options,
                                              const std::vector<int64_t>& gpu_counts);

// The smallest doubling of the GPU count (up to 1024x, weak scaling) at which
// some configuration fits; 0 when none does.
int64_t FindSmallestFittingGpus(const PerfModel& model, const PlanOptions& options);

// A token budget at a price.
struct TrainingBudget {
  double tokens = 0;              // 0: no budget
  double price_per_gpu_hour = 0;  // USD; 0: unknown
  // Expected fraction of wall time spent on preserved progress (goodput.h
  // ExpectedGoodput at the optimal checkpoint interval); 1: no failures.
  double goodput = 1;
};
struct TrainingTime {
  double failure_free_hours = 0;  // the tokens at the predicted throughput alone
  double hours = 0;               // failure_free_hours / budget.goodput
  double days = 0;
  double gpu_hours = 0;
  double cost_usd = 0;  // 0 without a price
};
// The budget's tokens at p.tokens_per_s on `gpus` GPUs, divided by the
// budget's expected goodput (1: no failures or restarts counted).
TrainingTime TimeToTrain(const Prediction& p, int64_t gpus, const TrainingBudget& budget);

// What differs between two configurations and by how much each step
// component differs.
struct ConfigDifference {
  struct Field {
    std::string field;  // "tp", "pp", "dp", "cp", "ep", "vpp", "mbs", "zero", "recompute"
    int64_t best = 0, runner_up = 0;
    std::string best_name, runner_up_name;  // recompute only: the mode names
  };
  struct Component {
    std::string name;    // "GEMM", "attention", ..., "bubble"
    double delta_s = 0;  // runner-up - best
  };
  std::vector<Field> fields;
  std::vector<Component> components;  // every component, largest |delta| first
};
ConfigDifference ExplainDifference(const Prediction& best, const Prediction& runner_up);

}  // namespace mfu
