#pragma once

// Memory of training and inference: weights, gradients, optimizer states,
// activations (Korthikanti et al. 2022) and the KV cache.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/flops.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/note.h"
#include "mfu/status.h"

namespace mfu {

// The dtypes a training framework keeps per parameter between steps, and
// how many optimizer moments: a framework's facts, one row each in
// data/frameworks/frameworks.csv (FrameworkProfile::state, cited there and
// in docs/memory.md). The defaults are Megatron-Core's (18 B/param).
struct TrainingStateDtypes {
  // The stored parameters, sharded by ZeRO-3/FSDP: bf16 in Megatron-Core
  // and DeepSpeed, fp32 in torchtitan's FSDP2 shards.
  DType weights = DType::kBf16;
  // The dtype forward and backward read. Under ZeRO-3 the working copy is
  // gathered in it, a layer at a time (torchtitan: bf16 from fp32 shards).
  DType compute = DType::kBf16;
  // The gradient buffer kept across micro-batches and reduced over the
  // data-parallel group (Megatron-Core: fp32, --accumulate-allreduce-grads-in-fp32).
  DType main_grads = DType::kFp32;
  // How the request spelled the weight and gradient dtypes when it gave them
  // (StorageDTypeName: "int4" stays "int4" though it is counted as kFp4);
  // "" = DTypeName of the dtype.
  std::string weights_name;
  std::string main_grads_name;
  std::string WeightsName() const { return weights_name.empty() ? DTypeName(weights) : weights_name; }
  std::string MainGradsName() const { return main_grads_name.empty() ? DTypeName(main_grads) : main_grads_name; }
  // An fp32 copy of the weights for the optimizer step; never counted when
  // `weights` is fp32 already.
  bool fp32_master = true;
  // Megatron-Core's optimizer copies 16-bit main gradients into fp32 (4
  // bytes, sharded with the optimizer); never counted for fp32 gradients.
  bool fp32_grad_copy = true;
  DType moments = DType::kFp32;
  int moments_per_param = 2;  // Adam 2, SGD with momentum 1
  bool operator==(const TrainingStateDtypes&) const = default;
};

// Parameters on one GPU and the groups that shard them under ZeRO.
struct StateSharding {
  double dense_params = 0;   // after tensor/pipeline splitting, before ZeRO
  double expert_params = 0;  // routed experts, after expert (and expert-tensor) splitting
  double dense_shard = 1;    // ranks sharing the dense parameters' shards (dp x cp)
  double expert_shard = 1;   // ranks sharing an expert's shards (the expert-data-parallel group)
  // ZeRO-3: unsharded parameters alive at once in the `compute` dtype (the
  // gathered layers: one computing, one prefetched).
  double gathered_params = 0;
};

// Bytes of training state on one GPU.
struct TrainingState {
  double weights_bytes = 0;    // stored weights (+ the gathered ZeRO-3 working copy)
  double gradients_bytes = 0;  // main gradients
  double optimizer_bytes = 0;  // fp32 master, fp32 gradient copy and the moments
  double total_bytes() const { return weights_bytes + gradients_bytes + optimizer_bytes; }
};

// The one model of weights, gradients and optimizer bytes that `mfu memory`
// and the performance model share. Bytes per parameter from `dtypes`;
// ZeRO `zero_stage` 1 shards the optimizer states over each group, 2 also
// the gradients, 3 also the weights (and adds `gathered_params` in the
// compute dtype). `zero_stage` must be in [0, 3] (checked); shards >= 1.
// Arithmetic only: the planner calls it for every configuration.
TrainingState TrainingStateBytes(const TrainingStateDtypes& dtypes, int zero_stage, const StateSharding& sharding);

struct TrainingMemoryOptions {
  TrainingStateDtypes state;  // default: Megatron-Core's
  int64_t seq_len = 0;
  int64_t micro_batch = 1;
  Recompute recompute = Recompute::kNone;
  bool flash_attention = true;
  int64_t tensor_parallel = 1;
  bool sequence_parallel = false;
  double activation_bytes = 2;  // bytes per stored activation element (16-bit)
  // Bytes per element a linear layer keeps of its input for the weight
  // gradient; 0: activation_bytes. 1 under FP8 with Transformer Engine
  // (FrameworkProfile::fp8_saved_input_bytes).
  double linear_input_bytes = 0;
  // Under Recompute::kSelective: what Megatron's --recompute-modules
  // recomputes (RecomputeModule bits; default core_attn).
  uint32_t recompute_modules = kDefaultRecomputeModules;
};

// Whole-model state (TrainingStateBytes without sharding) and the
// activations of one micro-batch per tensor-parallel rank: total_bytes() is
// what one GPU would hold only when tensor_parallel is 1
// (EstimateTrainingMemoryPerGpu shards the rest).
struct TrainingMemory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;  // fp32 master, fp32 gradient copy and the moments
  // Activations stored for backward, per layer and over all layers, for one
  // micro-batch, per tensor-parallel rank.
  double activations_per_layer_bytes = 0;
  double activations_bytes = 0;
  double output_layer_activations_bytes = 0;  // final norm, LM head input, fp32 logits
  double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + output_layer_activations_bytes;
  }
};

