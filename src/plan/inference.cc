// The inference performance model (inference.h; formulas in docs/infer.md).

#include "mfu/inference.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "mfu/memory.h"
#include "mfu/vector_kernels.h"

namespace mfu {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kActivationBytes = 2;  // 16-bit activations
// TensorRT-LLM's default: the KV cache takes 90% of the memory left after
// the weights (kv_cache_free_gpu_mem_fraction).
constexpr double kKvFraction = 0.9;

// Expected distinct experts that `tokens` tokens route to, each picking
// top_k of `experts` uniformly: E (1 - (1 - k/E)^T).
double TouchedExperts(double experts, double top_k, double tokens) {
  if (experts <= 0)
    return 0;
  return experts * (1 - std::pow(1 - top_k / experts, tokens));
}

double SumGemm(const FlopsBreakdown& f) {
  return f[FlopsComponent::kQProj] + f[FlopsComponent::kKProj] + f[FlopsComponent::kVProj] + f[FlopsComponent::kOProj] +
         f[FlopsComponent::kDenseMlp] + f[FlopsComponent::kSharedExperts] + f[FlopsComponent::kRouter];
}

double SumAttention(const FlopsBreakdown& f) {
  return f[FlopsComponent::kAttnScores] + f[FlopsComponent::kAttnContext];
}

}  // namespace

StatusOr<InferenceModel> InferenceModel::Create(const InferenceSetup& s) {
  if (s.model == nullptr || s.gpu == nullptr)
    return InvalidArgumentError("inference: a model and an accelerator are required");
  const ModelSpec& m = *s.model;
  if (m.arch != ArchKind::kDecoder)
    return InvalidArgumentError("inference: " + m.name + " is not a decoder LLM");
  if (s.tp < 1 || s.pp < 1 || s.ep < 1 || s.tp > 1024 || s.pp > 1024 || s.ep > 1024)
    return InvalidArgumentError("inference: --tp, --pp and --ep must be in [1, 1024]");
  const int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  if (m.heads % s.tp != 0 || (kv % s.tp != 0 && s.tp % kv != 0)) {
    return InvalidArgumentError("inference: --tp " + std::to_string(s.tp) + " must divide the " +
                                std::to_string(m.heads) + " heads and divide or be a multiple of the " +
                                std::to_string(kv) + " KV heads");
  }
  if (s.pp > m.num_layers)
    return InvalidArgumentError("inference: --pp " + std::to_string(s.pp) + " exceeds the " +
                                std::to_string(m.num_layers) + " layers");
  if (s.ep > 1 && (!m.is_moe() || m.moe.num_experts % s.ep != 0 || s.ep > s.tp * s.pp)) {
    return InvalidArgumentError(
        "inference: --ep needs a mixture-of-experts model whose experts it divides, and at "
        "most tp x pp GPUs");
  }
  for (DType d : {s.weight_dtype, s.kv_dtype}) {
    if (d != DType::kBf16 && d != DType::kFp16 && d != DType::kFp8 && d != DType::kInt8 && d != DType::kFp4)
      return InvalidArgumentError(std::string("inference: precision ") + DTypeName(d) +
                                  " is not modelled (bf16, fp16, fp8, int8, fp4/int4)");
  }
  if (!(s.gpu->memory_bw_tbps > 0) || !(s.gpu->memory_gb > 0))
    return InvalidArgumentError("inference: " + s.gpu->id + " has no memory size or bandwidth in the database");

  InferenceModel p;
  p.setup_ = s;
  // GEMMs run at the weights' precision where the GPU has tensor cores for
  // it (fp8, fp4); weight-only int8/int4 dequantize to 16-bit.
  const DType compute =
      (s.weight_dtype == DType::kFp8 || s.weight_dtype == DType::kFp4) && s.gpu->peak_flops(s.weight_dtype) > 0
          ? s.weight_dtype
          : DType::kBf16;
  p.peak_ = s.gpu->peak_flops(compute) > 0 ? s.gpu->peak_flops(compute) : s.gpu->peak_flops(DType::kFp16);
  if (!(p.peak_ > 0))
    return InvalidArgumentError("inference: " + s.gpu->id + " has no dense 16-bit peak");
  p.hbm_ = s.gpu->memory_bw_tbps * 1e12 * s.efficiency.vector_bw_fraction;

  const ParamCounts params = CountParams(m);
  const auto layers = static_cast<double>(m.num_layers);
  p.dense_params_ =
      (params.attention + params.dense_mlp + params.shared_experts + params.router + params.norms) / layers;
  p.moe_layer_share_ = m.is_moe() ? static_cast<double>(m.num_moe_layers()) / layers : 0;
  p.expert_params_each_ = m.is_moe() ? params.routed_experts / layers / static_cast<double>(m.moe.num_experts) : 0;
  p.embedding_params_ = params.embedding + params.position_embedding;
  p.lm_head_params_ = m.tied_embeddings ? params.embedding : params.lm_head;
  MFU_ASSIGN_OR_RETURN(KvCacheSize kv_size, ComputeKvCache(m, s.kv_dtype, 1));
  p.kv_elements_per_token_layer_ = kv_size.kv_elements_per_token_per_layer;
  return p;
}

