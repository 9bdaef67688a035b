// Hugging Face config.json -> ModelSpec, one small reader per family. The keys
// and quirks of each family are documented in docs/models.md (from the
// families' modeling code; see architectures notes cited there).

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/strings.h"
#include "mfu/model.h"
#include "model/json_fields.h"

namespace mfu {
namespace {

using model::JsonFields;

using FamilyReader = Status (*)(const JsonFields&, ModelSpec&);

// Keys shared by the Llama-like families.
struct LlamaDefaults {
  bool tied = false;
  bool qkv_bias = false;  // Qwen2: always-on q/k/v bias without a flag
};

// Sizes the per-layer table. The layer count is checked before allocating:
// a config claiming 10^12 layers is an error, not an allocation.
Status AssignLayers(const JsonFields& f, ModelSpec& s, std::string_view key) {
  constexpr int64_t kMaxLayers = 100000;
  if (s.num_layers > kMaxLayers) {
    return f.Error(key,
                   "is absurd: " + std::to_string(s.num_layers) + " layers (limit " + std::to_string(kMaxLayers) + ")");
  }
  s.layers.assign(static_cast<size_t>(s.num_layers), LayerSpec{});
  return Status::Ok();
}

Status ReadLlamaLike(const JsonFields& f, ModelSpec& s, LlamaDefaults defaults) {
  MFU_ASSIGN_OR_RETURN(s.hidden, f.PositiveInt("hidden_size"));
  MFU_ASSIGN_OR_RETURN(s.num_layers, f.PositiveInt("num_hidden_layers"));
  MFU_ASSIGN_OR_RETURN(s.heads, f.PositiveInt("num_attention_heads"));
  MFU_ASSIGN_OR_RETURN(s.vocab, f.PositiveInt("vocab_size"));
  MFU_ASSIGN_OR_RETURN(s.ffn, f.PositiveInt("intermediate_size"));
  MFU_ASSIGN_OR_RETURN(auto kv, f.OptionalInt("num_key_value_heads", 1));
  s.kv_heads = kv.value_or(s.heads);
  MFU_ASSIGN_OR_RETURN(auto head_dim, f.OptionalInt("head_dim", 1));
  if (head_dim) {
    s.head_dim = *head_dim;
  } else {
    if (s.hidden % s.heads != 0) {
      return f.Error("num_attention_heads", "(" + std::to_string(s.heads) + ") does not divide hidden_size (" +
                                                std::to_string(s.hidden) + ") and no head_dim is given");
    }
    s.head_dim = s.hidden / s.heads;
  }
  MFU_ASSIGN_OR_RETURN(s.tied_embeddings, f.Bool("tie_word_embeddings", defaults.tied));
  MFU_ASSIGN_OR_RETURN(bool attention_bias, f.Bool("attention_bias", false));
  s.qkv_bias = attention_bias || defaults.qkv_bias;
  s.o_bias = attention_bias;
  MFU_ASSIGN_OR_RETURN(s.mlp_bias, f.Bool("mlp_bias", false));
  MFU_ASSIGN_OR_RETURN(auto max_pos, f.OptionalInt("max_position_embeddings", 1));
  s.max_position_embeddings = max_pos.value_or(0);
  MFU_RETURN_IF_ERROR(AssignLayers(f, s, "num_hidden_layers"));
  return Status::Ok();
}

// A sliding window on every layer (Mistral v0.1, Phi-3); MLC presets rename
// the key to sliding_window_size.
Status ReadUniformWindow(const JsonFields& f, ModelSpec& s) {
  MFU_ASSIGN_OR_RETURN(auto window, f.OptionalInt("sliding_window", 1));
  if (!window) {
    MFU_ASSIGN_OR_RETURN(window, f.OptionalInt("sliding_window_size", 1));
  }
  if (window) {
    for (auto& layer : s.layers)
      layer.window = *window;
  }
  return Status::Ok();
}

// Qwen2/Qwen3: sliding attention only when use_sliding_window is true, on
// layers >= max_window_layers.
Status ReadQwenWindow(const JsonFields& f, ModelSpec& s) {
  MFU_ASSIGN_OR_RETURN(bool use_window, f.Bool("use_sliding_window", false));
  if (!use_window)
    return Status::Ok();
  MFU_ASSIGN_OR_RETURN(int64_t window, f.PositiveInt("sliding_window"));
  MFU_ASSIGN_OR_RETURN(auto max_window_layers, f.OptionalInt("max_window_layers", 0));
  for (size_t i = 0; i < s.layers.size(); ++i) {
    if (static_cast<int64_t>(i) >= max_window_layers.value_or(0))
      s.layers[i].window = window;
  }
  return Status::Ok();
}

// `layer_types` ("sliding_attention" / "full_attention"), when present, is the
// authoritative per-layer pattern (gpt-oss, newer Gemma configs).
StatusOr<bool> ReadLayerTypes(const JsonFields& f, const nlohmann::json& object, ModelSpec& s) {
  auto it = object.find("layer_types");
  if (it == object.end() || it->is_null())
    return false;
  if (!it->is_array() || it->size() != s.layers.size()) {
    return f.Error("layer_types", "must be a list of " + std::to_string(s.layers.size()) + " layer types");
  }
  MFU_ASSIGN_OR_RETURN(int64_t window, f.PositiveInt("sliding_window"));
  for (size_t i = 0; i < s.layers.size(); ++i) {
    const auto& type = (*it)[i];
    if (!type.is_string())
      return f.Error("layer_types", "entries must be strings");
    const std::string& name = type.get_ref<const std::string&>();
    if (name == "sliding_attention") {
      s.layers[i].window = window;
    } else if (name != "full_attention") {
      return f.Error("layer_types", "has unknown layer type '" + name + "'");
    }
  }
  return true;
}

Status ReadMoeCommon(const JsonFields& f, ModelSpec& s, const char* experts_key, const char* ffn_key) {
  MFU_ASSIGN_OR_RETURN(s.moe.num_experts, f.PositiveInt(experts_key));
  MFU_ASSIGN_OR_RETURN(s.moe.top_k, f.PositiveInt("num_experts_per_tok"));
  MFU_ASSIGN_OR_RETURN(s.moe.expert_ffn, f.PositiveInt(ffn_key));
  if (s.moe.top_k > s.moe.num_experts) {
    return f.Error("num_experts_per_tok", "(" + std::to_string(s.moe.top_k) + ") exceeds the number of experts (" +
                                              std::to_string(s.moe.num_experts) + ")");
  }
  return Status::Ok();
}

Status ReadLlama(const JsonFields& f, ModelSpec& s) {
  return ReadLlamaLike(f, s, {});
}

Status ReadMistral(const JsonFields& f, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadLlamaLike(f, s, {}));
  return ReadUniformWindow(f, s);
}

Status ReadMixtral(const JsonFields& f, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadLlamaLike(f, s, {}));
  MFU_RETURN_IF_ERROR(ReadMoeCommon(f, s, "num_local_experts", "intermediate_size"));
  for (auto& layer : s.layers)
    layer.moe = true;
  return ReadUniformWindow(f, s);
}

