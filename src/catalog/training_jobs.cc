// The training jobs (training_setup.h): predict one configuration, plan the
// search with its studies. What PredictCommand and PlanCommand computed.

#include <chrono>
#include <cmath>
#include <string>

#include "base/strings.h"
#include "mfu/training_setup.h"

namespace mfu {

StatusOr<PredictResult> PredictTraining(const ResolvedTraining& setup, const TrainingConfig& config) {
  PredictResult r;
  r.prediction = setup.perf->Evaluate(config);
  const Prediction& p = r.prediction;
  if (p.issue != ConfigIssue::kOk && p.issue != ConfigIssue::kOutOfMemory) {
    return InvalidArgumentError(std::string("the configuration is not valid: ") + ConfigIssueName(p.issue) + " (" +
                                ConfigText(p.config) + ", " + std::to_string(setup.perf->setup().gpus) + " GPUs)");
  }
  r.derived = setup.derived;
  for (std::string& d : DerivedConfigNotes(config, p))
    r.derived.push_back(std::move(d));
  return r;
}

namespace {

// The request's options with the setup's precision, imbalance and state.
StatusOr<PlanOptions> ResolvePlanOptions(const ResolvedTraining& s, const PlanRequest& q) {
  PlanOptions o = q.options;
  o.precision = s.precision;
  o.moe_imbalance = s.moe_imbalance;
  o.state = s.state;
  const FrameworkProfile& fw = s.perf->setup().framework;
  if (o.tp_comm_overlap && !fw.tp_overlap_supported) {
    return InvalidArgumentError(Param("tp_comm_overlap") + ": framework " + fw.name +
                                " cannot overlap tensor-parallel communication (data/frameworks/frameworks.csv)");
  }
  o.tp_within_node = !q.tp_across_nodes;
  o.recompute.clear();
  for (const std::string& r : q.recompute) {
    MFU_ASSIGN_OR_RETURN(Recompute mode, ParseRecompute(r));
    o.recompute.push_back(mode);
  }
  for (int64_t mbs : o.micro_batches) {
    if (mbs < 1 || mbs > 65536)
      return InvalidArgumentError(Param("mbs") + ": " + std::to_string(mbs) + " is not in [1, 65536]");
  }
  if (o.top_k < 1 || o.top_k > 1000)
    return InvalidArgumentError(Param("top") + " must be in [1, 1000]");
  return o;
}

StatusOr<TrainingBudget> ResolveBudget(const ResolvedTraining& s, const PlanRequest& q) {
  TrainingBudget budget;
  if (!q.tokens.empty()) {
    MFU_ASSIGN_OR_RETURN(budget.tokens, base::ParseScaledNumber(q.tokens, Param("tokens")));
    if (!(budget.tokens > 0))
      return InvalidArgumentError(Param("tokens") + " must be positive");
  }
  budget.price_per_gpu_hour =
      q.price_per_gpu_hour >= 0 ? q.price_per_gpu_hour : (s.cluster != nullptr ? s.cluster->price_per_gpu_hour : 0);
  if (!std::isfinite(budget.price_per_gpu_hour) || budget.price_per_gpu_hour < 0)
    return InvalidArgumentError(Param("price_per_gpu_hour") + " must be a non-negative number");
  return budget;
}

}  // namespace

StatusOr<PlanStudy> RunPlanStudy(const ResolvedTraining& s, const PlanRequest& q) {
  MFU_ASSIGN_OR_RETURN(PlanOptions options, ResolvePlanOptions(s, q));
  PlanStudy study;
  MFU_ASSIGN_OR_RETURN(study.budget, ResolveBudget(s, q));
  const PerfModel& model = *s.perf;
  const auto t0 = std::chrono::steady_clock::now();
  MFU_ASSIGN_OR_RETURN(study.plan, PlanTraining(model, options));
  study.search_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MFU_ASSIGN_OR_RETURN(study.scaling, PlanScaling(model, options, q.scaling));
  if (study.plan.top.empty() && s.cluster != nullptr)
    study.fits_at_gpus = FindSmallestFittingGpus(model, options);
  if (study.budget.tokens > 0) {
    for (const Prediction& p : study.plan.top)
      study.time_to_train.push_back(TimeToTrain(p, model.setup().gpus, study.budget));
  }
  study.has_runner_up = study.plan.top.size() >= 2;
  if (study.has_runner_up)
    study.difference = ExplainDifference(study.plan.top[0], study.plan.top[1]);
  return study;
}

}  // namespace mfu
