// mfu trace: analysis of PyTorch profiler (Kineto) traces: where the time
// went (compute / communication / idle), achieved FLOP/s from recorded shapes,
// the MFU waterfall, collectives across ranks.

#include <CLI/CLI.hpp>
#include <fstream>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "base/strings.h"
#include "cli/command.h"
#include "cli/model_flags.h"
#include "report/json_common.h"
#include "cli/trace_analysis.h"
#include "cli/trace_render.h"

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
    app.add_option("--step-time", o_.step_time, "Step window: cpu (ProfilerStep range) or gpu (GPU span)")
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
    std::optional<ModelSpec> model;
    MFU_RETURN_IF_ERROR(ResolveModel(model, options));
    MFU_ASSIGN_OR_RETURN(HardwareDb db, o_.gpu.LoadDb());
    if (!o_.gpu.gpu.empty())
      MFU_RETURN_IF_ERROR(db.Find(o_.gpu.gpu).status());  // a typo is a usage error
    MFU_ASSIGN_OR_RETURN(KernelClassifier classifier, KernelClassifier::LoadBuiltin());
    if (!o_.kernel_classes.empty())
      MFU_RETURN_IF_ERROR(classifier.AddRulesFile(o_.kernel_classes));

    TraceParseOptions parse;
    parse.keep_python_functions = o_.python;
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    parse.threads = o_.threads > 0 ? o_.threads : cores;
    options.threads = parse.threads;
    if (o_.threads < 0 || o_.threads > 256)
      return InvalidArgumentError("--threads must be between 1 and 256");
    std::vector<RankTrace> traces;
    for (const std::string& path : o_.paths) {
      MFU_ASSIGN_OR_RETURN(std::vector<RankTrace> set, ParseTraceSet(path, parse, parse.threads));
      for (auto& t : set)
        traces.push_back(std::move(t));
    }
    MFU_ASSIGN_OR_RETURN(JobAnalysis job, AnalyzeJob(std::move(traces), classifier, db, options));
    if (!o_.csv_dir.empty())
      MFU_RETURN_IF_ERROR(WriteTraceCsv(o_.csv_dir, job));
    if (o_.json) {
      report::PrintJson(ctx.out, TraceJobJson(job, options));
    } else {
      PrintTraceJob(ctx.out, job, options, o_.verbose);
    }
    if (o_.strict) {
      for (const auto& r : job.ranks) {
        if (r.trace.error_count() > 0) {
          return ParseError(r.trace.path + ": " + std::to_string(r.trace.error_count()) +
                            " error diagnostics (--strict)");
        }
      }
    }
    return Status::Ok();
  }

 private:
  Status ResolveModel(std::optional<ModelSpec>& model, TraceJobOptions& options) {
    if (o_.model.model.empty()) {
      if (!o_.tokens_per_step.empty() || o_.batch > 0) {
        return InvalidArgumentError("--tokens-per-step and --batch need --model");
      }
      for (const CLI::Option* opt : model_only_) {
        if (opt->count() > 0)
          return InvalidArgumentError(opt->get_name() + " needs --model");
      }
      return Status::Ok();
    }
    MFU_ASSIGN_OR_RETURN(model, o_.model.Resolve());
    ModelStepInput in;
    MFU_ASSIGN_OR_RETURN(in.convention, ParseConvention(o_.convention));
    MFU_ASSIGN_OR_RETURN(in.recompute, ParseRecompute(o_.recompute));
    if (o_.seq_len <= 0)
      return InvalidArgumentError("--model needs --seq-len (the attention length)");
    in.seq_len = o_.seq_len;
    if (!o_.tokens_per_step.empty() && o_.batch > 0) {
      return InvalidArgumentError("--tokens-per-step and --batch are alternatives");
    }
    if (!o_.tokens_per_step.empty()) {
      MFU_ASSIGN_OR_RETURN(in.tokens_per_step, base::ParseScaledNumber(o_.tokens_per_step, "--tokens-per-step"));
    } else if (o_.batch > 0) {
      in.tokens_per_step = static_cast<double>(o_.batch) * static_cast<double>(o_.seq_len);
    } else {
      return InvalidArgumentError("--model needs --tokens-per-step or --batch");
    }
    if (!(in.tokens_per_step > 0))
      return InvalidArgumentError("--tokens-per-step must be positive");
    if (!o_.precision.empty()) {
      MFU_ASSIGN_OR_RETURN(DType d, ParseDType(o_.precision));
      in.precision = d;
    }
    in.training = !o_.inference;
    model_ = std::move(*model);
    in.model = &model_;
    options.model = in;
    return Status::Ok();
  }

  TraceOptions o_;
  ModelSpec model_;
  std::vector<CLI::Option*> model_only_;
};

}  // namespace

std::unique_ptr<Command> MakeTraceCommand() {
  return std::make_unique<TraceCommand>();
}

}  // namespace mfu::cli
