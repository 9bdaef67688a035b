#include "mfu/memory.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "base/check.h"
#include "base/param.h"
#include "base/strings.h"

namespace mfu {
namespace {

// Optimizer bytes per parameter: the fp32 master (when the weights are not
// fp32), the fp32 copy of 16-bit main gradients, the moments.
double OptimizerBytesPerParam(const TrainingStateDtypes& d) {
  double bytes = d.moments_per_param * DTypeBytes(d.moments);
  if (d.fp32_master && d.weights != DType::kFp32)
    bytes += 4;
  if (d.fp32_grad_copy && d.main_grads != DType::kFp32)
    bytes += 4;
  return bytes;
}

// Activation bytes per token of one layer, split into the parts Megatron
// shards across tensor-parallel ranks and the parts it replicates without
// sequence parallelism (Korthikanti et al. section 4.2: the LayerNorm inputs, the
// QKV and MLP inputs, and the dropout masks).
struct LayerActivations {
  double sharded = 0;     // bytes / (s*b), divisible by t
  double replicated = 0;  // bytes / (s*b), divisible by t only with SP
  double quadratic = 0;   // bytes / (s*s*b): the a*s^2 attention terms
};

// What one layer saves for its backward, tensor by tensor as Megatron-Core
// with Transformer Engine keeps them (Korthikanti et al. section 4.2 is the
// same list for a plain GPT layer with dropout: 34 s*b*h + 5 a*s^2*b):
//   attention: the norm's input, the QKV input (the norm's output), q, k, v,
//     the core's output (the projection's input), and inside the core its
//     fp32 log-sum-exp per head (fused kernels: EstimateTrainingMemory adds
//     it) or the softmax output (unfused: `quadratic`);
//   MLP: the norm's input, the fc1 input, fc1's output (2 x ffn wide when
//     gated: gate and up, the activation's input) and the activation's output
//     (fc2's input);
//   routed experts: the router's input, each of the top-k token copies the
//     grouped fc1 reads, their fc1 and activation outputs, and fc2's output
//     rows (unpermute weighs them by the router's probabilities); shared
//     experts as a dense MLP;
//   dropout (only when the model trains with it): a 1-byte mask after the
//     attention and the MLP, and the softmax's mask and output.
// `bytes` is the 16-bit activation width; `linear` the width a linear layer
// keeps of its input for the weight gradient: 1 under FP8 with Transformer
// Engine (the column-wise FP8 copy), which for the attention projection is
// a copy beside the core's 16-bit output. `dropped` (RecomputeModule bits,
// Megatron's --recompute-modules) are the parts recomputed instead of kept:
// layernorm the MoE layer's standalone norm output (the router's input),
// moe_act the experts' activation outputs, mlp a dense MLP's inside, moe a
// MoE block's inside, shared_experts theirs, mla_up_proj MLA's Q, K and V
// (Megatron's CheckpointWithoutOutput discards them after the core's
// forward). The attention core's own (core_attn) are
// EstimateTrainingMemory's. MLA layers also keep their latents.
LayerActivations PerLayer(const ModelSpec& spec, const LayerSpec& layer, double bytes, double linear,
                          uint32_t dropped) {
  const auto h = static_cast<double>(spec.hidden);
  const auto a = static_cast<double>(spec.heads);
  const auto g = static_cast<double>(spec.kv_heads);
  const auto dqk = static_cast<double>(spec.qk_head_dim());
  const auto dv = static_cast<double>(spec.v_dim());
  const double mask = spec.dropout > 0 ? 1 : 0;  // bytes per masked element
  auto kept = [dropped](uint32_t module) { return (dropped & module) == 0 ? 1.0 : 0.0; };
  LayerActivations out;
  // Attention.
  const bool mla = spec.attention == AttentionKind::kMla;
  const double kv_heads = mla ? a : g;
  out.replicated += (bytes + linear + mask) * h;
  // The core's Q, K, V (mla_up_proj recomputes MLA's from the latents) and
  // its output.
  const double qkv = bytes * (a * dqk + kv_heads * dqk + kv_heads * dv);
  out.sharded += (mla ? kept(kRecomputeMlaUpProj) : 1.0) * qkv + bytes * a * dv;
  if (mla) {
    // The latents, not split over the tensor-parallel ranks' heads (the
    // down projections are not): each norm's input and output (the up
    // projection's input), and the shared rope key.
    const auto q_lora = static_cast<double>(spec.mla.q_lora_rank);
    const auto kv_lora = static_cast<double>(spec.mla.kv_lora_rank);
    out.replicated += (bytes + linear) * (q_lora + kv_lora) + bytes * static_cast<double>(spec.mla.qk_rope_head_dim);
  }
  if (linear < bytes)
    out.sharded += linear * a * dv;  // the projection's FP8 copy of its input
  // Softmax output, and with dropout its mask and output.
  out.quadratic = (bytes + mask * (1 + bytes)) * a;
  // MLP or MoE block.
  out.replicated += (bytes + mask) * h;  // the norm's input, the dropout mask
  const double dense_f = static_cast<double>(layer.moe ? spec.moe.shared_ffn : spec.ffn);
  auto fc1_out = [&](double f) { return bytes * f * (spec.gated_mlp ? 2 : 1); };
  if (layer.moe) {
    const double k = static_cast<double>(spec.moe.top_k);
    const auto ef = static_cast<double>(spec.moe.expert_ffn);
    const double moe = kept(kRecomputeMoe);
    out.replicated += moe * kept(kRecomputeLayernorm) * bytes * h;  // the router's input (16-bit)
    out.sharded += moe * k * ((linear + bytes) * h + fc1_out(ef));  // grouped fc1 inputs and outputs, fc2 outputs
    out.sharded += moe * kept(kRecomputeMoeAct) * k * linear * ef;  // the activation's outputs (fc2's inputs)
    if (dense_f > 0) {  // shared experts; under FP8 their fc1 keeps its own copy of the input
      out.sharded += moe * kept(kRecomputeSharedExperts) *
                     ((linear < bytes ? linear * h : 0) + fc1_out(dense_f) + linear * dense_f);
    }
  } else {
    // fc1 input (the norm's output), fc1 output, the activation's output.
    const double mlp = kept(kRecomputeMlp);
    out.replicated += mlp * linear * h;
    out.sharded += mlp * (fc1_out(dense_f) + linear * dense_f);
  }
  return out;
}

// What torchtitan's op-level policy (Recompute::kSelectiveOp) keeps of a
// layer: its input (the checkpoint's), the outputs of the odd-numbered
// linears in forward order (q and v; gate or fc1; down, after a gated MLP),
// the attention kernel's output and its fp32 log-sum-exp per head. A MoE
// layer keeps its shared experts' like a dense MLP and nothing of the
// routed experts (recomputed from the layer input).
LayerActivations SavedByOpPolicy(const ModelSpec& spec, const LayerSpec& layer, double bytes) {
  const auto h = static_cast<double>(spec.hidden);
  const auto a = static_cast<double>(spec.heads);
  const double kv_heads = spec.attention == AttentionKind::kMla ? a : static_cast<double>(spec.kv_heads);
  const auto dqk = static_cast<double>(spec.qk_head_dim());
  const auto dv = static_cast<double>(spec.v_dim());
  LayerActivations out;
  out.replicated = bytes * h;                                        // the layer input
  out.sharded = bytes * (a * dqk + kv_heads * dv + a * dv) + 4 * a;  // q, v, attention output, LSE
  const double f = static_cast<double>(layer.moe ? spec.moe.shared_ffn : spec.ffn);
  if (f > 0) {
    out.sharded += bytes * f;  // gate (fc1) output
    if (spec.gated_mlp)
      out.replicated += bytes * h;  // down projection output (reduce-scattered under TP)
  }
  return out;
}

}  // namespace

TrainingState TrainingStateBytes(const TrainingStateDtypes& d, int zero_stage, const StateSharding& s) {
  MFU_CHECK(zero_stage >= 0 && zero_stage <= 3);
  MFU_DCHECK(s.dense_shard >= 1 && s.expert_shard >= 1);
  const double all = s.dense_params + s.expert_params;
  const double shard = s.dense_params / s.dense_shard + s.expert_params / s.expert_shard;
  TrainingState t;
  t.weights_bytes = (zero_stage >= 3 ? shard : all) * DTypeBytes(d.weights);
  if (zero_stage >= 3)
    t.weights_bytes += s.gathered_params * DTypeBytes(d.compute);
  t.gradients_bytes = (zero_stage >= 2 ? shard : all) * DTypeBytes(d.main_grads);
  t.optimizer_bytes = (zero_stage >= 1 ? shard : all) * OptimizerBytesPerParam(d);
  return t;
}

double KorthikantiActivationBytesPerLayer(double s, double b, double h, double a) {
  return s * b * h * (34 + 5 * a * s / h);
}

Status ApplyDropout(std::optional<double> dropout, ModelSpec& model) {
  if (!dropout)
    return Status::Ok();
  if (!(*dropout >= 0 && *dropout < 1))
    return InvalidArgumentError(base::Param("dropout") + " must be in [0, 1), got " + base::FormatNumber(*dropout));
  model.dropout = *dropout;
  return Status::Ok();
}

StatusOr<TrainingMemory> EstimateTrainingMemory(const ModelSpec& spec, const TrainingMemoryOptions& o) {
  if (o.seq_len < 1 || o.micro_batch < 1 || o.tensor_parallel < 1) {
    return InvalidArgumentError("sequence length, micro-batch and tensor parallelism must be positive");
  }
  if (o.seq_len > (int64_t{1} << 31) || o.micro_batch > (int64_t{1} << 24) || o.tensor_parallel > 4096) {
    return InvalidArgumentError("sequence length, micro-batch or tensor parallelism is absurd");
  }
  const ParamCounts params = CountParams(spec);
  // MTP modules are trained with the model although HF's count leaves them out.
  const double trained = params.total + params.mtp;
  StateSharding whole;
  whole.dense_params = trained;
  const TrainingState state = TrainingStateBytes(o.state, 0, whole);
  TrainingMemory m;
  m.weights_bytes = state.weights_bytes;
  m.gradients_bytes = state.gradients_bytes;
  m.optimizer_bytes = state.optimizer_bytes;

  const auto s = static_cast<double>(o.seq_len);
  const auto b = static_cast<double>(o.micro_batch);
  const auto t = static_cast<double>(o.tensor_parallel);
  const auto h = static_cast<double>(spec.hidden);
  // Megatron's selective recompute drops what its modules recompute; the
  // attention core's softmax (unfused) or log-sum-exp (fused) goes with
  // core_attn, and stays without recompute.
  const uint32_t dropped = o.recompute == Recompute::kSelective ? o.recompute_modules : 0;
  const bool keep_core =
      o.recompute == Recompute::kNone || (o.recompute == Recompute::kSelective && (dropped & kRecomputeCoreAttn) == 0);
  const bool keep_quadratic = !o.flash_attention && keep_core;
  const double linear = o.linear_input_bytes > 0 ? o.linear_input_bytes : o.activation_bytes;
  for (const auto& layer : spec.layers) {
    double bytes;
    if (o.recompute == Recompute::kFull) {
      bytes = o.activation_bytes * s * b * h / (o.sequence_parallel ? t : 1);  // the layer input only
    } else if (o.recompute == Recompute::kSelectiveOp) {
      LayerActivations l = SavedByOpPolicy(spec, layer, o.activation_bytes);
      bytes = s * b * (l.sharded / t + l.replicated / (o.sequence_parallel ? t : 1));
    } else {
      LayerActivations l = PerLayer(spec, layer, o.activation_bytes, linear, dropped);
      if (o.flash_attention && keep_core)
        l.sharded += 4 * static_cast<double>(spec.heads);  // the fused core's log-sum-exp
      bytes = s * b * (l.sharded / t + l.replicated / (o.sequence_parallel ? t : 1));
      if (keep_quadratic)
        bytes += s * s * b * l.quadratic / t;
    }
    m.activations_bytes += bytes;
    m.activations_per_layer_bytes = std::max(m.activations_per_layer_bytes, bytes);
  }
  if (spec.arch == ArchKind::kDecoder) {
    // Final LayerNorm + LM-head input (4sbh) and fp32 logits (4sbV), / t.
    m.output_layer_activations_bytes = (4 * s * b * h + 4 * s * b * static_cast<double>(spec.vocab)) / t;
  }
  return m;
}

namespace {

std::string Str(int64_t v) {
  return std::to_string(v);
}

Status ValidateSizes(const ParallelLayout& l) {
  for (auto [name, v] : {std::pair{"gpus", l.gpus},
                         {"tp", l.tp},
                         {"pp", l.pp},
                         {"vpp", l.vpp},
                         {"cp", l.cp},
                         {"ep", l.ep},
                         {"etp", l.etp},
                         {"micro_batches", l.micro_batches}}) {
    if (v < 1 || v > (int64_t{1} << 24))
      return InvalidArgumentError(std::string(name) + " " + Str(v) + " must be in [1, 2^24]");
  }
  if (l.zero_stage < 0 || l.zero_stage > 3)
    return InvalidArgumentError("zero " + std::to_string(l.zero_stage) + " must be 0, 1, 2 or 3");
  if (l.vpp > 1 && l.pp == 1)
    return InvalidArgumentError("vpp " + Str(l.vpp) + " needs pp > 1");
  if (static_cast<double>(l.tp) * static_cast<double>(l.pp) * static_cast<double>(l.cp) > double{1 << 24})
    return InvalidArgumentError("tp x pp x cp exceeds 2^24 GPUs");
  if (l.gpus % (l.tp * l.pp * l.cp) != 0) {
    return InvalidArgumentError("gpus " + Str(l.gpus) +
                                " is not a multiple of tp x pp x cp = " + Str(l.tp * l.pp * l.cp));
  }
  return Status::Ok();
}

Status ValidateTensorParallel(const ModelSpec& spec, int64_t tp) {
  const int64_t kv = spec.kv_heads > 0 ? spec.kv_heads : spec.heads;
  const int64_t ffn = spec.is_moe() && spec.ffn == 0 ? spec.moe.expert_ffn : spec.ffn;
  if (tp > 1024 || spec.heads % tp != 0)
    return InvalidArgumentError("tp " + Str(tp) + " does not divide the " + Str(spec.heads) + " attention heads");
  if (kv % tp != 0 && tp % kv != 0)
    return InvalidArgumentError("tp " + Str(tp) + " and the " + Str(kv) + " KV heads do not divide one another");
  if (ffn > 0 && ffn % tp != 0)
    return InvalidArgumentError("tp " + Str(tp) + " does not divide the MLP width " + Str(ffn));
  return Status::Ok();
}

Status ValidateExperts(const ModelSpec& spec, const ParallelLayout& l) {
  if (!spec.is_moe()) {
    if (l.ep > 1)
      return InvalidArgumentError("ep " + Str(l.ep) + " needs a mixture-of-experts model");
    if (l.etp > 1)
      return InvalidArgumentError("etp " + Str(l.etp) + " needs a mixture-of-experts model");
    return Status::Ok();
  }
  const int64_t dp_cp_tp = l.gpus / l.pp;
  if (spec.moe.num_experts % l.ep != 0)
    return InvalidArgumentError("ep " + Str(l.ep) + " does not divide the " + Str(spec.moe.num_experts) + " experts");
  if (dp_cp_tp % (l.ep * l.etp) != 0) {
    return InvalidArgumentError("ep " + Str(l.ep) + " x etp " + Str(l.etp) +
                                " does not divide dp x cp x tp = " + Str(dp_cp_tp));
  }
  if (l.etp > 1 && spec.moe.expert_ffn % l.etp != 0)
    return InvalidArgumentError("etp " + Str(l.etp) + " does not divide the expert width " + Str(spec.moe.expert_ffn));
  return Status::Ok();
}

// The parameters of the most loaded stage on one GPU, split as the
// performance model splits them (PerfModel::Create and Evaluate): layers as
// evenly as the stages allow (Megatron's and torchtitan's uneven first/last
// stages), ceil(layers / pp) on the busiest GPU whatever the interleave,
// the first stage the embedding, the last the LM head.
struct StageParams {
  double layers = 0;
  double dense = 0;
  double expert = 0;
  double gathered = 0;  // two average layers: ZeRO-3's working copy
};

StageParams MostLoadedStage(const ModelSpec& spec, const ParallelLayout& l) {
  const ParamCounts params = CountParams(spec);
  const auto layers = static_cast<double>(spec.num_layers);
  const double expert_layer = params.routed_experts / layers;
  const double dense_layer =
      (params.attention + params.dense_mlp + params.shared_experts + params.router + params.norms) / layers;
  const double embedding = params.embedding + params.position_embedding;
  const double lm_head = spec.tied_embeddings ? params.embedding : params.lm_head;
  const auto tp = static_cast<double>(l.tp), ep = static_cast<double>(l.ep), etp = static_cast<double>(l.etp);
  StageParams s;
  s.layers = std::ceil(layers / static_cast<double>(l.pp));
  const double first = embedding / tp + (l.pp == 1 && !spec.tied_embeddings ? lm_head / tp : 0);
  const double last = l.pp == 1 ? first : lm_head / tp;
  s.dense = s.layers * dense_layer / tp + std::max(first, last);
  s.expert = s.layers * expert_layer / (ep * etp);
  s.gathered = 2 * (dense_layer / tp + expert_layer / (ep * etp));
  return s;
}

}  // namespace

Status ValidateParallelLayout(const ModelSpec& spec, int64_t seq_len, const ParallelLayout& l) {
  MFU_RETURN_IF_ERROR(ValidateSizes(l));
  if (spec.num_layers < l.pp * l.vpp) {
    return InvalidArgumentError("pp " + Str(l.pp) + " x vpp " + Str(l.vpp) + " = " + Str(l.pp * l.vpp) +
                                " stages exceed the " + Str(spec.num_layers) + " layers");
  }
  MFU_RETURN_IF_ERROR(ValidateTensorParallel(spec, l.tp));
  MFU_RETURN_IF_ERROR(ValidateExperts(spec, l));
  if (l.cp > 1 && seq_len % (2 * l.cp) != 0) {
    return InvalidArgumentError("cp " + Str(l.cp) + ": the sequence " + Str(seq_len) +
                                " is not a multiple of 2 x cp (load-balanced halves)");
  }
  return Status::Ok();
}

StatusOr<TrainingMemoryPerGpu> EstimateTrainingMemoryPerGpu(const ModelSpec& spec, const TrainingMemoryOptions& options,
                                                            const ParallelLayout& l) {
  if (spec.num_layers < 1)
    return InvalidArgumentError("the model has no layers");
  MFU_RETURN_IF_ERROR(ValidateParallelLayout(spec, options.seq_len, l));
  // One sequence, as PerfModel::Create caches it, scaled by the micro-batch.
  TrainingMemoryOptions one = options;
  one.micro_batch = 1;
  one.tensor_parallel = l.tp;
  one.sequence_parallel = options.sequence_parallel && l.tp > 1;
  MFU_ASSIGN_OR_RETURN(TrainingMemory act, EstimateTrainingMemory(spec, one));

  TrainingMemoryPerGpu m;
  m.dp = l.gpus / (l.tp * l.pp * l.cp);
  const StageParams stage = MostLoadedStage(spec, l);
  m.layers_per_stage = stage.layers;
  m.dense_params = stage.dense;
  m.expert_params = stage.expert;
  const auto dp = static_cast<double>(m.dp), cp = static_cast<double>(l.cp), tp = static_cast<double>(l.tp);
  m.sharding.dense_params = stage.dense;
  m.sharding.expert_params = stage.expert;
  m.sharding.dense_shard = dp * cp;
  m.sharding.expert_shard = std::max(1.0, dp * cp * tp / static_cast<double>(l.ep * l.etp));
  m.sharding.gathered_params = stage.gathered;
  m.state = TrainingStateBytes(options.state, l.zero_stage, m.sharding);

  const auto mbs = static_cast<double>(options.micro_batch), pp = static_cast<double>(l.pp),
             vpp = static_cast<double>(l.vpp), mb = static_cast<double>(l.micro_batches);
  m.activations_per_layer_bytes = act.activations_per_layer_bytes * mbs / cp;
  m.micro_batches_in_flight = l.pp == 1 ? 1 : std::min(mb, pp) * (l.vpp > 1 ? 1 + (pp - 1) / (pp * vpp) : 1.0);
  m.output_layer_activations_bytes = l.pp == 1 ? act.output_layer_activations_bytes * mbs / cp : 0;
  m.activations_bytes =
      m.activations_per_layer_bytes * stage.layers * m.micro_batches_in_flight + m.output_layer_activations_bytes;
  return m;
}

StatusOr<KvCacheSize> ComputeKvCache(const ModelSpec& spec, DType dtype, int64_t context_len) {
  if (spec.arch != ArchKind::kDecoder)
    return InvalidArgumentError("a diffusion transformer has no KV cache");
  if (context_len < 1 || context_len > (int64_t{1} << 31)) {
    return InvalidArgumentError("context length must be between 1 and 2^31, got " + std::to_string(context_len));
  }
  KvCacheSize kv;
  if (spec.attention == AttentionKind::kMla) {
    kv.kv_elements_per_token_per_layer = static_cast<double>(spec.mla.kv_lora_rank + spec.mla.qk_rope_head_dim);
  } else {
    kv.kv_elements_per_token_per_layer =
        static_cast<double>(spec.kv_heads) * static_cast<double>(spec.qk_head_dim() + spec.v_dim());
  }
  const double per_layer = kv.kv_elements_per_token_per_layer * DTypeBytes(dtype);
  for (const auto& layer : spec.layers) {
    int64_t kept = layer.window > 0 ? std::min(layer.window, context_len) : context_len;
    kv.bytes_per_token += per_layer;
    kv.bytes_per_sequence += per_layer * static_cast<double>(kept);
  }
  return kv;
}

}  // namespace mfu