Status InferenceModel::CheckContext(double tokens) const {
  const int64_t max = setup_.model->max_position_embeddings;
  if (!(tokens >= 1) || tokens > static_cast<double>(int64_t{1} << 24))
    return OutOfRangeError("inference: a context of " + std::to_string(static_cast<int64_t>(tokens)) +
                           " tokens is out of range");
  if (max > 0 && tokens > static_cast<double>(max)) {
    return OutOfRangeError("inference: a context of " + std::to_string(static_cast<int64_t>(tokens)) +
                           " tokens exceeds " + setup_.model->name + "'s maximum of " + std::to_string(max));
  }
  return Status::Ok();
}

InferenceMemory InferenceModel::Memory() const {
  const ModelSpec& m = *setup_.model;
  const double tp = static_cast<double>(setup_.tp), pp = static_cast<double>(setup_.pp);
  const double expert_shard = static_cast<double>(setup_.ep > 1 ? setup_.ep : setup_.tp);
  const double layers_per_stage = std::ceil(static_cast<double>(m.num_layers) / pp);
  const double wbytes = DTypeBytes(setup_.weight_dtype);
  const double experts = static_cast<double>(m.moe.num_experts) * moe_layer_share_;
  const double first = embedding_params_ / tp + (setup_.pp == 1 && !m.tied_embeddings ? lm_head_params_ / tp : 0);
  const double last = setup_.pp == 1 ? first : lm_head_params_ / tp;
  InferenceMemory mem;
  // Norms and the embedding stay 16-bit in quantized checkpoints; the
  // difference is small and ignored.
  mem.weights_bytes =
      (layers_per_stage * (dense_params_ / tp + experts * expert_params_each_ / expert_shard) + std::max(first, last)) *
      wbytes;
  const int64_t kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
  const double kv_split = m.attention == AttentionKind::kMla ? 1.0 : static_cast<double>(std::min(setup_.tp, kv_heads));
  mem.kv_bytes_per_token = layers_per_stage * kv_elements_per_token_layer_ * DTypeBytes(setup_.kv_dtype) / kv_split;
  mem.reserved_bytes = setup_.efficiency.memory_reserved_gib * kGiB;
  mem.capacity_bytes = setup_.gpu->memory_gb * kGiB;
  const double free = mem.capacity_bytes - mem.weights_bytes - mem.reserved_bytes;
  mem.kv_capacity_tokens = free > 0 && mem.kv_bytes_per_token > 0 ? kKvFraction * free / mem.kv_bytes_per_token : 0;
  return mem;
}

namespace {

// Per-operator rooflines summed. `ideal` is the compute at the large-GEMM
// efficiency (no shape penalty): compared with `memory` it says which side
// of the ridge the step is on.
struct Parts {
  double compute = 0, memory = 0, time = 0, ideal = 0;
  void Add(double c, double m, double ideal_c) {
    compute += c;
    memory += m;
    ideal += ideal_c;
    time += std::max(c, m);
  }
};

}  // namespace

