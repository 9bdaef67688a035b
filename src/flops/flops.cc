// Forward FLOPs per token by component, then training / prefill / decode
// totals. FMA = 2 FLOPs; an (m x k)(k x n) GEMM is 2mkn.

#include "mfu/flops.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "base/param.h"
#include "base/strings.h"
#include "flops/conventions.h"

namespace mfu {
namespace {

using flops::AttentionMode;
using flops::Basis;
using flops::MtpMode;
using flops::Rules;
using C = FlopsComponent;

constexpr int64_t kMaxSequence = int64_t{1} << 31;

// Which tokens the processed tokens attend to.
struct Phase {
  bool inference = false;  // MTP modules run only in training
  bool decode = false;
  double new_tokens = 0;  // S (training: T)
  double cached = 0;      // P (decode: the context length)
};

// Mean number of keys a processed token attends to in a layer with sliding
// `window` (0 = global).
double KeysPerToken(const Rules& rules, const ModelSpec& spec, int64_t window, const Phase& phase) {
  const double s = phase.new_tokens;
  const double p = phase.cached;
  const auto w = static_cast<double>(window);
  if (rules.attention == AttentionMode::kNone)
    return 0;
  if (spec.arch == ArchKind::kDiT)
    return s;  // bidirectional over the whole clip
  if (phase.decode) {
    return rules.attention == AttentionMode::kCausalWindow && window > 0 ? std::min(p, w) : p;
  }
  switch (rules.attention) {
    case AttentionMode::kFull:
      return p + s;
    case AttentionMode::kCausalHalf:
      return p + s / 2;
    case AttentionMode::kCausalWindow: {
      if (window == 0 || w >= p + s)
        return p + s / 2;
      if (w <= p)
        return w;
      // Mean over the new tokens of min(p + x, w), x in [0, s].
      const double x0 = w - p;
      return (p * x0 + x0 * x0 / 2 + (s - x0) * w) / s;
    }
    case AttentionMode::kNone:
      break;
  }
  return 0;
}

double MlpMatrices(const ModelSpec& spec) {
  return spec.gated_mlp ? 3 : 2;
}

void AddAttention(const ModelSpec& spec, double keys, MlaMode mla, FlopsBreakdown& f) {
  const auto h = static_cast<double>(spec.hidden);
  const auto a = static_cast<double>(spec.heads);
  if (spec.attention == AttentionKind::kMla) {
    const MlaSpec& m = spec.mla;
    const auto q_lora = static_cast<double>(m.q_lora_rank);
    const auto kv = static_cast<double>(m.kv_lora_rank);
    const auto nope = static_cast<double>(m.qk_nope_head_dim);
    const auto rope = static_cast<double>(m.qk_rope_head_dim);
    const auto dv = static_cast<double>(m.v_head_dim);
    f[C::kQProj] += m.q_lora_rank > 0 ? 2 * (h * q_lora + q_lora * a * (nope + rope)) : 2 * h * a * (nope + rope);
    f[C::kKProj] += 2 * h * (kv + rope);  // kv_a_proj_with_mqa: latent + shared rope key
    if (mla == MlaMode::kAbsorbed) {
      f[C::kQProj] += 2 * a * nope * kv;                 // W_UK absorbed into the query
      f[C::kOProj] += 2 * a * kv * dv + 2 * a * dv * h;  // W_UV then o_proj
      f[C::kAttnScores] += 2 * a * (kv + rope) * keys;
      f[C::kAttnContext] += 2 * a * kv * keys;
      return;
    }
    f[C::kKProj] += 2 * kv * a * nope;  // kv_b_proj, key half
    f[C::kVProj] += 2 * kv * a * dv;    // kv_b_proj, value half
    f[C::kOProj] += 2 * a * dv * h;
    f[C::kAttnScores] += 2 * a * (nope + rope) * keys;
    f[C::kAttnContext] += 2 * a * dv * keys;
    return;
  }
  const auto g = static_cast<double>(spec.kv_heads);
  const auto d = static_cast<double>(spec.head_dim);
  f[C::kQProj] += 2 * h * a * d;
  f[C::kKProj] += 2 * h * g * d;
  f[C::kVProj] += 2 * h * g * d;
  f[C::kOProj] += 2 * a * d * h;
  f[C::kAttnScores] += 2 * a * d * keys;
  f[C::kAttnContext] += 2 * a * d * keys;
}

void AddMlp(const ModelSpec& spec, const LayerSpec& layer, const Rules& rules, FlopsBreakdown& f) {
  const auto h = static_cast<double>(spec.hidden);
  if (!layer.moe) {
    f[C::kDenseMlp] += 2 * h * static_cast<double>(spec.ffn) * MlpMatrices(spec);
    return;
  }
  const MoeSpec& m = spec.moe;
  const auto experts = static_cast<double>(rules.all_experts ? m.num_experts : m.top_k);
  f[C::kRoutedExperts] += experts * 2 * h * static_cast<double>(m.expert_ffn) * MlpMatrices(spec);
  if (m.shared_ffn > 0)
    f[C::kSharedExperts] += 2 * h * static_cast<double>(m.shared_ffn) * MlpMatrices(spec);
  if (rules.router)
    f[C::kRouter] += 2 * h * static_cast<double>(m.num_experts);
}

// Wan DiT block on top of AddAttention/AddMlp: text (and image) cross-
// attention with K/V computed once per forward on the context tokens,
// amortised over the `tokens` video tokens.
void AddDitCross(const ModelSpec& spec, double tokens, FlopsBreakdown& f) {
  const auto d = static_cast<double>(spec.hidden);
  auto context = static_cast<double>(spec.dit.text_len);
  double cross = 2 * d * d * 2;               // q and o on video tokens
  cross += 2 * 2 * d * d * context / tokens;  // k, v on text tokens
  if (spec.dit.image_conditioning) {
    const auto image = static_cast<double>(spec.dit.image_len);
    cross += 2 * 2 * d * d * image / tokens;
    context += image;
  }
  cross += 4 * d * context;  // scores + context over the conditioning tokens
  f[C::kCrossAttention] += cross;
}

void AddDitEmbedders(const ModelSpec& spec, double tokens, FlopsBreakdown& f) {
  const auto d = static_cast<double>(spec.hidden);
  const DitSpec& t = spec.dit;
  const auto patch = static_cast<double>(t.patch_volume);
  double per_token = 2 * static_cast<double>(t.in_dim) * patch * d;  // patch embedding
  per_token += 2 * d * static_cast<double>(t.out_dim) * patch;       // head
  double per_forward = 2 * static_cast<double>(t.text_len) * (static_cast<double>(t.text_dim) * d + d * d);
  per_forward += 2 * (static_cast<double>(t.freq_dim) * d + d * d + 6 * d * d);  // time MLP + projection
  if (t.image_conditioning) {
    const auto c = static_cast<double>(t.image_dim);
    per_forward += 2 * static_cast<double>(t.image_len) * (c * c + c * d);
  }
  f[C::kDitEmbedders] += per_token + per_forward / tokens;
}

double PaddedVocab(const ModelSpec& spec, const Rules& rules) {
  auto v = static_cast<double>(spec.vocab);
  if (!rules.pad_vocab)
    return v;
  return static_cast<double>((spec.vocab + 127) / 128 * 128);
}

// Parameter-based conventions: 2 x N per token, split by component, with the
// attention core from the rules.
Status ParamBasisForward(const ModelSpec& spec, Convention convention, const Rules& rules, const Phase& phase,
                         FlopsBreakdown& f) {
  if (spec.arch == ArchKind::kDiT) {
    return InvalidArgumentError(std::string("convention '") + ConventionName(convention) +
                                "' counts 6N per token, which does not describe a DiT (its text and time "
                                "embedders do not run per token); use megatron or exact");
  }
  const ParamCounts p = CountParams(spec);
  const auto h = static_cast<double>(spec.hidden);
  const auto v = static_cast<double>(spec.vocab);
  double n = 0;      // the convention's N
  double head = 0;   // LM-head parameters inside N
  double embed = 0;  // embedding-table parameters inside N
  switch (convention) {
    case Convention::kPalm:
      n = p.active - p.embedding - p.position_embedding + (spec.tied_embeddings ? v * h : 0);
      head = v * h;
      break;
    case Convention::kKaplan:
      n = p.active - p.embedding - p.position_embedding - p.lm_head;
      break;
    case Convention::kHf:
      n = p.total - p.embedding - p.position_embedding;
      head = p.lm_head;
      break;
    case Convention::kLlmFoundry:
      n = p.active - (spec.tied_embeddings ? 0 : p.embedding);
      head = v * h;
      embed = p.position_embedding;
      break;
    default:
      return InternalError("not a parameter-based convention");
  }
  FlopsBreakdown gemm;
  double core_d_model = 0;  // llm-foundry's attention term: 12*l*d_model*s
  for (const auto& layer : spec.layers) {
    const double keys = KeysPerToken(rules, spec, layer.window, phase);
    AddAttention(spec, keys, MlaMode::kNonAbsorbed, gemm);
    AddMlp(spec, layer, rules, gemm);
    core_d_model += 2 * h * keys;
  }
  if (convention == Convention::kLlmFoundry) {
    gemm[C::kAttnScores] = core_d_model;
    gemm[C::kAttnContext] = core_d_model;
  }
  f = gemm;
  f[C::kLmHead] = 2 * head;
  f[C::kEmbedding] = 2 * embed;
  double matrices = f.total() - f[C::kAttnScores] - f[C::kAttnContext];
  f[C::kNormsAndBiases] = 2 * n - matrices;
  return Status::Ok();
}

Status GemmBasisForward(const ModelSpec& spec, const Rules& rules, const Phase& phase, MlaMode mla, FlopsBreakdown& f) {
  for (const auto& layer : spec.layers) {
    AddAttention(spec, KeysPerToken(rules, spec, layer.window, phase), mla, f);
    AddMlp(spec, layer, rules, f);
  }
  if (spec.arch == ArchKind::kDiT) {
    const double tokens = phase.new_tokens;
    for (size_t i = 0; i < spec.layers.size(); ++i)
      AddDitCross(spec, tokens, f);
    AddDitEmbedders(spec, tokens, f);
    return Status::Ok();
  }
  const auto h = static_cast<double>(spec.hidden);
  f[C::kLmHead] = 2 * h * PaddedVocab(spec, rules);
  if (spec.mtp_layers > 0 && rules.mtp != MtpMode::kNone && !phase.inference) {
    // Each MTP module: one more layer like the last and, for Megatron,
    // eh_proj (2h -> h) and its own logits GEMM.
    FlopsBreakdown mtp;
    const LayerSpec& last = spec.layers.back();
    AddAttention(spec, KeysPerToken(rules, spec, last.window, phase), mla, mtp);
    AddMlp(spec, last, rules, mtp);
    double per_module = mtp.total();
    // Megatron adds eh_proj and the module's own logits; MaxText only the layer.
    if (rules.mtp == MtpMode::kLayerAndLogits)
      per_module += 2 * 2 * h * h + 2 * h * PaddedVocab(spec, rules);
    f[C::kMtp] = static_cast<double>(spec.mtp_layers) * per_module;
  }
  return Status::Ok();
}

Status Forward(const ModelSpec& spec, Convention convention, const Phase& phase, MlaMode mla, FlopsBreakdown& f) {
  Rules rules = flops::RulesFor(convention);
  if (rules.basis == Basis::kParams)
    return ParamBasisForward(spec, convention, rules, phase, f);
  return GemmBasisForward(spec, rules, phase, mla, f);
}

Status CheckLength(const ModelSpec& spec, int64_t tokens, const char* what) {
  if (tokens < 1)
    return InvalidArgumentError(std::string(what) + " must be positive, got " + std::to_string(tokens));
  if (tokens > kMaxSequence)
    return InvalidArgumentError(std::string(what) + " is absurd: " + std::to_string(tokens));
  // Beyond the model's maximum is a data error (kOutOfRange, exit 1), as in
  // the inference model (InferenceModel::CheckContext): the value is valid,
  // this model cannot take it.
  if (spec.arch == ArchKind::kDecoder && spec.max_position_embeddings > 0 && tokens > spec.max_position_embeddings) {
    return OutOfRangeError(std::string(what) + " " + std::to_string(tokens) + " exceeds the model's " +
                           "max_position_embeddings (" + std::to_string(spec.max_position_embeddings) + ")");
  }
  return Status::Ok();
}

Status CheckBatch(int64_t batch) {
  if (batch < 1 || batch > (int64_t{1} << 32)) {
    return InvalidArgumentError("batch must be between 1 and 2^32, got " + std::to_string(batch));
  }
  return Status::Ok();
}

// The forward FLOPs torchtitan's op-level policy runs again (flops.h
// Recompute::kSelectiveOp): the even-numbered linears of a layer in forward
// order (k and o; the MLP's up projection of gate, up, down, or fc2 of fc1,
// fc2; the shared experts' likewise after the router, which it forces to
// recompute uncounted), and every routed expert (grouped GEMMs are not on
// its save list). The attention kernel's output is saved.
double OpPolicyRecompute(const ModelSpec& spec, const FlopsBreakdown& f) {
  return f[C::kKProj] + f[C::kOProj] + OpPolicyMlpShare(spec) * (f[C::kDenseMlp] + f[C::kSharedExperts]) +
         f[C::kRoutedExperts] + f[C::kRouter];
}

}  // namespace

double FlopsBreakdown::total() const {
  double sum = 0;
  for (double v : forward)
    sum += v;
  return sum;
}

namespace {

constexpr std::pair<const char*, uint32_t> kRecomputeModuleNames[] = {{"core_attn", kRecomputeCoreAttn},
                                                                      {"layernorm", kRecomputeLayernorm},
                                                                      {"moe_act", kRecomputeMoeAct},
                                                                      {"mlp", kRecomputeMlp},
                                                                      {"moe", kRecomputeMoe},
                                                                      {"shared_experts", kRecomputeSharedExperts},
                                                                      {"mla_up_proj", kRecomputeMlaUpProj}};

}  // namespace

StatusOr<uint32_t> ParseRecomputeModules(std::string_view list) {
  uint32_t bits = 0;
  std::string_view rest = list;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string item = base::ToLower(base::Trim(rest.substr(0, comma)));
    if (item.empty())
      return InvalidArgumentError("recompute modules: an empty name in '" + std::string(list) + "'");
    uint32_t bit = 0;
    for (const auto& [name, value] : kRecomputeModuleNames) {
      if (item == name)
        bit = value;
    }
    if (bit == 0) {
      return InvalidArgumentError("recompute module '" + item +
                                  "' is not one of core_attn, layernorm, moe_act, mlp, moe, shared_experts, "
                                  "mla_up_proj");
    }
    bits |= bit;
    if (comma == std::string_view::npos)
      break;
    rest.remove_prefix(comma + 1);
  }
  return bits;
}

