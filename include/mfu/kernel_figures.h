#pragma once

// Published kernel-level measurements (data/efficiency/kernel_figures.csv:
// GEMMs by shape and dtype, grouped GEMMs, fused attention forward and
// backward, all-reduce and all-to-all bus bandwidth, memory-bound kernels;
// each row cites its source) and the performance model's prediction of
// each one from its public building blocks (perf_model.h: GemmSeconds,
// AttentionSeconds, CollectiveSeconds; the HBM streaming rate) with the
// accelerator family's efficiency parameters. The per-family, per-kind
// median error is what grounds the kernel-level columns of
// data/efficiency/efficiency.csv (docs/plan.md, "Kernel-level validation").

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mfu/cluster.h"
#include "mfu/file_system.h"
#include "mfu/framework.h"
#include "mfu/hwdb.h"
#include "mfu/roofline.h"
#include "mfu/status.h"

namespace mfu {

// `memory` is a streaming kernel (copy, norm, softmax, decode KV reads);
// `quantize` an FP8/FP4 operand quantization kernel (16-bit read, amax,
// low-precision write with its scale factors), what the training model's
// FP8 casts are; `permute` an MoE token permutation (rows gathered to
// their experts' blocks, or back), what its MoE permutation traffic is.
enum class KernelFigureKind { kGemm, kGroupedGemm, kAttention, kAllReduce, kAllToAll, kMemory, kQuantize, kPermute };
inline constexpr size_t kNumKernelFigureKinds = 8;
// "gemm", "grouped_gemm", "attention", "allreduce", "alltoall", "memory",
// "quantize", "permute": the `kind` column's values.
const char* KernelFigureKindName(KernelFigureKind kind);

// The unit of a figure's `measured` value: TFLOP/s, GB/s, TB/s (1e9, 1e12
// bytes/s) or microseconds.
enum class FigureUnit { kTflops, kGbs, kTbs, kUs };
const char* FigureUnitName(FigureUnit unit);

enum class AttentionPass { kForward, kBackward, kForwardBackward };
enum class FigureFabric { kNvlink, kScaleout };

// One published figure (one row of the table). Fields not used by the
// figure's kind stay at their defaults.
struct KernelFigure {
  std::string id;  // unique within the table
  KernelFigureKind kind = KernelFigureKind::kGemm;
  std::string accelerator;  // hardware database id
  DType dtype = DType::kBf16;
  // gemm, grouped_gemm: GEMMs of m x n x k (2mnk FLOPs each) timed together,
  // one kernel each; a grouped GEMM runs `groups` of them in one kernel.
  std::vector<std::array<double, 3>> gemms;
  double groups = 1;
  // grouped_gemm: per GEMM of `gemms`, whether it is a k-grouped weight
  // gradient (the `pass` column: fwd, wgrad, or fwd_bwd for a forward,
  // data-gradient, weight-gradient triple); empty: none.
  std::vector<bool> wgrad;
  // attention: keys per query, head dim, causal mask, pass, kernel; with
  // `full_causal_flops` the source counted the whole causal matrix (the
  // model and FlashAttention count half of it).
  double seq = 0;
  double head_dim = 0;
  bool causal = false;
  AttentionPass pass = AttentionPass::kForward;
  AttentionKernel kernel = AttentionKernel::kBest;
  bool full_causal_flops = false;
  // allreduce, alltoall: `ranks` in `nodes` scale-up domains; scale-out
  // figures name the cluster whose NIC they use. `message_bytes` 0: the
  // large-message plateau. `algbw`: the figure is bytes / time (what
  // DeepEP and Hybrid-EP quote) instead of nccl-tests' bus bandwidth.
  double ranks = 0;
  double nodes = 1;
  FigureFabric fabric = FigureFabric::kNvlink;
  std::string cluster;
  double message_bytes = 0;
  bool algbw = false;
  // memory, quantize, permute: HBM bytes moved (reads plus writes); 0: a
  // streaming plateau.
  double bytes = 0;
  double measured = 0;
  FigureUnit unit = FigureUnit::kTflops;
  // False for figures outside the model (NVLS in-switch reduction, kernels
  // that include quantization, FP8 attention ...): predicted and listed,
  // never in the statistics. `notes` says why.
  bool modelled = true;
  int ref_row = 0;  // the line of the figure's row in the reference table (0: none)
  std::string source;
  std::string locator;
  std::string notes;
  std::string where;  // "origin:line" for messages
};

// Parses the table (the columns of data/efficiency/kernel_figures.csv,
// documented in data/efficiency/README.md). kParse for malformed CSV, a
// missing column, an unknown kind, dtype, unit or pass, text in a numeric
// column, a field its kind needs left empty, lists of unequal length, or a
// duplicate id; kOutOfRange for a measured value or size that is not
// positive. Messages are one line, "`origin`:LINE: column 'NAME': ...".
StatusOr<std::vector<KernelFigure>> ParseKernelFigures(std::string_view csv, std::string_view origin);
// As ParseKernelFigures for the file at `path`; kNotFound if unreadable.
StatusOr<std::vector<KernelFigure>> ReadKernelFigures(const FileSystem& fs, const std::string& path);

// The model's value of `figure`, in the figure's unit, on `gpu` with the
// family parameters `e`; `cluster` (may be null) supplies scale-out NIC
// bandwidth and link latencies. GEMMs are GemmSeconds per GEMM (grouped:
// GroupedGemmSeconds times `groups`) plus e.kernel_overhead_us per kernel; attention is the
// AttentionSeconds rate (fwd_bwd: 3.5 F over the forward's F plus the
// backward's 2.5 F); collectives are CollectiveSeconds on NVLink at
// scaleup_bw_fraction or across domains (all-reduce: min(GPUs per domain x
// NIC x scaleout_bw_fraction, NVLink x scaleup_bw_fraction), as the
// training model's groups; all-to-all: Fabric::AllToAllLink, NIC x
// alltoall_nic_ratio x (n - 1) / (n - local));
// memory kernels stream at vector_bw_fraction of HBM, quantization kernels
// at quant_bw_fraction and MoE permutations at permute_bw_fraction (plus
// the kernel overhead when `bytes` is known). kInvalidArgument when the figure needs
// a cluster and has none, or the model gives no time (no peak, no link).
StatusOr<double> PredictKernelFigure(const KernelFigure& figure, const Accelerator& gpu, const Cluster* cluster,
                                     const EfficiencyParams& e);

// One figure's prediction: error = predicted / measured - 1.
struct FigurePrediction {
  const KernelFigure* figure = nullptr;  // owned by the caller's table
  std::string family;                    // the efficiency family of its accelerator
  double predicted = 0;
  double error = 0;
};

// Statistics of the modelled figures of one family and kind.
struct FigureGroupStats {
  std::string family;
  KernelFigureKind kind = KernelFigureKind::kGemm;
  size_t count = 0;
  double median_abs_error = 0;  // the mean of the middle two for an even count
  double max_abs_error = 0;
};

struct KernelValidation {
  std::vector<FigurePrediction> figures;  // every figure, in table order
  std::vector<FigureGroupStats> groups;   // families in efficiency-table order, then kind
  // Per family of the efficiency table (same order), the kinds without a
  // modelled figure: those parameters are unvalidated at kernel level.
  std::vector<std::pair<std::string, std::vector<KernelFigureKind>>> unvalidated;
};

// Predicts every figure of `figures` (which must outlive the result) with
// its accelerator's family from `efficiency` and summarises the errors.
// kNotFound names the row and column of an accelerator or cluster that
// the databases lack; other errors as PredictKernelFigure, with the row.
StatusOr<KernelValidation> ValidateKernelFigures(const std::vector<KernelFigure>& figures, const HardwareDb& hw,
                                                 const ClusterDb& clusters, const EfficiencyDb& efficiency);

}  // namespace mfu
