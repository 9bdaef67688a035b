#pragma once

// The training performance model behind `mfu predict` and `mfu plan`: for a
// dense or MoE transformer, an accelerator, a cluster fabric and a parallel
// configuration, the step time (compute by roofline with shape-dependent
// efficiency, communication on the scale-up/scale-out hierarchy, overlap,
// pipeline bubble, recompute, optimizer), the memory per GPU and the MFU.
// docs/plan.md states every formula; data/efficiency/ holds the few fitted
// parameters per accelerator family.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/cluster.h"
#include "mfu/fabric.h"
#include "mfu/flops.h"
#include "mfu/framework.h"
#include "mfu/hwdb.h"
#include "mfu/memory.h"
#include "mfu/model.h"
#include "mfu/result.h"
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

// One parallel configuration.
struct TrainingConfig {
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t dp = 0;  // 0: derived as gpus / (tp * pp * cp)
  int64_t cp = 1;
  int64_t ep = 1;                 // expert parallel (MoE), within the data-parallel ranks
  int64_t etp = 1;                // expert tensor parallel
  int64_t vpp = 1;                // virtual pipeline stages (interleaved 1F1B)
  bool sequence_parallel = true;  // with tp > 1
  int zero_stage = 1;             // 0 DDP, 1 distributed optimizer, 2, 3 (= FSDP)
  bool fsdp = false;              // PyTorch FSDP: ZeRO-3 gathers and reduces per micro-batch
  int64_t micro_batch = 1;
  int64_t global_batch = 0;  // sequences; 0: dp * micro_batch
  Recompute recompute = Recompute::kNone;
  DType precision = DType::kBf16;  // of the linear layers' GEMMs; attention and the LM head run in 16-bit
  bool tp_comm_overlap = false;    // split TP collectives overlapped with GEMMs (needs framework support)
  bool dp_overlap = true;          // the framework's DP/FSDP overlap (false: every DP collective exposed)
  // Fused attention (the framework's kernel, causal blocks skipped). Without
  // it the scores are materialised: full s^2 GEMMs plus memory-bound
  // softmax, mask and dropout over heads x s^2 elements (pre-2022 Megatron).
  bool flash_attention = true;
  // Tokens of the busiest expert rank / the mean (1: balanced routing, as
  // benchmark recipes force).
  double moe_imbalance = 1;
  // The dtypes kept per parameter (memory.h TrainingStateBytes, shared with
  // `mfu memory`); the default is Megatron-Core's 18 bytes.
  TrainingStateDtypes state;
};

// What is fixed while configurations vary.
struct TrainingSetup {
  const ModelSpec* model = nullptr;
  int64_t seq_len = 0;
  const Accelerator* gpu = nullptr;
  const Cluster* cluster = nullptr;  // null: one NVLink domain from the accelerator's figures
  int64_t gpus = 0;
  Convention convention = Convention::kMegatron;
  EfficiencyParams efficiency;
  FrameworkProfile framework;  // what overlaps, attention kernel, FP8 recipe (framework.h)
};

// "tp=8 pp=4 dp=16 cp=1 vpp=2 mbs=1 gbs=512 recompute=selective zero=1 sp"
std::string ConfigText(const TrainingConfig& c);

// Why a configuration is not valid (kOk when it is).
enum class ConfigIssue {
  kOk,
  kGpusNotDivisible,      // tp*pp*cp does not divide the GPU count, or dp given inconsistently
  kLayersNotDivisible,    // fewer layers than pp*vpp stages (uneven splits are allowed)
  kHeadsNotDivisible,     // tp does not divide the heads (or KV heads, or ffn)
  kExpertsNotDivisible,   // ep does not divide the experts, or ep*etp > dp*tp
  kBatchNotDivisible,     // global batch not a multiple of dp * micro_batch
  kSequenceNotDivisible,  // cp (x2 for load balance) does not divide the sequence
  kTopology,              // a tensor-parallel group larger than a scale-up domain it must fit
  kOutOfMemory,
  kBadValue,  // a size < 1, zero stage out of range, vpp without pp ...
};
const char* ConfigIssueName(ConfigIssue issue);
// A code for JSON: "ok", "gpus_not_divisible", "layers_not_divisible",
// "heads_not_divisible", "experts_not_divisible", "batch_not_divisible",
// "sequence_not_divisible", "topology", "oom", "bad_value".
const char* ConfigIssueCode(ConfigIssue issue);

// Memory per GPU, bytes (the most loaded pipeline stage).
struct MemoryPerGpu {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double reserved = 0;  // context, communication buffers, allocator headroom
  double capacity = 0;  // the accelerator's HBM
  double total() const { return weights + gradients + optimizer + activations + reserved; }
  bool fits() const { return total() <= capacity; }
};

// Step-time components, seconds per step on the slowest GPU. They sum to
// step_s exactly.
struct StepBreakdown {
  double matrix_s = 0;     // GEMMs incl. LM head, at the shape's efficiency
  double attention_s = 0;  // attention core (flash)
  double vector_s = 0;     // norms, activations, residuals, rope, cross-entropy
  double recompute_s = 0;  // extra forward work of activation recomputation
  double overhead_s = 0;   // per-kernel gaps
  double optimizer_s = 0;
  double tp_comm_s = 0;  // exposed tensor-/sequence-parallel collectives
  double cp_comm_s = 0;  // exposed context-parallel KV exchange
  double ep_comm_s = 0;  // exposed expert all-to-all
  double pp_comm_s = 0;  // exposed pipeline send/recv
  double dp_comm_s = 0;  // exposed data-parallel / FSDP collectives
  double bubble_s = 0;   // pipeline fill and drain
  double total() const;
};