Status CheckRecomputeModules(const ModelSpec& spec, uint32_t modules, Recompute recompute) {
  if (modules != kDefaultRecomputeModules && recompute != Recompute::kSelective) {
    return InvalidArgumentError(base::Param("recompute_modules") + " applies to " + base::Param("recompute") +
                                " selective, not " + RecomputeName(recompute));
  }
  if ((modules & kRecomputeMlaUpProj) != 0 && spec.attention != AttentionKind::kMla) {
    return InvalidArgumentError(base::Param("recompute_modules") + ": mla_up_proj needs multi-latent attention (" +
                                spec.name + " has none)");
  }
  return Status::Ok();
}

double MlaUpProjFlopsPerLayer(const ModelSpec& spec) {
  if (spec.attention != AttentionKind::kMla)
    return 0;
  const MlaSpec& m = spec.mla;
  const auto a = static_cast<double>(spec.heads);
  const auto nope = static_cast<double>(m.qk_nope_head_dim), rope = static_cast<double>(m.qk_rope_head_dim);
  const auto q_in = static_cast<double>(m.q_lora_rank > 0 ? m.q_lora_rank : spec.hidden);
  return 2 * q_in * a * (nope + rope) +
         2 * static_cast<double>(m.kv_lora_rank) * a * (nope + static_cast<double>(m.v_head_dim));
}

