#include "trace/steps.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "trace/id_index.h"

namespace mfu {
namespace {

constexpr std::string_view kStepPrefix = "ProfilerStep#";

// The N of "ProfilerStep#N", or -1 when the name is not a step.
int64_t StepNumber(std::string_view name) {
  if (name.substr(0, kStepPrefix.size()) != kStepPrefix)
    return -1;
  name.remove_prefix(kStepPrefix.size());
  int64_t n = -1;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
  if (ec != std::errc() || end != name.data() + name.size() || n < 0)
    return -1;
  return n;
}

bool IsStepKind(TraceEventKind kind) {
  return kind == TraceEventKind::kUserAnnotation || kind == TraceEventKind::kCpuOp;
}

std::string StepRangeName(const ProfilerStepInfo& first, const ProfilerStepInfo& last) {
  if (first.name == last.name)
    return first.name;
  return first.name + ".." + last.name.substr(kStepPrefix.size() - 1);  // "ProfilerStep#3..#5"
}

// Records, on the CPU step of the same name, the first GPU-side annotation
// (gpu_user_annotation "ProfilerStep#N") of each step.
void MergeGpuAnnotations(const RankTrace& trace, std::vector<ProfilerStepInfo>& steps) {
  std::unordered_map<std::string_view, size_t> by_name;
  for (size_t s = 0; s < steps.size(); ++s)
    by_name.emplace(steps[s].name, s);
  for (size_t i = 0; i < trace.num_events(); ++i) {
    if (trace.kind[i] != TraceEventKind::kGpuUserAnnotation)
      continue;
    auto it = by_name.find(trace.event_name(i));
    if (it == by_name.end() || steps[it->second].has_gpu_annotation)
      continue;
    ProfilerStepInfo& step = steps[it->second];
    step.has_gpu_annotation = true;
    step.gpu_annotation_start_ns = trace.ts_ns[i];
    step.gpu_annotation_end_ns = trace.end_ns(i);
  }
}

}  // namespace

std::vector<uint32_t> LinkLaunches(const RankTrace& trace) {
  const size_t n = trace.num_events();
  trace::IdIndex runtime_by_correlation;  // the first runtime event wins
  runtime_by_correlation.Build(trace.correlation, [&](size_t i) { return trace.kind[i] == TraceEventKind::kRuntime; });
  std::vector<uint32_t> launches(n, kNoIndex);
  for (size_t i = 0; i < n; ++i) {
    if (IsGpuActivity(trace.kind[i]))
      launches[i] = runtime_by_correlation.Find(trace.correlation[i]);
  }
  return launches;
}

std::vector<ProfilerStepInfo> FindProfilerSteps(const RankTrace& trace, std::span<const uint32_t> launches) {
  std::vector<ProfilerStepInfo> steps;
  std::unordered_set<uint32_t> seen_names;
  for (size_t i = 0; i < trace.num_events(); ++i) {
    if (!IsStepKind(trace.kind[i]) || trace.event_track(i).gpu)
      continue;
    const int64_t number = StepNumber(trace.event_name(i));
    if (number < 0 || !seen_names.insert(trace.name[i]).second)
      continue;
    ProfilerStepInfo step;
    step.name = std::string(trace.event_name(i));
    step.number = number;
    step.event = static_cast<uint32_t>(i);
    step.cpu_start_ns = trace.ts_ns[i];
    step.cpu_end_ns = trace.end_ns(i);
    steps.push_back(std::move(step));
  }
  std::stable_sort(steps.begin(), steps.end(), [](const ProfilerStepInfo& a, const ProfilerStepInfo& b) {
    return a.cpu_start_ns < b.cpu_start_ns;
  });
  if (steps.empty())
    return steps;

  MergeGpuAnnotations(trace, steps);
  const std::vector<uint32_t> step_of = trace::StepOfGpuOps(trace, launches, steps);
  for (size_t i = 0; i < trace.num_events(); ++i) {
    if (step_of[i] == kNoIndex)
      continue;
    ProfilerStepInfo& step = steps[step_of[i]];
    if (step.num_gpu_ops == 0 || trace.ts_ns[i] < step.gpu_start_ns)
      step.gpu_start_ns = trace.ts_ns[i];
    if (step.num_gpu_ops == 0 || trace.end_ns(i) > step.gpu_end_ns)
      step.gpu_end_ns = trace.end_ns(i);
    ++step.num_gpu_ops;
  }
  // The GPU-side annotation of the same step (gpu_user_annotation, PyTorch
  // >= 2.1) widens the GPU span: one step, one window, whichever side.
  for (ProfilerStepInfo& step : steps) {
    if (!step.has_gpu_annotation)
      continue;
    if (step.num_gpu_ops == 0) {
      step.gpu_start_ns = step.gpu_annotation_start_ns;
      step.gpu_end_ns = step.gpu_annotation_end_ns;
      continue;
    }
    step.gpu_start_ns = std::min(step.gpu_start_ns, step.gpu_annotation_start_ns);
    step.gpu_end_ns = std::max(step.gpu_end_ns, step.gpu_annotation_end_ns);
  }
  return steps;
}

TraceWindow WholeTraceWindow() {
  TraceWindow window;
  window.name = "trace";
  return window;
}

TraceWindow StepWindow(const ProfilerStepInfo& step) {
  TraceWindow window;
  window.name = step.name;
  window.whole_trace = false;
  window.cpu_start_ns = step.cpu_start_ns;
  window.cpu_end_ns = step.cpu_end_ns;
  return window;
}

TraceWindow StepsWindow(std::span<const ProfilerStepInfo> steps) {
  if (steps.empty())
    return WholeTraceWindow();
  TraceWindow window;
  window.name = StepRangeName(steps.front(), steps.back());
  window.whole_trace = false;
  window.cpu_start_ns = steps.front().cpu_start_ns;
  window.cpu_end_ns = steps.back().cpu_end_ns;
  return window;
}

TraceWindow HtaWindow(std::span<const ProfilerStepInfo> steps) {
  if (steps.size() < 2) {
    TraceWindow window = WholeTraceWindow();
    window.name = steps.empty() ? "hta: trace (no ProfilerStep)" : "hta: trace (one ProfilerStep, kept)";
    return window;
  }
  TraceWindow window;
  window.name = "hta: launched before " + steps.back().name + " (last step dropped; " +
                StepRangeName(steps.front(), steps[steps.size() - 2]) + ")";
  window.whole_trace = false;
  window.unlinked_by_time = false;
  window.cpu_end_ns = steps.back().cpu_start_ns;
  return window;
}

namespace trace {

std::vector<uint32_t> StepOfGpuOps(const RankTrace& trace, std::span<const uint32_t> launches,
                                   std::span<const ProfilerStepInfo> steps) {
  // Each GPU op goes to the latest step starting at or before its launch (an
  // op without a correlation, such as MTIA's dma_request: its own start), if
  // that is before the step's end (steps do not overlap in practice). An op
  // whose correlation has no runtime event was launched before the trace
  // began (the previous step's tail) and belongs to no step.
  std::vector<uint32_t> step_of(trace.num_events(), kNoIndex);
  for (size_t i = 0; i < trace.num_events(); ++i) {
    if (!IsGpuActivity(trace.kind[i]) || (launches[i] == kNoIndex && trace.correlation[i] >= 0))
      continue;  // launched outside the trace
    const int64_t launch_ts = trace.ts_ns[launches[i] == kNoIndex ? i : launches[i]];
    auto after = std::upper_bound(steps.begin(), steps.end(), launch_ts,
                                  [](int64_t ts, const ProfilerStepInfo& s) { return ts < s.cpu_start_ns; });
    if (after == steps.begin())
      continue;
    const auto s = static_cast<size_t>(after - steps.begin() - 1);
    if (launch_ts < steps[s].cpu_end_ns)
      step_of[i] = static_cast<uint32_t>(s);
  }
  return step_of;
}

std::vector<uint32_t> SelectGpuOps(const RankTrace& trace, std::span<const uint32_t> launches,
                                   const TraceWindow& window) {
  std::vector<uint32_t> ops;
  for (size_t i = 0; i < trace.num_events(); ++i) {
    if (InWindow(trace, launches, window, i))
      ops.push_back(static_cast<uint32_t>(i));
  }
  return ops;
}

GpuOpsByLaunch::GpuOpsByLaunch(const RankTrace& trace, std::span<const uint32_t> launches)
    : trace_(trace), launches_(launches) {
  std::vector<std::pair<int64_t, uint32_t>> keyed;
  for (size_t i = 0; i < trace.num_events(); ++i) {
    if (!IsGpuActivity(trace.kind[i]))
      continue;
    if (launches[i] != kNoIndex) {
      keyed.emplace_back(trace.ts_ns[launches[i]], static_cast<uint32_t>(i));
    } else if (trace.correlation[i] < 0) {
      unlinked_ts_.push_back(trace.ts_ns[i]);  // events are sorted by start
      unlinked_event_.push_back(static_cast<uint32_t>(i));
    }
  }
  std::sort(keyed.begin(), keyed.end());
  launch_ts_.reserve(keyed.size());
  event_.reserve(keyed.size());
  for (const auto& [ts, i] : keyed) {
    launch_ts_.push_back(ts);
    event_.push_back(i);
  }
}

namespace {
// Appends the events whose key in sorted `ts` lies in [lo, hi).
void AppendRange(const std::vector<int64_t>& ts, const std::vector<uint32_t>& events, int64_t lo, int64_t hi,
                 std::vector<uint32_t>& out) {
  const auto first = std::lower_bound(ts.begin(), ts.end(), lo);
  const auto last = std::lower_bound(first, ts.end(), hi);
  out.insert(out.end(), events.begin() + (first - ts.begin()), events.begin() + (last - ts.begin()));
}
}  // namespace

std::vector<uint32_t> GpuOpsByLaunch::Select(const TraceWindow& window) const {
  if (window.whole_trace)
    return SelectGpuOps(trace_, launches_, window);
  std::vector<uint32_t> ops;
  AppendRange(launch_ts_, event_, window.cpu_start_ns, window.cpu_end_ns, ops);
  if (window.unlinked_by_time)
    AppendRange(unlinked_ts_, unlinked_event_, window.cpu_start_ns, window.cpu_end_ns, ops);
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace trace
}  // namespace mfu
