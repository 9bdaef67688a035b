#include "flops/conventions.h"

#include <string>

#include "base/param.h"
#include "base/strings.h"

namespace mfu {
namespace {

constexpr ConventionInfo kConventions[] = {
    {Convention::kMegatron, "megatron",
     "Megatron-LM >= 2025-03: exact GEMMs, causal attention halved, no router, LM head with vocab padded to 128, "
     "MTP layer + extra logits"},
    {Convention::kPalm, "palm",
     "PaLM App. B / nanoGPT / torchtitan: 6*N (active, without input embedding) + 6*L*a*(d_qk+d_v)*T, full attention"},
    {Convention::kKaplan, "kaplan", "Kaplan et al. 2020: 6*N, N = active non-embedding parameters without LM head"},
    {Convention::kExact, "exact", "every GEMM including the router, full (non-causal) attention, MTP + logits"},
    {Convention::kHf, "hf",
     "HF transformers floating_point_ops: 6 x all parameters except embeddings (every MoE expert, untied LM head)"},
    {Convention::kMaxtext, "maxtext",
     "MaxText: exact GEMMs, causal attention halved with exact sliding windows, router, MTP layer without logits"},
    {Convention::kLlmFoundry, "llm-foundry",
     "MosaicML llm-foundry: 6*N (all parameters incl. tied and position embeddings) + 12*L*d_model*T, full attention"},
};

struct Alias {
  const char* alias;
  Convention convention;
};
constexpr Alias kAliases[] = {
    {"nanogpt", Convention::kPalm},        {"torchtitan", Convention::kPalm},       {"kaplan6n", Convention::kKaplan},
    {"6n", Convention::kKaplan},           {"hf_6n_total", Convention::kHf},        {"huggingface", Convention::kHf},
    {"exact_full", Convention::kExact},    {"llmfoundry", Convention::kLlmFoundry}, {"mosaic", Convention::kLlmFoundry},
    {"mosaicml", Convention::kLlmFoundry}, {"megatron-lm", Convention::kMegatron},  {"nemo", Convention::kMegatron},
};

}  // namespace

std::span<const ConventionInfo> AllConventions() {
  return kConventions;
}

const char* ConventionName(Convention convention) {
  for (const auto& c : kConventions) {
    if (c.convention == convention)
      return c.name;
  }
  return "?";
}

const char* ConventionSummary(Convention convention) {
  for (const auto& c : kConventions) {
    if (c.convention == convention)
      return c.summary;
  }
  return "";
}

StatusOr<Convention> ParseConvention(std::string_view text) {
  std::string t = base::ToLower(base::Trim(text));
  std::vector<std::string> names;
  for (const auto& c : kConventions) {
    if (t == c.name)
      return c.convention;
    names.emplace_back(c.name);
  }
  for (const auto& a : kAliases) {
    if (t == a.alias)
      return a.convention;
  }
  std::string suggestion = base::ClosestMatch(t, names);
  return InvalidArgumentError(base::Param("convention") + ": unknown convention '" + std::string(text) + "'" +
                              (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
                              "; one of: " + base::Join(names, ", "));
}

const char* RecomputeName(Recompute recompute) {
  switch (recompute) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kSelectiveLiteral:
      return "selective-literal";
    case Recompute::kFull:
      return "full";
    case Recompute::kSelectiveOp:
      return "selective-op";
  }
  return "?";
}

double OpPolicyMlpShare(const ModelSpec& spec) {
  return spec.gated_mlp ? 1.0 / 3 : 1.0 / 2;
}

StatusOr<Recompute> ParseRecompute(std::string_view text) {
  std::string t = base::ToLower(base::Trim(text));
  for (auto r : kAllRecomputeModes) {
    if (t == RecomputeName(r))
      return r;
  }
  if (t == "op")  // torchtitan's spelling (selective_ac_option)
    return Recompute::kSelectiveOp;
  return InvalidArgumentError(base::Param("recompute") + ": unknown mode '" + std::string(text) +
                              "'; one of: none, selective, selective-literal, full, selective-op");
}

namespace flops {

Rules RulesFor(Convention convention) {
  Rules r;
  switch (convention) {
    case Convention::kMegatron:
      r = {Basis::kGemm, AttentionMode::kCausalHalf, false, false, MtpMode::kLayerAndLogits, true};
      break;
    case Convention::kExact:
      r = {Basis::kGemm, AttentionMode::kFull, true, false, MtpMode::kLayerAndLogits, false};
      break;
    case Convention::kMaxtext:
      r = {Basis::kGemm, AttentionMode::kCausalWindow, true, false, MtpMode::kLayer, false};
      break;
    case Convention::kPalm:
    case Convention::kLlmFoundry:
      r = {Basis::kParams, AttentionMode::kFull, true, false, MtpMode::kNone, false};
      break;
    case Convention::kKaplan:
      r = {Basis::kParams, AttentionMode::kNone, true, false, MtpMode::kNone, false};
      break;
    case Convention::kHf:
      r = {Basis::kParams, AttentionMode::kNone, true, true, MtpMode::kNone, false};
      break;
  }
  return r;
}

}  // namespace flops
}  // namespace mfu
