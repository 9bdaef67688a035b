#pragma once

// The inference performance model behind `mfu infer`: per-step FLOPs and
// bytes (weights, KV cache read and write, activations) of prefill and
// decode, on a tensor/pipeline/expert-parallel layout, timed by the same
// roofline and efficiency parameters as the training model (roofline.h);
// memory budget and KV capacity; throughput of a workload at the largest
// batch that fits; speculative decoding; and the MFU/MBU a measured
// throughput implies. A workload is served the way the serving framework
// schedules it (continuous batching: rounds of decode tokens and prompt
// tokens, ServingSchedule). Formulas: docs/infer.md.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/cluster.h"
#include "mfu/flops.h"
#include "mfu/framework.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/result.h"
#include "mfu/roofline.h"
#include "mfu/status.h"

namespace mfu {

// How a serving engine mixes prompts and decode tokens in its forward
// passes (continuous batching). ServingDefaultsFor() gives a framework's.
struct ServingSchedule {
  // Tokens one forward pass may carry, decode and prompt tokens together
  // (TensorRT-LLM max_num_tokens, vLLM max_num_batched_tokens, SGLang
  // chunked_prefill_size). A prompt that runs whole may exceed it (an engine
  // must be built to hold its longest prompt).
  double token_budget = 8192;
  // Prompts are split into chunks that fill what the decode tokens leave of
  // the budget; false: each prompt runs whole in one pass (as many whole
  // prompts as the budget holds).
  bool chunked_prefill = false;
  // Prompt tokens share forward passes with the running batch's decode
  // tokens (TensorRT-LLM in-flight batching, vLLM); false: prefill passes
  // alternate with decode passes (SGLang without --enable-mixed-chunk).
  bool mixed = true;
};

// A serving framework's defaults on an accelerator.
struct ServingDefaults {
  ServingSchedule schedule;
  double max_batch = 2048;  // concurrent requests the engine admits
};
// The defaults of the serving profile `framework` (tensorrt-llm, vllm,
// sglang; another serving profile gets tensorrt-llm's) on `gpu`; where a
// framework sizes them by the GPU's memory, so do they. kInvalidArgument
// when `framework` is not a serving profile. Each value cites the
// framework's code in inference.cc.
StatusOr<ServingDefaults> ServingDefaultsFor(const FrameworkProfile& framework, const Accelerator& gpu);

// Whether inference predictions have been checked against measurements on
// accelerator `accelerator_id` (an hwdb id) with `framework`: only
// TensorRT-LLM on H100 SXM has (tests/data/trtllm_h100_throughput.csv).
// `note` is empty when validated, else one line saying what is not.
struct InferenceValidity {
  bool validated = false;
  std::string note;
};
InferenceValidity InferenceValidation(std::string_view accelerator_id, std::string_view framework = "tensorrt-llm");

struct InferenceSetup {
  const ModelSpec* model = nullptr;
  const Accelerator* gpu = nullptr;
  const Cluster* cluster = nullptr;  // null: the accelerator's own NVLink figure
  int64_t tp = 1;
  int64_t pp = 1;
  // Experts (MoE) over the tp group as TensorRT-LLM places them
  // (docs/source/features/parallel-strategy.md): ep GPUs hold whole
  // experts, each sharded tp/ep ways (moe_tp x moe_ep = tp); 1: every
  // expert sharded by tp. ep must divide tp.
  int64_t ep = 1;
  // Attention data parallelism (MoE): the tp GPUs run attention and the
  // dense layers on their own requests with replicated weights and their own
  // KV cache; the MoE layers gather every rank's tokens and reduce-scatter
  // the results (TensorRT-LLM enable_attention_dp, SGLang
  // --enable-dp-attention). false: attention tensor parallel over tp.
  bool attention_dp = false;
  DType weight_dtype = DType::kBf16;  // bf16, fp16, fp8, int8, fp4 (int4 as fp4: 0.5 byte)
  DType kv_dtype = DType::kBf16;
  MlaMode mla = MlaMode::kAbsorbed;  // decode attention over the latent (prefill is always naive)
  Convention convention = Convention::kMegatron;
  EfficiencyParams efficiency;
  // The serving framework: its prefill attention kernel and whether the
  // residual add runs inside the norm (framework.h). Default-constructed:
  // the family's best kernel, unfused norms.
  FrameworkProfile framework;
  ServingSchedule schedule;
  double max_batch = 2048;  // the engine's batch cap (TensorRT-LLM's default max_batch_size)
};

// One engine step on one GPU of the layout (the slowest pipeline stage's
// share for time; whole-model counts for FLOPs and bytes per GPU).
struct StepCost {
  double tokens = 0;          // tokens processed in the step (batch x new tokens)
  double flops = 0;           // executed FLOPs per GPU
  double model_flops = 0;     // the convention's FLOPs per GPU (MFU numerator)
  double weight_bytes = 0;    // weights read per GPU
  double kv_read_bytes = 0;   // KV cache read per GPU
  double kv_write_bytes = 0;  // KV cache written per GPU
  double activation_bytes = 0;
  double compute_s = 0;        // GEMMs and attention at the shape's efficiency
  double memory_s = 0;         // the step's traffic at the achievable bandwidth
  double comm_s = 0;           // tp all-reduces or attention-DP MoE gathers (not overlapped), pipeline sends
  double time_s = 0;           // the roofline per operator, summed, plus communication
  bool compute_bound = false;  // more time in operators limited by compute than by bandwidth
  // time_s split for one GPU (docs/infer.md "Waterfall"): matrix_at_peak
  // the executed FLOPs at the dense peak, matrix_below_peak the rest of the
  // GEMM and attention operators' time (compute- or memory-bound),
  // non_matrix_kernels the vector kernels, exposed_communication comm_s,
  // idle the other pipeline stages' share of the step. Empty when time_s is 0.
  Waterfall waterfall;
  Utilization utilization;  // model FLOPs (convention) and executed FLOPs per second vs the dense peak
  double total_bytes() const { return weight_bytes + kv_read_bytes + kv_write_bytes + activation_bytes; }
};

struct InferenceMemory {
  double weights_bytes = 0;       // per GPU
  double kv_bytes_per_token = 0;  // per GPU (all its layers)
  double reserved_bytes = 0;      // context, activations, communication buffers
  double capacity_bytes = 0;      // HBM
  // Tokens of KV cache the replica holds beside the weights: one GPU's
  // under tensor parallelism (every GPU holds a slice of every token), the
  // tp ranks' sum under attention data parallelism.
  double kv_capacity_tokens = 0;
  bool fits() const { return weights_bytes + reserved_bytes < capacity_bytes; }
};

// A workload of requests with fixed input and output lengths served at a
// steady concurrency (continuous batching, infinite request rate), in the
// steady state of the schedule: rounds of `decode_batch` decode tokens, a
// share `prefill_round_share` of which also carry `prefill_tokens` prompt
// tokens (in the same pass when mixed, in a pass of their own otherwise).
struct WorkloadResult {
  double batch = 0;  // concurrent requests (pp micro-batches of batch/pp with pipeline parallelism)
  double output_tokens_per_s = 0;
  double ttft_s = 0;               // the rounds that carry one request's prompt, in the steady state (no queueing)
  double tpot_s = 0;               // the mean round a decoding request waits for, prompt work included
  double mfu = 0;                  // model FLOPs of the whole workload / (time x GPUs x peak)
  double mbu = 0;                  // bytes moved / (time x GPUs x HBM bandwidth)
  std::string batch_reason;        // "KV capacity", "engine cap", "given"
  double decode_batch = 0;         // requests decoding in a round (whole replica; < batch when the budget binds)
  double prefill_tokens = 0;       // prompt tokens in a round that carries prefill (per micro-batch)
  double prefill_round_share = 0;  // share of rounds that carry prompt tokens (0-1)
};

// A mix of request shapes (e.g. a serving benchmark's table): each pair is
// served at its own largest batch (or the given one), one pair at a time;
// the mix's throughput is its output tokens over the time all its requests
// take, and its MFU/MBU are the time-weighted means.
struct WorkloadPair {
  double input_len = 0;
  double output_len = 0;
  double requests = 1;  // weight: how many requests of this shape
};
struct WorkloadMix {
  std::vector<WorkloadResult> pairs;  // in the order given
  double seconds = 0;                 // time to serve every request of the mix
  double output_tokens_per_s = 0;     // sum(requests x output_len) / seconds
  double mfu = 0;
  double mbu = 0;
};

struct SpeculativeResult {
  double tokens_per_step = 0;  // (1 - a^(k+1)) / (1 - a)
  double step_s = 0;           // drafting k tokens + one verify step over k+1 positions
  double tpot_s = 0;           // step_s / tokens_per_step
  double speedup = 0;          // plain decode TPOT / speculative TPOT
  double mfu = 0;              // emitted tokens' model FLOPs / (time x peak)
  double hfu = 0;              // everything executed (rejected positions, drafter)
};

struct StepUtilization {
  double seconds = 0;
  double predicted_s = 0;
  double mfu = 0;
  double mbu = 0;
};

// What a measured throughput implies (mfu calc for inference).
struct MeasuredInference {
  double output_tokens_per_s = 0;  // whole deployment
  double input_len = 0, output_len = 0;
  double mfu = 0;
  double mbu = 0;
  double batch = 0;  // the concurrency assumed for the bytes (largest that fits unless given)
};

class InferenceModel {
 public:
  // kInvalidArgument: no model or accelerator, a DiT model, tp/pp/ep < 1,
  // tp not dividing the heads or KV heads (nor a multiple of them), ep not
  // dividing the experts, pp above the layers, a GPU without a peak for the
  // compute dtype or without memory bandwidth, an unsupported dtype.
  static StatusOr<InferenceModel> Create(const InferenceSetup& setup);

