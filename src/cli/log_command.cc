// mfu log: a training log's per-step timeline with MFU recomputed from first
// principles and every logged figure checked (mfu/log_analysis.h).

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/model_flags.h"
#include "cli/output_files.h"
#include "mfu/file_system.h"
#include "mfu/hwdb.h"
#include "mfu/log_analysis.h"
#include "mfu/report_log.h"

namespace mfu::cli {
namespace {

class LogCommand final : public Command {
 public:
  const char* name() const override { return "log"; }
  const char* summary() const override { return "Per-step MFU from a training log, its logged figures checked"; }

  void Register(CLI::App& app) override {
    LogAnalysisRequest& r = request_;
    app.add_option("FILE", files_, "Training logs: several are attempts (restarts) of one job, in order")->required();
    app.add_option("--format", format_,
                   "Force a log format (megatron-lm, megatron-bridge, megatron-progress, nemo2, torchtitan, "
                   "deepspeed, hf-trainer, hf-trainer-state, maxtext, nanogpt, composer, picotron)")
        ->capture_default_str();
    model_.Register(app);
    gpu_.Register(app, /*required=*/false);
    app.add_option("--gpus,-n", r.gpus, "GPUs in the job [default: the log's header]");
    app.add_option("--seq-len,-s", r.seq_len, "Training sequence length [default: the log's header]");
    app.add_option("--global-batch", r.global_batch, "Sequences per optimizer step [default: the log]");
    app.add_option("--convention,-c", r.convention, "FLOPs convention [default: the framework's own, docs/logs.md]");
    app.add_option("--precision,-p", r.precision, "Dtype whose dense peak is the denominator [default: header, bf16]");
    app.add_option("--recompute", r.recompute,
                   "none, selective, selective-literal, full, selective-op [default: header, none]");
    app.add_option("--tolerance", r.tolerance, "Relative disagreement of a logged figure that is a finding")
        ->capture_default_str();
    app.add_flag("--json", json_, "Machine-readable output (docs/logs.md)");
    app.add_option("--csv", csv_dir_, "Also write steps.csv and findings.csv into this directory");
  }

  Status Run(const CommandContext& ctx) override {
    LogReadOptions read;
    std::optional<LogFormat> format = ParseLogFormat(format_);
    if (!format) {
      return InvalidArgumentError("--format: unknown format '" + format_ + "' (see 'mfu help log' for the formats)");
    }
    read.format = *format;
    const GenericModelOptions& g = model_.generic;
    if (!model_.model.empty() || g.layers > 0 || g.hidden > 0 || g.heads > 0 || g.vocab > 0) {
      MFU_ASSIGN_OR_RETURN(ModelSpec spec, model_.Resolve());
      request_.model = std::move(spec);
    }
    MFU_ASSIGN_OR_RETURN(HardwareDb db, gpu_.LoadDb());
    request_.gpu = gpu_.gpu;
    const RealFileSystem fs;
    MFU_ASSIGN_OR_RETURN(LogAnalysis analysis, AnalyzeTrainingLogFiles(fs, files_, read, db, request_));
    if (!csv_dir_.empty()) {
      MFU_RETURN_IF_ERROR(
          WriteOutputFile(csv_dir_, "steps.csv", [&](std::ostream& out) { WriteLogStepsCsv(analysis, out); }));
      std::ostringstream findings;  // small: one row per finding, in the CLI's spelling
      WriteLogFindingsCsv(analysis, findings);
      MFU_RETURN_IF_ERROR(WriteOutputFiles(csv_dir_, {{"findings.csv", findings.str()}}));
    }
    ctx.reporter(json_).Write(analysis, ctx.out);  // streamed
    return Status::Ok();
  }

 private:
  std::vector<std::string> files_;
  std::string format_ = "auto";
  ModelFlags model_;
  GpuFlags gpu_;
  LogAnalysisRequest request_;
  std::string csv_dir_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeLogCommand() {
  return std::make_unique<LogCommand>();
}

}  // namespace mfu::cli
