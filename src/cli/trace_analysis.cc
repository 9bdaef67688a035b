#include "cli/trace_analysis.h"

#include <algorithm>

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

void AnalyzeRank(RankAnalysis& r, const KernelClassifier& classifier, const HardwareDb& db,
                 const TraceJobOptions& options) {
  const RankTrace& t = r.trace;
  r.classes = ClassifyEvents(t, classifier);
  const std::vector<uint32_t> launches = LinkLaunches(t);
  const std::vector<ProfilerStepInfo> steps = FindProfilerSteps(t, launches);
  BreakdownOptions b;
  b.variant = options.variant;
  b.top_kernels = options.top_kernels;
  if (options.variant == BreakdownVariant::kHtaCompat && t.first_event_ts_ns != kNoId) {
    b.hta_row0_ts_ns = t.first_event_ts_ns;
  }
  r.main = AnalyzeWindow(t, r.classes, launches, MainWindow(steps, options.variant), b);
  for (const auto& step : steps)
    r.steps.push_back({step, AnalyzeWindow(t, r.classes, launches, StepWindow(step), b)});
  r.phases = trace::ComputeStepPhases(t, steps);

  auto gpu = ResolveTraceAccelerator(t, db, options.gpu_override);
  if (gpu.ok()) {
    r.gpu = *gpu;
  } else {
    r.accelerator_error = gpu.status().message();
  }
  r.attribution = AttributeOpFlops(t, r.classes, launches);
  r.flops =
      SummarizeFlops(t, r.classes, r.attribution, r.gpu, r.main.temporal.gpu_start_ns, r.main.temporal.gpu_end_ns);
  if (!r.gpu)
    return;
  WaterfallOptions w;
  w.gpu = r.gpu;
  w.model = options.model;
  w.step_time = options.step_time;
  auto per_step = ComputeStepWaterfalls(t, r.classes, launches, r.attribution, w);
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
  JobAnalysis job;
  job.ranks.resize(traces.size());
  for (size_t i = 0; i < traces.size(); ++i) {
    job.ranks[i].trace = std::move(traces[i]);
    AnalyzeRank(job.ranks[i], classifier, db, options);
  }
  // Collectives need every rank's events.
  std::vector<RankTrace> views;
  std::vector<std::vector<KernelClass>> classes;
  for (auto& r : job.ranks) {
    views.push_back(std::move(r.trace));
    classes.push_back(r.classes);
  }
  auto collectives = AnalyzeCollectives(views, classes);
  if (collectives.ok()) {
    job.collectives = std::move(collectives).value();
  } else {
    job.collectives_error = collectives.status().message();
  }
  if (options.variant == BreakdownVariant::kHtaCompat && views.size() > 1) {
    auto hta = FindStragglersHta(views, classes);
    if (hta.ok())
      job.hta_stragglers = std::move(hta).value();
  }
  for (size_t i = 0; i < views.size(); ++i)
    job.ranks[i].trace = std::move(views[i]);
  return job;
}

}  // namespace mfu::cli
