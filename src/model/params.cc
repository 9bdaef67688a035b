// Exact parameter counts, module by module, as the families' modeling code
// allocates them (docs/models.md lists each family's modules).

#include "mfu/model.h"

namespace mfu {
namespace {

struct LayerParams {
  double attention = 0;
  double norms = 0;
  double dense_mlp = 0;
  double routed = 0;         // all experts
  double routed_active = 0;  // top-k experts
  double shared = 0;
  double router = 0;
};

double AttentionParams(const ModelSpec& s) {
  const auto h = static_cast<double>(s.hidden);
  const auto a = static_cast<double>(s.heads);
  if (s.attention == AttentionKind::kMla) {
    const MlaSpec& m = s.mla;
    const double qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
    const auto q_lora = static_cast<double>(m.q_lora_rank);
    const auto kv_lora = static_cast<double>(m.kv_lora_rank);
    double q = m.q_lora_rank > 0 ? h * q_lora + q_lora + q_lora * a * qk : h * a * qk;
    double kv = h * (kv_lora + static_cast<double>(m.qk_rope_head_dim)) + kv_lora +
                kv_lora * a * static_cast<double>(m.qk_nope_head_dim + m.v_head_dim);
    double o = a * static_cast<double>(m.v_head_dim) * h;
    return q + kv + o;
  }
  const auto g = static_cast<double>(s.kv_heads);
  const auto d = static_cast<double>(s.head_dim);
  double p = h * a * d + 2 * h * g * d + a * d * h;
  if (s.qkv_bias)
    p += a * d + 2 * g * d;
  if (s.o_bias)
    p += h;
  if (s.qk_norm)
    p += 2 * d;
  if (s.attention_sinks)
    p += a;
  return p;
}

double NormParams(const ModelSpec& s) {
  return static_cast<double>(s.hidden) * (s.norm == NormKind::kLayerNorm ? 2 : 1);
}

// One MLP of intermediate size `f` (gated: gate, up, down).
double MlpParams(const ModelSpec& s, int64_t f, bool bias) {
  const auto h = static_cast<double>(s.hidden);
  const auto ff = static_cast<double>(f);
  double p = h * ff * (s.gated_mlp ? 3 : 2);
  if (bias)
    p += ff * (s.gated_mlp ? 2 : 1) + h;
  return p;
}

LayerParams DecoderLayer(const ModelSpec& s, const LayerSpec& layer) {
  LayerParams p;
  p.attention = AttentionParams(s);
  p.norms = s.norms_per_layer * NormParams(s);
  if (!layer.moe) {
    p.dense_mlp = MlpParams(s, s.ffn, s.mlp_bias);
    return p;
  }
  const MoeSpec& m = s.moe;
  const auto h = static_cast<double>(s.hidden);
  const auto e = static_cast<double>(m.num_experts);
  double expert = MlpParams(s, m.expert_ffn, m.expert_bias);
  p.routed = e * expert;
  p.routed_active = static_cast<double>(m.top_k) * expert;
  p.router = h * e + (m.router_bias ? e : 0) + (m.score_correction_bias ? e : 0);
  if (m.shared_ffn > 0)
    p.shared = MlpParams(s, m.shared_ffn, false) + (m.shared_expert_gate ? h : 0);
  return p;
}

// Wan2.x: embedders, time projection and head, counted once.
double DitEmbedderParams(const ModelSpec& s) {
  const auto d = static_cast<double>(s.hidden);
  const DitSpec& t = s.dit;
  const auto patch = static_cast<double>(t.patch_volume);
  double p = static_cast<double>(t.in_dim) * patch * d + d;                                  // patch embedding
  p += static_cast<double>(t.text_dim) * d + d + d * d + d;                                  // text MLP
  p += static_cast<double>(t.freq_dim) * d + d + d * d + d;                                  // time MLP
  p += d * 6 * d + 6 * d;                                                                    // time projection
  p += d * static_cast<double>(t.out_dim) * patch + static_cast<double>(t.out_dim) * patch;  // head
  p += 2 * d;                                                                                // head modulation
  if (t.image_conditioning) {
    const auto c = static_cast<double>(t.image_dim);
    p += 2 * c + c * c + c + c * d + d + 2 * d;  // CLIP image projection MLP
  }
  return p;
}

// Wan2.x block: self-attention, text cross-attention, FFN, modulation.
LayerParams DitBlock(const ModelSpec& s) {
  const auto d = static_cast<double>(s.hidden);
  LayerParams p;
  double projections = 4 * (d * d + d);
  p.attention = 2 * projections + 4 * d;  // self + cross, each with q/k RMSNorm
  if (s.dit.image_conditioning)
    p.attention += 2 * (d * d + d) + d;
  p.norms = 2 * d + 6 * d;  // cross-attention LayerNorm + modulation table
  p.dense_mlp = MlpParams(s, s.ffn, true);
  return p;
}

}  // namespace

ParamCounts CountParams(const ModelSpec& s) {
  ParamCounts c;
  const auto h = static_cast<double>(s.hidden);
  const auto v = static_cast<double>(s.vocab);
  double active_layers = 0;
  for (const auto& layer : s.layers) {
    LayerParams p = s.arch == ArchKind::kDiT ? DitBlock(s) : DecoderLayer(s, layer);
    c.attention += p.attention;
    c.norms += p.norms;
    c.dense_mlp += p.dense_mlp;
    c.routed_experts += p.routed;
    c.shared_experts += p.shared;
    c.router += p.router;
    active_layers += p.attention + p.norms + p.dense_mlp + p.routed_active + p.shared + p.router;
  }
  double layers_total = c.attention + c.norms + c.dense_mlp + c.routed_experts + c.shared_experts + c.router;
  double once = 0;
  if (s.arch == ArchKind::kDiT) {
    c.dit_embedders = DitEmbedderParams(s);
    once = c.dit_embedders;
  } else {
    c.embedding = v * h;
    c.position_embedding = static_cast<double>(s.position_embeddings) * h;
    c.lm_head = s.tied_embeddings ? 0 : v * h;
    c.norms += NormParams(s);  // final norm
    once = c.embedding + c.position_embedding + c.lm_head + NormParams(s);
  }
  c.total = layers_total + once;
  c.active = active_layers + once;
  c.non_embedding = c.total - c.embedding - c.position_embedding;
  c.active_non_embedding = c.active - c.embedding - c.position_embedding;
  if (s.mtp_layers > 0 && !s.layers.empty()) {
    // DeepSeek-V3 MTP module: a decoder layer like the last one, enorm, hnorm,
    // eh_proj (2h -> h) and the shared head's norm; embedding and head shared.
    LayerParams last = DecoderLayer(s, s.layers.back());
    double layer = last.attention + last.norms + last.dense_mlp + last.routed + last.shared + last.router;
    c.mtp = static_cast<double>(s.mtp_layers) * (layer + 2 * h * h + 3 * NormParams(s));
  }
  return c;
}

}  // namespace mfu