// One step of `rows` tokens through the model. `attention` is the per-token
// attention-core FLOPs (all layers) and `keys_read` the cached positions
// each sequence reads; `logit_rows` the positions whose logits are computed.
static StepCost Step(const InferenceSetup& s, double peak, double hbm, double rows, const FlopsBreakdown& executed,
                     const FlopsBreakdown& counted, double sequences, double keys_read, double logit_rows,
                     double dense_params, double expert_params_each, double moe_share, double lm_head_params,
                     double kv_elements) {
  const ModelSpec& m = *s.model;
  const EfficiencyParams& e = s.efficiency;
  const double tp = static_cast<double>(s.tp), pp = static_cast<double>(s.pp);
  const double gpus = tp * pp;
  const double layers = static_cast<double>(m.num_layers);
  const double layers_per_stage = std::ceil(layers / pp);
  const double expert_shard = static_cast<double>(s.ep > 1 ? s.ep : s.tp);
  const double wbytes = DTypeBytes(s.weight_dtype), kvbytes = DTypeBytes(s.kv_dtype);
  const double h = static_cast<double>(m.hidden);
  const int64_t kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
  const double kv_split = m.attention == AttentionKind::kMla ? 1.0 : static_cast<double>(std::min(s.tp, kv_heads));
  const DType compute_dtype =
      (s.weight_dtype == DType::kFp8 || s.weight_dtype == DType::kFp4) && s.gpu->peak_flops(s.weight_dtype) > 0
          ? s.weight_dtype
          : DType::kBf16;
  auto gemm_compute = [&](double flops, double m_rows, double n, double k) {
    if (flops <= 0)
      return 0.0;
    return flops / (peak * GemmEfficiency(e, compute_dtype, m_rows, n, k));
  };

  StepCost c;
  c.tokens = rows;
  Parts parts;
  // Per layer on one GPU of a stage.
  const double dense_flops = rows * SumGemm(executed) / layers / tp;
  const double dense_bytes = dense_params / tp * wbytes + 2 * rows * h * kActivationBytes;
  const double ideal = peak * MatmulPeakFraction(e, compute_dtype);
  parts.Add(gemm_compute(dense_flops, rows, h / tp, h), dense_bytes / hbm, dense_flops / ideal);
  double expert_flops = 0, expert_bytes = 0;
  if (m.is_moe()) {
    expert_flops = rows * executed[FlopsComponent::kRoutedExperts] / layers / expert_shard;
    const double touched =
        TouchedExperts(static_cast<double>(m.moe.num_experts), static_cast<double>(m.moe.top_k), rows) * moe_share;
    expert_bytes = touched * expert_params_each / expert_shard * wbytes;
    const double rows_per_expert =
        std::max(1.0, rows * static_cast<double>(m.moe.top_k) / static_cast<double>(m.moe.num_experts));
    parts.Add(gemm_compute(expert_flops, rows_per_expert, static_cast<double>(m.moe.expert_ffn), h), expert_bytes / hbm,
              expert_flops / ideal);
  }
  const double attn_flops = rows * SumAttention(executed) / layers / tp;
  // Sliding-window layers read at most their window.
  double keys = 0;
  for (const LayerSpec& l : m.layers)
    keys += l.window > 0 ? std::min(keys_read, static_cast<double>(l.window)) : keys_read;
  keys = m.layers.empty() ? keys_read : keys / static_cast<double>(m.layers.size());
  const double kv_read = sequences * keys * kv_elements * kvbytes / kv_split;
  const double kv_write = rows * kv_elements * kvbytes / kv_split;
  // Attention runs in 16-bit at flash attention's efficiency.
  // Prefill (rows beyond one per sequence) is causal over the keys read.
  const bool causal = rows > sequences;
  const double attn_c = AttentionSeconds(*s.gpu, e, AttentionKernel::kBest, false, attn_flops, std::max(keys, 1.0),
                                         causal, static_cast<double>(m.qk_head_dim()));
  parts.Add(attn_c, (kv_read + kv_write) / hbm, attn_c);
  // Norms, residual adds, the MLP activation: the vector kernels shared with
  // the training model (vector_kernels.h), each with its floor and bandwidth.
  LayerVectorWork vec;
  vec.hidden_rows = rows;
  vec.hidden = h;
  vec.dense_act_rows = rows;
  vec.dense_act_width = static_cast<double>(m.ffn) / tp;
  if (m.is_moe()) {
    // Expert parallelism spreads the dispatched rows over the ep GPUs;
    // otherwise every GPU holds a tp slice of each expert.
    const double dispatched = rows * static_cast<double>(m.moe.top_k);
    const bool ep = s.ep > 1;
    vec.expert_act_rows = ep ? dispatched / expert_shard : dispatched;
    vec.expert_act_width = static_cast<double>(m.moe.expert_ffn) / (ep ? 1.0 : expert_shard);
    vec.moe_share = moe_share;
  }
  vec.gated = m.gated_mlp;
  vec.element_bytes = kActivationBytes;
  const double vector_bytes = LayerVectorBytes(vec);
  parts.Add(0, LayerVectorSeconds(e.vector_kernels, s.gpu->memory_bw_tbps * 1e12, vec), 0);
  // Tensor parallelism: two all-reduces of the hidden state per layer.
  const Cluster* cl = s.cluster;
  const LinkSpec link{
      (cl != nullptr ? cl->scaleup_bw_bytes_per_s : s.gpu->scaleup_bw_per_direction_gbs * 1e9) * e.scaleup_bw_fraction,
      cl != nullptr ? cl->scaleup_latency_s : 3e-6};
  double comm_layer = s.tp > 1 ? 2 * CollectiveSeconds(Collective::kAllReduce, tp, rows * h * 2, link) : 0;
  if (m.is_moe() && s.ep > 1) {
    // Dispatch and combine: each token's hidden state to its top-k experts.
    const double a2a = rows * static_cast<double>(m.moe.top_k) * h * kActivationBytes;
    comm_layer += 2 * moe_share * CollectiveSeconds(Collective::kAllToAll, static_cast<double>(s.ep), a2a, link);
  }

  // Whole stage: layers, then the LM head on the last stage.
  c.compute_s = layers_per_stage * parts.compute;
  c.memory_s = layers_per_stage * parts.memory;
  double time = layers_per_stage * (parts.time + comm_layer);
  const double vocab = static_cast<double>(m.vocab);
  const double head_flops = logit_rows * 2 * lm_head_params / tp;
  const double head_bytes = lm_head_params / tp * wbytes + logit_rows * vocab / tp * 4;
  const double head_c = gemm_compute(head_flops, logit_rows, vocab / tp, h), head_m = head_bytes / hbm;
  c.compute_s += head_c;
  c.memory_s += head_m;
  time += std::max(head_c, head_m);
  // A step crosses every stage in turn (pipeline latency).
  const double p2p = s.pp > 1 ? (pp - 1) * CollectiveSeconds(Collective::kSendRecv, 2, rows * h * 2, link) : 0;
  c.comm_s = layers * comm_layer + p2p;
  c.time_s = time * pp + p2p;
  c.compute_s *= pp;
  c.memory_s *= pp;
  c.compute_bound = layers_per_stage * parts.ideal + head_flops / ideal > layers_per_stage * parts.memory + head_m;
  // Per GPU totals (each GPU holds 1/gpus of the work and bytes).
  c.flops = (rows * (SumGemm(executed) + executed[FlopsComponent::kRoutedExperts] + SumAttention(executed)) +
             logit_rows * 2 * lm_head_params) /
            gpus;
  c.model_flops = rows * counted.total() / gpus;
  c.weight_bytes = layers * (dense_params * wbytes + (m.is_moe() ? expert_bytes * expert_shard : 0)) / gpus +
                   lm_head_params * wbytes / gpus;
  c.kv_read_bytes = layers / pp * kv_read;
  c.kv_write_bytes = layers / pp * kv_write;
  c.activation_bytes = layers / pp * (vector_bytes + 2 * rows * h * kActivationBytes);
  return c;
}

