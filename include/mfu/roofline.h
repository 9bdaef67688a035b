#pragma once

// The rooflines both performance models are built from (src/perf): GEMMs,
// fused attention and collectives on a link, each timed from an
// accelerator's dense peak, its family's efficiency parameters
// (efficiency.h) and, for collectives, a fabric link (fabric.h).

#include "mfu/efficiency.h"
#include "mfu/fabric.h"
#include "mfu/framework.h"
#include "mfu/hwdb.h"
#include "mfu/result.h"

namespace mfu {

// The model's building blocks, public so that measured operator and NCCL
// times can test them (src/perf/operator_test.cc uses Vidur's profiles).
//
// One m x n x k GEMM (2mnk FLOPs) in `dtype`: the roofline of compute at the
// shape's efficiency (matmul_peak_fraction x prod d / (d + matmul_half_dim))
// and 16-bit operand traffic at vector_bw_fraction of HBM bandwidth.
// FP8/FP4 operands are 1 / 0.5 bytes; the peak is the dtype's (16-bit where
// the device has none) times the part's power-cap clock fraction.
double GemmSeconds(const Accelerator& gpu, const EfficiencyParams& e, DType dtype, double m, double n, double k);
// One GEMM of a grouped (MoE expert) kernel, m x n x k per group: GemmSeconds
// with the compute rate scaled by grouped_gemm_fraction, or by
// grouped_wgrad_fraction for a k-grouped weight gradient (`wgrad`).
double GroupedGemmSeconds(const Accelerator& gpu, const EfficiencyParams& e, DType dtype, double m, double n, double k,
                          bool wgrad);
// The large-GEMM fraction of `dtype`'s dense peak: fp8_matmul_peak_fraction,
// fp4_matmul_peak_fraction, else matmul_peak_fraction.
double MatmulPeakFraction(const EfficiencyParams& e, DType dtype);
// The efficiency of an m x n x k GEMM: the dtype's fraction x prod d / (d +
// matmul_half_dim), the curve every GEMM of both models uses.
double GemmEfficiency(const EfficiencyParams& e, DType dtype, double m, double n, double k);
inline double GemmEfficiency(const EfficiencyParams& e, double m, double n, double k) {
  return GemmEfficiency(e, DType::kBf16, m, n, k);
}
// The dense peak a kernel of `dtype` runs against on `gpu`: the dtype's
// peak, else the 16-bit one (bf16, then fp16), times the accelerator's
// power_cap_clock_fraction (hwdb.h); 0 when
// the device has none.
double ComputePeakFlops(const Accelerator& gpu, DType dtype);

// Fused attention in 16-bit: achieved / dense peak of `kernel` for a pass
// over `seq_kv` keys (per query block) at `head_dim`. Forward: the family's
// attention_peak_fraction x L / (L + attention_half_seq) with L = seq_kv
// (causal: seq_kv / 2 keys per query on average, and diagonal tiles of 128
// computed whole: x n / (n + 1), n = seq_kv / 128); backward the same with
// the bwd parameters; head dims scale it by g(hd) / g(128), g(d) = d / (d +
// 51) (FlashAttention-3's hd64/128/256 sweep on H100); kFa2 times
// attention_fa2_ratio (kTriton: also attention_triton_ratio). Capped at 0.98. kUnfused has no fused rate (returns
// 0: the model times it as GEMMs plus softmax traffic).
double AttentionEfficiency(const EfficiencyParams& e, AttentionKernel kernel, bool backward, double seq_kv, bool causal,
                           double head_dim);
// Seconds for `flops` of fused attention (executed FLOPs: causal halved)
// at AttentionEfficiency of the 16-bit peak; 0 for kUnfused or no peak.
double AttentionSeconds(const Accelerator& gpu, const EfficiencyParams& e, AttentionKernel kernel, bool backward,
                        double flops, double seq_kv, bool causal, double head_dim);

// `bytes` is the full buffer (all-reduce, all-gather output, reduce-scatter
// input; all-to-all: what one rank sends). Rings: (n-1)/n x bytes / bw plus
// n-1 latency steps; all-reduce twice the bytes with 2 log2 n tree steps
// (the bytes factor is BusBandwidthFactor, mfu/result.h). kAllReduce,
// kAllGather, kReduceScatter, kAllToAll, kSendRecv (one hop); 0 for others.
double CollectiveSeconds(CollectiveKind kind, double ranks, double bytes, const LinkSpec& link);

}  // namespace mfu