// Korthikanti et al. 2022 (arXiv:2205.05198) section 4, generalised to GQA, gated
// MLPs, MoE, models without dropout and FP8 inputs (docs/memory.md): per layer
// s*b*h*34 + 5*a*s^2*b bytes for a GPT layer with dropout (32 and 2*a*s^2
// without); the a*s^2 term becomes the fp32 log-sum-exp (4*a*s*b) with flash
// attention and vanishes with selective recompute; full recompute keeps only the layer input (2*s*b*h); the op-level
// policy (selective-op) the input, q, v, the attention output and the MLP's
// gate and down projection outputs (2*s*b*(3h + kv + ffn) for Llama).
StatusOr<TrainingMemory> EstimateTrainingMemory(const ModelSpec& spec, const TrainingMemoryOptions& options);

// Sets the model's training dropout to the run's when one is given.
// kInvalidArgument naming --dropout outside [0, 1).
Status ApplyDropout(std::optional<double> dropout, ModelSpec& model);

// A parallel layout (Megatron's order: tp innermost, then cp, dp, pp).
struct ParallelLayout {
  int64_t gpus = 1;  // = tp x pp x cp x dp
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t vpp = 1;  // virtual stages per GPU (interleaved 1F1B)
  int64_t cp = 1;
  int64_t ep = 1;   // expert parallel, within dp x cp x tp
  int64_t etp = 1;  // expert tensor parallel
  int zero_stage = 1;
  int64_t micro_batches = 1;  // per step and pipeline (1F1B keeps min(this, pp) in flight)
};

// The most loaded pipeline stage on one GPU.
struct TrainingMemoryPerGpu {
  TrainingState state;
  double activations_per_layer_bytes = 0;  // largest layer, one micro-batch, per TP and CP rank
  // The stage's layers x micro-batches in flight, plus the output layer at pp = 1.
  double activations_bytes = 0;
  double output_layer_activations_bytes = 0;  // its output-layer part (0 at pp > 1: the first stage is fuller)
  int64_t dp = 1;
  double layers_per_stage = 0;         // ceil(layers / pp): the busiest GPU's
  double micro_batches_in_flight = 1;  // min(m, pp), x (1 + (pp-1)/(pp x vpp)) interleaved
  double dense_params = 0;             // on this GPU before ZeRO: the stage's layers / tp + embedding or LM head
  double expert_params = 0;            // on this GPU before ZeRO: the stage's experts / (ep x etp)
  StateSharding sharding;              // what TrainingStateBytes was given
  double total_bytes() const { return state.total_bytes() + activations_bytes; }
};

// kInvalidArgument when `layout` does not fit `spec` at `seq_len`: a size
// < 1, zero_stage outside [0, 3], gpus not a multiple of tp x pp x cp, tp not
// dividing the heads (or KV heads, or ffn), fewer layers than pp x vpp, vpp
// without pp, ep/etp on a dense model, ep not dividing the experts, ep x etp
// not dividing dp x cp x tp, cp (x2) not dividing the sequence. The message
// starts with the offending field's name (gpus, tp, pp, vpp, cp, ep, etp,
// zero), which is also the flag of `mfu memory` and `mfu predict`.
Status ValidateParallelLayout(const ModelSpec& spec, int64_t seq_len, const ParallelLayout& layout);

// Memory per GPU of `layout`: parameters of the most loaded stage split as
// the performance model splits them (perf_model.h), TrainingStateBytes over
// dp x cp (experts: the expert-data-parallel group), and the activations of
// EstimateTrainingMemory at `options` with tensor_parallel = layout.tp,
// divided by cp, times the stage's layers and micro-batches in flight. The
// errors of ValidateParallelLayout and EstimateTrainingMemory.
StatusOr<TrainingMemoryPerGpu> EstimateTrainingMemoryPerGpu(const ModelSpec& spec, const TrainingMemoryOptions& options,
                                                            const ParallelLayout& layout);

// Korthikanti's closed form for one GPT layer, for tests and documentation:
// s*b*h*(34 + 5*a*s/h) with no parallelism.
double KorthikantiActivationBytesPerLayer(double s, double b, double h, double a);

struct KvCacheSize {
  double bytes_per_token = 0;                  // all layers, ignoring window caps
  double bytes_per_sequence = 0;               // at `context_len`, with sliding-window caps
  double kv_elements_per_token_per_layer = 0;  // K+V (or MLA latent) elements
};