  const InferenceSetup& setup() const { return setup_; }
  int64_t gpus() const { return setup_.tp * setup_.pp; }
  double peak_flops() const { return peak_; }
  // The dtype the GEMMs run in: the weights' where the GPU has tensor cores
  // for it (fp8, fp4), else bf16 (weight-only int8/int4 dequantize).
  DType compute_dtype() const { return compute_dtype_; }
  double hbm_bytes_per_s() const { return hbm_; }

  InferenceMemory Memory() const;
  // Prefill of `new_tokens` per sequence on `cached` cached tokens, `batch`
  // sequences; only the last position's logits are computed.
  StepCost Prefill(double batch, double new_tokens, double cached = 0) const;
  // One decode step: `batch` sequences, each `positions` new tokens (1, or
  // k+1 when verifying drafts) attending to `context` cached tokens.
  StepCost Decode(double batch, double context, double positions = 1) const;
  // One forward pass of continuous batching: `decode_batch` sequences each
  // decoding one token at `context` cached tokens, plus `prompts`
  // sequences (may be fractional: a mean over rounds) of `prompt_tokens`
  // new tokens on `prompt_cached` cached ones (a chunk of a longer prompt).
  // The weights are read once for all of it; attention runs as the two
  // kernels (prefill, decode) the engines launch.
  StepCost Mixed(double decode_batch, double context, double prompts, double prompt_tokens,
                 double prompt_cached = 0) const;

