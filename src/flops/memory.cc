#include "mfu/memory.h"

#include <algorithm>
#include <string>

namespace mfu {
namespace {

double OptimizerBytesPerParam(const TrainingMemoryOptions& o) {
  const bool master = o.weight_dtype != DType::kFp32;
  switch (o.optimizer) {
    case Optimizer::kAdamMixed:
      return 12;
    case Optimizer::kAdamFp32:
      return master ? 12 : 8;
    case Optimizer::kSgdMomentum:
      return master ? 8 : 4;
  }
  return 12;
}

// Activation elements per token of one layer, split into the parts Megatron
// shards across tensor-parallel ranks and the parts it replicates without
// sequence parallelism (Korthikanti et al. section 4.2: the LayerNorm inputs, the
// QKV and MLP inputs, and the dropout masks).
struct LayerActivations {
  double sharded = 0;     // bytes / (s*b), divisible by t
  double replicated = 0;  // bytes / (s*b), divisible by t only with SP
  double quadratic = 0;   // bytes / (s*s*b): the a*s^2 attention terms
};

LayerActivations PerLayer(const ModelSpec& spec, const LayerSpec& layer, double bytes) {
  const auto h = static_cast<double>(spec.hidden);
  const auto a = static_cast<double>(spec.heads);
  const auto g = static_cast<double>(spec.kv_heads);
  const auto dqk = static_cast<double>(spec.qk_head_dim());
  const auto dv = static_cast<double>(spec.v_dim());
  LayerActivations out;
  // Attention: QKV input (replicated), Q, K, V, projection input, dropout mask.
  double kv_heads = spec.attention == AttentionKind::kMla ? a : g;
  out.replicated += bytes * h + h;  // QKV input + attention dropout mask (1 byte)
  out.sharded += bytes * (a * dqk + kv_heads * dqk + kv_heads * dv + a * dv);
  // Softmax output (2 bytes), its dropout mask (1) and dropout output (2).
  out.quadratic = (2 * bytes + 1) * a;
  // MLP: input (replicated), intermediate activations, dropout mask.
  out.replicated += bytes * h + h;
  double f = static_cast<double>(spec.ffn);
  if (layer.moe) {
    f = static_cast<double>(spec.moe.top_k * spec.moe.expert_ffn + spec.moe.shared_ffn);
  }
  out.sharded += bytes * f * (spec.gated_mlp ? 4 : 2);
  // Two LayerNorm inputs.
  out.replicated += 2 * bytes * h;
  return out;
}

}  // namespace

double KorthikantiActivationBytesPerLayer(double s, double b, double h, double a) {
  return s * b * h * (34 + 5 * a * s / h);
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
  TrainingMemory m;
  m.weights_bytes = trained * DTypeBytes(o.weight_dtype);
  m.gradients_bytes = trained * DTypeBytes(o.grad_dtype);
  m.optimizer_bytes = trained * OptimizerBytesPerParam(o);

  const auto s = static_cast<double>(o.seq_len);
  const auto b = static_cast<double>(o.micro_batch);
  const auto t = static_cast<double>(o.tensor_parallel);
  const auto h = static_cast<double>(spec.hidden);
  const bool keep_quadratic = !o.flash_attention && o.recompute == Recompute::kNone;
  for (const auto& layer : spec.layers) {
    double bytes;
    if (o.recompute == Recompute::kFull) {
      bytes = o.activation_bytes * s * b * h / (o.sequence_parallel ? t : 1);  // the layer input only
    } else {
      LayerActivations l = PerLayer(spec, layer, o.activation_bytes);
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