std::string RecomputeModulesName(uint32_t modules) {
  std::string out;
  for (const auto& [name, value] : kRecomputeModuleNames) {
    if ((modules & value) != 0)
      out += (out.empty() ? "" : ",") + std::string(name);
  }
  return out;
}

const char* FlopsComponentName(FlopsComponent component) {
  static constexpr const char* kNames[kNumFlopsComponents] = {
      "q_proj",    "k_proj",         "v_proj",          "o_proj",       "attn_scores", "attn_context",
      "mlp",       "routed_experts", "shared_experts",  "router",       "lm_head",     "mtp",
      "embedding", "norms_biases",   "cross_attention", "dit_embedders"};
  return kNames[static_cast<size_t>(component)];
}

StatusOr<TrainingFlops> ComputeTrainingFlops(const ModelSpec& spec, Convention convention, int64_t seq_len,
                                             Recompute recompute, uint32_t modules) {
  MFU_RETURN_IF_ERROR(CheckLength(spec, seq_len, "sequence length"));
  TrainingFlops t;
  t.convention = convention;
  t.recompute = recompute;
  t.seq_len = seq_len;
  Phase phase{false, false, static_cast<double>(seq_len), 0};
  MFU_RETURN_IF_ERROR(Forward(spec, convention, phase, MlaMode::kNonAbsorbed, t.forward));
  const double forward = t.forward.total();
  const double core = t.forward[C::kAttnScores] + t.forward[C::kAttnContext];
  t.model_per_token = 3 * forward;
  switch (recompute) {
    case Recompute::kNone:
      break;
    case Recompute::kSelective:
      t.recompute_per_token = (modules & kRecomputeCoreAttn) != 0 ? 3 * core : 0;
      if ((modules & kRecomputeMlp) != 0)
        t.recompute_per_token += t.forward[C::kDenseMlp];
      if ((modules & kRecomputeMoe) != 0) {
        t.recompute_per_token += t.forward[C::kRoutedExperts] + t.forward[C::kRouter] + t.forward[C::kSharedExperts];
      } else if ((modules & kRecomputeSharedExperts) != 0) {
        t.recompute_per_token += t.forward[C::kSharedExperts];
      }
      if ((modules & kRecomputeMlaUpProj) != 0)
        t.recompute_per_token += static_cast<double>(spec.num_layers) * MlaUpProjFlopsPerLayer(spec);
      break;
    case Recompute::kSelectiveLiteral:
      t.recompute_per_token = core;
      break;
    case Recompute::kSelectiveOp:
      t.recompute_per_token = OpPolicyRecompute(spec, t.forward);
      break;
    case Recompute::kFull:
      if (flops::RulesFor(convention).basis == Basis::kParams) {
        t.recompute_per_token = forward;  // 8N + 16*l*d*s (llm-foundry, PaLM)
      } else {
        t.recompute_per_token = forward - t.forward[C::kLmHead] - t.forward[C::kMtp] - t.forward[C::kEmbedding];
      }
      break;
  }
  t.hardware_per_token = t.model_per_token + t.recompute_per_token;
  return t;
}

