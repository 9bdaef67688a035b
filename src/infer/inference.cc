// The inference performance model (inference.h; formulas in docs/infer.md).

#include "mfu/inference.h"

#include <algorithm>
#include <array>
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

// Attention data parallelism: the ranks that run attention on their own
// requests (tp), else 1.
double AttentionRanks(const InferenceSetup& s) {
  return s.attention_dp ? static_cast<double>(s.tp) : 1.0;
}

// The ways the attention and dense weights (and the embedding and LM head)
// are split: tp, or 1 when attention is data parallel (replicated).
double DenseShard(const InferenceSetup& s) {
  return s.attention_dp ? 1.0 : static_cast<double>(s.tp);
}

// The ways one token's KV cache is split over a GPU's peers: its heads over
// tp (a KV head replicated when tp exceeds them; the MLA latent is not
// split), whole under attention data parallelism.
double KvSplit(const InferenceSetup& s) {
  const ModelSpec& m = *s.model;
  const int64_t kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
  if (s.attention_dp || m.attention == AttentionKind::kMla)
    return 1.0;
  return static_cast<double>(std::min(s.tp, kv_heads));
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
    return InvalidArgumentError("inference: parameter 'tp', parameter 'pp' and parameter 'ep' must be in [1, 1024]");
  const int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  if (s.attention_dp && (!m.is_moe() || s.tp < 2)) {
    return InvalidArgumentError(
        "inference: parameter 'attention_dp' needs a mixture-of-experts model and tp >= 2 (the attention ranks); "
        "serve a dense model as tp 1 replicas");
  }
  if (!s.attention_dp && (m.heads % s.tp != 0 || (kv % s.tp != 0 && s.tp % kv != 0))) {
    return InvalidArgumentError("inference: parameter 'tp' " + std::to_string(s.tp) + " must divide the " +
                                std::to_string(m.heads) + " heads and divide or be a multiple of the " +
                                std::to_string(kv) + " KV heads");
  }
  if (s.pp > m.num_layers)
    return InvalidArgumentError("inference: parameter 'pp' " + std::to_string(s.pp) + " exceeds the " +
                                std::to_string(m.num_layers) + " layers");
  if (s.ep > 1 && (!m.is_moe() || m.moe.num_experts % s.ep != 0 || s.tp % s.ep != 0)) {
    return InvalidArgumentError(
        "inference: parameter 'ep' needs a mixture-of-experts model whose experts it divides, and must divide tp "
        "(experts spread over the tensor-parallel group: moe_tp x ep = tp)");
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
  p.peak_ = DensePeakFlops(*s.gpu, compute);
  if (!(p.peak_ > 0))
    return InvalidArgumentError("inference: " + s.gpu->id + " has no dense 16-bit peak");
  p.compute_dtype_ = compute;
  // At the clock a serving engine's back-to-back steps sustain, as training's.
  p.compute_peak_ = s.efficiency.sustained_clock_fraction * ComputePeakFlops(*s.gpu, compute);
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
  const double dense_shard = DenseShard(setup_);
  const double layers_per_stage = std::ceil(static_cast<double>(m.num_layers) / pp);
  const double wbytes = DTypeBytes(setup_.weight_dtype);
  const double experts = static_cast<double>(m.moe.num_experts) * moe_layer_share_;
  const double first =
      embedding_params_ / dense_shard + (setup_.pp == 1 && !m.tied_embeddings ? lm_head_params_ / dense_shard : 0);
  const double last = setup_.pp == 1 ? first : lm_head_params_ / dense_shard;
  InferenceMemory mem;
  // Norms and the embedding stay 16-bit in quantized checkpoints; the
  // difference is small and ignored. Every GPU of the tp group holds 1/tp of
  // the experts' weights (moe_tp x ep = tp).
  mem.weights_bytes =
      (layers_per_stage * (dense_params_ / dense_shard + experts * expert_params_each_ / tp) + std::max(first, last)) *
      wbytes;
  mem.kv_bytes_per_token =
      layers_per_stage * kv_elements_per_token_layer_ * DTypeBytes(setup_.kv_dtype) / KvSplit(setup_);
  mem.reserved_bytes = setup_.efficiency.memory_reserved_gib * kGiB;
  mem.capacity_bytes = setup_.gpu->memory_gb * kGiB;
  const double free = mem.capacity_bytes - mem.weights_bytes - mem.reserved_bytes;
  const double per_gpu = free > 0 && mem.kv_bytes_per_token > 0 ? kKvFraction * free / mem.kv_bytes_per_token : 0;
  // Under attention data parallelism each rank caches its own requests.
  mem.kv_capacity_tokens = per_gpu * AttentionRanks(setup_);
  return mem;
}

namespace {

// Per-operator rooflines summed. `ideal` is the compute at the large-GEMM
// efficiency (no shape penalty): compared with `memory` it says which side
// of the ridge the step is on.
// `matrix` is the time of the matrix operators (GEMMs, attention), whatever
// bounds them; the rest of `time` is vector kernels.
struct Parts {
  double compute = 0, memory = 0, time = 0, ideal = 0, matrix = 0;
  void Add(double c, double m, double ideal_c) {
    compute += c;
    memory += m;
    ideal += ideal_c;
    time += std::max(c, m);
    matrix += std::max(c, m);
  }
  void AddVector(double m) {
    memory += m;
    time += m;
  }
};

// The fewest query rows a decode attention kernel's tensor-core tile
// computes: Hopper's wgmma is m64, and FlashMLA's decode reaches its
// compute-bound rate (660 TFLOP/s on H800) only from h_q x s_q >= 128, two
// such tiles (kernel-benchmarks.csv section 2). Fewer query rows per KV
// head (GQA groups of 4-16, one row for MHA) leave the rest of the tile
// idle, so decode attention computes at rows / 64 of the prefill kernel's
// rate; it stays bound by its KV reads on every GQA model.
constexpr double kDecodeTileRows = 64;

// The mean cached keys per layer of `cached` positions: sliding-window
// layers read at most their window.
double WindowedKeys(const ModelSpec& m, double cached) {
  if (m.layers.empty())
    return cached;
  double keys = 0;
  for (const LayerSpec& l : m.layers)
    keys += l.window > 0 ? std::min(cached, static_cast<double>(l.window)) : cached;
  return keys / static_cast<double>(m.layers.size());
}

// Norms, residual adds, the MLP activation of `rows` tokens in one layer:
// the vector kernels shared with the training model (vector_kernels.h),
// each with its floor and bandwidth.
// `rank_rows`: the tokens this GPU's norms, adds and dense MLP see (all of
// the pass's under tensor parallelism, which repeats them on every GPU; the
// busiest rank's under attention data parallelism); `rows`: the pass's.
LayerVectorWork VectorWork(const InferenceSetup& s, double rank_rows, double rows, double moe_share) {
  const ModelSpec& m = *s.model;
  LayerVectorWork vec;
  vec.hidden_rows = rank_rows;
  vec.hidden = static_cast<double>(m.hidden);
  vec.dense_act_rows = rank_rows;
  vec.dense_act_width = static_cast<double>(m.ffn) / DenseShard(s);
  if (m.is_moe()) {
    // Every GPU sees all the (gathered) tokens; expert parallelism spreads
    // the dispatched rows over the ep GPUs, each of whose experts is a
    // tp/ep slice.
    const double dispatched = rows * static_cast<double>(m.moe.top_k);
    const double ep = static_cast<double>(s.ep);
    vec.expert_act_rows = dispatched / ep;
    vec.expert_act_width = static_cast<double>(m.moe.expert_ffn) / (static_cast<double>(s.tp) / ep);
    vec.moe_share = moe_share;
  }
  vec.gated = m.gated_mlp;
  vec.element_bytes = kActivationBytes;
  // The serving frameworks fuse the residual add into the norm
  // (frameworks.csv), but the vector kernel table times a fused kernel at the
  // unfused norm's fitted rate (Vidur's rmsnorm, 39% of HBM on Hopper), which
  // makes the fusion slower than the two kernels it replaces: until the table
  // has a fused-kernel figure, the add and the norm are timed apart.
  vec.fused_norm_residual = false;
  return vec;
}

// The NVLink domain as the collectives see it.
LinkSpec ScaleUpLink(const InferenceSetup& s) {
  return Fabric::Of(*s.gpu, s.cluster, s.efficiency).scale_up();
}

// Bytes per hidden element of a MoE layer's gathered input: TensorRT-LLM
// quantizes the tokens before it gathers them (fused_moe_cutlass.py:
// NVFP4 values with an FP8 scale per 16, e4m3 for FP8 checkpoints).
double GatheredInputBytes(DType weights) {
  switch (weights) {
    case DType::kFp4:
      return 0.5 + 1.0 / 16;
    case DType::kFp8:
      return 1;
    default:
      return kActivationBytes;
  }
}

// Communication of one layer for `rows` tokens of the replica, not
// overlapped. Tensor parallel attention: two all-reduces of the hidden
// state, after attention and after the MLP or MoE layer (whose experts,
// split or spread over the tp group, each see every token: no dispatch).
// Attention data parallel: nothing for attention and dense layers
// (replicated); a MoE layer all-gathers every rank's tokens with their
// routing (top-k expert ids and fp32 weights) and reduce-scatters its 16-bit
// output.
double LayerCommSeconds(const InferenceSetup& s, const LinkSpec& link, double rows, double moe_share) {
  const ModelSpec& m = *s.model;
  const double h = static_cast<double>(m.hidden), tp = static_cast<double>(s.tp);
  if (s.tp < 2)
    return 0;
  if (!s.attention_dp)
    return 2 * CollectiveSeconds(CollectiveKind::kAllReduce, tp, rows * h * kActivationBytes, link);
  const double routing = static_cast<double>(m.moe.top_k) * (4 + 4);
  const double gather = rows * (h * GatheredInputBytes(s.weight_dtype) + routing);
  return moe_share * (CollectiveSeconds(CollectiveKind::kAllGather, tp, gather, link) +
                      CollectiveSeconds(CollectiveKind::kReduceScatter, tp, rows * h * kActivationBytes, link));
}

// The model's figures InferenceModel::Step reads (its private members).
struct StepRates {
  double compute_peak = 0;  // FLOP/s the kernels run against
  DType compute_dtype = DType::kBf16;
  double hbm = 0;  // achievable bytes/s
  double dense_params = 0, expert_params_each = 0, moe_share = 0, kv_elements = 0, lm_head_params = 0;
};

// The constants of one InferenceModel::Step: the setup's parallelism,
// dtypes and attention shape as doubles, and the GPU's rates.
struct StepContext {
  StepContext(const InferenceSetup& setup, const StepRates& rates)
      : s(setup),
        m(*setup.model),
        e(setup.efficiency),
        r(rates),
        tp(static_cast<double>(setup.tp)),
        pp(static_cast<double>(setup.pp)),
        gpus(tp * pp),
        layers(static_cast<double>(m.num_layers)),
        layers_per_stage(std::ceil(layers / pp)),
        dense_shard(DenseShard(setup)),
        wbytes(DTypeBytes(setup.weight_dtype)),
        kvbytes(DTypeBytes(setup.kv_dtype)),
        h(static_cast<double>(m.hidden)),
        kv_heads(m.kv_heads > 0 ? m.kv_heads : m.heads),
        kv_split(KvSplit(setup)),
        ideal(rates.compute_peak * MatmulPeakFraction(e, rates.compute_dtype)),
        head_dim(static_cast<double>(m.qk_head_dim())) {
    const bool latent = m.attention == AttentionKind::kMla && s.mla == MlaMode::kAbsorbed;
    const double heads_per_gpu = static_cast<double>(m.heads) / dense_shard;
    group =
        latent ? heads_per_gpu : std::min(static_cast<double>(m.heads) / static_cast<double>(kv_heads), heads_per_gpu);
  }

  // A GEMM's compute seconds at the efficiency of its shape.
  double GemmSeconds(double flops, double m_rows, double n, double k) const {
    if (flops <= 0)
      return 0.0;
    return flops / (r.compute_peak * GemmEfficiency(e, r.compute_dtype, m_rows, n, k));
  }

  const InferenceSetup& s;
  const ModelSpec& m;
  const EfficiencyParams& e;
  const StepRates r;
  const double tp, pp, gpus, layers, layers_per_stage;
  const double dense_shard;  // ways the attention and dense weights are split (1 under attention DP, else tp)
  const double wbytes, kvbytes, h;
  const int64_t kv_heads;
  const double kv_split;
  const double ideal;     // FLOP/s of a large GEMM (no shape penalty)
  const double head_dim;  // of the attention kernels
  double group = 0;       // query rows per KV head on one GPU (decode tiles)
};

// The segments' token rows and FLOPs summed (executed and model FLOPs).
struct PassTotals {
  double rows = 0, logit_rows = 0, gemm_flops = 0, expert_flops = 0, executed_flops = 0, model_flops = 0;
  void Add(double r, double logits, const FlopsBreakdown& executed, const FlopsBreakdown& counted) {
    rows += r;
    logit_rows += logits;
    const double gemm = SumGemm(executed), experts = executed[FlopsComponent::kRoutedExperts];
    gemm_flops += r * gemm;
    expert_flops += r * experts;
    executed_flops += r * (gemm + experts + SumAttention(executed));
    model_flops += r * counted.total();
  }
};

// One layer's dense GEMMs and, for MoE, the routed experts' grouped GEMM,
// on one GPU of a stage, added to `parts`. Returns the expert weight bytes
// one GPU reads per layer (0 for a dense model).
double AddGemmParts(const StepContext& x, const PassTotals& t, const PassTotals& rank, Parts& parts) {
  // Tensor parallel: all rows against a 1/tp slice of the weights;
  // attention data parallel: the busiest rank's rows against the whole
  // weights.
  const double dense_flops = rank.gemm_flops / x.layers / x.dense_shard;
  const double dense_bytes = x.r.dense_params / x.dense_shard * x.wbytes + 2 * rank.rows * x.h * kActivationBytes;
  parts.Add(x.GemmSeconds(dense_flops, rank.rows, x.h / x.dense_shard, x.h), dense_bytes / x.r.hbm,
            dense_flops / x.ideal);
  if (!x.m.is_moe())
    return 0;
  const ModelSpec& m = x.m;
  // Every GPU runs all the (gathered) tokens' rows for its experts: 1/tp of
  // the expert work and weights.
  const double expert_flops = t.expert_flops / x.layers / x.tp;
  const double touched =
      TouchedExperts(static_cast<double>(m.moe.num_experts), static_cast<double>(m.moe.top_k), t.rows) * x.r.moe_share;
  const double expert_bytes = touched * x.r.expert_params_each / x.tp * x.wbytes;
  const double rows_per_expert =
      std::max(1.0, t.rows * static_cast<double>(m.moe.top_k) / static_cast<double>(m.moe.num_experts));
  // A grouped GEMM: grouped_gemm_fraction of the dense rate at the
  // per-expert shape. Its width is the whole expert's, also when tp/ep > 1
  // splits it: the GEMM curve has no figure below N = 2048 for grouped
  // kernels, and its g(N) at a 192-wide FP4 slice (0.19) is an
  // extrapolation (docs/infer.md).
  parts.Add(x.GemmSeconds(expert_flops, rows_per_expert, static_cast<double>(m.moe.expert_ffn), x.h) /
                x.e.grouped_gemm_fraction,
            expert_bytes / x.r.hbm, expert_flops / x.ideal);
  return expert_bytes;
}

// KV cache bytes one GPU reads and writes per layer.
struct KvTraffic {
  double read = 0, write = 0;
};

// One segment's attention kernel in one layer (16-bit), added to `parts`
// and its KV traffic to `kv`: `sequences` of `new_tokens` each on `cached`
// cached keys. Prefill: the framework's flash kernel, causal over the
// cached keys and the new ones (2p + n as AttentionEfficiency's causal
// length gives p + n/2 keys per query and the diagonal tiles' waste).
// Decode: bound by the KV read (at vector_bw_fraction, which the decode
// kernels' figures bear out), its compute at the query rows per KV head
// (kDecodeTileRows).
void AddAttentionPart(const StepContext& x, double sequences, double new_tokens, double cached, bool prefill,
                      const FlopsBreakdown& executed, Parts& parts, KvTraffic& kv) {
  const double r = sequences * new_tokens;
  if (r <= 0)
    return;
  const double attn_flops = r * SumAttention(executed) / x.layers / x.dense_shard;
  const double keys = WindowedKeys(x.m, cached);
  const double read = sequences * keys * x.r.kv_elements * x.kvbytes / x.kv_split;
  const double write = r * x.r.kv_elements * x.kvbytes / x.kv_split;
  const AttentionKernel kernel = x.s.framework.attention;
  double attn_c = 0;
  if (prefill) {
    attn_c = AttentionSeconds(*x.s.gpu, x.e, kernel, false, attn_flops, 2 * keys + new_tokens, true, x.head_dim) /
             x.e.sustained_clock_fraction;
  } else {
    const double query_rows = x.group * new_tokens;
    attn_c = AttentionSeconds(*x.s.gpu, x.e, kernel, false, attn_flops, std::max(keys, 1.0), false, x.head_dim) /
             x.e.sustained_clock_fraction * std::max(1.0, kDecodeTileRows / query_rows);
  }
  parts.Add(attn_c, (read + write) / x.r.hbm, attn_c);
  kv.read += read;
  kv.write += write;
}

// The LM head on the last stage, on one GPU: its FLOPs and its compute and
// memory seconds.
struct HeadCost {
  double flops = 0, compute_s = 0, memory_s = 0;
};

HeadCost LmHead(const StepContext& x, double logit_rows) {
  const double vocab = static_cast<double>(x.m.vocab);
  const double head_flops = logit_rows * 2 * x.r.lm_head_params / x.dense_shard;
  const double head_bytes = x.r.lm_head_params / x.dense_shard * x.wbytes + logit_rows * vocab / x.dense_shard * 4;
  return {head_flops, x.GemmSeconds(head_flops, logit_rows, vocab / x.dense_shard, x.h), head_bytes / x.r.hbm};
}

// The step's times: a stage's layers, then the LM head on the last stage;
// a step crosses every stage in turn (`p2p`: the pipeline sends).
void SetStepTimes(const StepContext& x, const Parts& parts, const HeadCost& head, double comm_layer, double p2p,
                  StepCost& c) {
  c.compute_s = x.layers_per_stage * parts.compute;
  c.memory_s = x.layers_per_stage * parts.memory;
  double time = x.layers_per_stage * (parts.time + comm_layer);
  c.compute_s += head.compute_s;
  c.memory_s += head.memory_s;
  time += std::max(head.compute_s, head.memory_s);
  c.comm_s = x.layers * comm_layer + p2p;
  c.time_s = time * x.pp + p2p;
  c.compute_s *= x.pp;
  c.memory_s *= x.pp;
  c.compute_bound =
      x.layers_per_stage * parts.ideal + head.flops / x.ideal > x.layers_per_stage * parts.memory + head.memory_s;
}

// Per GPU totals (each GPU holds 1/gpus of the work and bytes).
void SetPerGpuTotals(const StepContext& x, const PassTotals& t, double rank_rows, double expert_bytes,
                     const KvTraffic& kv, double vector_bytes, StepCost& c) {
  const double wbytes = x.wbytes, gpus = x.gpus, layers = x.layers, pp = x.pp;
  c.flops = (t.executed_flops + t.logit_rows * 2 * x.r.lm_head_params) / gpus;
  c.model_flops = t.model_flops / gpus;
  // A stage's layers on one of its GPUs (the LM head averaged over the
  // stages); expert_bytes is already one GPU's.
  c.weight_bytes = layers / pp * (x.r.dense_params * wbytes / x.dense_shard + expert_bytes) +
                   x.r.lm_head_params * wbytes / x.dense_shard / pp;
  c.kv_read_bytes = layers / pp * kv.read;
  c.kv_write_bytes = layers / pp * kv.write;
  c.activation_bytes = layers / pp * (vector_bytes + 2 * rank_rows * x.h * kActivationBytes);
}

}  // namespace

// One kind of tokens in a forward pass: `sequences` (a mean over rounds,
// so possibly fractional) of `new_tokens` each on `cached` cached keys.
struct InferenceModel::Segment {
  double sequences = 0;
  double new_tokens = 0;
  double cached = 0;
  bool prefill = false;              // causal flash attention over the new tokens; else the decode kernel
  double logit_rows = 0;             // positions whose logits are computed
  FlopsBreakdown executed, counted;  // per token (MaxText's exact GEMMs; the MFU convention)
};

// One forward pass through the model: the segments' tokens share the GEMMs
// (weights read once), each segment has its own attention kernel. Operator
// by operator on one GPU of a stage, then the stage, the LM head, the
// pipeline and the per-GPU totals (one roofline, kept in one place).
StepCost InferenceModel::Step(const std::vector<Segment>& segments) const {
  const InferenceSetup& s = setup_;
  const StepContext x(s, {compute_peak_, compute_dtype_, hbm_, dense_params_, expert_params_each_, moe_layer_share_,
                          kv_elements_per_token_layer_, lm_head_params_});
  // `t`: the pass; `rank`: what one GPU's attention and dense layers see,
  // all of it under tensor parallelism; under attention data parallelism
  // the busiest rank's share, the pass waiting for it (the iteration is as
  // long as its slowest rank: TensorRT-LLM blog 10, "ADP Balance Strategy").
  // Decode requests spread evenly over the ranks; whole prompts go one to a
  // rank, so a round's prompts land ceil(P / tp) on the busiest.
  PassTotals t, rank;
  std::vector<double> rank_sequences;
  for (const Segment& g : segments) {
    t.Add(g.sequences * g.new_tokens, g.logit_rows, g.executed, g.counted);
    double on_rank = g.sequences;
    if (s.attention_dp)
      on_rank = g.prefill ? std::ceil(std::max(1.0, g.sequences) / x.tp - 1e-9) : g.sequences / x.tp;
    rank_sequences.push_back(on_rank);
    rank.Add(on_rank * g.new_tokens, g.sequences > 0 ? g.logit_rows / g.sequences * on_rank : 0, g.executed, g.counted);
  }
  StepCost c;
  c.tokens = t.rows;
  // Per layer on one GPU of a stage: GEMMs, one attention kernel per
  // segment, the vector kernels, the collectives.
  Parts parts;
  const double expert_bytes = AddGemmParts(x, t, rank, parts);
  KvTraffic kv;
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& g = segments[i];
    AddAttentionPart(x, rank_sequences[i], g.new_tokens, g.cached, g.prefill, g.executed, parts, kv);
  }
  const LayerVectorWork vec = VectorWork(s, rank.rows, t.rows, moe_layer_share_);
  const double vector_bytes = LayerVectorBytes(vec);
  parts.AddVector(LayerVectorSeconds(x.e.vector_kernels, s.gpu->memory_bw_tbps * 1e12, vec));
  const LinkSpec link = ScaleUpLink(s);
  const double comm_layer = LayerCommSeconds(s, link, t.rows, moe_layer_share_);

  const HeadCost head = LmHead(x, rank.logit_rows);
  const double p2p =
      s.pp > 1 ? (x.pp - 1) * CollectiveSeconds(CollectiveKind::kSendRecv, 2, rank.rows * x.h * 2, link) : 0;
  SetStepTimes(x, parts, head, comm_layer, p2p, c);
  SetPerGpuTotals(x, t, rank.rows, expert_bytes, kv, vector_bytes, c);
  // One GPU runs one stage's pass of the step's time, the rest is idle.
  const StageTimes stage{x.layers_per_stage * parts.matrix + std::max(head.compute_s, head.memory_s),
                         x.layers_per_stage * (parts.time - parts.matrix), x.layers_per_stage * comm_layer + p2p};
  SetWaterfall(stage, c);
  return c;
}

