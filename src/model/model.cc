#include "mfu/model.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/param.h"
#include "base/strings.h"

namespace mfu {

namespace {

constexpr int64_t kMaxDimension = int64_t{1} << 40;

Status Positive(std::string_view origin, std::string_view field, int64_t value) {
  if (value < 1) {
    return InvalidArgumentError(std::string(origin) + ": " + std::string(field) + " must be positive, got " +
                                std::to_string(value));
  }
  if (value > kMaxDimension) {
    return InvalidArgumentError(std::string(origin) + ": " + std::string(field) +
                                " is absurdly large: " + std::to_string(value));
  }
  return Status::Ok();
}

}  // namespace

int64_t ModelSpec::num_moe_layers() const {
  return std::count_if(layers.begin(), layers.end(), [](const LayerSpec& l) { return l.moe; });
}

int64_t ModelSpec::qk_head_dim() const {
  return attention == AttentionKind::kMla ? mla.qk_nope_head_dim + mla.qk_rope_head_dim : head_dim;
}

int64_t ModelSpec::v_dim() const {
  return attention == AttentionKind::kMla ? mla.v_head_dim : head_dim;
}

Status ValidateModel(const ModelSpec& s, std::string_view origin) {
  MFU_RETURN_IF_ERROR(Positive(origin, "hidden size", s.hidden));
  MFU_RETURN_IF_ERROR(Positive(origin, "layers", s.num_layers));
  MFU_RETURN_IF_ERROR(Positive(origin, "attention heads", s.heads));
  MFU_RETURN_IF_ERROR(Positive(origin, "kv heads", s.kv_heads));
  MFU_RETURN_IF_ERROR(Positive(origin, "head dim", s.head_dim));
  MFU_RETURN_IF_ERROR(Positive(origin, "ffn size", s.ffn));
  if (s.arch == ArchKind::kDecoder)
    MFU_RETURN_IF_ERROR(Positive(origin, "vocab size", s.vocab));
  if (s.num_layers > 100000)
    return InvalidArgumentError(std::string(origin) + ": layers is absurd: " + std::to_string(s.num_layers));
  if (s.heads % s.kv_heads != 0) {
    return InvalidArgumentError(std::string(origin) + ": kv heads (" + std::to_string(s.kv_heads) +
                                ") must divide attention heads (" + std::to_string(s.heads) + ")");
  }
  if (!(s.dropout >= 0 && s.dropout < 1))
    return InvalidArgumentError(std::string(origin) + ": dropout must be in [0, 1), got " + std::to_string(s.dropout));
  if (static_cast<int64_t>(s.layers.size()) != s.num_layers) {
    return InternalError(std::string(origin) + ": layer table does not match layer count");
  }
  if (s.is_moe()) {
    MFU_RETURN_IF_ERROR(Positive(origin, "top-k", s.moe.top_k));
    MFU_RETURN_IF_ERROR(Positive(origin, "expert ffn size", s.moe.expert_ffn));
    if (s.moe.top_k > s.moe.num_experts) {
      return InvalidArgumentError(std::string(origin) + ": top-k (" + std::to_string(s.moe.top_k) +
                                  ") exceeds the number of experts (" + std::to_string(s.moe.num_experts) + ")");
    }
  }
  // Product of the largest dimensions must stay far from double precision
  // limits: a hidden of 2^40 is nonsense anyway.
  double weights = static_cast<double>(s.hidden) * static_cast<double>(std::max(s.ffn, s.vocab));
  if (weights > 1e15) {
    return InvalidArgumentError(std::string(origin) + ": model dimensions are absurd (a single matrix of " +
                                base::FormatSi(weights) + " parameters)");
  }
  return Status::Ok();
}

StatusOr<ModelSpec> BuildGenericModel(const GenericModelOptions& o) {
  constexpr auto P = base::Param;
  ModelSpec s;
  s.name = o.name;
  s.family = "generic";
  s.source = "flags";
  struct Required {
    const char* name;
    int64_t value;
  };
  for (auto [name, value] : {Required{"layers", o.layers}, Required{"hidden", o.hidden}, Required{"heads", o.heads},
                             Required{"vocab", o.vocab}}) {
    if (value <= 0)
      return InvalidArgumentError(P(name) + ": required and must be positive, got " + std::to_string(value));
  }
  s.hidden = o.hidden;
  s.num_layers = o.layers;
  s.heads = o.heads;
  s.vocab = o.vocab;
  if (o.kv_heads < 0 || o.head_dim < 0 || o.ffn < 0 || o.experts < 0 || o.top_k < 0 || o.moe_ffn < 0 ||
      o.shared_ffn < 0 || o.position_embeddings < 0) {
    return InvalidArgumentError("generic model: sizes must not be negative");
  }
  s.kv_heads = o.kv_heads > 0 ? o.kv_heads : o.heads;
  if (o.head_dim > 0) {
    s.head_dim = o.head_dim;
  } else if (o.hidden % o.heads != 0) {
    return InvalidArgumentError(P("heads") + ": " + std::to_string(o.heads) + " does not divide " + P("hidden") + " " +
                                std::to_string(o.hidden) + "; give " + P("head_dim"));
  } else {
    s.head_dim = o.hidden / o.heads;
  }
  s.gated_mlp = o.gated_mlp;
  if (o.ffn > 0) {
    s.ffn = o.ffn;
  } else if (!o.gated_mlp) {
    s.ffn = 4 * o.hidden;
  } else if (o.experts > 0 && o.moe_ffn > 0) {
    s.ffn = o.moe_ffn;
  } else {
    return InvalidArgumentError(P("ffn") + ": required for a gated MLP (plain MLPs default to 4*hidden)");
  }
  s.tied_embeddings = o.tied_embeddings;
  s.qkv_bias = s.o_bias = s.mlp_bias = o.bias;
  s.norm = o.norm;
  s.position_embeddings = o.position_embeddings;
  if (!(o.dropout >= 0 && o.dropout < 1))
    return InvalidArgumentError(P("dropout") + ": must be in [0, 1), got " + std::to_string(o.dropout));
  s.dropout = o.dropout;
  s.layers.assign(static_cast<size_t>(std::min<int64_t>(o.layers, 100001)), LayerSpec{});
  if (o.experts > 0 || o.top_k > 0) {
    if (o.experts <= 0)
      return InvalidArgumentError(P("top_k") + ": given without " + P("experts"));
    if (o.top_k <= 0)
      return InvalidArgumentError(P("experts") + ": given without " + P("top_k"));
    if (o.top_k > o.experts) {
      return InvalidArgumentError(P("top_k") + ": " + std::to_string(o.top_k) + " exceeds " + P("experts") + " " +
                                  std::to_string(o.experts));
    }
    s.moe.num_experts = o.experts;
    s.moe.top_k = o.top_k;
    s.moe.expert_ffn = o.moe_ffn > 0 ? o.moe_ffn : s.ffn;
    s.moe.shared_ffn = o.shared_ffn;
    s.moe.expert_bias = o.bias;
    for (auto& layer : s.layers)
      layer.moe = true;
  } else if (o.moe_ffn > 0 || o.shared_ffn > 0) {
    return InvalidArgumentError(P("moe_ffn") + "/" + P("shared_ffn") + ": given without " + P("experts") + " and " +
                                P("top_k"));
  }
  MFU_RETURN_IF_ERROR(ValidateModel(s, "generic model"));
  return s;
}

}  // namespace mfu
