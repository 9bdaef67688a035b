#pragma once

// Analysis windows, internally: which GPU operations a TraceWindow covers.
// The public half (LinkLaunches, FindProfilerSteps, the window constructors)
// is declared in mfu/trace_breakdown.h.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "mfu/trace.h"
#include "mfu/trace_breakdown.h"

namespace mfu::trace {

// True when event `i` is a GPU op (kernel, memcpy, memset) that `window`
// covers: every GPU op for a whole-trace window, else one whose launching
// runtime event (with unlinked_by_time, an op without a correlation at all:
// the op itself) starts inside the window's CPU range.
inline bool InWindow(const RankTrace& trace, std::span<const uint32_t> launches, const TraceWindow& window, size_t i) {
  if (!IsGpuActivity(trace.kind[i]))
    return false;
  if (window.whole_trace)
    return true;
  const uint32_t launch = launches[i];
  if (launch == kNoIndex && !(window.unlinked_by_time && trace.correlation[i] < 0))
    return false;  // launched outside the trace (a correlation without its runtime event)
  const int64_t ts = trace.ts_ns[launch == kNoIndex ? i : launch];
  return ts >= window.cpu_start_ns && ts < window.cpu_end_ns;
}

// For every event, the index into `steps` (time order, FindProfilerSteps) of
// the step whose CPU range holds its launch (an op without a correlation:
// its own start); kNoIndex for CPU events, GPU ops outside every step and
// ops whose launch is outside the trace.
std::vector<uint32_t> StepOfGpuOps(const RankTrace& trace, std::span<const uint32_t> launches,
                                   std::span<const ProfilerStepInfo> steps);

// The indices of the GPU ops `window` covers, in event (time) order. One
// pass over the trace: for many windows use GpuOpsByLaunch.
std::vector<uint32_t> SelectGpuOps(const RankTrace& trace, std::span<const uint32_t> launches,
                                   const TraceWindow& window);

// The GPU ops ordered by their launch's start (the unlinked ones by their
// own, apart), built once so that
// each of many step windows costs O(log n + its ops) instead of O(n).
class GpuOpsByLaunch {
 public:
  GpuOpsByLaunch(const RankTrace& trace, std::span<const uint32_t> launches);
  // Exactly SelectGpuOps(trace, launches, window).
  std::vector<uint32_t> Select(const TraceWindow& window) const;

 private:
  const RankTrace& trace_;
  std::span<const uint32_t> launches_;
  std::vector<int64_t> launch_ts_;        // sorted
  std::vector<uint32_t> event_;           // the GPU op of launch_ts_[k]
  std::vector<int64_t> unlinked_ts_;      // sorted starts of the ops without a launch
  std::vector<uint32_t> unlinked_event_;  // the GPU op of unlinked_ts_[k]
};

}  // namespace mfu::trace