Status ReadPhi3(const JsonFields& f, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadLlamaLike(f, s, {}));
  return ReadUniformWindow(f, s);
}

Status ReadQwen2(const JsonFields& f, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadLlamaLike(f, s, {.tied = false, .qkv_bias = true}));
  s.o_bias = false;
  return ReadQwenWindow(f, s);
}

Status ReadQwen3(const JsonFields& f, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadLlamaLike(f, s, {}));
  s.qk_norm = true;
  return ReadQwenWindow(f, s);
}

// Qwen2-MoE/Qwen3-MoE: layer i is MoE iff num_experts > 0, (i+1) %
// decoder_sparse_step == 0 and i is not in mlp_only_layers.
Status ReadQwenMoeLayers(const JsonFields& f, const nlohmann::json& object, ModelSpec& s) {
  MFU_ASSIGN_OR_RETURN(auto step, f.OptionalInt("decoder_sparse_step", 1));
  std::vector<int64_t> mlp_only;
  auto it = object.find("mlp_only_layers");
  if (it != object.end() && !it->is_null()) {
    if (!it->is_array())
      return f.Error("mlp_only_layers", "must be a list of layer indices");
    for (const auto& v : *it) {
      if (!v.is_number_integer())
        return f.Error("mlp_only_layers", "must be a list of layer indices");
      mlp_only.push_back(v.get<int64_t>());
    }
  }
  for (size_t i = 0; i < s.layers.size(); ++i) {
    auto index = static_cast<int64_t>(i);
    bool listed = std::find(mlp_only.begin(), mlp_only.end(), index) != mlp_only.end();
    s.layers[i].moe = (index + 1) % step.value_or(1) == 0 && !listed;
  }
  return Status::Ok();
}