// KV cache for one sequence of `context_len` tokens in `dtype`: MHA/GQA keep
// K and V (g*(d_qk + d_v) elements per layer per token), MLA keeps the latent
// plus the rope key (kv_lora_rank + qk_rope_head_dim), sliding-window layers
// keep at most `window` tokens.
StatusOr<KvCacheSize> ComputeKvCache(const ModelSpec& spec, DType dtype, int64_t context_len);

// ------------------------------------------------------- the memory job

// What `mfu memory` is asked: a model, the training state, the activations'
// shape and a parallel layout (as `mfu predict`'s), and the KV cache dtype.
struct MemoryRequest {
  ModelSpec model;
  std::optional<int64_t> seq_len;  // unset: 4096 (DiT: the tokens of 81 frames at 720p)
  int64_t micro_batch = 1;
  std::string recompute = "none";
  bool flash_attention = true;
  bool sequence_parallel = false;
  // Whose stored dtypes to count: a training framework of
  // data/frameworks/frameworks.csv, resolved into `framework_state` by
  // EstimateMemory(catalog, request) (mfu/training_setup.h); `state` names
  // another framework to take only the state from ("" = `framework`'s).
  std::string framework = "megatron-core";
  std::string state;
  TrainingStateDtypes framework_state;  // default: Megatron-Core's
  std::string weight_dtype;             // "": the state's
  std::string grad_dtype;               // "": the state's
  std::string optimizer = "adam";       // adam, adam-fp32, sgd
  std::string kv_dtype = "bf16";
  // The linear layers' GEMM precision (bf16, fp16, fp8, fp4): under FP8/FP4
  // a layer keeps `fp8_saved_input_bytes` per input element for its weight
  // gradient, the framework's (EstimateMemory(catalog, ...)); the default is
  // Megatron-Core's (Transformer Engine's FP8 copy, 1 byte).
  std::string precision = "bf16";
  double fp8_saved_input_bytes = 1;
  std::optional<double> dropout;  // unset: the model's (ModelSpec::dropout)
  // "" = core_attn; else Megatron's --recompute-modules list (with
  // recompute "selective"): TrainingMemoryOptions::recompute_modules.
  std::string recompute_modules;
  int64_t context = 0;  // KV cache context; 0: seq_len
  int64_t gpus = 0;     // 0: tp x pp x cp
  int64_t tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1, etp = 1;
  // Unset: `framework`'s zero_stage through EstimateMemory(catalog, ...),
  // else 1.
  std::optional<int> zero;
  int64_t global_batch = 0;  // 0: dp x micro_batch
};

struct MemoryReport {
  ModelSpec model;
  ParamCounts params;
  std::string state;      // the framework whose stored dtypes are counted
  std::string optimizer;  // as requested
  TrainingStateDtypes dtypes;
  double state_bytes_per_param = 0;  // unsharded
  ParallelLayout layout;
  TrainingMemoryOptions options;
  TrainingMemory per_rank;   // whole-model state, activations per TP rank
  TrainingMemory unsharded;  // everything on one GPU (tp 1)
  TrainingMemoryPerGpu per_gpu;
  // Decoder models only.
  std::optional<KvCacheSize> kv_cache;
  DType kv_dtype = DType::kBf16;
  int64_t kv_context = 0;
  // The defaults that change the answer: the sequence length
  // ("default_seq_len"), the KV cache context ("default_context"), the
  // training state and optimizer ("default_state").
  std::vector<Note> notes;
};

// The memory of `request` with its `framework_state` (the names `framework`
// and `state` are only echoed). kInvalidArgument naming the parameter (as
// `parameter 'tp'`, mfu/setup.h) for an unknown dtype or recompute
// mode, a layout that does not fit the model (ValidateParallelLayout), a
// micro-batch outside [1, 2^24], a global batch that is not a multiple of
// dp x micro-batch, sequence parallelism without tensor parallelism.
StatusOr<MemoryReport> EstimateMemory(const MemoryRequest& request);

// `state` with the stored weight and main-gradient dtypes replaced where
// `weight_dtype` / `grad_dtype` are not empty (ParseStorageDType spellings,
// echoed as given): `mfu memory`, `predict` and `plan`'s --weight-precision
// and --grad-precision. kInvalidArgument naming Param("weight_dtype") or
// Param("grad_dtype").
StatusOr<TrainingStateDtypes> OverrideStateDTypes(TrainingStateDtypes state, const std::string& weight_dtype,
                                                  const std::string& grad_dtype);

// Bytes one parameter keeps between steps with `dtypes`, unsharded.
double StateBytesPerParam(const TrainingStateDtypes& dtypes);

}  // namespace mfu
