// mfu trace: analysis of PyTorch profiler (Kineto) traces: where the time
// went (compute / communication / idle), achieved FLOP/s from recorded shapes,
// the MFU waterfall, collectives across ranks.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "cli/command.h"
#include "cli/model_flags.h"
#include "cli/output_files.h"
#include "mfu/catalog.h"
#include "mfu/file_system.h"
#include "mfu/report_trace.h"
#include "mfu/trace_job.h"

namespace mfu::cli {
namespace {

// Keeps `mfu trace` on one such file under 1 GiB (docs/trace.md: about
// 113 bytes per event at the peak, plus ~45 MB).
constexpr uint64_t kDefaultMaxEvents = 8'000'000;

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
  bool quiet = false;
  uint64_t max_events = kDefaultMaxEvents;
  std::string ranks;  // --ranks all | 0,3
};

// "mfu: reading <file>: 1.2 GB, 3.4M events" on one rewritten stderr line,
// for inputs past a few hundred MB; cleared when the parse ends.
class ProgressLine {
 public:
  ProgressLine(std::ostream& err, bool enabled) : err_(err), enabled_(enabled) {}
  bool enabled() const { return enabled_; }
  void Show(const TraceProgress& p) {
    if (p.bytes_read < kFromBytes)
      return;
    std::lock_guard<std::mutex> lock(mu_);
    err_ << "\rmfu: reading " << p.path << ": " << p.bytes_read / 1'000'000 << " MB";
    if (p.total_bytes > 0)
      err_ << " of " << p.total_bytes / 1'000'000;
    err_ << ", " << p.events << " events\x1b[K" << std::flush;
    shown_ = true;
  }
  void Clear() {
    if (shown_)
      err_ << "\r\x1b[K" << std::flush;
  }

 private:
  static constexpr uint64_t kFromBytes = 256u << 20;
  std::ostream& err_;
  bool enabled_;
  bool shown_ = false;
  std::mutex mu_;
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
        m->add_option("--recompute", o_.recompute, "none, selective, selective-literal, full, selective-op")
            ->capture_default_str(),
        m->add_option("--precision", o_.precision, "Peak for the model MFU [default: the dominant GEMM dtype]"),
        m->add_flag("--inference", o_.inference, "Forward only (1x) instead of forward + backward (3x)"),
    };
    app.add_option("--step-window", o_.step_time, "Step window: cpu (ProfilerStep range) or gpu (GPU span)")
        ->check(CLI::IsMember({"cpu", "gpu"}))
        ->capture_default_str();
    app.add_flag("--python", o_.python, "Keep python_function events (slower, more memory)");
    app.add_flag("--strict", o_.strict, "Exit 1 when any trace has error-severity diagnostics");
    app.add_flag("--verbose,-v", o_.verbose, "Every rank's detail, the top kernels per class, every diagnostic");
    app.add_option("--ranks", o_.ranks, "Multi-rank sets: the ranks shown in detail after the summary (all, or 0,3)");
    app.add_flag("--json", o_.json, "Machine-readable output (docs/trace.md)");
    app.add_option("--csv", o_.csv_dir, "Also write CSV tables into this directory");
    app.add_option("--max-events", o_.max_events, "Most events per trace file, the memory cap (0: none)")
        ->capture_default_str();
    app.add_flag("--quiet,-q", o_.quiet, "No progress line on stderr for large traces");
  }

  Status Run(const CommandContext& ctx) override {
    TraceJobOptions options;
    options.variant = o_.hta_compat ? BreakdownVariant::kHtaCompat : BreakdownVariant::kMfu;
    options.top_kernels = o_.top;
    options.gpu_override = o_.gpu.gpu;
    options.step_time = o_.step_time == "gpu" ? StepTimeKind::kGpuSpan : StepTimeKind::kCpuStep;
    options.threads = o_.threads;
    options.keep_python_functions = o_.python;
    options.max_events = o_.max_events;
    ProgressLine progress(ctx.err, !o_.quiet && isatty(STDERR_FILENO) != 0);
    if (progress.enabled())
      options.progress = [&progress](const TraceProgress& p) { progress.Show(p); };
    MFU_ASSIGN_OR_RETURN(options.model, ModelRequest());
    MFU_RETURN_IF_ERROR(ParseRanks(options));
    CatalogFiles files;
    if (!o_.gpu.hardware_file.empty())
      files.hardware.push_back(o_.gpu.hardware_file);
    if (!o_.kernel_classes.empty())
      files.kernel_classes.push_back(o_.kernel_classes);
    const RealFileSystem fs;
    MFU_ASSIGN_OR_RETURN(Catalog catalog, Catalog::Load(fs, files));
    StatusOr<JobAnalysis> analyzed = AnalyzeTracePaths(fs, o_.paths, catalog, options);
    progress.Clear();
    MFU_ASSIGN_OR_RETURN(JobAnalysis job, std::move(analyzed));
    MFU_RETURN_IF_ERROR(CheckDetailRanks(job, options));
    if (!o_.csv_dir.empty())
      MFU_RETURN_IF_ERROR(WriteOutputFiles(o_.csv_dir, RenderTraceJobCsv(job)));
    ctx.out << ctx.reporter(o_.json).Report(job, options, o_.verbose);
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

  // --ranks: "all" or a comma-separated list of rank numbers.
  Status ParseRanks(TraceJobOptions& options) const {
    options.detail_all_ranks = o_.verbose || o_.ranks == "all";
    if (o_.ranks.empty() || o_.ranks == "all")
      return Status::Ok();
    for (const std::string& item : base::Split(o_.ranks, ',')) {
      int64_t rank = -1;
      auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), rank);
      if (ec != std::errc() || end != item.data() + item.size() || rank < 0)
        return InvalidArgumentError("--ranks: '" + item + "' is not a rank (all, or a list such as 0,3)");
      options.detail_ranks.push_back(rank);
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