StepCost InferenceModel::Prefill(double batch, double new_tokens, double cached) const {
  const auto b = static_cast<int64_t>(std::max(1.0, batch));
  const auto n = static_cast<int64_t>(std::max(1.0, new_tokens));
  const auto p = static_cast<int64_t>(std::max(0.0, cached));
  StatusOr<InferenceFlops> executed = ComputePrefillFlops(*setup_.model, Convention::kMaxtext, 1, n, p);
  StatusOr<InferenceFlops> counted = ComputePrefillFlops(*setup_.model, setup_.convention, 1, n, p);
  if (!executed.ok() || !counted.ok())
    return StepCost{};
  // Logits for the last position of each sequence only.
  return Step(setup_, peak_, hbm_, static_cast<double>(b * n), executed->per_token, counted->per_token,
              static_cast<double>(b), static_cast<double>(p), static_cast<double>(b), dense_params_,
              expert_params_each_, moe_layer_share_, lm_head_params_, kv_elements_per_token_layer_);
}

StepCost InferenceModel::Decode(double batch, double context, double positions) const {
  const auto b = static_cast<int64_t>(std::max(1.0, batch));
  const auto c = static_cast<int64_t>(std::max(1.0, context));
  StatusOr<InferenceFlops> executed = ComputeDecodeFlops(*setup_.model, Convention::kMaxtext, 1, c, setup_.mla);
  StatusOr<InferenceFlops> counted = ComputeDecodeFlops(*setup_.model, setup_.convention, 1, c, setup_.mla);
  if (!executed.ok() || !counted.ok())
    return StepCost{};
  const double rows = static_cast<double>(b) * positions;
  return Step(setup_, peak_, hbm_, rows, executed->per_token, counted->per_token, static_cast<double>(b),
              static_cast<double>(c), rows, dense_params_, expert_params_each_, moe_layer_share_, lm_head_params_,
              kv_elements_per_token_layer_);
}