struct Prediction {
  ConfigIssue issue = ConfigIssue::kOk;
  TrainingConfig config;      // with dp and global_batch resolved
  int64_t micro_batches = 0;  // per step per pipeline
  double step_s = 0;
  StepBreakdown breakdown;
  double tokens_per_s = 0;           // whole job
  double model_flops_per_token = 0;  // convention's model FLOPs (3 passes)
  double hardware_flops_per_token = 0;
  double tflops_per_gpu = 0;  // model FLOPs / s / GPU, 1e12
  double peak_flops = 0;      // dense peak of the precision
  double mfu = 0;
  double hfu = 0;
  double matrix_flops_per_step = 0;  // executed GEMM + attention FLOPs on the slowest GPU
  MemoryPerGpu memory;
  // The step as the buckets of `mfu trace` (FinishPrediction): idle =
  // bubble + kernel gaps, exposed_communication, non_matrix_kernels (vector
  // work, optimizer), matrix_below_peak, matrix_at_peak (executed matrix
  // FLOPs / dense peak); the measured-only buckets are 0.
  Waterfall waterfall;
  Utilization utilization;  // per GPU, model and hardware FLOPs against the dense peak
};

// Fills p.waterfall and p.utilization from the step, the breakdown and the
// FLOPs (Evaluate calls it for a valid configuration).
void FinishPrediction(Convention convention, Prediction& p);

// A performance model for one setup: per-layer quantities are computed once
// so that Evaluate costs arithmetic only (the planner calls it millions of
// times).
class PerfModel {
 public:
  // kInvalidArgument: no model, seq_len < 1, gpus < 1, an accelerator with
  // neither a bf16 nor an fp16 dense peak, a DiT model.
  static StatusOr<PerfModel> Create(const TrainingSetup& setup);

  // Fills `out` (issue != kOk when the configuration is invalid or does not
  // fit; memory is computed whenever the shape is valid).
  void Evaluate(const TrainingConfig& config, Prediction& out) const;
  Prediction Evaluate(const TrainingConfig& config) const {
    Prediction p;
    Evaluate(config, p);
    return p;
  }
  // Evaluate without the waterfall and utilization (what the planner runs
  // over every candidate; FinishPrediction completes the ones it keeps).
  void EvaluateStep(const TrainingConfig& config, Prediction& out) const;
  // kInvalidArgument naming the field (Param, mfu/setup.h) for the values
  // Evaluate rejects before looking at the model's shape: a size < 1 or
  // absurd, negative dp or global batch, a ZeRO stage outside 0-3, vpp
  // without pp, GPUs that tp x pp x cp does not divide or a dp that
  // contradicts them, ep/etp on a dense model, TP overlap the framework
  // cannot do, an imbalance outside [1, 64]. The same checks as Evaluate's.
  Status Validate(const TrainingConfig& config) const;
  const TrainingSetup& setup() const { return setup_; }
  // The collectives' network: the setup's cluster, or one domain of its accelerator.
  const Fabric& fabric() const { return fabric_; }
  // Replaces the efficiency parameters (calibration re-evaluates the same
  // runs under many parameter sets without rebuilding the model).
  void SetEfficiency(const EfficiencyParams& efficiency);

 private:
  PerfModel() = default;
  TrainingSetup setup_;
  Fabric fabric_;  // of the setup's cluster (or accelerator) at its efficiency
  // The vector kernels a training step runs: the family's, except norms
  // (TrainingVectorKernels in perf_model.cc says why).
  VectorKernelTable vector_kernels_;
  // Per token, forward, one layer (averaged over dense and MoE layers).
  double attn_proj_flops_ = 0;      // Q, K, V, O projections
  double attn_core_flops_ = 0;      // scores + context, causal
  double mlp_flops_ = 0;            // dense MLP (dense layers' share)
  double expert_flops_ = 0;         // routed experts (top-k), MoE layers' share
  double shared_flops_ = 0;         // shared experts + router
  double lm_head_flops_ = 0;        // per token, once per model
  double dense_layer_params_ = 0;   // per layer average, tensor-parallel-sharded part
  double expert_layer_params_ = 0;  // per layer average, expert-parallel-sharded part
  double embedding_params_ = 0;
  double lm_head_params_ = 0;
  double moe_layer_share_ = 0;  // MoE layers / layers
  double model_flops_per_token_ = 0;
  std::array<double, 4> hardware_flops_per_token_{};  // by Recompute
  // Activation bytes for one sequence on one tensor-parallel rank: {one
  // layer, the output layer}, by ActivationKey(tp, sp, recompute), for every
  // tp that divides the heads (filled by Create).
  std::vector<std::array<double, 2>> activations_;
  static size_t ActivationKey(int64_t tp, bool sp, Recompute recompute, bool flash);
};

// The model's building blocks, public so that measured operator and NCCL
// times can test them (src/plan/operator_test.cc uses Vidur's profiles).
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
