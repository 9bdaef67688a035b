#pragma once

// What perf_model.cc (the model's set-up) and perf_model_step.cc
// (Evaluate's phases) share: the constants and the value checks; the
// collective and GEMM rooflines are src/perf's (perf/roofline_internal.h).
// Private to src/plan.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "mfu/perf_model.h"
#include "mfu/result.h"
#include "perf/roofline_internal.h"

namespace mfu::perf_internal {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kActivationBytes = 2;  // bf16/fp16 activations and communicated tensors
inline constexpr double kWeightBytes = 2;      // 16-bit working weights (what ZeRO-3 gathers; stored bytes: memory.h)
inline constexpr double kReduceGradBytes = 2;  // gradients are reduced in 16-bit
inline constexpr double kAdamBytesPerParam = 30;   // grad read, master/m/v read+write, 16-bit param write
inline constexpr double kAttentionBackward = 2.5;  // flash attention: 5 GEMMs backward vs 2 forward
inline constexpr double kKernelsPerLayer = 12;     // forward kernels of one layer (backward twice as many)
inline constexpr int64_t kMaxTensorParallel = 1024;
// The checks Validate and Evaluate share, in order; the ones before
// kGpusNotDivisible are ConfigIssue::kBadValue. Allocation-free: Validate
// alone builds the message.
enum class ValueCheck {
  kOk,
  kSizeBelowOne,
  kSizeAbsurd,
  kNegativeDpOrBatch,
  kZeroStage,
  kVppWithoutPp,
  kGpusNotDivisible,
  kDpContradicts,
};
inline constexpr int64_t kAbsurdSize = int64_t{1} << 24;

// Expected number of `bins` (equal shares of `items`) that `draws` distinct
// items drawn uniformly hit: bins x (1 - C(items - items/bins, draws) /
// C(items, draws)).
inline double ExpectedBinsHit(double items, double bins, double draws) {
  if (bins <= 1)
    return 1;
  const double per_bin = items / bins;
  double miss = 1;  // P(a given bin gets none of the draws)
  for (double i = 0; i < draws && miss > 0; ++i)
    miss *= std::max(items - per_bin - i, 0.0) / (items - i);
  return bins * (1 - miss);
}

// The copies of one token a DeepEP/HybridEP-style dispatch moves, over the
// copies an expert-by-expert all-to-all moves, in the expert-parallel group
// of `ep` ranks, `local` of them per scale-up domain. Within one domain a
// token goes once to each GPU holding one of its top-k experts; across
// domains once over the network to each other domain holding one (and on
// over NVLink there), with group-limited routing (DeepSeek's topk_group of
// n_group) capping the domains when each holds whole groups. The all-to-all
// sends top-k copies, (ep - local) / ep of them across domains.
inline double DedupCopyFactor(const MoeSpec& moe, double ep, double local) {
  const auto experts = static_cast<double>(moe.num_experts);
  const auto k = static_cast<double>(moe.top_k);
  if (ep <= 1 || k <= 1)
    return 1;
  if (local >= ep)
    return ExpectedBinsHit(experts, ep, k) / k;
  const double domains = std::ceil(ep / local);
  double hit = ExpectedBinsHit(experts, domains, k);
  const auto whole_domains = static_cast<int64_t>(domains);
  if (moe.groups > 1 && moe.groups % whole_domains == 0) {
    hit =
        std::min(hit, ExpectedBinsHit(static_cast<double>(moe.groups), domains, static_cast<double>(moe.group_top_k)));
  }
  return std::min(1.0, hit * (domains - 1) / domains / (k * (ep - local) / ep));
}

// The sizes of `c` with their parameter names (mfu/setup.h Param).
inline std::array<std::pair<const char*, int64_t>, 7> Sizes(const TrainingConfig& c) {
  return {
      {{"tp", c.tp}, {"pp", c.pp}, {"cp", c.cp}, {"ep", c.ep}, {"etp", c.etp}, {"vpp", c.vpp}, {"mbs", c.micro_batch}}};
}

inline ValueCheck FirstFailedValueCheck(const TrainingConfig& c, int64_t gpus) {
  for (const auto& [name, v] : Sizes(c)) {
    if (v < 1)
      return ValueCheck::kSizeBelowOne;
    if (v > kAbsurdSize)
      return ValueCheck::kSizeAbsurd;
  }
  if (c.dp < 0 || c.global_batch < 0)
    return ValueCheck::kNegativeDpOrBatch;
  if (c.zero_stage < 0 || c.zero_stage > 3)
    return ValueCheck::kZeroStage;
  if (c.vpp > 1 && c.pp == 1)
    return ValueCheck::kVppWithoutPp;
  const int64_t model_parallel = c.tp * c.pp * c.cp;
  if (gpus % model_parallel != 0)
    return ValueCheck::kGpusNotDivisible;
  if (c.dp != 0 && c.dp * model_parallel != gpus)
    return ValueCheck::kDpContradicts;
  return ValueCheck::kOk;
}

}  // namespace mfu::perf_internal