void InferenceModel::SetWaterfall(const StageTimes& stage, StepCost& c) const {
  if (!(c.time_s > 0))
    return;
  std::array<double, kNumWaterfallBuckets> s{};
  auto at = [&s](WaterfallBucket b) -> double& { return s[static_cast<size_t>(b)]; };
  // Every executed FLOP is a GEMM's or attention's (the LM head included).
  at(WaterfallBucket::kMatrixAtPeak) = c.flops / peak_;
  at(WaterfallBucket::kMatrixBelowPeak) = stage.matrix_s - c.flops / peak_;
  at(WaterfallBucket::kNonMatrixKernels) = stage.vector_s;
  at(WaterfallBucket::kExposedCommunication) = stage.comm_s;
  at(WaterfallBucket::kIdle) = c.time_s - stage.matrix_s - stage.vector_s - stage.comm_s;
  c.waterfall = WaterfallFromSeconds(s);
  c.utilization =
      MakeUtilization(setup_.convention, compute_dtype_, c.model_flops / c.time_s, c.flops / c.time_s, peak_);
}

StepCost InferenceModel::Prefill(double batch, double new_tokens, double cached) const {
  return Mixed(0, 0, std::max(1.0, std::floor(batch)), new_tokens, cached);
}

bool InferenceModel::DecodeSegment(double sequences, double context, double positions, Segment& g) const {
  const auto ctx = static_cast<int64_t>(std::max(1.0, context));
  StatusOr<InferenceFlops> executed = ComputeDecodeFlops(*setup_.model, Convention::kMaxtext, 1, ctx, setup_.mla);
  StatusOr<InferenceFlops> counted = ComputeDecodeFlops(*setup_.model, setup_.convention, 1, ctx, setup_.mla);
  if (!executed.ok() || !counted.ok())
    return false;
  g.sequences = sequences;
  g.new_tokens = positions;
  g.cached = static_cast<double>(ctx);
  g.logit_rows = sequences * positions;
  g.executed = executed->per_token;
  g.counted = counted->per_token;
  return true;
}

