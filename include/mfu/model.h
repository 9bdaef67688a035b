#pragma once

// The architecture description every mfu computation starts from, read from a
// Hugging Face config.json, a shipped preset, or generic flags.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/status.h"

namespace mfu {

enum class ArchKind { kDecoder, kDiT };
enum class AttentionKind { kStandard, kMla };
enum class NormKind { kRmsNorm, kLayerNorm };

// Multi-head latent attention (DeepSeek-V2/V3). `q_lora_rank` 0 means a plain
// q_proj (DeepSeek-V2-Lite).
struct MlaSpec {
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

// Mixture of experts. Layers flagged `moe` in ModelSpec::layers use it.
struct MoeSpec {
  int64_t num_experts = 0;  // routed experts, 0 for dense models
  int64_t top_k = 0;
  int64_t expert_ffn = 0;              // intermediate size of one routed expert
  int64_t shared_ffn = 0;              // total intermediate size of the shared expert(s)
  bool shared_expert_gate = false;     // Qwen2-MoE: Linear(h, 1) on the shared expert
  bool router_bias = false;            // gpt-oss
  bool expert_bias = false;            // gpt-oss: biases in each expert
  bool score_correction_bias = false;  // DeepSeek-V3 noaux_tc: E params per MoE layer
  // Group-limited routing (DeepSeek n_group / topk_group): experts form
  // `groups` equal groups and a token's top-k come from its best
  // `group_top_k` groups. groups 1: no limit.
  int64_t groups = 1;
  int64_t group_top_k = 1;
};

// One decoder layer. `window` is the sliding-attention window in tokens; 0
// means full (global) attention.
struct LayerSpec {
  bool moe = false;
  int64_t window = 0;
};

// Diffusion-transformer specifics (Wan2.x). Cross-attention attends to
// `text_len` text tokens of width `text_dim`; image-to-video adds `image_len`
// CLIP tokens.
struct DitSpec {
  int64_t in_dim = 0;
  int64_t out_dim = 0;
  int64_t freq_dim = 256;
  int64_t text_len = 512;
  int64_t text_dim = 4096;
  int64_t patch_volume = 4;  // patch (1, 2, 2)
  int64_t vae_stride_t = 4;
  int64_t vae_stride_hw = 8;
  bool image_conditioning = false;  // i2v / flf2v: CLIP image cross-attention
  int64_t image_len = 257;
  int64_t image_dim = 1280;
};

// A transformer as mfu sees it. Every count is exact: values come from the
// config, never from defaults, except where the family's code hard-codes them
// (noted in `notes`).
struct ModelSpec {
  std::string name;    // preset name or file stem
  std::string family;  // HF model_type, "generic" or "wan"
  std::string source;  // where it was read from
  ArchKind arch = ArchKind::kDecoder;

  int64_t hidden = 0;
  int64_t num_layers = 0;
  int64_t vocab = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;  // query/key head dim (standard attention)
  AttentionKind attention = AttentionKind::kStandard;
  MlaSpec mla;

  int64_t ffn = 0;  // dense MLP intermediate size
  bool gated_mlp = true;
  MoeSpec moe;
  std::vector<LayerSpec> layers;  // size num_layers

  bool tied_embeddings = false;
  int64_t position_embeddings = 0;  // rows of a learned position table, 0 if none
  NormKind norm = NormKind::kRmsNorm;
  int norms_per_layer = 2;
  bool qk_norm = false;  // per-head q/k RMSNorm over head_dim
  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  bool attention_sinks = false;  // gpt-oss: one learned logit per head
  bool parallel_residual = false;
  int64_t mtp_layers = 0;               // DeepSeek-V3 multi-token-prediction modules
  int64_t max_position_embeddings = 0;  // 0 when unknown
  // Dropout probability in training (the hidden and attention dropouts; the
  // larger of the config's keys): > 0 keeps dropout masks as activations.
  // 0 for modern LLM configs; 0.1 for GPT-2 and Megatron-LM's GPT default.
  double dropout = 0;
  DitSpec dit;

  // Settings echoed in reports that have no FLOPs effect (rope scaling...).
  std::vector<std::string> notes;