Status ReadQwen2Moe(const JsonFields& f, const nlohmann::json& object, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadQwen2(f, s));
  MFU_RETURN_IF_ERROR(ReadMoeCommon(f, s, "num_experts", "moe_intermediate_size"));
  MFU_ASSIGN_OR_RETURN(auto shared, f.OptionalInt("shared_expert_intermediate_size", 0));
  s.moe.shared_ffn = shared.value_or(0);
  s.moe.shared_expert_gate = s.moe.shared_ffn > 0;
  return ReadQwenMoeLayers(f, object, s);
}

Status ReadQwen3Moe(const JsonFields& f, const nlohmann::json& object, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadQwen3(f, s));
  MFU_RETURN_IF_ERROR(ReadMoeCommon(f, s, "num_experts", "moe_intermediate_size"));
  return ReadQwenMoeLayers(f, object, s);
}

// DeepSeek's group-limited routing: n_group groups of experts, a token's
// top-k drawn from its topk_group best groups (node-limited routing when a
// group is a node's experts, DeepSeek-V3 section 2.1.2).
Status ReadRoutingGroups(const JsonFields& f, ModelSpec& s) {
  MFU_ASSIGN_OR_RETURN(auto groups, f.OptionalInt("n_group", 1));
  MFU_ASSIGN_OR_RETURN(auto group_top_k, f.OptionalInt("topk_group", 1));
  s.moe.groups = groups.value_or(1);
  s.moe.group_top_k = group_top_k.value_or(s.moe.groups);
  if (s.moe.num_experts % s.moe.groups != 0)
    return f.Error("n_group", "must divide n_routed_experts (" + std::to_string(s.moe.num_experts) + ")");
  if (s.moe.group_top_k > s.moe.groups)
    return f.Error("topk_group", "exceeds n_group (" + std::to_string(s.moe.groups) + ")");
  return Status::Ok();
}

Status ReadDeepSeek(const JsonFields& f, ModelSpec& s) {
  MFU_ASSIGN_OR_RETURN(s.hidden, f.PositiveInt("hidden_size"));
  MFU_ASSIGN_OR_RETURN(s.num_layers, f.PositiveInt("num_hidden_layers"));
  MFU_ASSIGN_OR_RETURN(s.heads, f.PositiveInt("num_attention_heads"));
  MFU_ASSIGN_OR_RETURN(s.vocab, f.PositiveInt("vocab_size"));
  MFU_ASSIGN_OR_RETURN(s.ffn, f.PositiveInt("intermediate_size"));
  s.kv_heads = s.heads;  // num_key_value_heads is meaningless for MLA
  s.attention = AttentionKind::kMla;
  MFU_ASSIGN_OR_RETURN(auto q_lora, f.OptionalInt("q_lora_rank", 1));
  s.mla.q_lora_rank = q_lora.value_or(0);
  MFU_ASSIGN_OR_RETURN(s.mla.kv_lora_rank, f.PositiveInt("kv_lora_rank"));
  MFU_ASSIGN_OR_RETURN(s.mla.qk_nope_head_dim, f.PositiveInt("qk_nope_head_dim"));
  MFU_ASSIGN_OR_RETURN(s.mla.qk_rope_head_dim, f.PositiveInt("qk_rope_head_dim"));
  MFU_ASSIGN_OR_RETURN(s.mla.v_head_dim, f.PositiveInt("v_head_dim"));
  s.head_dim = s.mla.qk_nope_head_dim + s.mla.qk_rope_head_dim;
  MFU_ASSIGN_OR_RETURN(s.tied_embeddings, f.Bool("tie_word_embeddings", false));
  MFU_ASSIGN_OR_RETURN(bool attention_bias, f.Bool("attention_bias", false));
  if (attention_bias)
    return f.Error("attention_bias", "true is not supported for MLA models");
  MFU_ASSIGN_OR_RETURN(auto max_pos, f.OptionalInt("max_position_embeddings", 1));
  s.max_position_embeddings = max_pos.value_or(0);
  MFU_RETURN_IF_ERROR(AssignLayers(f, s, "num_hidden_layers"));

  MFU_ASSIGN_OR_RETURN(auto routed, f.OptionalInt("n_routed_experts", 0));
  if (routed.value_or(0) > 0) {
    MFU_RETURN_IF_ERROR(ReadMoeCommon(f, s, "n_routed_experts", "moe_intermediate_size"));
    MFU_ASSIGN_OR_RETURN(auto shared, f.OptionalInt("n_shared_experts", 0));
    s.moe.shared_ffn = shared.value_or(0) * s.moe.expert_ffn;
    MFU_ASSIGN_OR_RETURN(auto first_dense, f.OptionalInt("first_k_dense_replace", 0));
    MFU_ASSIGN_OR_RETURN(auto freq, f.OptionalInt("moe_layer_freq", 1));
    for (size_t i = 0; i < s.layers.size(); ++i) {
      auto index = static_cast<int64_t>(i);
      s.layers[i].moe = index >= first_dense.value_or(0) && index % freq.value_or(1) == 0;
    }
    MFU_ASSIGN_OR_RETURN(auto method, f.OptionalString("topk_method"));
    s.moe.score_correction_bias = method.value_or("") == "noaux_tc";
    MFU_RETURN_IF_ERROR(ReadRoutingGroups(f, s));
  }
  MFU_ASSIGN_OR_RETURN(auto mtp, f.OptionalInt("num_nextn_predict_layers", 0));
  s.mtp_layers = mtp.value_or(0);
  return Status::Ok();
}