  // The steady state of setup().schedule at `batch` concurrent requests (0:
  // the largest that fits the KV cache, capped at max_batch). kOutOfRange
  // when the context exceeds the model's maximum; kNotFound when the
  // weights leave no room for one request's KV cache (or `batch` does not
  // fit); kInvalidArgument for lengths below 1 or a token budget below 1.
  StatusOr<WorkloadResult> Workload(double input_len, double output_len, double batch = 0) const;
  // Workload() per pair, and the mix; kInvalidArgument for an empty mix or
  // a request count that is not positive.
  StatusOr<WorkloadMix> Mix(const std::vector<WorkloadPair>& pairs, double batch = 0) const;
  StatusOr<SpeculativeResult> Speculative(double batch, double context, int64_t draft_tokens, double acceptance,
                                          const InferenceModel* drafter) const;
  StatusOr<MeasuredInference> FromMeasurement(double input_len, double output_len, double output_tokens_per_s,
                                              double batch = 0) const;
  // The MFU and MBU of `step` had it taken `seconds` (a measured TTFT for a
  // prefill, a measured TPOT for a decode step). kInvalidArgument when
  // seconds is not positive.
  StatusOr<StepUtilization> Utilization(const StepCost& step, double seconds) const;
  // The smallest decode batch at which compute time exceeds memory time
  // (0 when none up to the engine cap).
  double ComputeBoundBatch(double context) const;
  // The replica's batch cap: the engine's, per attention rank under
  // attention data parallelism (each rank schedules its own requests).
  double BatchCap() const { return setup_.max_batch * (setup_.attention_dp ? static_cast<double>(setup_.tp) : 1.0); }

 private:
  InferenceModel() = default;
  struct Segment;  // one kind of tokens in a pass (inference.cc)
  // One GPU's pass through its pipeline stage, in seconds.
  struct StageTimes {
    double matrix_s = 0;  // GEMM and attention operators, the LM head
    double vector_s = 0;  // vector kernels
    double comm_s = 0;    // tensor-parallel collectives and pipeline sends
  };
  StepCost Step(const std::vector<Segment>& segments) const;
  // `sequences` decoding `positions` new tokens each at `context` cached
  // ones; false when the FLOPs model rejects the context.
  bool DecodeSegment(double sequences, double context, double positions, Segment& g) const;
  void SetWaterfall(const StageTimes& stage, StepCost& c) const;
  Status CheckContext(double tokens) const;
  InferenceSetup setup_;
  double peak_ = 0;          // dense FLOP/s of the GEMM dtype (the MFU denominator)
  double compute_peak_ = 0;  // what its kernels run against (ComputePeakFlops: a power cap lowers it)
  DType compute_dtype_ = DType::kBf16;
  double hbm_ = 0;  // achievable bytes/s (vector_bw_fraction of HBM)
  // Parameters per layer (FLOPs come from the FLOPs model per step).
  double dense_params_ = 0;        // per layer average: projections, dense MLP, shared experts, router
  double expert_params_each_ = 0;  // one routed expert (MoE layers' average share)
  double moe_layer_share_ = 0;
  double embedding_params_ = 0, lm_head_params_ = 0;
  double kv_elements_per_token_layer_ = 0;  // K+V (or latent) elements per token per layer
};

}  // namespace mfu