StatusOr<InferenceFlops> ComputePrefillFlops(const ModelSpec& spec, Convention convention, int64_t batch,
                                             int64_t prompt_len, int64_t cached_len, MlaMode mla) {
  MFU_RETURN_IF_ERROR(CheckBatch(batch));
  if (cached_len < 0)
    return InvalidArgumentError("cached length must not be negative");
  MFU_RETURN_IF_ERROR(CheckLength(spec, prompt_len, "prompt length"));
  MFU_RETURN_IF_ERROR(CheckLength(spec, prompt_len + cached_len, "prompt plus cached length"));
  InferenceFlops out;
  out.convention = convention;
  Phase phase{true, false, static_cast<double>(prompt_len), static_cast<double>(cached_len)};
  MFU_RETURN_IF_ERROR(Forward(spec, convention, phase, mla, out.per_token));
  out.tokens = static_cast<double>(batch) * static_cast<double>(prompt_len);
  out.total = out.per_token.total() * out.tokens;
  return out;
}

StatusOr<InferenceFlops> ComputeDecodeFlops(const ModelSpec& spec, Convention convention, int64_t batch,
                                            int64_t context_len, MlaMode mla) {
  MFU_RETURN_IF_ERROR(CheckBatch(batch));
  MFU_RETURN_IF_ERROR(CheckLength(spec, context_len, "context length"));
  if (spec.arch == ArchKind::kDiT)
    return InvalidArgumentError("decode does not apply to a diffusion transformer");
  InferenceFlops out;
  out.convention = convention;
  Phase phase{true, true, 1, static_cast<double>(context_len)};
  MFU_RETURN_IF_ERROR(Forward(spec, convention, phase, mla, out.per_token));
  out.tokens = static_cast<double>(batch);
  out.total = out.per_token.total() * out.tokens;
  return out;
}

