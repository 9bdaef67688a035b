#include "cli/model_flags.h"

#include <CLI/CLI.hpp>

namespace mfu::cli {

void ModelFlags::Register(CLI::App& app) {
  app.add_option("--model,-m", model, "Preset name (see 'mfu models') or path to a Hugging Face config.json");
  auto* g = app.add_option_group("Generic model", "A transformer given by numbers instead of --model");
  g->add_option("--layers", generic.layers, "Decoder layers");
  g->add_option("--hidden", generic.hidden, "Hidden size");
  g->add_option("--heads", generic.heads, "Attention heads");
  g->add_option("--kv-heads", generic.kv_heads, "Key/value heads [default: --heads]");
  g->add_option("--head-dim", generic.head_dim, "Head dim [default: hidden/heads]");
  g->add_option("--ffn", generic.ffn, "MLP intermediate size [default for --mlp plain: 4*hidden]");
  g->add_option("--vocab", generic.vocab, "Vocabulary size");
  g->add_option("--experts", generic.experts, "Routed experts (MoE)");
  g->add_option("--top-k", generic.top_k, "Experts per token (MoE)");
  g->add_option("--moe-ffn", generic.moe_ffn, "Per-expert intermediate size [default: --ffn]");
  g->add_option("--shared-ffn", generic.shared_ffn, "Total intermediate size of shared experts");
  g->add_option("--mlp", mlp, "gated (SwiGLU, 3 matrices) or plain (2 matrices)")
      ->check(CLI::IsMember({"gated", "plain"}))
      ->capture_default_str();
  g->add_option("--norm", norm, "rmsnorm or layernorm")
      ->check(CLI::IsMember({"rmsnorm", "layernorm"}))
      ->capture_default_str();
  g->add_flag("--tied", generic.tied_embeddings, "LM head tied to the input embedding");
  g->add_flag("--bias", generic.bias, "Biases on every linear layer (GPT-2/MPT style)");
  g->add_option("--position-embeddings", generic.position_embeddings, "Rows of a learned position table");
}

StatusOr<ModelSpec> ModelFlags::Resolve() const {
  bool any_generic = generic.layers || generic.hidden || generic.heads || generic.vocab || generic.ffn ||
                     generic.experts || generic.top_k || generic.kv_heads || generic.head_dim;
  if (!model.empty() && any_generic) {
    return InvalidArgumentError("--model and the generic model flags (--layers, --hidden, ...) are alternatives");
  }
  if (!model.empty())
    return LoadModel(RealFileSystem(), model);
  if (!any_generic)
    return InvalidArgumentError("give --model (see 'mfu models') or --layers/--hidden/--heads/--vocab");
  GenericModelOptions options = generic;
  options.gated_mlp = mlp == "gated";
  options.norm = norm == "layernorm" ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  return BuildGenericModel(options);
}

void GpuFlags::Register(CLI::App& app, bool required) {
  auto* opt = app.add_option("--gpu,-g", gpu, "Accelerator name or id (see 'mfu hw list')");
  if (required)
    opt->required();
  app.add_option("--hardware-file", hardware_file, "CSV adding or overriding accelerators (data/hardware/README.md)");
}

StatusOr<HardwareDb> GpuFlags::LoadDb() const {
  MFU_ASSIGN_OR_RETURN(HardwareDb db, HardwareDb::LoadBuiltin());
  if (!hardware_file.empty())
    MFU_RETURN_IF_ERROR(db.AddFile(RealFileSystem(), hardware_file));
  return db;
}

}  // namespace mfu::cli