// GLM-4.5 (Glm4MoeForCausalLM): q/k/v biases without an o bias, optional
// per-head q/k RMSNorm, DeepSeek-style dense-then-MoE layers with one shared
// expert and a score-correction bias, MTP layers counted apart.
Status ReadGlm4Moe(const JsonFields& f, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadLlamaLike(f, s, {}));
  s.o_bias = false;
  MFU_ASSIGN_OR_RETURN(s.qk_norm, f.Bool("use_qk_norm", false));
  MFU_RETURN_IF_ERROR(ReadMoeCommon(f, s, "n_routed_experts", "moe_intermediate_size"));
  MFU_ASSIGN_OR_RETURN(auto shared, f.OptionalInt("n_shared_experts", 0));
  s.moe.shared_ffn = shared.value_or(0) * s.moe.expert_ffn;
  s.moe.score_correction_bias = true;  // Glm4MoeTopkRouter.e_score_correction_bias
  MFU_ASSIGN_OR_RETURN(auto first_dense, f.OptionalInt("first_k_dense_replace", 0));
  for (size_t i = 0; i < s.layers.size(); ++i)
    s.layers[i].moe = static_cast<int64_t>(i) >= first_dense.value_or(0);
  MFU_ASSIGN_OR_RETURN(auto mtp, f.OptionalInt("num_nextn_predict_layers", 0));
  s.mtp_layers = mtp.value_or(0);
  return Status::Ok();
}

// Llama 4 text model (Llama4TextConfig). MoE layers are `moe_layers`, else
// every `interleave_moe_layer_step`-th; each has one shared expert of the
// routed size; dense layers use intermediate_size_mlp. RoPE layers use
// chunked attention (attention_chunk_size), NoPE layers full attention:
// mfu has no chunked attention and models it as a sliding window of the
// chunk size (exact up to one chunk of context, an upper bound beyond).
// use_qk_norm is a weightless L2 norm: no parameters.
Status ReadLlama4(const JsonFields& f, const nlohmann::json& object, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadLlamaLike(f, s, {}));
  MFU_ASSIGN_OR_RETURN(s.ffn, f.PositiveInt("intermediate_size_mlp"));
  MFU_RETURN_IF_ERROR(ReadMoeCommon(f, s, "num_local_experts", "intermediate_size"));
  s.moe.shared_ffn = s.moe.expert_ffn;
  const auto n = static_cast<int64_t>(s.layers.size());
  auto moe_layers = object.find("moe_layers");
  if (moe_layers != object.end() && !moe_layers->is_null()) {
    if (!moe_layers->is_array())
      return f.Error("moe_layers", "must be a list of layer indices");
    for (const auto& v : *moe_layers) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= n)
        return f.Error("moe_layers", "must hold layer indices below " + std::to_string(n));
      s.layers[static_cast<size_t>(v.get<int64_t>())].moe = true;
    }
  } else {
    MFU_ASSIGN_OR_RETURN(auto step, f.OptionalInt("interleave_moe_layer_step", 1));
    for (int64_t i = step.value_or(1) - 1; i < n; i += step.value_or(1))
      s.layers[static_cast<size_t>(i)].moe = true;
  }
  MFU_ASSIGN_OR_RETURN(auto chunk, f.OptionalInt("attention_chunk_size", 1));
  if (!chunk)
    return Status::Ok();
  // no_rope_layers[i] != 0: layer i uses RoPE and chunked attention; the
  // default (missing or empty) is NoPE on every no_rope_layer_interval-th.
  MFU_ASSIGN_OR_RETURN(auto interval, f.OptionalInt("no_rope_layer_interval", 1));
  auto rope = object.find("no_rope_layers");
  bool listed = rope != object.end() && rope->is_array() && !rope->empty();
  if (listed && rope->size() != s.layers.size())
    return f.Error("no_rope_layers", "must list " + std::to_string(n) + " layers");
  for (int64_t i = 0; i < n; ++i) {
    const nlohmann::json* flag = listed ? &(*rope)[static_cast<size_t>(i)] : nullptr;
    bool chunked =
        flag != nullptr ? !flag->is_number_integer() || flag->get<int64_t>() != 0 : (i + 1) % interval.value_or(4) != 0;
    if (chunked)
      s.layers[static_cast<size_t>(i)].window = *chunk;
  }
  s.notes.push_back("llama4: chunked attention (" + std::to_string(*chunk) +
                    "-token chunks) modelled as a sliding window of the chunk size");
  return Status::Ok();
}

