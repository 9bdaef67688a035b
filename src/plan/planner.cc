// The configuration search (planner.h): nested loops over the parallel
// dimensions, each pruned by divisibility before the model is evaluated.

#include "mfu/planner.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mfu {
namespace {

std::vector<int64_t> Divisors(int64_t n, int64_t limit) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i <= n && i <= limit; ++i) {
    if (n % i == 0)
      d.push_back(i);
  }
  return d;
}

// Keeps the best `k` fitting predictions, best first.
class TopK {
 public:
  explicit TopK(size_t k) : k_(k) {}
  void Offer(const Prediction& p) {
    if (k_ == 0)
      return;
    if (top_.size() == k_ && p.tokens_per_s <= top_.back().tokens_per_s)
      return;
    auto at = std::upper_bound(top_.begin(), top_.end(), p.tokens_per_s,
                               [](double v, const Prediction& q) { return v > q.tokens_per_s; });
    top_.insert(at, p);
    if (top_.size() > k_)
      top_.pop_back();
  }
  std::vector<Prediction>& top() { return top_; }

 private:
  size_t k_;
  std::vector<Prediction> top_;
};

}  // namespace

StatusOr<PlanResult> PlanTraining(const PerfModel& model, const PlanOptions& options) {
  const TrainingSetup& s = model.setup();
  const ModelSpec& m = *s.model;
  if (options.global_batch < 1)
    return InvalidArgumentError("plan: the global batch (sequences per step) must be given and positive");
  if (options.micro_batches.empty() || options.recompute.empty())
    return InvalidArgumentError("plan: micro-batch and recompute choices must not be empty");
  // Every stage the framework implements unless asked for; a stage asked
  // for that it does not implement is an error, not silently dropped.
  const std::vector<int>& zero_stages = options.zero_stages.empty() ? s.framework.zero_stages : options.zero_stages;
  for (int z : zero_stages) {
    if (z < 0 || z > 3)
      return InvalidArgumentError("plan: ZeRO stage " + std::to_string(z) + " is not 0-3");
    if (Status st = CheckZeroStage(s.framework, z); !st.ok())
      return st;
  }
  if (zero_stages.empty())
    return InvalidArgumentError("plan: framework " + s.framework.name + " lists no ZeRO stage");
  const auto domain = static_cast<int64_t>(model.fabric().domain_gpus());
  const int64_t tp_limit = options.tp_within_node ? std::min<int64_t>(domain, m.heads) : m.heads;

  PlanResult result;
  TopK top(options.top_k);
  Prediction p;
  TrainingConfig c;
  c.global_batch = options.global_batch;
  c.precision = options.precision;
  c.moe_imbalance = options.moe_imbalance;
  c.state = options.state;
  c.flash_attention = s.framework.attention != AttentionKernel::kUnfused;
  // The framework's recipe default, or asked for; never where it cannot,
  // nor without tensor parallelism (as predict resolves it).
  const bool tp_overlap =
      (options.tp_comm_overlap || s.framework.tp_overlap_default) && s.framework.tp_overlap_supported;
  const std::vector<int64_t> experts = m.is_moe() ? Divisors(m.moe.num_experts, s.gpus) : std::vector<int64_t>{1};
  const std::vector<int> no_sharding = {0};  // one data-parallel rank: nothing to shard
  for (int64_t tp : Divisors(s.gpus, tp_limit)) {
    if (m.heads % tp != 0)
      continue;
    for (int64_t pp : Divisors(s.gpus / tp, m.num_layers)) {
      for (int64_t cp : Divisors(s.gpus / (tp * pp), options.max_cp)) {
        if (cp > 1 && s.seq_len % (2 * cp) != 0)
          continue;
        const int64_t dp = s.gpus / (tp * pp * cp);
        if (options.global_batch % dp != 0)
          continue;
        for (int64_t ep : experts) {
          if ((dp * cp * tp) % ep != 0)
            continue;
          for (int64_t vpp = 1; vpp <= (pp > 1 ? options.max_vpp : 1); vpp *= 2) {
            if (pp * vpp > m.num_layers)
              break;
            for (int64_t mbs : options.micro_batches) {
              if (options.global_batch % (dp * mbs) != 0)
                continue;
              for (Recompute r : options.recompute) {
                for (int z : dp* cp == 1 ? no_sharding : zero_stages) {
                  if (pp > 1 && !s.framework.Implements(z, pp))
                    continue;  // DeepSpeed's pipeline runs ZeRO 0-1 only (zero_stages_pp)
                  c.tp = tp;
                  c.tp_comm_overlap = tp > 1 && tp_overlap;
                  c.pp = pp;
                  c.cp = cp;
                  c.ep = ep;
                  c.vpp = vpp;
                  c.dp = 0;
                  c.micro_batch = mbs;
                  c.recompute = r;
                  c.zero_stage = z;
                  c.sequence_parallel = tp > 1 && s.framework.sequence_parallel;
                  model.EvaluateStep(c, p);
                  ++result.evaluated;
                  ++result.by_issue[static_cast<size_t>(p.issue)];
                  if (p.issue == ConfigIssue::kOk) {
                    ++result.fitting;
                    top.Offer(p);
                  } else if (p.issue == ConfigIssue::kOutOfMemory) {
                    const double over = p.memory.total() - p.memory.capacity;
                    if (result.closest.issue != ConfigIssue::kOutOfMemory || over < result.closest_over_bytes) {
                      result.closest = p;
                      result.closest_over_bytes = over;
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  result.top = std::move(top.top());
  for (Prediction& kept : result.top)
    FinishPrediction(s.convention, kept);
  if (result.closest.issue == ConfigIssue::kOutOfMemory)
    FinishPrediction(s.convention, result.closest);
  return result;
}

}  // namespace mfu
