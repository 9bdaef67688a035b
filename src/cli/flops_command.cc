// mfu flops: parameters and FLOPs of a model under a named convention, for
// training (with recompute) or inference (prefill, decode).

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>

#include "cli/command.h"
#include "cli/model_flags.h"
#include "mfu/flops.h"
#include "mfu/report_count.h"

namespace mfu::cli {
namespace {

class FlopsCommand final : public Command {
 public:
  const char* name() const override { return "flops"; }
  const char* summary() const override { return "Parameters and FLOPs of a model under a named convention"; }

  void Register(CLI::App& app) override {
    FlopsRequest& r = request_;
    r.mla = "absorbed";  // as mfu infer: what serving frameworks run
    model_.Register(app);
    seq_len_option_ = app.add_option("--seq-len,-s", seq_len_,
                                     "Training sequence length / prompt length [default: 4096 capped at the model's "
                                     "max_position_embeddings; DiT: the tokens of 81 frames at 720p]");
    app.add_option("--global-batch", r.batch, "Sequences per step (training) or per batch (inference)")
        ->capture_default_str();
    // What is counted: the convention and the recompute mode (defaults shown).
    for (auto [flags, value, help] :
         {std::tuple{"--convention,-c", &r.convention,
                     "megatron, palm, kaplan, exact, hf, maxtext, llm-foundry, or all"},
          std::tuple{"--recompute", &r.recompute,
                     "none, selective (Korthikanti), selective-literal, full, selective-op (torchtitan)"}})
      app.add_option(flags, *value, help)->capture_default_str();
    app.add_option("--inference", r.inference, "prefill or decode")->check(CLI::IsMember({"prefill", "decode"}));
    app.add_option("--context", r.context, "Decode: keys each new token attends to");
    app.add_option("--cached", r.cached, "Prefill: tokens already in the KV cache (chunked prefill)");
    app.add_option("--mla", r.mla, "MLA execution at inference: absorbed or naive")
        ->check(CLI::IsMember({"naive", "absorbed"}))
        ->capture_default_str();
    app.add_option("--frames", r.frames, "DiT: video frames (e.g. 81)");
    app.add_option("--height", r.height, "DiT: video height in pixels");
    app.add_option("--width", r.width, "DiT: video width in pixels");
    app.add_flag("--json", json_, "Machine-readable output (docs/cli.md)");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(request_.model, model_.Resolve());
    if (seq_len_option_->count() > 0)
      request_.seq_len = seq_len_;
    MFU_ASSIGN_OR_RETURN(FlopsReport report, CountFlops(request_));
    ctx.out << ctx.reporter(json_).Report(report);
    return Status::Ok();
  }

 private:
  ModelFlags model_;
  FlopsRequest request_;
  CLI::Option* seq_len_option_ = nullptr;
  int64_t seq_len_ = 0;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeFlopsCommand() {
  return std::make_unique<FlopsCommand>();
}

}  // namespace mfu::cli
