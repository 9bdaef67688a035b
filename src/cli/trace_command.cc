// mfu trace: analysis of PyTorch profiler (Kineto) traces: where the time
// went (compute / communication / idle), achieved FLOP/s from recorded shapes,
// the MFU waterfall, collectives across ranks.

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "cli/command.h"
#include "cli/model_flags.h"
#include "mfu/catalog.h"
#include "mfu/file_system.h"
#include "mfu/report_trace.h"
#include "mfu/trace_job.h"

namespace mfu::cli {
namespace {

struct TraceOptions {
  std::vector<std::string> paths;
  int threads = 0;
  bool hta_compat = false;
  bool python = false;
  bool strict = false;
  bool verbose = false;
  bool json = false;
  std::string csv_dir;
  std::string kernel_classes;
  size_t top = 10;
  GpuFlags gpu;
  ModelFlags model;
  std::string tokens_per_step;
  int64_t batch = 0;
  int64_t seq_len = 0;
  std::string convention = "megatron";
  std::string recompute = "none";
  std::string precision;
  std::string step_time = "cpu";
  bool inference = false;
};

class TraceCommand final : public Command {
 public:
  const char* name() const override { return "trace"; }
  const char* summary() const override {
    return "Analyse PyTorch profiler traces: time breakdown, FLOP/s, MFU waterfall, collectives";
  }

  void Register(CLI::App& app) override {
    app.add_option("paths", o_.paths, "Trace files (.json, .json.gz) or directories of rank files")->required();
    app.add_option("--threads,-j", o_.threads, "Threads for parsing and analysis [default: the machine's cores]");
    app.add_flag("--hta-compat", o_.hta_compat,
                 "HTA's definitions: us rounding, last ProfilerStep dropped, name-based kernel types");
    app.add_option("--kernel-classes", o_.kernel_classes, "CSV of extra kernel classification rules");
    app.add_option("--top", o_.top, "Kernels listed per class")->capture_default_str();
    o_.gpu.Register(app, /*required=*/false);
    auto* m = app.add_option_group("Model MFU", "With a model: model-FLOPs MFU next to the waterfall");
    m->add_option("--model,-m", o_.model.model, "Preset or config.json");
    m->add_option("--tokens-per-step", o_.tokens_per_step, "Tokens one rank processed per step (k/M suffixes)");
    m->add_option("--batch", o_.batch, "Sequences per step on one rank (with --seq-len)");
    // These only mean something with --model; given alone they are refused.
    model_only_ = {
        m->add_option("--seq-len", o_.seq_len, "Sequence length"),
        m->add_option("--convention,-c", o_.convention, "FLOPs convention")->capture_default_str(),
        m->add_option("--recompute", o_.recompute, "none, selective, selective-literal, full")->capture_default_str(),
        m->add_option("--precision", o_.precision, "Peak for the model MFU [default: the dominant GEMM dtype]"),
        m->add_flag("--inference", o_.inference, "Forward only (1x) instead of forward + backward (3x)"),
    };
    app.add_option("--step-window", o_.step_time, "Step window: cpu (ProfilerStep range) or gpu (GPU span)")
        ->check(CLI::IsMember({"cpu", "gpu"}))
        ->capture_default_str();
    app.add_flag("--python", o_.python, "Keep python_function events (slower, more memory)");
    app.add_flag("--strict", o_.strict, "Exit 1 when any trace has error-severity diagnostics");
    app.add_flag("--verbose,-v", o_.verbose, "Also list the top kernels per class");
    app.add_flag("--json", o_.json, "Machine-readable output (docs/trace.md)");
    app.add_option("--csv", o_.csv_dir, "Also write CSV tables into this directory");
  }

  Status Run(const CommandContext& ctx) override {
    TraceJobOptions options;
    options.variant = o_.hta_compat ? BreakdownVariant::kHtaCompat : BreakdownVariant::kMfu;
    options.top_kernels = o_.top;
    options.gpu_override = o_.gpu.gpu;
    options.step_time = o_.step_time == "gpu" ? StepTimeKind::kGpuSpan : StepTimeKind::kCpuStep;
    options.threads = o_.threads;
    options.keep_python_functions = o_.python;
    MFU_ASSIGN_OR_RETURN(options.model, ModelRequest());
    CatalogFiles files;
    if (!o_.gpu.hardware_file.empty())
      files.hardware.push_back(o_.gpu.hardware_file);
    if (!o_.kernel_classes.empty())
      files.kernel_classes.push_back(o_.kernel_classes);
    MFU_ASSIGN_OR_RETURN(Catalog catalog, Catalog::Load(RealFileSystem(), files));
    MFU_ASSIGN_OR_RETURN(JobAnalysis job, AnalyzeTracePaths(o_.paths, catalog, options));
    if (!o_.csv_dir.empty())
      MFU_RETURN_IF_ERROR(WriteFiles(o_.csv_dir, RenderTraceJobCsv(job)));
    ctx.out << (o_.json ? RenderTraceJobJson(job, options) : RenderTraceJobText(job, options, o_.verbose));
    if (o_.strict) {
      Status errors = CheckTraceErrors(job);
      if (!errors.ok())
        return ParseError(errors.message() + " (--strict)");
    }
    return Status::Ok();
  }

 private:
  // The model MFU's request (nullopt without --model); the flags that only
  // mean something with --model are refused without it.
  StatusOr<std::optional<TraceModelRequest>> ModelRequest() const {
    if (o_.model.model.empty()) {
      if (!o_.tokens_per_step.empty() || o_.batch > 0)
        return InvalidArgumentError("--tokens-per-step and --batch need --model");
      for (const CLI::Option* opt : model_only_) {
        if (opt->count() > 0)
          return InvalidArgumentError(opt->get_name() + " needs --model");
      }
      return std::optional<TraceModelRequest>();
    }
    TraceModelRequest in;
    MFU_ASSIGN_OR_RETURN(in.model, o_.model.Resolve());
    MFU_ASSIGN_OR_RETURN(in.convention, ParseConvention(o_.convention));
    MFU_ASSIGN_OR_RETURN(in.recompute, ParseRecompute(o_.recompute));
    in.seq_len = o_.seq_len;
    in.batch = o_.batch;
    if (!o_.tokens_per_step.empty()) {
      MFU_ASSIGN_OR_RETURN(in.tokens_per_step, base::ParseScaledNumber(o_.tokens_per_step, "--tokens-per-step"));
    }
    if (!o_.precision.empty()) {
      MFU_ASSIGN_OR_RETURN(in.precision, ParseDType(o_.precision));
    }
    in.training = !o_.inference;
    return std::optional<TraceModelRequest>(std::move(in));
  }

  // Writes (file name, content) pairs into `dir` (created).
  static Status WriteFiles(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
      return NotFoundError(dir + ": cannot create directory (" + ec.message() + ")");
    for (const auto& [name, content] : files) {
      std::ofstream f(std::filesystem::path(dir) / name);
      if (!(f << content))
        return NotFoundError(dir + "/" + name + ": cannot write");
    }
    return Status::Ok();
  }

  TraceOptions o_;
  std::vector<CLI::Option*> model_only_;
};

}  // namespace

std::unique_ptr<Command> MakeTraceCommand() {
  return std::make_unique<TraceCommand>();
}

}  // namespace mfu::cli
