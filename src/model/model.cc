#include "mfu/model.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "base/embedded_file.h"
#include "base/strings.h"
#include "mfu_embedded/model_data.h"

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

constexpr std::string_view kPresetDir = "models/";
constexpr std::string_view kPresetExt = ".json";

std::string PresetName(std::string_view path) {
  path.remove_prefix(kPresetDir.size());
  path.remove_suffix(kPresetExt.size());
  return std::string(path);
}

bool IsPresetConfig(std::string_view path) {
  return base::StartsWith(path, kPresetDir) && path.size() > kPresetExt.size() &&
         path.substr(path.size() - kPresetExt.size()) == kPresetExt;
}

// "models/SOURCES.csv": name,origin (one line per preset).
std::string PresetOrigin(const std::string& name) {
  for (const auto& file : base::ModelDataFiles()) {
    if (file.path != "models/SOURCES.csv")
      continue;
    for (const auto& line : base::Split(file.bytes, '\n')) {
      auto comma = line.find(',');
      if (comma != std::string::npos && line.substr(0, comma) == name)
        return line.substr(comma + 1);
    }
  }
  return "";
}

std::vector<std::string> Tokens(std::string_view name) {
  std::string normalized = base::ToLower(name);
  for (char& c : normalized) {
    if (c == '_' || c == ' ')
      c = '-';
  }
  std::vector<std::string> out;
  for (auto& t : base::Split(normalized, '-')) {
    if (!t.empty())
      out.push_back(t);
  }
  return out;
}

// True when every token of `query` is a token of `preset` ("llama-3.1-8b" vs
// "llama-3.1-8b-instruct").
bool TokensMatch(const std::vector<std::string>& query, const std::vector<std::string>& preset) {
  return std::all_of(query.begin(), query.end(),
                     [&](const std::string& t) { return std::find(preset.begin(), preset.end(), t) != preset.end(); });
}

StatusOr<std::string> ResolvePreset(std::string_view query) {
  std::vector<std::string> names;
  for (const auto& file : base::ModelDataFiles()) {
    if (IsPresetConfig(file.path))
      names.push_back(PresetName(file.path));
  }
  std::string lowered = base::ToLower(query);
  for (const auto& n : names) {
    if (n == lowered)
      return n;
  }
  std::vector<std::string> matches;
  auto query_tokens = Tokens(query);
  for (const auto& n : names) {
    if (TokensMatch(query_tokens, Tokens(n)))
      matches.push_back(n);
  }
  if (matches.size() == 1)
    return matches[0];
  if (matches.size() > 1) {
    std::sort(matches.begin(), matches.end());
    return InvalidArgumentError("model '" + std::string(query) +
                                "' is ambiguous; candidates: " + base::Join(matches, ", "));
  }
  std::string suggestion = base::ClosestMatch(query, names);
  return InvalidArgumentError("model '" + std::string(query) + "': no such file or preset" +
                              (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
                              "; see 'mfu models'");
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
  ModelSpec s;
  s.name = o.name;
  s.family = "generic";
  s.source = "flags";
  struct Required {
    const char* flag;
    int64_t value;
  };
  for (auto [flag, value] : {Required{"--layers", o.layers}, Required{"--hidden", o.hidden},
                             Required{"--heads", o.heads}, Required{"--vocab", o.vocab}}) {
    if (value <= 0)
      return InvalidArgumentError(std::string(flag) + ": required and must be positive, got " + std::to_string(value));
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
    return InvalidArgumentError("--heads: " + std::to_string(o.heads) + " does not divide --hidden " +
                                std::to_string(o.hidden) + "; give --head-dim");
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
    return InvalidArgumentError("--ffn: required for a gated MLP (plain MLPs default to 4*hidden)");
  }
  s.tied_embeddings = o.tied_embeddings;
  s.qkv_bias = s.o_bias = s.mlp_bias = o.bias;
  s.norm = o.norm;
  s.position_embeddings = o.position_embeddings;
  s.layers.assign(static_cast<size_t>(std::min<int64_t>(o.layers, 100001)), LayerSpec{});
  if (o.experts > 0 || o.top_k > 0) {
    if (o.experts <= 0)
      return InvalidArgumentError("--top-k: given without --experts");
    if (o.top_k <= 0)
      return InvalidArgumentError("--experts: given without --top-k");
    if (o.top_k > o.experts) {
      return InvalidArgumentError("--top-k: " + std::to_string(o.top_k) + " exceeds --experts " +
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
    return InvalidArgumentError("--moe-ffn/--shared-ffn: given without --experts and --top-k");
  }
  MFU_RETURN_IF_ERROR(ValidateModel(s, "generic model"));
  return s;
}

std::vector<PresetInfo> ListModelPresets() {
  std::vector<PresetInfo> out;
  for (const auto& file : base::ModelDataFiles()) {
    if (!IsPresetConfig(file.path))
      continue;
    PresetInfo info;
    info.name = PresetName(file.path);
    auto spec = ParseModelConfig(file.bytes, file.path);
    info.family = spec.ok() ? spec->family : "?";
    info.origin = PresetOrigin(info.name);
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const PresetInfo& a, const PresetInfo& b) { return a.name < b.name; });
  return out;
}

StatusOr<ModelSpec> LoadModel(const FileSystem& fs, std::string_view name_or_path) {
  std::string arg(name_or_path);
  bool looks_like_path = arg.find('/') != std::string::npos || arg.ends_with(".json");
  StatusOr<std::string> read = fs.ReadFile(arg);
  if (looks_like_path || read.ok()) {
    MFU_ASSIGN_OR_RETURN(std::string text, std::move(read));
    MFU_ASSIGN_OR_RETURN(ModelSpec spec, ParseModelConfig(text, arg));
    spec.name = std::filesystem::path(arg).stem().string();
    return spec;
  }
  MFU_ASSIGN_OR_RETURN(std::string name, ResolvePreset(name_or_path));
  std::string path = std::string(kPresetDir) + name + std::string(kPresetExt);
  for (const auto& file : base::ModelDataFiles()) {
    if (file.path != path)
      continue;
    MFU_ASSIGN_OR_RETURN(ModelSpec spec, ParseModelConfig(file.bytes, "preset " + name));
    spec.name = name;
    spec.source = "preset " + name + " (" + PresetOrigin(name) + ")";
    return spec;
  }
  return InternalError("preset " + name + " listed but not embedded");
}

}  // namespace mfu
