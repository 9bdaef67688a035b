// The trace job (mfu/trace_job.h): the per-rank analyses and the
// collectives, in three ParallelFor phases over ranks.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/parallel.h"
#include "mfu/setup.h"
#include "mfu/trace_job.h"

namespace mfu {
namespace {

// The main window: every profiler step together (HTA's window with
// --hta-compat: the last step dropped), or the whole trace without steps.
TraceWindow MainWindow(const std::vector<ProfilerStepInfo>& steps, BreakdownVariant variant) {
  if (variant == BreakdownVariant::kHtaCompat)
    return HtaWindow(steps);
  if (steps.empty())
    return WholeTraceWindow();
  return StepsWindow(steps);
}

// What a rank's analyses share: computed first, then read-only.
struct RankBasis {
  std::vector<uint32_t> launches;
  std::vector<ProfilerStepInfo> steps;
};

// The launch links, the profiler steps and the accelerator (needs the
// rank's kernel classes).
RankBasis Prepare(const RankTrace& t, RankAnalysis& r, const HardwareDb& db, const TraceJobOptions& options) {
  RankBasis basis;
  basis.launches = LinkLaunches(t);
  basis.steps = FindProfilerSteps(t, basis.launches);
  auto gpu = ResolveTraceAccelerator(t, db, options.gpu_override);
  if (gpu.ok()) {
    r.gpu = *gpu;
  } else {
    r.accelerator_error = gpu.status().message();
  }
  return basis;
}

// The breakdowns of the main window and of every step, and the phases.
void AnalyzeBreakdowns(const RankTrace& t, const RankBasis& basis, RankAnalysis& r, const TraceJobOptions& options) {
  BreakdownOptions b;
  b.variant = options.variant;
  b.top_kernels = options.top_kernels;
  if (options.variant == BreakdownVariant::kHtaCompat && t.first_event_ts_ns != kNoId) {
    b.hta_row0_ts_ns = t.first_event_ts_ns;
  }
  std::vector<TraceWindow> windows{MainWindow(basis.steps, options.variant)};
  for (const auto& step : basis.steps)
    windows.push_back(StepWindow(step));
  std::vector<WindowBreakdown> breakdowns = AnalyzeWindows(t, r.classes, basis.launches, windows, b);
  r.main = std::move(breakdowns.front());
  for (size_t s = 0; s < basis.steps.size(); ++s)
    r.steps.push_back({basis.steps[s], std::move(breakdowns[s + 1])});
  r.phases = ComputeStepPhases(t, basis.steps);
}

// The main waterfall spans the steps' windows end to end (one step: itself).
void MainWaterfall(const RankTrace& t, RankAnalysis& r, WaterfallOptions w) {
  int64_t start = r.step_waterfalls.front().start_ns, end = r.step_waterfalls.back().end_ns;
  std::string label = r.step_waterfalls.size() == 1 ? r.step_waterfalls.front().label : "all steps";
  if (r.step_waterfalls.size() > 1 && w.model) {
    // Tokens per step scale with the number of steps in the window.
    w.model->tokens_per_step *= static_cast<double>(r.step_waterfalls.size());
  }
  auto whole = ComputeWaterfall(t, r.classes, r.attribution, start, end, label, w);
  if (whole.ok()) {
    r.waterfall = std::move(whole).value();
  } else {
    r.waterfall_error = whole.status().message();
  }
}

// The waterfall's model input (validated by ValidateTraceJobOptions); it
// points into `options`.
std::optional<ModelStepInput> ModelInput(const TraceJobOptions& options) {
  if (!options.model)
    return std::nullopt;
  const TraceModelRequest& m = *options.model;
  ModelStepInput in;
  in.model = &m.model;
  in.convention = m.convention;
  in.recompute = m.recompute;
  in.seq_len = m.seq_len;
  in.tokens_per_step =
      m.tokens_per_step ? *m.tokens_per_step : static_cast<double>(m.batch) * static_cast<double>(m.seq_len);
  in.precision = m.precision;
  in.training = m.training;
  return in;
}

int ThreadCount(const TraceJobOptions& options) {
  return options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

Status ValidateModel(const TraceModelRequest& m) {
  if (m.seq_len <= 0)
    return InvalidArgumentError(Param("model") + " needs " + Param("seq_len") + " (the attention length)");
  if (m.tokens_per_step && m.batch > 0)
    return InvalidArgumentError(Param("tokens_per_step") + " and " + Param("batch") + " are alternatives");
  if (!m.tokens_per_step && m.batch <= 0)
    return InvalidArgumentError(Param("model") + " needs " + Param("tokens_per_step") + " or " + Param("batch"));
  if (m.tokens_per_step && !(*m.tokens_per_step > 0))
    return InvalidArgumentError(Param("tokens_per_step") + " must be positive");
  return Status::Ok();
}

// FLOPs from shapes and the waterfalls (per step and over all steps).
void AnalyzeFlops(const RankTrace& t, const RankBasis& basis, RankAnalysis& r, const TraceJobOptions& options) {
  r.attribution = AttributeOpFlops(t, r.classes, basis.launches);
  if (!r.gpu)
    return;
  WaterfallOptions w;
  w.gpu = r.gpu;
  w.model = ModelInput(options);
  w.step_time = options.step_time;
  w.steps = &basis.steps;
  auto per_step = ComputeStepWaterfalls(t, r.classes, basis.launches, r.attribution, w);
  if (per_step.ok()) {
    r.step_waterfalls = std::move(per_step).value();
  } else {
    r.waterfall_error = per_step.status().message();
  }
  if (!r.step_waterfalls.empty())
    MainWaterfall(t, r, w);
}

// distributedInfo.rank, else the position in the input.
int64_t RankId(const RankAnalysis& r, size_t index) {
  return r.trace.rank >= 0 ? r.trace.rank : static_cast<int64_t>(index);
}

std::string RankName(const RankAnalysis& r, size_t index) {
  return "rank " + std::to_string(RankId(r, index));
}

// "rank 3" for one of several ranks, "" for a single trace.
std::string RankPrefix(const JobAnalysis& job, size_t index) {
  return job.ranks.size() > 1 ? RankName(job.ranks[index], index) + ": " : "";
}

// A model given but unusable: ranks whose trace names no accelerator.
void NoteModelWithoutGpu(const JobAnalysis& job, const TraceJobOptions& options, std::vector<Note>& notes) {
  if (!options.model)
    return;
  size_t without = 0;
  for (const RankAnalysis& r : job.ranks)
    without += r.gpu == nullptr ? 1 : 0;
  if (without == 0)
    return;
  std::string which = job.ranks.size() == 1
                          ? "the trace names"
                          : std::to_string(without) + " of " + std::to_string(job.ranks.size()) + " traces name";
  notes.push_back({NoteKind::kWarning, "model_ignored_no_gpu",
                   Param("model") + " is ignored where there is no accelerator peak: " + which +
                       " no GPU (deviceProperties); pass " + Param("gpu")});
}

// The model MFU against the peak (mfu_above_peak) and the model's FLOPs
// against the FLOPs the kernels executed (model_flops_mismatch), for the rank
// where each is worst.
void NoteModelPlausibility(const JobAnalysis& job, std::vector<Note>& notes) {
  std::optional<size_t> worst_mfu, worst_ratio;
  double worst_ratio_log = 0;
  for (size_t i = 0; i < job.ranks.size(); ++i) {
    const auto& w = job.ranks[i].waterfall;
    if (!w || !w->model)
      continue;
    if (!worst_mfu || w->model->mfu > job.ranks[*worst_mfu].waterfall->model->mfu)
      worst_mfu = i;
    // Only where shapes cover most matrix time: otherwise executed FLOPs are partial.
    const double ratio = w->model->executed_over_model;
    if (w->coverage >= 0.9 && ratio > 0) {
      const double off = std::abs(std::log(ratio));
      if (off > std::log(2.0) && off > worst_ratio_log) {
        worst_ratio_log = off;
        worst_ratio = i;
      }
    }
  }
  const std::string causes = Param("tokens_per_step") + " counts the whole job instead of one rank, or " +
                             Param("model") + " is not the model that ran";
  if (worst_mfu) {
    auto note = CheckUtilizationPlausible(job.ranks[*worst_mfu].waterfall->model->utilization, causes);
    if (note) {
      note->message = RankPrefix(job, *worst_mfu) + "model " + note->message;
      notes.push_back(std::move(*note));
    }
  }
  if (worst_ratio) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2f", job.ranks[*worst_ratio].waterfall->model->executed_over_model);
    notes.push_back({NoteKind::kWarning, "model_flops_mismatch",
                     RankPrefix(job, *worst_ratio) + "the kernels executed " + ratio +
                         "x the model's FLOPs (shapes cover the matrix time): likely " + causes});
  }
}

// A stated precision the accelerator lists no peak of: the model MFU is
// against the fallback's peak (bf16 <-> fp16, the rule predict uses).
void NotePeakFallback(const JobAnalysis& job, std::vector<Note>& notes) {
  for (size_t i = 0; i < job.ranks.size(); ++i) {
    const RankAnalysis& r = job.ranks[i];
    if (!r.waterfall || !r.waterfall->model || !r.waterfall->model->peak_fallback() || r.gpu == nullptr)
      continue;
    const ModelStepMfu& m = *r.waterfall->model;
    notes.push_back({NoteKind::kAssumption, "peak_fallback",
                     RankPrefix(job, i) + r.gpu->id + " lists no dense " + DTypeName(m.precision) +
                         " peak: the model MFU is against its dense " + DTypeName(m.peak_precision) +
                         " peak (the tensor-core rates are equal where both are listed; predict takes the same)"});
    return;  // once: every rank of a job has the precision it was given
  }
}

// Matrix kernels ran but no rank recorded shapes: the hardware MFU is unknown.
void NoteUnknownFlops(const JobAnalysis& job, std::vector<Note>& notes) {
  int64_t matrix = 0, with_flops = 0;
  for (const RankAnalysis& r : job.ranks) {
    if (r.waterfall) {
      matrix += r.waterfall->matrix_ns;
      with_flops += r.waterfall->matrix_with_flops_ns;
    }
  }
  if (matrix > 0 && with_flops == 0) {
    notes.push_back(
        {NoteKind::kWarning, "flops_unknown",
         "the hardware-FLOPs MFU is unknown: the trace recorded no shapes; " + std::string(kRecordShapesHint)});
  }
}

std::vector<Note> JobNotes(const JobAnalysis& job, const TraceJobOptions& options) {
  std::vector<Note> notes;
  NoteModelWithoutGpu(job, options, notes);
  NoteModelPlausibility(job, notes);
  NotePeakFallback(job, notes);
  NoteUnknownFlops(job, notes);
  return notes;
}

// The rank-independent results: per-rank verdicts, the summary, the job's
// verdict and notes.
void Conclude(JobAnalysis& job, const TraceJobOptions& options) {
  for (RankAnalysis& r : job.ranks)
    r.verdict = ComputeRankVerdict(r);
  job.summary = SummarizeJob(job);
  job.verdict = ComputeJobVerdict(job);
  job.notes = JobNotes(job, options);
}

}  // namespace

Status CheckDetailRanks(const JobAnalysis& job, const TraceJobOptions& options) {
  for (int64_t want : options.detail_ranks) {
    bool found = false;
    std::string list;
    for (size_t i = 0; i < job.ranks.size(); ++i) {
      found = found || RankId(job.ranks[i], i) == want;
      list += (list.empty() ? "" : ",") + std::to_string(RankId(job.ranks[i], i));
    }
    if (found)
      continue;
    return InvalidArgumentError(Param("ranks") + ": no rank " + std::to_string(want) +
                                " in the traces (ranks: " + list + ")");
  }
  return Status::Ok();
}

bool ShowsRankDetail(const JobAnalysis& job, const TraceJobOptions& options, size_t index) {
  if (job.ranks.size() <= 1 || options.detail_all_ranks)
    return true;
  const int64_t id = RankId(job.ranks[index], index);
  return std::find(options.detail_ranks.begin(), options.detail_ranks.end(), id) != options.detail_ranks.end();
}

Status ValidateTraceJobOptions(const TraceJobOptions& options, const Catalog& catalog) {
  if (options.model)
    MFU_RETURN_IF_ERROR(ValidateModel(*options.model));
  if (!options.gpu_override.empty())
    MFU_RETURN_IF_ERROR(catalog.hardware.Find(options.gpu_override).status());
  if (options.threads < 0 || options.threads > 256)
    return InvalidArgumentError(Param("threads") + " must be between 1 and 256");
  return Status::Ok();
}

StatusOr<JobAnalysis> AnalyzeTracePaths(const FileSystem& fs, const std::vector<std::string>& paths,
                                        const Catalog& catalog, const TraceJobOptions& options) {
  MFU_RETURN_IF_ERROR(ValidateTraceJobOptions(options, catalog));
  TraceParseOptions parse;
  parse.keep_python_functions = options.keep_python_functions;
  parse.threads = ThreadCount(options);
  parse.max_events = options.max_events;
  parse.progress = options.progress;
  std::vector<RankTrace> traces;
  for (const std::string& path : paths) {
    MFU_ASSIGN_OR_RETURN(std::vector<RankTrace> set, ParseTraceSet(fs, path, parse, parse.threads));
    for (auto& t : set)
      traces.push_back(std::move(t));
  }
  return AnalyzeTraceJob(std::move(traces), catalog, options);
}

Status CheckTraceErrors(const JobAnalysis& job) {
  for (const auto& r : job.ranks) {
    if (r.trace.error_count() > 0)
      return ParseError(r.trace.path + ": " + std::to_string(r.trace.error_count()) + " error diagnostics");
  }
  return Status::Ok();
}

namespace {

// The tasks that need only the classes, in one ParallelFor: per rank its
// basis; across ranks the collectives (and HTA's straggler variant).
std::vector<RankBasis> PrepareRanks(const std::vector<RankTrace>& traces,
                                    const std::vector<std::vector<KernelClass>>& classes, const HardwareDb& db,
                                    const TraceJobOptions& options, int threads, JobAnalysis& job) {
  const size_t n = traces.size();
  std::vector<RankBasis> basis(n);
  const bool hta_stragglers = options.variant == BreakdownVariant::kHtaCompat && n > 1;
  const size_t job_tasks = hta_stragglers ? 2 : 1;
  ParallelFor(job_tasks + n, threads, [&](size_t task) {
    if (task == 0) {
      auto collectives = AnalyzeCollectives(traces, classes);
      if (collectives.ok()) {
        job.collectives = std::move(collectives).value();
      } else {
        job.collectives_error = collectives.status().message();
      }
    } else if (task < job_tasks) {
      auto hta = FindStragglersHta(traces, classes);
      if (hta.ok())
        job.hta_stragglers = std::move(hta).value();
    } else {
      const size_t i = task - job_tasks;
      basis[i] = Prepare(traces[i], job.ranks[i], db, options);
    }
  });
  return basis;
}

}  // namespace

// The traces stay in one vector while the analyses run (collectives read
// every rank), and move into their RankAnalysis at the end. Three phases,
// each a ParallelFor: classes; bases beside the collectives; breakdowns
// beside FLOPs.
StatusOr<JobAnalysis> AnalyzeTraceJob(std::vector<RankTrace> traces, const Catalog& catalog,
                                      const TraceJobOptions& options) {
  MFU_RETURN_IF_ERROR(ValidateTraceJobOptions(options, catalog));
  const int threads = ThreadCount(options);
  const size_t n = traces.size();
  JobAnalysis job;
  job.ranks.resize(n);
  std::vector<std::vector<KernelClass>> classes(n);
  ParallelFor(n, threads, [&](size_t i) { classes[i] = ClassifyEvents(traces[i], catalog.kernel_classes); });
  const std::vector<RankBasis> basis = PrepareRanks(traces, classes, catalog.hardware, options, threads, job);
  for (size_t i = 0; i < n; ++i)
    job.ranks[i].classes = std::move(classes[i]);

  // Per rank, independently: the breakdowns and the FLOPs/waterfalls.
  ParallelFor(2 * n, threads, [&](size_t task) {
    const size_t i = task / 2;
    if (task % 2 == 0) {
      AnalyzeBreakdowns(traces[i], basis[i], job.ranks[i], options);
    } else {
      AnalyzeFlops(traces[i], basis[i], job.ranks[i], options);
    }
  });
  // Over the main window's GPU span: needs both halves of the rank's work.
  for (size_t i = 0; i < n; ++i) {
    RankAnalysis& r = job.ranks[i];
    r.flops = SummarizeFlops(traces[i], r.classes, r.attribution, r.gpu, r.main.temporal.gpu_start_ns,
                             r.main.temporal.gpu_end_ns);
    r.trace = std::move(traces[i]);
  }
  Conclude(job, options);
  return job;
}

}  // namespace mfu