StatusOr<int64_t> DefaultDitTokens(const ModelSpec& spec) {
  return DitTokens(spec, 81, spec.dit.vae_stride_hw == 16 ? 704 : 720, 1280);
}

StatusOr<int64_t> DitTokens(const ModelSpec& spec, int64_t frames, int64_t height, int64_t width) {
  if (spec.arch != ArchKind::kDiT)
    return InvalidArgumentError("parameter 'frames'/parameter 'height'/parameter 'width' apply to DiT models only");
  if (frames < 1 || height < 1 || width < 1 || frames > 100000 || height > 100000 || width > 100000) {
    return InvalidArgumentError("video size must be positive and sane, got " + std::to_string(frames) + " frames of " +
                                std::to_string(height) + "x" + std::to_string(width));
  }
  const int64_t t = spec.dit.vae_stride_t;
  const int64_t hw = spec.dit.vae_stride_hw * 2;  // VAE stride x patch (2)
  if ((frames - 1) % t != 0)
    return InvalidArgumentError("parameter 'frames' must be 1 + a multiple of " + std::to_string(t));
  if (height % hw != 0 || width % hw != 0) {
    return InvalidArgumentError("parameter 'height' and parameter 'width' must be multiples of " + std::to_string(hw));
  }
  return (1 + (frames - 1) / t) * (height / hw) * (width / hw);
}

}  // namespace mfu
