#include "cli/trace_analysis.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "base/parallel.h"

namespace mfu::cli {
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
  r.phases = trace::ComputeStepPhases(t, basis.steps);
}

// FLOPs from shapes and the waterfalls (per step and over all steps).
void AnalyzeFlops(const RankTrace& t, const RankBasis& basis, RankAnalysis& r, const TraceJobOptions& options) {
  r.attribution = AttributeOpFlops(t, r.classes, basis.launches);
  if (!r.gpu)
    return;
  WaterfallOptions w;
  w.gpu = r.gpu;
  w.model = options.model;
  w.step_time = options.step_time;
  w.steps = &basis.steps;
  auto per_step = ComputeStepWaterfalls(t, r.classes, basis.launches, r.attribution, w);
  if (per_step.ok()) {
    r.step_waterfalls = std::move(per_step).value();
  } else {
    r.waterfall_error = per_step.status().message();
  }
  // The main waterfall spans the steps' windows end to end (one step: itself).
  if (!r.step_waterfalls.empty()) {
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
}

}  // namespace

StatusOr<JobAnalysis> AnalyzeJob(std::vector<RankTrace> traces, const KernelClassifier& classifier,
                                 const HardwareDb& db, const TraceJobOptions& options) {
  // The traces stay in one vector while the analyses run (collectives read
  // every rank), and move into their RankAnalysis at the end.
  const size_t n = traces.size();
  JobAnalysis job;
  job.ranks.resize(n);
  std::vector<RankBasis> basis(n);
  std::vector<std::vector<KernelClass>> classes(n);
  ParallelFor(n, options.threads, [&](size_t i) { classes[i] = ClassifyEvents(traces[i], classifier); });

  // Tasks that need only the classes: per rank its basis; across ranks the
  // collectives (and HTA's straggler variant), which run beside the bases.
  const bool hta_stragglers = options.variant == BreakdownVariant::kHtaCompat && n > 1;
  const size_t job_tasks = hta_stragglers ? 2 : 1;
  ParallelFor(job_tasks + n, options.threads, [&](size_t task) {
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
  for (size_t i = 0; i < n; ++i)
    job.ranks[i].classes = std::move(classes[i]);

  // Per rank, independently: the breakdowns and the FLOPs/waterfalls.
  ParallelFor(2 * n, options.threads, [&](size_t task) {
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
  return job;
}

}  // namespace mfu::cli
