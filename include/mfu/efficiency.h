#pragma once

// Efficiency parameters of accelerator families (data/efficiency/): each a
// physical rate or overlap share, grounded in kernel figures and fitted by
// `mfu calibrate`; what the training and inference models (perf_model.h,
// inference.h) and the kernel-figure checks (kernel_figures.h) share.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/note.h"
#include "mfu/status.h"
#include "mfu/vector_kernels.h"

namespace mfu {

// Efficiency parameters of an accelerator family, each with a physical
// meaning (fitted by `mfu calibrate`, shipped in data/efficiency/).
struct EfficiencyParams {
  std::string family;                     // "ampere", "hopper", ...
  std::vector<std::string> accelerators;  // accelerator id prefixes it covers
  // GEMMs: achieved / dense peak of the dtype at a large shape; each GEMM
  // dim d scales it by d / (d + matmul_half_dim).
  double matmul_peak_fraction = 0.8;      // 16-bit
  double matmul_half_dim = 64;            //
  double fp8_matmul_peak_fraction = 0.7;  // FP8 (per-tensor scaled), quantization excluded
  double fp4_matmul_peak_fraction = 0.6;  // FP4 (block scaled), quantization excluded
  // Fused attention, 16-bit, the family's best kernel (framework.h
  // AttentionKernel::kBest) at head dim 128: achieved / dense peak at long
  // sequences, times L / (L + half_seq) for L keys per query.
  double attention_peak_fraction = 0.6;  // forward
  double attention_half_seq = 200;       // forward
  double attention_bwd_fraction = 0.5;   // backward (2.5x the forward FLOPs)
  double attention_bwd_half_seq = 400;   // backward
  double attention_fa2_ratio = 1;        // FlashAttention-2's rate / the best kernel's on this family
  double attention_triton_ratio = 0.55;  // Triton FlashAttention's (2022-23) rate / FlashAttention-2's
  double vector_bw_fraction = 0.7;       // streamed traffic without a kernel row of its own: GEMM
                                         // operands, KV cache, rope, softmax, optimizer; achieved / HBM
  double scaleup_bw_fraction = 0.75;     // collective bus bandwidth / NVLink bandwidth
  double scaleout_bw_fraction = 0.75;    // collective bus bandwidth / NIC bandwidth
  // Of the communication a framework issues behind compute (framework.h),
  // the share that actually hides (SM and memory contention lose the rest).
  double overlap_efficiency = 0.8;
  double kernel_overhead_us = 4;   // idle gap per kernel (launch, sync), microseconds
  double memory_reserved_gib = 3;  // CUDA context, NCCL buffers, allocator slack
  // The SM clock a whole step sustains / the clock the kernel figures ran
  // at (not fitted): a training or serving step keeps GEMMs, attention, HBM
  // and NVLink busy together and draws the board's power limit, where a
  // kernel benchmark times one kernel in short bursts. Scales the steps'
  // GEMM and attention rates (GemmSeconds and AttentionSeconds, what the
  // kernel figures check, keep the kernels' own clock).
  double sustained_clock_fraction = 1;
  // MoE expert GEMMs (not fitted; kernel figures): a grouped GEMM's rate /
  // the dense curve's at the same per-expert shape (GemmEfficiency with m =
  // tokens per expert), for the m-grouped forward and data gradient and for
  // the k-grouped weight gradient (inner dim = tokens per expert). 1 for a
  // family without grouped-GEMM figures (unvalidated).
  double grouped_gemm_fraction = 1;
  double grouped_wgrad_fraction = 1;
  // An all-to-all whose group spans scale-up domains: the per-GPU NIC rate
  // it achieves on the bytes that leave the domain / the NIC's bandwidth
  // (Fabric::AllToAllLink; nccl-tests' 32-GPU all-to-all over 4 DGX nodes).
  double alltoall_nic_ratio = 0.743;
  // FP4 (block-scaled) GEMMs' half dim (not fitted; kernel figures): an
  // MMA four times the 16-bit rate leaves each tile's fixed costs (scale
  // factors, the 128-row tile, the epilogue) four or more times as large a
  // share, so small M, N or K cost FP4 more than matmul_half_dim says
  // (Blackwell: 549 TF at M = 128, N = 6144, K = 4096, below BF16's 729).
  double fp4_matmul_half_dim = 64;
  // FP8/FP4 operand quantization kernels (amax, cast, scale factors, the
  // transposed copy; framework.h fp8_cast_bytes per element): achieved /
  // HBM (not fitted; kernel figures of kind `quantize`). Below
  // vector_bw_fraction where the figures show it: the per-block amax
  // reduction and the scale write cost more than a plain copy (MI350X's
  // bf16_to_mx kernel at 56% of HBM where a read kernel reaches 86%). A
  // family without quantization figures carries its kernel-grounded
  // vector_bw_fraction (kernel_grounded.csv; unvalidated).
  double quant_bw_fraction = 0.7;
  // MoE token permutation and unpermutation kernels (a gather of each
  // token's row to its top-k experts' contiguous blocks, and back): achieved
  // / HBM (not fitted; kernel figures of kind `permute`). Scattered rows
  // reach about half of what a streaming kernel does (H200 moe_permute
  // 1.76-2.37 TB/s of 4.8). A family without permutation figures carries
  // its kernel-grounded vector_bw_fraction (unvalidated).
  double permute_bw_fraction = 0.7;
  std::string source;
  // What the family's predictions were checked against
  // (data/efficiency/validation.csv): "validated" (measured end-to-end runs),
  // "kernels only", or "unvalidated"; every report that uses the family
  // states it.
  std::string training_validation = "unvalidated";
  std::string inference_validation = "unvalidated";
  // Norms, residual adds, the MLP activation (vector_kernels.h), by VectorKernel.
  VectorKernelTable vector_kernels;
};

inline constexpr size_t kNumEfficiencyParams =
    15;  // the fitted ones (not memory_reserved_gib, sustained_clock_fraction)
// name, pointer-to-member, and the bounds calibration keeps it in.
struct EfficiencyParamInfo {
  const char* name;
  double EfficiencyParams::*field;
  double min;
  double max;
};
std::array<EfficiencyParamInfo, kNumEfficiencyParams> EfficiencyParamInfos();

class EfficiencyDb {
 public:
  // data/efficiency/efficiency.csv, then data/efficiency/vector_kernels.csv.
  static StatusOr<EfficiencyDb> LoadBuiltin();
  // The built-in tables with data/efficiency/kernel_grounded.csv's values:
  // each family's parameters from kernel figures alone, before any fit to
  // measured runs (what `mfu calibrate` starts from and pulls towards).
  static StatusOr<EfficiencyDb> LoadBuiltinPrior();
  // CSV with the columns of data/efficiency/efficiency.csv; rows replace
  // families of the same name. A table with a `kernel` column is a vector
  // kernel table instead (the columns of data/efficiency/vector_kernels.csv):
  // each row updates one kernel of an existing family. Nothing changes
  // unless every row is valid. kParse / kOutOfRange are one line naming
  // origin:line and the column.
  Status AddCsv(std::string_view text, std::string_view origin);
  // As AddCsv for the file at `path` read through `fs`; kNotFound if it
  // cannot be read.
  Status AddFile(const FileSystem& fs, const std::string& path);
  // The family whose longest accelerator prefix matches `accelerator_id`,
  // else the "default" family.
  const EfficiencyParams& For(std::string_view accelerator_id) const;
  // The family named `family` (case-insensitively); kInvalidArgument naming
  // the closest and listing the families otherwise.
  StatusOr<const EfficiencyParams*> Find(std::string_view family) const;
  const std::vector<EfficiencyParams>& all() const { return families_; }
  EfficiencyParams* Mutable(std::string_view family);
  // The database as CSV (what `mfu calibrate --write` saves).
  std::string ToCsv() const;
  // The vector kernel table as CSV, one row per family and kernel (what
  // `mfu calibrate --write-vector-kernels` saves).
  std::string VectorKernelsToCsv() const;

 private:
  Status AddVectorKernelCsv(std::string_view text, std::string_view origin);
  // data/efficiency/validation.csv: what each family was validated on.
  Status ApplyValidation(std::string_view text, std::string_view origin);
  std::vector<EfficiencyParams> families_;
};

// A warning "unvalidated_family" when `family` (the efficiency family of
// accelerator `accelerator_id`) has no measured end-to-end runs for
// training (`training`) or inference: its validation status is anything but
// "validated". The message names the accelerator, the family and its status,
// the families of `db` that are validated (read from the data, not listed in
// code) and the error on those (ValidatedTrainingError /
// ValidatedInferenceError). nullopt for a validated family.
std::optional<Note> UnvalidatedFamilyNote(const EfficiencyDb& db, const EfficiencyParams& family,
                                          std::string_view accelerator_id, bool training);
// The error of the predictions on the validated families, as the docs
// measure it: "8.9% MAPE over 253 measured runs" (docs/plan.md) and "7.7%
// MAPE on TensorRT-LLM's H100 throughput table" (docs/infer.md).
std::string_view ValidatedTrainingError();
std::string_view ValidatedInferenceError();

}  // namespace mfu
