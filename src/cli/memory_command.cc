// mfu memory: training memory (weights, gradients, optimizer, activations)
// and the KV cache of a model.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "cli/command.h"
#include "cli/model_flags.h"
#include "cli/output.h"
#include "mfu/memory.h"
#include "report/table.h"

namespace mfu::cli {
namespace {

struct MemoryOptions {
  ModelFlags model;
  int64_t seq_len = 4096;
  int64_t micro_batch = 1;
  std::string recompute = "none";
  bool no_flash = false;
  int64_t tp = 1;
  bool sp = false;
  std::string weight_dtype = "bf16";
  std::string grad_dtype = "bf16";
  std::string optimizer = "adam";
  std::string kv_dtype = "bf16";
  int64_t context = 0;
  bool json = false;
};

std::string OptimizerNote(const std::string& optimizer, DType weights) {
  const bool master = weights != DType::kFp32;
  if (optimizer == "sgd")
    return master ? "sgd: fp32 master + momentum" : "sgd: momentum";
  if (optimizer == "adam-fp32")
    return "adam: two fp32 moments";
  return "adam: fp32 master + two fp32 moments";
}

class MemoryCommand final : public Command {
 public:
  const char* name() const override { return "memory"; }
  const char* summary() const override {
    return "Training memory (weights, gradients, optimizer, activations) and KV cache";
  }