Status ReadGemmaCommon(const JsonFields& f, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadLlamaLike(f, s, {.tied = true}));
  s.norms_per_layer = 4;  // input, post-attention, pre- and post-feedforward
  return Status::Ok();
}

Status ReadGemma(const JsonFields& f, ModelSpec& s) {
  return ReadLlamaLike(f, s, {.tied = true});
}

// Gemma 2: even layers slide (HF Gemma2: not bool(layer_idx % 2)).
Status ReadGemma2(const JsonFields& f, const nlohmann::json& object, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadGemmaCommon(f, s));
  MFU_ASSIGN_OR_RETURN(bool typed, ReadLayerTypes(f, object, s));
  if (typed)
    return Status::Ok();
  MFU_ASSIGN_OR_RETURN(int64_t window, f.PositiveInt("sliding_window"));
  for (size_t i = 0; i < s.layers.size(); i += 2)
    s.layers[i].window = window;
  return Status::Ok();
}

// Gemma 3: global attention on layers with (i+1) % sliding_window_pattern == 0.
Status ReadGemma3(const JsonFields& f, const nlohmann::json& object, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadGemmaCommon(f, s));
  s.qk_norm = true;
  MFU_ASSIGN_OR_RETURN(bool typed, ReadLayerTypes(f, object, s));
  if (typed)
    return Status::Ok();
  MFU_ASSIGN_OR_RETURN(int64_t window, f.PositiveInt("sliding_window"));
  MFU_ASSIGN_OR_RETURN(auto pattern, f.OptionalInt("sliding_window_pattern", 1));
  for (size_t i = 0; i < s.layers.size(); ++i) {
    if ((static_cast<int64_t>(i) + 1) % pattern.value_or(6) != 0)
      s.layers[i].window = window;
  }
  return Status::Ok();
}

Status ReadGptOss(const JsonFields& f, const nlohmann::json& object, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadLlamaLike(f, s, {}));
  MFU_RETURN_IF_ERROR(ReadMoeCommon(f, s, "num_local_experts", "intermediate_size"));
  for (auto& layer : s.layers)
    layer.moe = true;
  s.attention_sinks = true;
  s.moe.router_bias = true;
  s.moe.expert_bias = true;
  MFU_ASSIGN_OR_RETURN(bool typed, ReadLayerTypes(f, object, s));
  if (!typed) {  // older configs: alternate sliding / full, sliding first
    MFU_ASSIGN_OR_RETURN(int64_t window, f.PositiveInt("sliding_window"));
    for (size_t i = 0; i < s.layers.size(); i += 2)
      s.layers[i].window = window;
  }
  return Status::Ok();
}

