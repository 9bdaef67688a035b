#include "trace/steps.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
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

  // Each GPU op goes to the latest step starting at or before its launch, if
  // the launch is before that step's end (steps do not overlap in practice).
  for (size_t i = 0; i < trace.num_events(); ++i) {
    if (!IsGpuActivity(trace.kind[i]) || launches[i] == kNoIndex)
      continue;
    const int64_t launch_ts = trace.ts_ns[launches[i]];
    auto after = std::upper_bound(steps.begin(), steps.end(), launch_ts,
                                  [](int64_t ts, const ProfilerStepInfo& s) { return ts < s.cpu_start_ns; });
    if (after == steps.begin())
      continue;
    ProfilerStepInfo& step = *(after - 1);
    if (launch_ts >= step.cpu_end_ns)
      continue;
    if (step.num_gpu_ops == 0 || trace.ts_ns[i] < step.gpu_start_ns)
      step.gpu_start_ns = trace.ts_ns[i];
    if (step.num_gpu_ops == 0 || trace.end_ns(i) > step.gpu_end_ns)
      step.gpu_end_ns = trace.end_ns(i);
    ++step.num_gpu_ops;
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
  window.cpu_end_ns = steps.back().cpu_start_ns;
  return window;
}

namespace trace {

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
    if (IsGpuActivity(trace.kind[i]) && launches[i] != kNoIndex)
      keyed.emplace_back(trace.ts_ns[launches[i]], static_cast<uint32_t>(i));
  }
  std::sort(keyed.begin(), keyed.end());
  launch_ts_.reserve(keyed.size());
  event_.reserve(keyed.size());
  for (const auto& [ts, i] : keyed) {
    launch_ts_.push_back(ts);
    event_.push_back(i);
  }
}

std::vector<uint32_t> GpuOpsByLaunch::Select(const TraceWindow& window) const {
  if (window.whole_trace)
    return SelectGpuOps(trace_, launches_, window);
  const auto lo = std::lower_bound(launch_ts_.begin(), launch_ts_.end(), window.cpu_start_ns);
  const auto hi = std::lower_bound(lo, launch_ts_.end(), window.cpu_end_ns);
  std::vector<uint32_t> ops(event_.begin() + (lo - launch_ts_.begin()), event_.begin() + (hi - launch_ts_.begin()));
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace trace
}  // namespace mfu
