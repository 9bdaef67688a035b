#pragma once

// The training performance model behind `mfu predict` and `mfu plan`: for a
// dense or MoE transformer, an accelerator, a cluster fabric and a parallel
// configuration, the step time (compute by roofline with shape-dependent
// efficiency, communication on the scale-up/scale-out hierarchy, overlap,
// pipeline bubble, recompute, optimizer), the memory per GPU and the MFU.
// docs/plan.md states every formula; the efficiency parameters
// (efficiency.h) and rooflines (roofline.h) it is built from are src/perf's.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/cluster.h"
#include "mfu/efficiency.h"
#include "mfu/fabric.h"
#include "mfu/flops.h"
#include "mfu/framework.h"
#include "mfu/hwdb.h"
#include "mfu/memory.h"
#include "mfu/model.h"
#include "mfu/result.h"
#include "mfu/roofline.h"
#include "mfu/status.h"
#include "mfu/vector_kernels.h"

namespace mfu {

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
  // What Recompute::kSelective recomputes when it is Megatron's (the
  // framework's selective_ac `attention`): RecomputeModule bits,
  // --recompute-modules; default core_attn.
  uint32_t recompute_modules = kDefaultRecomputeModules;
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
  // One evaluation's context and its phases (perf_model_step.cc).
  struct StepEval;
  PerfModel() = default;
  TrainingSetup setup_;
  Fabric fabric_;  // of the setup's cluster (or accelerator) at its efficiency
  // The vector kernels a training step runs: the family's, except norms
  // (TrainingVectorKernels in perf_model.cc says why).
  VectorKernelTable vector_kernels_;
  // Per token, forward, one layer (averaged over dense and MoE layers).
  double attn_proj_flops_ = 0;  // Q, K, V, O projections
  double attn_core_flops_ = 0;  // scores + context, causal
  double mlp_flops_ = 0;        // dense MLP (dense layers' share)
  double expert_flops_ = 0;     // routed experts (top-k), MoE layers' share
  double shared_flops_ = 0;     // shared experts
  double router_flops_ = 0;     // the router's gate GEMM (16-bit, not split by tp)
  double lm_head_flops_ = 0;    // per token, once per model
  // Shares of the projections' and the MLP's (and shared experts') GEMM
  // work that torchtitan's op-level policy recomputes: k + o of q, k, v, o;
  // OpPolicyMlpShare (flops.h).
  double op_rc_attn_share_ = 0;
  double mla_up_share_ = 0;  // MLA's up-projections in the attention projections' FLOPs (mla_up_proj)
  double op_rc_mlp_share_ = 0;
  double dense_layer_params_ = 0;   // per layer average, tensor-parallel-sharded part
  double expert_layer_params_ = 0;  // per layer average, expert-parallel-sharded part
  double embedding_params_ = 0;
  double lm_head_params_ = 0;
  double moe_layer_share_ = 0;  // MoE layers / layers
  double model_flops_per_token_ = 0;
  std::array<double, kAllRecomputeModes.size()> hardware_flops_per_token_{};  // by Recompute
  // Activation bytes for one sequence on one tensor-parallel rank: {one
  // layer, the output layer}, by ActivationKey(tp, sp, recompute, flash,
  // FP8/FP4 GEMM inputs), for every tp that divides the heads (filled by
  // Create).
  std::vector<std::array<double, 2>> activations_;
  static size_t ActivationKey(int64_t tp, bool sp, Recompute recompute, bool flash, bool fp8);
};

}  // namespace mfu
