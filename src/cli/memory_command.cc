// mfu memory: training memory (weights, gradients, optimizer, activations)
// per GPU for a parallel layout, beside the unsharded model, and the KV
// cache of a model.

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/model_flags.h"
#include "mfu/catalog.h"
#include "mfu/file_system.h"
#include "mfu/memory.h"
#include "mfu/report_count.h"
#include "mfu/training_setup.h"

namespace mfu::cli {
namespace {

class MemoryCommand final : public Command {
 public:
  const char* name() const override { return "memory"; }
  const char* summary() const override {
    return "Training memory per GPU (weights, gradients, optimizer, activations) and KV cache";
  }

  void Register(CLI::App& app) override {
    MemoryRequest& r = request_;
    model_.Register(app);
    seq_len_option_ =
        app.add_option("--seq-len,-s", seq_len_, "Sequence length [default: 4096; DiT: 81 frames at 720p]");
    app.add_option("--micro-batch", r.micro_batch, "Sequences per micro-batch")->capture_default_str();
    app.add_option("--recompute", r.recompute, "none, selective, selective-literal, full, selective-op")
        ->capture_default_str();
    app.add_option("--recompute-modules", r.recompute_modules,
                   "What --recompute selective recomputes, Megatron's --recompute-modules: core_attn, layernorm, "
                   "moe_act, mlp, moe, shared_experts, mla_up_proj, comma-separated [default: core_attn]");
    app.add_flag("--no-flash", no_flash_, "Attention stores the a*s^2 softmax (no flash attention)");
    app.add_flag("--sp", r.sequence_parallel, "Sequence parallelism (shards the replicated activations)");
    app.add_option("--precision,-p", r.precision,
                   "The linear layers' GEMM precision (bf16, fp16, fp8, fp4): under fp8 a framework may keep "
                   "FP8 copies of their inputs (frameworks.csv fp8_saved_input_bytes)")
        ->capture_default_str();
    app.add_option("--dropout", r.dropout,
                   "Dropout probability of the run: above 0 stores dropout masks [default: the model config's]");
    app.add_option("--framework", r.framework,
                   "Training framework (data/frameworks/frameworks.csv) whose stored dtypes are counted: "
                   "megatron-core (18 B/param), torchtitan (16 B), deepspeed (16 B), ...")
        ->capture_default_str();
    app.add_option("--framework-file", framework_files_, "CSV adding or changing framework profiles; repeatable")
        ->allow_extra_args(false);
    app.add_option("--state", r.state,
                   "Another training framework whose stored dtypes to count [default: --framework's]");
    app.add_option("--weight-precision", r.weight_dtype, "Stored weight precision [default: the --state's]");
    app.add_option("--grad-precision", r.grad_dtype, "Main gradient precision [default: the --state's]");
    app.add_option("--optimizer", r.optimizer, "adam (mixed precision), adam-fp32, sgd")
        ->check(CLI::IsMember({"adam", "adam-fp32", "sgd"}))
        ->capture_default_str();
    app.add_option("--kv-precision", r.kv_dtype, "KV-cache precision")->capture_default_str();
    app.add_option("--context", r.context, "KV cache context length [default: --seq-len]");
    app.add_flag("--json", json_, "Machine-readable output (docs/cli.md)");
    auto* g = app.add_option_group("Parallelism", "The layout (as mfu predict): memory of the most loaded GPU");
    g->add_option("--gpus,-n", r.gpus, "GPUs in the job [default: tp x pp x cp]");
    g->add_option("--tp", r.tp, "Tensor-parallel degree")->capture_default_str();
    g->add_option("--pp", r.pp, "Pipeline-parallel degree")->capture_default_str();
    g->add_option("--vpp", r.vpp, "Virtual pipeline stages per GPU (interleaved 1F1B)")->capture_default_str();
    g->add_option("--cp", r.cp, "Context-parallel degree")->capture_default_str();
    g->add_option("--ep", r.ep, "Expert-parallel degree (MoE)")->capture_default_str();
    g->add_option("--etp", r.etp, "Expert tensor-parallel degree (MoE)")->capture_default_str();
    g->add_option("--zero", r.zero,
                  "ZeRO stage over dp x cp: 0, 1 (distributed optimizer), 2, 3 (FSDP) [default: the framework's "
                  "zero_stage: 1 for megatron-core, 3 for torchtitan; data/frameworks]");
    g->add_option("--global-batch", r.global_batch, "Global batch (sequences per step) [default: dp x micro-batch]");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(request_.model, model_.Resolve());
    if (seq_len_option_->count() > 0)
      request_.seq_len = seq_len_;
    request_.flash_attention = !no_flash_;
    CatalogFiles files;
    files.frameworks = framework_files_;
    MFU_ASSIGN_OR_RETURN(Catalog catalog, Catalog::Load(RealFileSystem(), files));
    MFU_ASSIGN_OR_RETURN(MemoryReport report, EstimateMemory(catalog, request_));
    ctx.out << ctx.reporter(json_).Report(report);
    return Status::Ok();
  }

 private:
  ModelFlags model_;
  MemoryRequest request_;
  std::vector<std::string> framework_files_;
  CLI::Option* seq_len_option_ = nullptr;
  int64_t seq_len_ = 4096;
  bool no_flash_ = false;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeMemoryCommand() {
  return std::make_unique<MemoryCommand>();
}

}  // namespace mfu::cli
