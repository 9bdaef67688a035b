// The rooflines (roofline.h; formulas in docs/plan.md): GEMMs, fused
// attention and collectives, shared by the training model (src/plan), the
// inference model (src/infer) and the kernel-figure checks.

#include "mfu/roofline.h"

#include <algorithm>

#include "perf/roofline_internal.h"

namespace mfu {

using namespace perf_internal;  // NOLINT: the rooflines' own helpers

double MatmulPeakFraction(const EfficiencyParams& e, DType dtype) {
  switch (dtype) {
    case DType::kFp8:
      return e.fp8_matmul_peak_fraction;
    case DType::kFp4:
      return e.fp4_matmul_peak_fraction;
    default:
      return e.matmul_peak_fraction;
  }
}

double GemmEfficiency(const EfficiencyParams& e, DType dtype, double m, double n, double k) {
  const double half = dtype == DType::kFp4 ? e.fp4_matmul_half_dim : e.matmul_half_dim;
  return MatmulPeakFraction(e, dtype) * Gemm(m, half) * Gemm(n, half) * Gemm(k, half);
}

double ComputePeakFlops(const Accelerator& gpu, DType dtype) {
  double peak = gpu.peak_flops(dtype);
  if (!(peak > 0))
    peak = DensePeakFlops(gpu, DType::kBf16);
  const double clock = gpu.power_cap_clock_fraction > 0 ? gpu.power_cap_clock_fraction : 1.0;
  return peak > 0 ? peak * clock : 0;
}

namespace {

// GemmSeconds at `rate` x the dtype's peak (grouped kernels run below it).
double ScaledGemmSeconds(const Accelerator& gpu, const EfficiencyParams& e, DType dtype, double m, double n, double k,
                         double rate) {
  const bool has_peak = gpu.peak_flops(dtype) > 0;
  const DType run_as = has_peak ? dtype : DType::kBf16;
  const double peak = ComputePeakFlops(gpu, dtype) * rate;
  if (!(peak > 0) || m <= 0 || n <= 0 || k <= 0)
    return 0;
  return GemmTime(2 * m * n * k, m, n, k, peak, gpu.memory_bw_tbps * 1e12 * e.vector_bw_fraction, e, run_as);
}

}  // namespace

double GemmSeconds(const Accelerator& gpu, const EfficiencyParams& e, DType dtype, double m, double n, double k) {
  return ScaledGemmSeconds(gpu, e, dtype, m, n, k, 1);
}

double GroupedGemmSeconds(const Accelerator& gpu, const EfficiencyParams& e, DType dtype, double m, double n, double k,
                          bool wgrad) {
  return ScaledGemmSeconds(gpu, e, dtype, m, n, k, wgrad ? e.grouped_wgrad_fraction : e.grouped_gemm_fraction);
}

double AttentionEfficiency(const EfficiencyParams& e, AttentionKernel kernel, bool backward, double seq_kv, bool causal,
                           double head_dim) {
  if (kernel == AttentionKernel::kUnfused || !(seq_kv > 0) || !(head_dim > 0))
    return 0;
  const double fraction = backward ? e.attention_bwd_fraction : e.attention_peak_fraction;
  const double half = backward ? e.attention_bwd_half_seq : e.attention_half_seq;
  double eff = fraction;
  if (causal) {
    const double tiles = std::max(1.0, seq_kv / kAttentionTile);
    eff *= Gemm(seq_kv / 2, half) * tiles / (tiles + 1);
  } else {
    eff *= Gemm(seq_kv, half);
  }
  eff *= Gemm(head_dim, kAttentionHalfHeadDim) / Gemm(128, kAttentionHalfHeadDim);
  if (kernel == AttentionKernel::kFa2 || kernel == AttentionKernel::kTriton)
    eff *= e.attention_fa2_ratio;
  if (kernel == AttentionKernel::kTriton)
    eff *= e.attention_triton_ratio;
  return std::min(eff, 0.98);
}

double AttentionSeconds(const Accelerator& gpu, const EfficiencyParams& e, AttentionKernel kernel, bool backward,
                        double flops, double seq_kv, bool causal, double head_dim) {
  const double eff = AttentionEfficiency(e, kernel, backward, seq_kv, causal, head_dim);
  const double peak = ComputePeakFlops(gpu, DType::kBf16);
  if (!(flops > 0) || !(eff > 0) || !(peak > 0))
    return 0;
  return flops / (peak * eff);
}

double CollectiveSeconds(CollectiveKind kind, double ranks, double bytes, const LinkSpec& link) {
  if (!(link.bandwidth_bytes_per_s > 0))
    return 0;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return AllReduceTime(ranks, bytes, link);
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return AllGatherTime(ranks, bytes, link);
    case CollectiveKind::kAllToAll:
      return AllToAllTime(ranks, bytes, link);
    case CollectiveKind::kSendRecv:
      return bytes > 0 ? bytes / link.bandwidth_bytes_per_s + link.latency_s : 0;
    default:
      return 0;
  }
}

}  // namespace mfu
