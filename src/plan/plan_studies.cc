// The studies around the configuration search (plan_studies.h).

#include "mfu/plan_studies.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "base/param.h"

namespace mfu {
namespace {

constexpr int64_t kMaxGpus = int64_t{1} << 24;

using base::Param;

// One best configuration at `gbs`.
PlanOptions BestOnly(const PlanOptions& options, int64_t gbs) {
  PlanOptions o = options;
  o.top_k = 1;
  o.global_batch = gbs;
  return o;
}

}  // namespace

StatusOr<std::vector<ScalePoint>> PlanScaling(const PerfModel& model, const PlanOptions& options,
                                              const std::vector<int64_t>& gpu_counts) {
  std::vector<ScalePoint> scale;
  const auto base_gpus = static_cast<double>(model.setup().gpus);
  for (int64_t g : gpu_counts) {
    if (g < 1 || g > kMaxGpus)
      return InvalidArgumentError(Param("scaling") + ": " + std::to_string(g) + " GPUs is out of range");
    for (bool weak : {true, false}) {
      const double ratio = static_cast<double>(g) / base_gpus;
      const int64_t gbs = weak ? std::max<int64_t>(1, std::llround(static_cast<double>(options.global_batch) * ratio))
                               : options.global_batch;
      TrainingSetup t = model.setup();
      t.gpus = g;
      MFU_ASSIGN_OR_RETURN(PerfModel m, PerfModel::Create(t));
      MFU_ASSIGN_OR_RETURN(PlanResult r, PlanTraining(m, BestOnly(options, gbs)));
      scale.push_back({g, weak, gbs, !r.top.empty(), r.top.empty() ? Prediction{} : r.top.front()});
    }
  }
  return scale;
}

int64_t FindSmallestFittingGpus(const PerfModel& model, const PlanOptions& options) {
  const int64_t gpus = model.setup().gpus;
  for (int64_t g = gpus * 2; g <= gpus * 1024 && g <= kMaxGpus; g *= 2) {
    TrainingSetup t = model.setup();
    t.gpus = g;
    StatusOr<PerfModel> m = PerfModel::Create(t);
    if (!m.ok())
      break;
    StatusOr<PlanResult> r = PlanTraining(*m, BestOnly(options, options.global_batch * (g / gpus)));  // weak scaling
    if (r.ok() && !r->top.empty())
      return g;
  }
  return 0;
}

TrainingTime TimeToTrain(const Prediction& p, int64_t gpus, const TrainingBudget& budget) {
  TrainingTime t;
  if (!(budget.tokens > 0) || !(p.tokens_per_s > 0))
    return t;
  t.failure_free_hours = budget.tokens / p.tokens_per_s / 3600;
  const bool failures = budget.goodput > 0 && budget.goodput < 1;
  t.hours = failures ? t.failure_free_hours / budget.goodput : t.failure_free_hours;
  t.days = t.hours / 24;
  t.gpu_hours = t.hours * static_cast<double>(gpus);
  t.cost_usd = budget.price_per_gpu_hour > 0 ? t.gpu_hours * budget.price_per_gpu_hour : 0;
  return t;
}

ConfigDifference ExplainDifference(const Prediction& a, const Prediction& b) {
  ConfigDifference d;
  const TrainingConfig &x = a.config, &y = b.config;
  for (auto [name, u, v] : {std::tuple{"tp", x.tp, y.tp},
                            {"pp", x.pp, y.pp},
                            {"dp", x.dp, y.dp},
                            {"cp", x.cp, y.cp},
                            {"ep", x.ep, y.ep},
                            {"vpp", x.vpp, y.vpp},
                            {"mbs", x.micro_batch, y.micro_batch},
                            {"zero", int64_t{x.zero_stage}, int64_t{y.zero_stage}}}) {
    if (u != v)
      d.fields.push_back({name, u, v, "", ""});
  }
  if (x.recompute != y.recompute) {
    d.fields.push_back({"recompute", static_cast<int64_t>(x.recompute), static_cast<int64_t>(y.recompute),
                        RecomputeName(x.recompute), RecomputeName(y.recompute)});
  }
  const StepBreakdown &p = a.breakdown, &q = b.breakdown;
  d.components = {{"GEMM", q.matrix_s - p.matrix_s},
                  {"attention", q.attention_s - p.attention_s},
                  {"vector", q.vector_s - p.vector_s},
                  {"recompute", q.recompute_s - p.recompute_s},
                  {"kernel gaps", q.overhead_s - p.overhead_s},
                  {"optimizer", q.optimizer_s - p.optimizer_s},
                  {"TP comm", q.tp_comm_s - p.tp_comm_s},
                  {"CP comm", q.cp_comm_s - p.cp_comm_s},
                  {"EP comm", q.ep_comm_s - p.ep_comm_s},
                  {"PP comm", q.pp_comm_s - p.pp_comm_s},
                  {"DP comm", q.dp_comm_s - p.dp_comm_s},
                  {"bubble", q.bubble_s - p.bubble_s}};
  std::sort(d.components.begin(), d.components.end(),
            [](const auto& m, const auto& n) { return std::fabs(m.delta_s) > std::fabs(n.delta_s); });
  return d;
}

}  // namespace mfu