double InferenceModel::ComputeBoundBatch(double context) const {
  for (double b = 1; b <= setup_.max_batch; b *= 2) {
    if (Decode(b, context).compute_bound) {
      // Refine between b/2 and b.
      double lo = std::max(1.0, b / 2), hi = b;
      while (hi - lo > 1) {
        const double mid = std::floor((lo + hi) / 2);
        (Decode(mid, context).compute_bound ? hi : lo) = mid;
      }
      return hi;
    }
  }
  return 0;
}

StatusOr<WorkloadResult> InferenceModel::Workload(double input_len, double output_len, double batch) const {
  if (!(input_len >= 1) || !(output_len >= 1))
    return InvalidArgumentError("inference: input and output lengths must be >= 1");
  MFU_RETURN_IF_ERROR(CheckContext(input_len + output_len));
  const InferenceMemory mem = Memory();
  WorkloadResult r;
  // TensorRT-LLM's default scheduler reserves input + output tokens of KV
  // cache per request (no eviction): the largest such batch, up to the cap.
  const double fits = std::floor(mem.kv_capacity_tokens / (input_len + output_len));
  if (batch > 0) {
    r.batch = batch;
    r.batch_reason = "given";
    if (batch > fits) {
      return NotFoundError("inference: a batch of " + std::to_string(static_cast<int64_t>(batch)) +
                           " needs more KV cache than fits (" + std::to_string(static_cast<int64_t>(fits)) +
                           " requests of " + std::to_string(static_cast<int64_t>(input_len + output_len)) + " tokens)");
    }
  } else {
    if (fits < 1) {
      return NotFoundError("inference: " + setup_.model->name + " leaves no room for one request's KV cache on " +
                           std::to_string(gpus()) + " x " + setup_.gpu->id);
    }
    r.batch = std::min(fits, setup_.max_batch);
    r.batch_reason = fits < setup_.max_batch ? "KV capacity" : "engine cap";
  }
  // One round: every request's prefill, then output_len decode steps whose
  // context grows from input_len (Simpson's rule over the context). With
  // pipeline parallelism the requests form pp micro-batches in flight, each
  // crossing every stage in turn.
  const double pp = static_cast<double>(setup_.pp);
  const double micro = std::max(1.0, r.batch / pp);
  const StepCost prefill = Prefill(micro, input_len);
  const StepCost d0 = Decode(micro, input_len), d1 = Decode(micro, input_len + output_len / 2),
                 d2 = Decode(micro, input_len + output_len - 1);
  auto simpson = [&](double a, double b, double c) { return output_len * (a + 4 * b + c) / 6; };
  const double decode_time = simpson(d0.time_s, d1.time_s, d2.time_s);
  const double time = prefill.time_s + decode_time;
  r.output_tokens_per_s = pp * micro * output_len / time;
  r.ttft_s = Prefill(1, input_len).time_s;
  r.tpot_s = d1.time_s;
  const double model_flops = prefill.model_flops + simpson(d0.model_flops, d1.model_flops, d2.model_flops);  // per GPU
  const double bytes = prefill.total_bytes() + simpson(d0.total_bytes(), d1.total_bytes(), d2.total_bytes());
  r.mfu = pp * model_flops / (time * peak_);
  r.mbu = pp * bytes / (time * setup_.gpu->memory_bw_tbps * 1e12);
  return r;
}

