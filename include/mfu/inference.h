#pragma once

// The inference performance model behind `mfu infer`: per-step FLOPs and
// bytes (weights, KV cache read and write, activations) of prefill and
// decode, on a tensor/pipeline/expert-parallel layout, timed by the same
// roofline and efficiency parameters as the training model (perf_model.h);
// memory budget and KV capacity; throughput of a workload at the largest
// batch that fits; speculative decoding; and the MFU/MBU a measured
// throughput implies. Formulas: docs/infer.md.

#include <cstdint>
#include <string>
#include <vector>

#include "mfu/cluster.h"
#include "mfu/flops.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/perf_model.h"
#include "mfu/status.h"

namespace mfu {

struct InferenceSetup {
  const ModelSpec* model = nullptr;
  const Accelerator* gpu = nullptr;
  const Cluster* cluster = nullptr;  // null: the accelerator's own NVLink figure
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t ep = 1;                     // expert parallel within the tp x pp GPUs (MoE); 1: experts sharded by tp
  DType weight_dtype = DType::kBf16;  // bf16, fp16, fp8, int8, fp4 (int4 as fp4: 0.5 byte)
  DType kv_dtype = DType::kBf16;
  MlaMode mla = MlaMode::kAbsorbed;  // decode attention over the latent (prefill is always naive)
  Convention convention = Convention::kMegatron;
  EfficiencyParams efficiency;
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
  double comm_s = 0;           // tensor-parallel all-reduces (not overlapped), pipeline sends
  double time_s = 0;           // the roofline per operator, summed, plus communication
  bool compute_bound = false;  // more time in operators limited by compute than by bandwidth
  double total_bytes() const { return weight_bytes + kv_read_bytes + kv_write_bytes + activation_bytes; }
};

struct InferenceMemory {
  double weights_bytes = 0;       // per GPU
  double kv_bytes_per_token = 0;  // per GPU (all its layers)
  double reserved_bytes = 0;      // context, activations, communication buffers
  double capacity_bytes = 0;      // HBM
  double kv_capacity_tokens = 0;  // tokens of KV cache that fit beside the weights
  bool fits() const { return weights_bytes + reserved_bytes < capacity_bytes; }
};

// A workload of requests with fixed input and output lengths served at a
// steady concurrency (continuous batching, infinite request rate).
struct WorkloadResult {
  double batch = 0;  // concurrent requests (pp micro-batches of batch/pp with pipeline parallelism)
  double output_tokens_per_s = 0;
  double ttft_s = 0;         // prefill of one request alone (no queueing)
  double tpot_s = 0;         // decode step time at this batch and the mean context
  double mfu = 0;            // model FLOPs of the whole workload / (time x GPUs x peak)
  double mbu = 0;            // bytes moved / (time x GPUs x HBM bandwidth)
  std::string batch_reason;  // "KV capacity", "engine cap", "given"
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
  double tokens_per_step = 0;             // (1 - a^(k+1)) / (1 - a)
  double step_s = 0;                      // drafting k tokens + one verify step over k+1 positions
  double tpot_s = 0;                      // step_s / tokens_per_step
  double speedup = 0;                     // plain decode TPOT / speculative TPOT
  double model_flops_utilization = 0;     // emitted tokens' model FLOPs / (time x peak)
  double hardware_flops_utilization = 0;  // everything executed (rejected positions, drafter)
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
  double hbm_bytes_per_s() const { return hbm_; }

  InferenceMemory Memory() const;
  // Prefill of `new_tokens` per sequence on `cached` cached tokens, `batch`
  // sequences; only the last position's logits are computed.
  StepCost Prefill(double batch, double new_tokens, double cached = 0) const;
  // One decode step: `batch` sequences, each `positions` new tokens (1, or
  // k+1 when verifying drafts) attending to `context` cached tokens.
  StepCost Decode(double batch, double context, double positions = 1) const;

  // kOutOfRange when the context exceeds the model's maximum; kNotFound
  // when the weights leave no room for one request's KV cache.
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

 private:
  InferenceModel() = default;
  Status CheckContext(double tokens) const;
  InferenceSetup setup_;
  double peak_ = 0;  // dense FLOP/s of the GEMM dtype
  double hbm_ = 0;   // achievable bytes/s (vector_bw_fraction of HBM)
  // Parameters per layer (FLOPs come from the FLOPs model per step).
  double dense_params_ = 0;        // per layer average: projections, dense MLP, shared experts, router
  double expert_params_each_ = 0;  // one routed expert (MoE layers' average share)
  double moe_layer_share_ = 0;
  double embedding_params_ = 0, lm_head_params_ = 0;
  double kv_elements_per_token_layer_ = 0;  // K+V (or latent) elements per token per layer
};

}  // namespace mfu