  void Register(CLI::App& app) override {
    o_.model.Register(app);
    seq_len_option_ =
        app.add_option("--seq-len,-s", o_.seq_len, "Sequence length [default: 4096; DiT: 81 frames at 720p]");
    app.add_option("--micro-batch", o_.micro_batch, "Sequences per micro-batch")->capture_default_str();
    app.add_option("--recompute", o_.recompute, "none, selective, selective-literal, full")->capture_default_str();
    app.add_flag("--no-flash", o_.no_flash, "Attention stores the a*s^2 softmax (no flash attention)");
    app.add_option("--tp", o_.tp, "Tensor-parallel degree (activations per rank)")->capture_default_str();
    app.add_flag("--sp", o_.sp, "Sequence parallelism (shards the replicated activations)");
    app.add_option("--weight-dtype", o_.weight_dtype, "Weight dtype")->capture_default_str();
    app.add_option("--grad-dtype", o_.grad_dtype, "Gradient dtype")->capture_default_str();
    app.add_option("--optimizer", o_.optimizer, "adam (mixed precision), adam-fp32, sgd")
        ->check(CLI::IsMember({"adam", "adam-fp32", "sgd"}))
        ->capture_default_str();
    app.add_option("--kv-dtype", o_.kv_dtype, "KV-cache dtype")->capture_default_str();
    app.add_option("--context", o_.context, "KV cache context length [default: --seq-len]");
    app.add_flag("--json", o_.json, "Machine-readable output (docs/cli.md)");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(ModelSpec spec, o_.model.Resolve());
    TrainingMemoryOptions m;
    MFU_ASSIGN_OR_RETURN(m.weight_dtype, ParseDType(o_.weight_dtype));
    MFU_ASSIGN_OR_RETURN(m.grad_dtype, ParseDType(o_.grad_dtype));
    MFU_ASSIGN_OR_RETURN(m.recompute, ParseRecompute(o_.recompute));
    MFU_ASSIGN_OR_RETURN(DType kv_dtype, ParseDType(o_.kv_dtype));
    m.optimizer = o_.optimizer == "adam"        ? Optimizer::kAdamMixed
                  : o_.optimizer == "adam-fp32" ? Optimizer::kAdamFp32
                                                : Optimizer::kSgdMomentum;
    if (o_.optimizer == "adam-fp32" && m.weight_dtype != DType::kFp32) {
      return InvalidArgumentError("--optimizer adam-fp32 means fp32 weights; add --weight-dtype fp32 or use adam");
    }
    m.seq_len = o_.seq_len;
    if (seq_len_option_->count() == 0 && spec.arch == ArchKind::kDiT) {
      MFU_ASSIGN_OR_RETURN(m.seq_len, DefaultDitTokens(spec));
    }
    m.micro_batch = o_.micro_batch;
    m.flash_attention = !o_.no_flash;
    m.tensor_parallel = o_.tp;
    m.sequence_parallel = o_.sp;
    if (o_.sp && o_.tp == 1)
      return InvalidArgumentError("--sp needs --tp > 1");
    MFU_ASSIGN_OR_RETURN(TrainingMemory mem, EstimateTrainingMemory(spec, m));
    const ParamCounts params = CountParams(spec);
    nlohmann::json j = JsonEnvelope();
    j["model"] = ModelJson(spec);
    j["params"] = ParamsJson(params);
    j["training"] = {{"weights_bytes", mem.weights_bytes},
                     {"gradients_bytes", mem.gradients_bytes},
                     {"optimizer_bytes", mem.optimizer_bytes},
                     {"activations_per_layer_bytes", mem.activations_per_layer_bytes},
                     {"activations_bytes", mem.activations_bytes},
                     {"output_layer_activations_bytes", mem.output_layer_activations_bytes},
                     {"total_bytes", mem.total_bytes()},
                     {"seq_len", m.seq_len},
                     {"optimizer", o_.optimizer},
                     {"weight_dtype", DTypeName(m.weight_dtype)},
                     {"grad_dtype", DTypeName(m.grad_dtype)},
                     {"micro_batch", m.micro_batch},
                     {"recompute", RecomputeName(m.recompute)},
                     {"flash_attention", m.flash_attention},
                     {"tp", m.tensor_parallel},
                     {"sp", m.sequence_parallel}};
    report::Table table({"memory", "bytes", "note"});
    table.AddRow({"weights", report::Bytes(mem.weights_bytes), DTypeName(m.weight_dtype)});
    table.AddRow({"gradients", report::Bytes(mem.gradients_bytes), DTypeName(m.grad_dtype)});
    table.AddRow({"optimizer states", report::Bytes(mem.optimizer_bytes), OptimizerNote(o_.optimizer, m.weight_dtype)});
    table.AddRow({"activations / layer", report::Bytes(mem.activations_per_layer_bytes),
                  fmt::format("per TP rank, micro-batch {}, recompute {}{}", m.micro_batch, RecomputeName(m.recompute),
                              m.flash_attention ? ", flash" : "")});
    table.AddRow({"activations (all layers)", report::Bytes(mem.activations_bytes), "one micro-batch in flight"});
    table.AddRow({"output layer + logits", report::Bytes(mem.output_layer_activations_bytes), "fp32 logits"});
    table.AddSeparator();
    table.AddRow({"total (unsharded)", report::Bytes(mem.total_bytes()), "before ZeRO/FSDP/PP sharding"});
    if (spec.arch == ArchKind::kDecoder) {
      int64_t context = o_.context > 0 ? o_.context : o_.seq_len;
      MFU_ASSIGN_OR_RETURN(KvCacheSize kv, ComputeKvCache(spec, kv_dtype, context));
      j["kv_cache"] = {{"dtype", DTypeName(kv_dtype)},
                       {"bytes_per_token", kv.bytes_per_token},
                       {"context", context},
                       {"bytes_per_sequence", kv.bytes_per_sequence}};
      table.AddRow({"KV cache / token", report::Bytes(kv.bytes_per_token), DTypeName(kv_dtype)});
      table.AddRow({"KV cache / sequence", report::Bytes(kv.bytes_per_sequence),
                    fmt::format("context {} (sliding windows capped)", context)});
    }
    if (o_.json) {
      PrintJson(ctx.out, j);
      return Status::Ok();
    }
    PrintModelSummary(ctx.out, spec, params);
    ctx.out << "\n";
    table.Print(ctx.out);
    return Status::Ok();
  }

 private:
  MemoryOptions o_;
  CLI::Option* seq_len_option_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> MakeMemoryCommand() {
  return std::make_unique<MemoryCommand>();
}

}  // namespace mfu::cli