StatusOr<SpeculativeResult> InferenceModel::Speculative(double batch, double context, int64_t draft_tokens,
                                                        double acceptance, const InferenceModel* drafter) const {
  if (!(acceptance >= 0) || !(acceptance < 1))
    return InvalidArgumentError("inference: the acceptance rate must be in [0, 1)");
  if (draft_tokens < 1 || draft_tokens > 64)
    return InvalidArgumentError("inference: draft tokens must be in [1, 64]");
  MFU_RETURN_IF_ERROR(CheckContext(context + static_cast<double>(draft_tokens) + 1));
  const auto k = static_cast<double>(draft_tokens);
  SpeculativeResult r;
  r.tokens_per_step = (1 - std::pow(acceptance, k + 1)) / (1 - acceptance);
  const StepCost plain = Decode(batch, context);
  const StepCost verify = Decode(batch, context, k + 1);
  double draft_s = 0, draft_flops = 0;
  if (drafter != nullptr) {
    const StepCost d = drafter->Decode(batch, context);
    draft_s = k * d.time_s;
    draft_flops = k * d.flops * static_cast<double>(drafter->gpus()) / static_cast<double>(gpus());
  } else {
    // Self-drafting heads (Medusa/EAGLE-style): about one extra layer per
    // draft token.
    const double per_layer = 1.0 / static_cast<double>(setup_.model->num_layers);
    draft_s = k * plain.time_s * per_layer;
    draft_flops = k * plain.flops * per_layer;
  }
  r.step_s = draft_s + verify.time_s;
  r.tpot_s = r.step_s / r.tokens_per_step;
  r.speedup = plain.time_s / r.tpot_s;
  const double emitted = batch * r.tokens_per_step;
  r.model_flops_utilization = plain.model_flops / batch * emitted / (r.step_s * peak_);
  r.hardware_flops_utilization = (verify.flops + draft_flops) / (r.step_s * peak_);
  return r;
}

StatusOr<WorkloadMix> InferenceModel::Mix(const std::vector<WorkloadPair>& pairs, double batch) const {
  if (pairs.empty())
    return InvalidArgumentError("inference: the workload has no request shapes");
  WorkloadMix mix;
  double output_tokens = 0, flops_time = 0, bytes_time = 0;
  for (const WorkloadPair& pair : pairs) {
    if (!(pair.requests > 0) || !std::isfinite(pair.requests))
      return InvalidArgumentError("inference: a workload's request count must be positive");
    MFU_ASSIGN_OR_RETURN(WorkloadResult w, Workload(pair.input_len, pair.output_len, batch));
    const double seconds = pair.requests * pair.output_len / w.output_tokens_per_s;
    mix.seconds += seconds;
    output_tokens += pair.requests * pair.output_len;
    flops_time += w.mfu * seconds;
    bytes_time += w.mbu * seconds;
    mix.pairs.push_back(std::move(w));
  }
  mix.output_tokens_per_s = output_tokens / mix.seconds;
  mix.mfu = flops_time / mix.seconds;
  mix.mbu = bytes_time / mix.seconds;
  return mix;
}

StatusOr<MeasuredInference> InferenceModel::FromMeasurement(double input_len, double output_len,
                                                            double output_tokens_per_s, double batch) const {
  if (!(output_tokens_per_s > 0) || !std::isfinite(output_tokens_per_s))
    return InvalidArgumentError("inference: the measured output tokens/s must be positive");
  MFU_ASSIGN_OR_RETURN(WorkloadResult w, Workload(input_len, output_len, batch));
  MeasuredInference m;
  m.output_tokens_per_s = output_tokens_per_s;
  m.input_len = input_len;
  m.output_len = output_len;
  m.batch = w.batch;
  // The same work at the measured rate: utilizations scale with the ratio.
  const double ratio = output_tokens_per_s / w.output_tokens_per_s;
  m.mfu = w.mfu * ratio;
  m.mbu = w.mbu * ratio;
  return m;
}

StatusOr<StepUtilization> InferenceModel::Utilization(const StepCost& step, double seconds) const {
  if (!(seconds > 0) || !std::isfinite(seconds))
    return InvalidArgumentError("inference: a measured time must be positive");
  StepUtilization u;
  u.seconds = seconds;
  u.predicted_s = step.time_s;
  u.mfu = step.model_flops / (seconds * peak_);
  u.mbu = step.total_bytes() / (seconds * setup_.gpu->memory_bw_tbps * 1e12);
  return u;
}

}  // namespace mfu