Status ReadGpt2(const JsonFields& f, ModelSpec& s) {
  MFU_ASSIGN_OR_RETURN(s.hidden, f.PositiveInt("n_embd"));
  MFU_ASSIGN_OR_RETURN(s.num_layers, f.PositiveInt("n_layer"));
  MFU_ASSIGN_OR_RETURN(s.heads, f.PositiveInt("n_head"));
  MFU_ASSIGN_OR_RETURN(s.vocab, f.PositiveInt("vocab_size"));
  MFU_ASSIGN_OR_RETURN(s.position_embeddings, f.PositiveInt("n_positions"));
  MFU_ASSIGN_OR_RETURN(auto inner, f.OptionalInt("n_inner", 1));
  s.ffn = inner.value_or(4 * s.hidden);
  if (s.hidden % s.heads != 0)
    return f.Error("n_head", "does not divide n_embd");
  s.kv_heads = s.heads;
  s.head_dim = s.hidden / s.heads;
  s.gated_mlp = false;
  s.tied_embeddings = true;
  s.norm = NormKind::kLayerNorm;
  s.qkv_bias = s.o_bias = s.mlp_bias = true;
  s.max_position_embeddings = s.position_embeddings;
  MFU_RETURN_IF_ERROR(AssignLayers(f, s, "n_layer"));
  return Status::Ok();
}

Status ReadGptNeox(const JsonFields& f, ModelSpec& s) {
  MFU_RETURN_IF_ERROR(ReadLlamaLike(f, s, {}));
  if (s.head_dim * s.heads != s.hidden)
    return f.Error("num_attention_heads", "does not divide hidden_size");
  s.gated_mlp = false;
  s.norm = NormKind::kLayerNorm;
  s.qkv_bias = s.o_bias = s.mlp_bias = true;
  MFU_ASSIGN_OR_RETURN(s.parallel_residual, f.Bool("use_parallel_residual", true));
  return Status::Ok();
}

// Wan2.x DiT, native WanModel keys or diffusers WanTransformer3DModel keys.
Status ReadWan(const JsonFields& f, ModelSpec& s) {
  s.arch = ArchKind::kDiT;
  s.gated_mlp = false;
  s.norm = NormKind::kLayerNorm;
  s.qkv_bias = s.o_bias = s.mlp_bias = true;
  s.qk_norm = true;
  s.tied_embeddings = false;          // a DiT has no LM head to tie
  if (f.Has("attention_head_dim")) {  // diffusers
    MFU_ASSIGN_OR_RETURN(s.heads, f.PositiveInt("num_attention_heads"));
    MFU_ASSIGN_OR_RETURN(s.head_dim, f.PositiveInt("attention_head_dim"));
    s.hidden = s.heads * s.head_dim;
    MFU_ASSIGN_OR_RETURN(s.dit.in_dim, f.PositiveInt("in_channels"));
    MFU_ASSIGN_OR_RETURN(s.dit.out_dim, f.PositiveInt("out_channels"));
    MFU_ASSIGN_OR_RETURN(auto text_dim, f.OptionalInt("text_dim", 1));
    s.dit.text_dim = text_dim.value_or(4096);
    s.dit.image_conditioning = f.Has("image_dim");
  } else {
    MFU_ASSIGN_OR_RETURN(s.hidden, f.PositiveInt("dim"));
    MFU_ASSIGN_OR_RETURN(s.heads, f.PositiveInt("num_heads"));
    if (s.hidden % s.heads != 0)
      return f.Error("num_heads", "does not divide dim");
    s.head_dim = s.hidden / s.heads;
    MFU_ASSIGN_OR_RETURN(s.dit.in_dim, f.PositiveInt("in_dim"));
    MFU_ASSIGN_OR_RETURN(s.dit.out_dim, f.PositiveInt("out_dim"));
    MFU_ASSIGN_OR_RETURN(auto type, f.OptionalString("model_type"));
    std::string t = type.value_or("t2v");
    if (t != "t2v" && t != "i2v" && t != "ti2v" && t != "flf2v") {
      return f.Error("model_type", "'" + t + "' is not a supported Wan variant (t2v, i2v, ti2v, flf2v)");
    }
    s.dit.image_conditioning = t == "i2v" || t == "flf2v";
    if (t == "flf2v")
      s.dit.image_len = 2 * 257;  // first and last frame
  }
  MFU_ASSIGN_OR_RETURN(s.num_layers, f.PositiveInt("num_layers"));
  MFU_ASSIGN_OR_RETURN(s.ffn, f.PositiveInt("ffn_dim"));
  MFU_ASSIGN_OR_RETURN(auto freq, f.OptionalInt("freq_dim", 1));
  s.dit.freq_dim = freq.value_or(256);
  MFU_ASSIGN_OR_RETURN(auto text_len, f.OptionalInt("text_len", 1));
  s.dit.text_len = text_len.value_or(512);
  // The Wan2.2 VAE (48 latent channels) downsamples 16x spatially, Wan2.1's 8x.
  s.dit.vae_stride_hw = s.dit.in_dim == 48 ? 16 : 8;
  s.kv_heads = s.heads;
  MFU_RETURN_IF_ERROR(AssignLayers(f, s, "num_layers"));
  s.notes.push_back("wan: patch (1,2,2), umT5 text_dim and VAE stride are fixed by the Wan code, not the config");
  return Status::Ok();
}