StepCost InferenceModel::Decode(double batch, double context, double positions) const {
  Segment g;
  if (!DecodeSegment(std::max(1.0, std::floor(batch)), context, positions, g))
    return StepCost{};
  return Step({g});
}

StepCost InferenceModel::Mixed(double decode_batch, double context, double prompts, double prompt_tokens,
                               double prompt_cached) const {
  std::vector<Segment> segments;
  if (decode_batch > 0) {
    Segment g;
    if (!DecodeSegment(decode_batch, context, 1, g))
      return StepCost{};
    segments.push_back(g);
  }
  if (prompts > 0) {
    const auto n = static_cast<int64_t>(std::max(1.0, std::round(prompt_tokens)));
    const auto p = static_cast<int64_t>(std::max(0.0, std::round(prompt_cached)));
    StatusOr<InferenceFlops> executed = ComputePrefillFlops(*setup_.model, Convention::kMaxtext, 1, n, p);
    StatusOr<InferenceFlops> counted = ComputePrefillFlops(*setup_.model, setup_.convention, 1, n, p);
    if (!executed.ok() || !counted.ok())
      return StepCost{};
    // Logits for the last position of each prompt only.
    Segment g;
    g.sequences = prompts;
    g.new_tokens = static_cast<double>(n);
    g.cached = static_cast<double>(p);
    g.prefill = true;
    g.logit_rows = prompts;
    g.executed = executed->per_token;
    g.counted = counted->per_token;
    segments.push_back(g);
  }
  return Step(segments);
}

double InferenceModel::ComputeBoundBatch(double context) const {
  for (double b = 1; b <= BatchCap(); b *= 2) {
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

}  // namespace mfu
