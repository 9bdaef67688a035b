#pragma once

// Analytic FLOPs of a ModelSpec under named counting conventions. Every FLOP
// figure mfu prints carries the convention it was counted under, because
// frameworks disagree by up to 38% on the same model (docs/conventions.md).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/model.h"
#include "mfu/note.h"
#include "mfu/status.h"

namespace mfu {

enum class Convention {
  kMegatron,    // exact GEMMs, causal attention halved, no router, padded vocab, MTP + logits (default)
  kPalm,        // 6N(no input embedding) + 6*L*a*(d_qk+d_v)*T, full attention (PaLM, nanoGPT, torchtitan)
  kKaplan,      // 6N, N = non-embedding active parameters, no LM head, no attention term
  kExact,       // every GEMM incl. router, full (non-causal) attention, MTP + logits
  kHf,          // 6 x all parameters except embeddings (HF floating_point_ops; MoE counts every expert)
  kMaxtext,     // exact GEMMs, causal halved, exact sliding windows, router, MTP layer without logits
  kLlmFoundry,  // 6N(all params incl. tied/position embeddings) + 12*L*d_model*T, full attention
};

enum class Recompute {
  kNone,
  kSelective,         // Korthikanti et al.: HFU adds s/(3h), i.e. 3x the forward attention core
  kSelectiveLiteral,  // one extra forward of the attention core (what the kernels execute)
  kFull,              // one extra forward of every transformer layer (Narayanan's 96x form)
  // torchtitan's op-level selective AC (`selective_ac_option = "op"`): saves
  // the attention kernel's output and every other matmul's, recomputes the
  // rest. With a layer's linears in forward order q, k, v, o, then the MLP's
  // (gate, up, down or fc1, fc2), k, o and up (gated) or fc2 run again; the
  // routed experts' grouped GEMMs (not on the save list) all do.
  kSelectiveOp,
};
inline constexpr std::array<Recompute, 5> kAllRecomputeModes = {
    Recompute::kNone, Recompute::kSelective, Recompute::kSelectiveLiteral, Recompute::kFull, Recompute::kSelectiveOp};

// What Megatron-Core's selective recompute (Recompute::kSelective) covers:
// --recompute-modules, a set of these bits (Megatron-LM arguments.py). The
// default, core_attn alone, is Korthikanti et al.'s selective recompute.
enum RecomputeModule : uint32_t {
  kRecomputeCoreAttn = 1u << 0,       // the attention core (its softmax / log-sum-exp)
  kRecomputeLayernorm = 1u << 1,      // a standalone norm's output (the MoE layer's pre-MLP norm)
  kRecomputeMoeAct = 1u << 2,         // the routed experts' activation output (fc2's input)
  kRecomputeMlp = 1u << 3,            // a dense MLP from its input
  kRecomputeMoe = 1u << 4,            // a whole MoE block (router, dispatch, experts) from its input
  kRecomputeSharedExperts = 1u << 5,  // the shared experts from their input
  kRecomputeMlaUpProj = 1u << 6,      // MLA's up-projections and rope (the core's Q, K, V) from the latents
};
inline constexpr uint32_t kDefaultRecomputeModules = kRecomputeCoreAttn;
// "core_attn,moe_act" -> bits; names: core_attn, layernorm, moe_act, mlp,
// moe, shared_experts, mla_up_proj. kInvalidArgument naming an unknown
// module (and listing these), an empty list or an empty item.
StatusOr<uint32_t> ParseRecomputeModules(std::string_view list);
std::string RecomputeModulesName(uint32_t modules);  // "core_attn,moe_act"
// A module list other than the default applies to Recompute::kSelective
// only, and mla_up_proj to a multi-latent-attention model (as Megatron
// asserts): kInvalidArgument naming parameter 'recompute_modules' otherwise.
Status CheckRecomputeModules(const ModelSpec& spec, uint32_t modules, Recompute recompute);
// The forward FLOPs per token of one MLA layer's up-projections, what
// mla_up_proj runs again: q_up (the query projection when the model has no
// query latent) and kv_up. 0 for other attention.
double MlaUpProjFlopsPerLayer(const ModelSpec& spec);

struct ConventionInfo {
  Convention convention;
  const char* name;
  const char* summary;
};
std::span<const ConventionInfo> AllConventions();
const char* ConventionName(Convention convention);
const char* ConventionSummary(Convention convention);  // one line, AllConventions()
// Accepts the names of AllConventions() and aliases (nanogpt, torchtitan,
// kaplan6n, hf_6n_total, mosaic). kInvalidArgument lists the names.
StatusOr<Convention> ParseConvention(std::string_view text);
const char* RecomputeName(Recompute recompute);
// The share of a layer's MLP (and shared experts') GEMM work that
// Recompute::kSelectiveOp runs again: the up projection of gate, up, down
// (1/3), or fc2 of fc1, fc2 (1/2).
double OpPolicyMlpShare(const ModelSpec& spec);
StatusOr<Recompute> ParseRecompute(std::string_view text);

// Where the FLOPs go. Q/K/V/O and the attention core are self-attention;
// kCrossAttention and kDitEmbedders are diffusion transformers only.
enum class FlopsComponent {
  kQProj = 0,
  kKProj,
  kVProj,
  kOProj,
  kAttnScores,   // Q K^T
  kAttnContext,  // softmax(..) V
  kDenseMlp,
  kRoutedExperts,
  kSharedExperts,
  kRouter,
  kLmHead,
  kMtp,             // multi-token-prediction modules (layer, eh_proj, logits)
  kEmbedding,       // parameter-based conventions that count embedding tables
  kNormsAndBiases,  // parameter-based conventions: 2 x (norm + bias params)
  kCrossAttention,  // DiT: text (and image) cross-attention, projections + core
  kDitEmbedders,    // DiT: patch, text, time embedders and head
};
inline constexpr size_t kNumFlopsComponents = 16;
const char* FlopsComponentName(FlopsComponent component);

// Forward FLOPs per token, by component (FMA = 2 FLOPs).
struct FlopsBreakdown {
  std::array<double, kNumFlopsComponents> forward{};
  double& operator[](FlopsComponent c) { return forward[static_cast<size_t>(c)]; }
  double operator[](FlopsComponent c) const { return forward[static_cast<size_t>(c)]; }
  double total() const;
};

// Training FLOPs per token at sequence length `seq_len`.
struct TrainingFlops {
  Convention convention = Convention::kMegatron;
  Recompute recompute = Recompute::kNone;
  int64_t seq_len = 0;
  FlopsBreakdown forward;          // per token
  double model_per_token = 0;      // forward + backward = 3 x forward: the MFU numerator
  double recompute_per_token = 0;  // extra forward FLOPs recompute executes
  double hardware_per_token = 0;   // model + recompute: the HFU numerator
};

// Errors: kInvalidArgument when `seq_len` < 1 or absurd (> 2^31), or beyond
// the model's max_position_embeddings (DiT models have no limit).
// Under Recompute::kSelective, `modules` (RecomputeModule bits) says what
// runs again: core_attn counts Korthikanti's 3x the forward attention core,
// mlp, moe and shared_experts their forward GEMMs (moe: router, routed and
// shared experts); layernorm and moe_act recompute no GEMM.
StatusOr<TrainingFlops> ComputeTrainingFlops(const ModelSpec& spec, Convention convention, int64_t seq_len,
                                             Recompute recompute, uint32_t modules = kDefaultRecomputeModules);

// How MLA attention is executed at inference: naive (K/V decompressed, the
// training form and the "model FLOPs") or absorbed (attention over the latent).
enum class MlaMode { kNonAbsorbed, kAbsorbed };

struct InferenceFlops {
  Convention convention = Convention::kMegatron;
  FlopsBreakdown per_token;  // forward FLOPs per processed token
  double tokens = 0;         // tokens processed (batch x new tokens)
  double total = 0;          // per_token.total() x tokens
};

// Inference counts never include MTP modules (they run in training; serving
// engines that use them for speculation account for them separately).
//
// Prefill of `prompt_len` new tokens per sequence on top of `cached_len`
// cached tokens (chunked prefill), for `batch` sequences: one forward of the
// convention with the causal attention it counts.
StatusOr<InferenceFlops> ComputePrefillFlops(const ModelSpec& spec, Convention convention, int64_t batch,
                                             int64_t prompt_len, int64_t cached_len = 0,
                                             MlaMode mla = MlaMode::kNonAbsorbed);

// One decode step: `batch` sequences each generating one token that attends to
// `context_len` keys. Attention is not halved for the new token.
StatusOr<InferenceFlops> ComputeDecodeFlops(const ModelSpec& spec, Convention convention, int64_t batch,
                                            int64_t context_len, MlaMode mla = MlaMode::kNonAbsorbed);

// DiT sequence length for a video of `frames` x `height` x `width` pixels:
// (1 + (frames-1)/4) * (height/stride/2) * (width/stride/2). kInvalidArgument
// when the sizes do not divide evenly.
StatusOr<int64_t> DitTokens(const ModelSpec& spec, int64_t frames, int64_t height, int64_t width);

// Tokens of the model's standard clip: 81 frames at 720p (1280x720 for the
// Wan2.1 VAE, 1280x704 for Wan2.2's 16x VAE, whose sizes must divide by 32).
StatusOr<int64_t> DefaultDitTokens(const ModelSpec& spec);

// -------------------------------------------------------- the flops job

// What `mfu flops` is asked: training counts under a convention (or every
// convention), or the counts of one inference step.
struct FlopsRequest {
  ModelSpec model;
  std::optional<int64_t> seq_len;  // unset: 4096 capped at the model's maximum (DiT: 81 frames at 720p)
  int64_t batch = 1;
  std::string convention = "megatron";  // or "all" (training only)
  std::string recompute = "none";
  std::string inference;  // "", "prefill" or "decode"
  int64_t context = 0;    // decode: keys per new token
  int64_t cached = 0;     // prefill: tokens already cached
  std::string mla = "naive";
  int64_t frames = 0, height = 0, width = 0;  // DiT: the video instead of seq_len
};

// One row of the comparison across conventions: the counts, or why the
// convention does not apply to the model.
struct ConventionCount {
  const ConventionInfo* info = nullptr;
  std::optional<TrainingFlops> flops;
  std::string error;
};

struct FlopsReport {
  ModelSpec model;
  ParamCounts params;
  int64_t seq_len = 0;
  int64_t batch = 1;
  Convention convention = Convention::kMegatron;
  Recompute recompute = Recompute::kNone;
  std::optional<TrainingFlops> training;     // no inference
  std::vector<ConventionCount> conventions;  // convention "all"
  std::string inference;                     // "prefill" or "decode"; "" for training
  std::string mla;
  int64_t context = 0, cached = 0;
  std::optional<InferenceFlops> inference_flops;
  std::vector<Note> notes;  // the sequence length taken by default ("default_seq_len")
};

// The counts of `request`. kInvalidArgument naming the parameter (as
// `parameter 'batch'`) for a batch below 1, recompute or context or cached
// with the wrong mode, convention "all" with inference, a decode without a
// context, an unknown convention or recompute mode, video sizes with a
// sequence length or on a non-DiT model; the errors of the counting
// functions (a sequence beyond the model's maximum).
StatusOr<FlopsReport> CountFlops(const FlopsRequest& request);

// A preset and its parameter counts (`mfu models`).
struct PresetCount {
  PresetInfo preset;
  ParamCounts params;
};
// Every preset compiled into the library, sorted by name. kInternal when a
// preset does not load (a broken build).
StatusOr<std::vector<PresetCount>> CountPresetParams();

}  // namespace mfu