struct Family {
  const char* model_type;
  const char* canonical;  // family name reported
  Status (*read)(const JsonFields&, const nlohmann::json&, ModelSpec&);
};

template <Status (*F)(const JsonFields&, ModelSpec&)>
Status Simple(const JsonFields& f, const nlohmann::json&, ModelSpec& s) {
  return F(f, s);
}

constexpr Family kFamilies[] = {
    {"llama", "llama", Simple<ReadLlama>},
    {"mistral", "mistral", Simple<ReadMistral>},
    {"mixtral", "mixtral", Simple<ReadMixtral>},
    {"qwen2", "qwen2", Simple<ReadQwen2>},
    {"qwen2_moe", "qwen2_moe", ReadQwen2Moe},
    {"qwen3", "qwen3", Simple<ReadQwen3>},
    {"qwen3_moe", "qwen3_moe", ReadQwen3Moe},
    {"deepseek_v2", "deepseek_v2", Simple<ReadDeepSeek>},
    {"deepseek_v3", "deepseek_v3", Simple<ReadDeepSeek>},
    {"kimi_k2", "kimi_k2", Simple<ReadDeepSeek>},  // DeepseekV3ForCausalLM weights
    {"glm4_moe", "glm4_moe", Simple<ReadGlm4Moe>},
    {"llama4_text", "llama4", ReadLlama4},
    {"gemma", "gemma", Simple<ReadGemma>},
    {"gemma2", "gemma2", ReadGemma2},
    {"gemma3", "gemma3", ReadGemma3},
    {"gemma3_text", "gemma3", ReadGemma3},
    {"phi3", "phi3", Simple<ReadPhi3>},
    {"gpt2", "gpt2", Simple<ReadGpt2>},
    {"gpt_neox", "gpt_neox", Simple<ReadGptNeox>},
    {"gpt_oss", "gpt_oss", ReadGptOss},
};

std::string SupportedFamilies() {
  std::vector<std::string> names;
  for (const auto& family : kFamilies)
    names.emplace_back(family.model_type);
  names.emplace_back("WanModel (wan t2v/i2v/ti2v)");
  return base::Join(names, ", ");
}

bool LooksLikeWan(const nlohmann::json& object) {
  auto cls = object.find("_class_name");
  if (cls != object.end() && cls->is_string()) {
    const auto& name = cls->get_ref<const std::string&>();
    if (name == "WanModel" || name == "WanTransformer3DModel")
      return true;
  }
  return false;
}

// The training dropout: the largest of the hidden/residual and attention
// dropout keys the families use (Llama/Qwen `attention_dropout`, GPT-2
// `resid_pdrop`/`attn_pdrop`, BERT-style `*_dropout_prob`). A probability of
// 1 would drop everything and is refused.
Status ReadDropout(const JsonFields& f, ModelSpec& s) {
  for (const char* key : {"hidden_dropout", "attention_dropout", "resid_pdrop", "attn_pdrop", "hidden_dropout_prob",
                          "attention_probs_dropout_prob"}) {
    MFU_ASSIGN_OR_RETURN(std::optional<double> p, f.OptionalProbability(key));
    if (p.has_value()) {
      if (*p >= 1)
        return f.Error(key, "must be below 1 (a dropout of 1 drops every activation)");
      s.dropout = std::max(s.dropout, *p);
    }
  }
  return Status::Ok();
}

void AddNotes(const nlohmann::json& object, ModelSpec& s) {
  auto rope = object.find("rope_scaling");
  if (rope != object.end() && rope->is_object()) {
    std::string type = "?";
    for (const char* key : {"rope_type", "type"}) {
      auto it = rope->find(key);
      if (it != rope->end() && it->is_string()) {
        type = it->get<std::string>();
        break;
      }
    }
    s.notes.push_back("rope_scaling " + type + ": no FLOPs effect");
  }
  if (object.contains("quantization_config")) {
    s.notes.push_back("quantization_config present: counts are in parameters, not bytes");
  }
}