  bool is_moe() const { return moe.num_experts > 0; }
  int64_t num_moe_layers() const;
  // Query/key and value head dims as used by the attention core.
  int64_t qk_head_dim() const;
  int64_t v_dim() const;
};

// Parameter counts. `total` is what Hugging Face reports for the checkpoint
// (MTP modules excluded, a tied LM head counted once). `active` is per token:
// top-k routed experts plus everything dense, including the input embedding.
struct ParamCounts {
  double total = 0;
  double active = 0;
  double embedding = 0;           // input token embedding table
  double position_embedding = 0;  // learned position table
  double lm_head = 0;             // untied output projection; 0 when tied
  double non_embedding = 0;       // total - embedding - position_embedding
  // Active without input/position embeddings: what vendors call "activated
  // parameters" (DeepSeek-V3's 37B, gpt-oss-120b's 5.1B).
  double active_non_embedding = 0;
  double attention = 0;  // all layers, incl. biases and q/k norms
  double dense_mlp = 0;
  double routed_experts = 0;  // all routed experts, all layers
  double shared_experts = 0;
  double router = 0;
  double norms = 0;          // layer norms + final norm
  double mtp = 0;            // MTP modules, not part of total
  double dit_embedders = 0;  // patch/text/time embedders and head (DiT)
};

// Parses a Hugging Face config.json (or a Wan WanModel config). `origin` names
// the file in error messages. Every error is kParse (the file is wrong, exit
// code 1): malformed JSON, an unknown model_type (the message lists the
// supported families), missing keys, wrong types and absurd values, each
// naming origin and key; JSON-library text never appears in a message.
// `name` is the config's `_name_or_path` when it has one, else empty.
StatusOr<ModelSpec> ParseModelConfig(std::string_view json_text, std::string_view origin);

// Where LoadModel looks for a Hugging Face repo id that is no preset.
struct ModelLookup {
  // The hub cache directory holding models--<org>--<name>/snapshots/*/;
  // "" skips the cache.
  std::string hf_hub_cache;
};
// The cache directory as huggingface_hub resolves it: $HF_HUB_CACHE, else
// $HF_HOME/hub, else $HOME/.cache/huggingface/hub ("" when none is set).
ModelLookup ModelLookupFromEnvironment();

// Loads `name_or_path`, in this order (docs/models.md, "Model names"):
//  1. an existing path read through `fs`: a directory means its config.json
//     (an HF snapshot directory), a file is read (at most
//     kMaxConfigFileBytes; devices, FIFOs and sockets are refused);
//  2. a preset by name, alias or HF repo id, forgivingly: case, '_' and
//     ' ' for '-', "llama3" for "llama-3", variant words (instruct, it,
//     chat, hf, base) dropped when nothing else matches;
//  3. an HF repo id ("org/name") in `lookup.hf_hub_cache`: the snapshot
//     refs/main names, else the only (or newest-named) snapshot.
// The model is named by its preset name, else the config's `_name_or_path`
// when that is a repo id, else the repo id of the cache path it was found
// in, else the directory holding a config.json, else the file stem.
// Errors: kInvalidArgument for an unknown or ambiguous name (a did-you-mean
// that prefers the same family and version, or the candidates); kNotFound
// for files (messages as in mfu/file_system.h) and for a repo id found
// nowhere (the message says where it looked); kParse for a bad config.
StatusOr<ModelSpec> LoadModel(const FileSystem& fs, std::string_view name_or_path, const ModelLookup& lookup);
// As above with ModelLookupFromEnvironment().
StatusOr<ModelSpec> LoadModel(const FileSystem& fs, std::string_view name_or_path);

struct PresetInfo {
  std::string name;
  std::string family;
  std::string origin;                // where the config came from (data/models/SOURCES.csv)
  std::string repo_id;               // Hugging Face repo id (data/models/ALIASES.csv)
  std::vector<std::string> aliases;  // other accepted names, repo ids included
};
// The presets compiled into the library, sorted by name.
std::vector<PresetInfo> ListModelPresets();

// A dense or MoE transformer given entirely by numbers (no config file).
struct GenericModelOptions {
  std::string name = "generic";
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;  // 0: same as heads (MHA)
  int64_t head_dim = 0;  // 0: hidden / heads
  int64_t ffn = 0;       // dense MLP size; 0: 4*hidden (plain) or required (gated)
  int64_t vocab = 0;
  int64_t experts = 0;  // routed experts; 0 = dense
  int64_t top_k = 0;
  int64_t moe_ffn = 0;  // per-expert size; 0: ffn
  int64_t shared_ffn = 0;
  bool gated_mlp = true;
  bool tied_embeddings = false;
  bool bias = false;  // biases on every linear layer and norm (GPT-2/MPT style)
  NormKind norm = NormKind::kRmsNorm;
  int64_t position_embeddings = 0;  // learned position rows, 0 for RoPE/ALiBi
  double dropout = 0;               // training dropout probability (ModelSpec::dropout)
};
// Builds and validates a generic model. Errors: kInvalidArgument naming the
// field as Param does (e.g. "parameter 'heads': required and must be
// positive, got 0", "parameter 'top_k': 9 exceeds parameter 'experts' 8").
StatusOr<ModelSpec> BuildGenericModel(const GenericModelOptions& options);

// Checks invariants and sane ranges (positive sizes, heads dividing hidden
// where required, top_k <= experts, sizes below 2^40). `origin` prefixes errors.
Status ValidateModel(const ModelSpec& spec, std::string_view origin);

// Counts parameters exactly (see ParamCounts).
ParamCounts CountParams(const ModelSpec& spec);

}  // namespace mfu
