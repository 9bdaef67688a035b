#pragma once

// What perf_model.cc (the model's set-up and building blocks) and
// perf_model_step.cc (Evaluate's phases) share: the constants, the
// collective and GEMM rooflines, the value checks. Private to src/plan.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "mfu/perf_model.h"
#include "mfu/result.h"

namespace mfu::perf_internal {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kActivationBytes = 2;  // bf16/fp16 activations and communicated tensors
inline constexpr double kWeightBytes = 2;      // 16-bit working weights (what ZeRO-3 gathers; stored bytes: memory.h)
inline constexpr double kReduceGradBytes = 2;  // gradients are reduced in 16-bit
inline constexpr double kAdamBytesPerParam = 30;   // grad read, master/m/v read+write, 16-bit param write
inline constexpr double kAttentionBackward = 2.5;  // flash attention: 5 GEMMs backward vs 2 forward
inline constexpr double kKernelsPerLayer = 12;     // forward kernels of one layer (backward twice as many)
inline constexpr int64_t kMaxTensorParallel = 1024;
// Fused attention: query/key tile of FlashAttention-2/3 and cuDNN (the
// causal diagonal's half-empty tiles are computed whole), and the head dim
// at which the kernel reaches half its rate (FlashAttention-3 on H100 at
// 16k: hd64 497, hd128 648, hd256 756 TFLOP/s, arXiv 2407.08608 fig. 5).
inline constexpr double kAttentionTile = 128;
inline constexpr double kAttentionHalfHeadDim = 51;

// Latency steps: NCCL's all-gather and reduce-scatter are rings (n - 1
// steps); all-reduce switches to a tree (2 log2 n) at scale.
inline double RingSteps(double n) {
  return n > 1 ? n - 1 : 0;
}
inline double TreeSteps(double n) {
  return n > 1 ? std::min(n - 1, 2 * std::ceil(std::log2(n))) : 0;
}

// A group size (the callers' counts are integral doubles).
inline int64_t Ranks(double n) {
  return std::llround(n);
}

// `pieces` collectives of bytes / pieces each (per-layer FSDP gathers, ...).
inline double AllGatherTime(double n, double bytes, const LinkSpec& l, double pieces = 1) {
  if (n <= 1 || bytes <= 0)
    return 0;
  return BusBandwidthFactor(CollectiveKind::kAllGather, Ranks(n)) * bytes / l.bandwidth_bytes_per_s +
         pieces * RingSteps(n) * l.latency_s;
}
inline double AllReduceTime(double n, double bytes, const LinkSpec& l) {
  if (n <= 1 || bytes <= 0)
    return 0;
  return BusBandwidthFactor(CollectiveKind::kAllReduce, Ranks(n)) * bytes / l.bandwidth_bytes_per_s +
         2 * TreeSteps(n) * l.latency_s;
}
inline double AllToAllTime(double n, double bytes, const LinkSpec& l) {
  return AllGatherTime(n, bytes, l);
}

inline double Gemm(double d, double half) {
  return d / (d + half);
}

// GEMMs totalling `flops` with `rows` rows (tokens), a representative width
// `cols` and inner dimension `inner`: the roofline of compute at the shape's
// efficiency for `dtype` and operand traffic (weights flops/rows, inputs
// rows x inner, outputs flops / inner; weights and inputs in the dtype's
// bytes, outputs 16-bit) at `bw` bytes/s.
inline double GemmTime(double flops, double rows, double cols, double inner, double peak, double bw,
                       const EfficiencyParams& e, DType dtype) {
  if (flops <= 0)
    return 0;
  const double operand = dtype == DType::kFp8 ? 1.0 : dtype == DType::kFp4 ? 0.5 : 2.0;
  const double bytes = operand / 2 * (flops / rows + 2 * rows * inner) + flops / inner;
  return std::max(flops / (peak * GemmEfficiency(e, dtype, rows, cols, inner)), bytes / bw);
}

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
