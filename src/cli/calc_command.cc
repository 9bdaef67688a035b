// mfu calc: MFU and HFU from a training log's throughput or step time.

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <string>

#include "cli/command.h"
#include "cli/model_flags.h"
#include "mfu/calc.h"
#include "mfu/hwdb.h"
#include "mfu/report_count.h"

namespace mfu::cli {
namespace {

class CalcCommand final : public Command {
 public:
  const char* name() const override { return "calc"; }
  const char* summary() const override { return "MFU and HFU from a job's throughput or step time"; }

  void Register(CLI::App& app) override {
    CalcRequest& r = request_;
    model_.Register(app);
    gpu_.Register(app, /*required=*/true);
    app.add_option("--gpus,-n", r.throughput.gpus, "GPUs in the job")->required();
    app.add_option("--seq-len,-s", r.throughput.seq_len, "Training sequence length")->required();
    app.add_option("--tokens-per-sec", r.tokens_per_sec, "Whole-job tokens/s (suffixes k, M, G/B, T accepted: 46k)");
    app.add_option("--tokens-per-sec-per-gpu", r.tokens_per_sec_per_gpu,
                   "Tokens/s per GPU (suffixes as --tokens-per-sec)");
    app.add_option("--step-time", r.throughput.step_time_s, "Seconds per optimizer step (with --global-batch)");
    app.add_option("--global-batch", r.throughput.global_batch, "Sequences per step (with --step-time)");
    app.add_option("--precision,-p", r.precision, "Dtype whose dense peak is the denominator (bf16, fp16, fp8, ...)")
        ->capture_default_str();
    app.add_option("--recompute", r.recompute,
                   "none, selective (Korthikanti), selective-literal, full, selective-op (torchtitan)")
        ->capture_default_str();
    app.add_option("--convention,-c", r.convention, "FLOPs convention (see 'mfu flops --help')")->capture_default_str();
    app.add_flag("--json", json_, "Machine-readable output (docs/cli.md)");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(request_.model, model_.Resolve());
    MFU_ASSIGN_OR_RETURN(HardwareDb db, gpu_.LoadDb());
    request_.gpu = gpu_.gpu;
    MFU_ASSIGN_OR_RETURN(CalcReport report, RunCalc(db, request_));
    ctx.out << ctx.reporter(json_).Report(report);
    return Status::Ok();
  }

 private:
  ModelFlags model_;
  GpuFlags gpu_;
  CalcRequest request_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeCalcCommand() {
  return std::make_unique<CalcCommand>();
}

}  // namespace mfu::cli
