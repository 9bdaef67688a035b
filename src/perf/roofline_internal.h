#pragma once

// The rooflines' inline building blocks (roofline.h's functions and the
// training model's per-layer arithmetic share them): latency steps, the
// collectives on a link, the GEMM shape factor and a GEMM's roofline.
// Private to src/perf and src/plan.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "mfu/efficiency.h"
#include "mfu/fabric.h"
#include "mfu/hwdb.h"
#include "mfu/result.h"
#include "mfu/roofline.h"

namespace mfu::perf_internal {

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

}  // namespace mfu::perf_internal