// Finds what a failed parse choked on without the library's text: the last
// key seen and the byte where parsing stopped. nlohmann reports a number
// beyond double range (out_of_range.406) through parse_error too.
class FailureLocator : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::json::exception& e) override {
    position_ = position;
    number_overflow_ = e.id == 406;
    return false;
  }
  std::string Describe() const {
    std::string at = "at byte " + std::to_string(position_);
    if (key_.empty())
      return (number_overflow_ ? "number out of range " : "malformed JSON ") + at;
    return "key '" + key_ + "': " + (number_overflow_ ? "number out of range " : "malformed JSON ") + at;
  }

 private:
  std::string key_;
  std::size_t position_ = 0;
  bool number_overflow_ = false;
};

std::string DescribeJsonFailure(std::string_view json_text) {
  FailureLocator locator;
  try {
    nlohmann::json::sax_parse(json_text.begin(), json_text.end(), &locator);
  } catch (const nlohmann::json::exception&) {
    return "malformed JSON";
  }
  return locator.Describe();
}

// Reads the config; every failure is a data error (kParse): the file, not the
// command line, is wrong.
StatusOr<ModelSpec> ParseModelConfigImpl(std::string_view json_text, std::string_view origin) {
  std::string where(origin);
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(json_text.begin(), json_text.end());
  } catch (const nlohmann::json::parse_error& e) {
    return ParseError(where + ": malformed JSON at byte " + std::to_string(e.byte));
  } catch (const nlohmann::json::exception&) {
    return ParseError(where + ": " + DescribeJsonFailure(json_text));
  }
  if (!root.is_object())
    return ParseError(where + ": top level must be a JSON object");
  const nlohmann::json* object = &root;
  auto text_config = root.find("text_config");
  bool nested = text_config != root.end() && text_config->is_object();
  if (nested)
    object = &*text_config;
  std::string field_origin = nested ? where + ": text_config" : where;
  JsonFields fields(*object, field_origin);

  ModelSpec spec;
  spec.source = where;
  Status status;
  if (LooksLikeWan(*object)) {
    spec.family = "wan";
    status = ReadWan(fields, spec);
  } else {
    auto model_type = fields.OptionalString("model_type");
    if (!model_type.ok())
      return model_type.status();
    if (!model_type->has_value()) {
      if (nested) {  // multimodal wrappers keep model_type at the top level
        JsonFields top(root, where);
        model_type = top.OptionalString("model_type");
        if (!model_type.ok())
          return model_type.status();
      }
      if (!model_type->has_value()) {
        return InvalidArgumentError(where +
                                    ": key 'model_type' is missing; supported families: " + SupportedFamilies());
      }
    }
    const std::string& type = **model_type;
    const Family* family = nullptr;
    for (const auto& candidate : kFamilies) {
      if (type == candidate.model_type)
        family = &candidate;
    }
    if (!family) {
      return InvalidArgumentError(where + ": key 'model_type': unsupported model type '" + type +
                                  "'; supported families: " + SupportedFamilies());
    }
    spec.family = family->canonical;
    status = family->read(fields, *object, spec);
  }
  MFU_RETURN_IF_ERROR(status);
  MFU_RETURN_IF_ERROR(ReadDropout(fields, spec));
  auto name = root.find("_name_or_path");
  if (name != root.end() && name->is_string())
    spec.name = name->get<std::string>();
  AddNotes(*object, spec);
  MFU_RETURN_IF_ERROR(ValidateModel(spec, field_origin));
  return spec;
}

}  // namespace

StatusOr<ModelSpec> ParseModelConfig(std::string_view json_text, std::string_view origin) {
  StatusOr<ModelSpec> spec = InternalError("unreachable");
  try {
    spec = ParseModelConfigImpl(json_text, origin);
  } catch (const nlohmann::json::exception&) {
    // A value of an unexpected type in a setting read without JsonFields:
    // still a data error, never a crash, and never the library's own text.
    return ParseError(std::string(origin) + ": a key holds a value of an unexpected type");
  }
  if (!spec.ok() && spec.status().code() == StatusCode::kInvalidArgument) {
    return ParseError(spec.status().message());
  }
  return spec;
}

}  // namespace mfu
