// Step phases (phases.h): intervals per phase from names, then claimed in
// priority order so that the phases partition the step.

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "mfu/trace_phases.h"
#include "trace/intervals.h"

namespace mfu {
namespace {

using trace::Interval;
using trace::MergeIntervals;
using trace::Subtract;
using trace::TotalLength;

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// What a name says about its phase; kOtherHost when nothing.
StepPhase PhaseOfName(std::string_view name) {
  const std::string lower = base::ToLower(name);
  if (Contains(lower, "dataloader") || Contains(lower, "data_load") || Contains(lower, "load_batch") ||
      Contains(lower, "wait_for_batch") || Contains(lower, "copy_batch")) {
    return StepPhase::kDataLoading;
  }
  if (name.starts_with("Optimizer.") || Contains(lower, "optimizer") || Contains(lower, "zero_grad") ||
      Contains(lower, "_fused_adam") || Contains(lower, "_fused_sgd")) {
    return StepPhase::kOptimizer;
  }
  if (name.starts_with("record_param_comms") || name.starts_with("c10d::") || name.starts_with("_c10d_functional") ||
      name.starts_with("nccl:") || name.starts_with("gloo:") || name.starts_with("hccl:")) {
    return StepPhase::kCommunication;
  }
  if (name.starts_with("autograd::engine::evaluate_function") || Contains(lower, "backward")) {
    return StepPhase::kBackward;
  }
  if (Contains(lower, "forward"))
    return StepPhase::kForward;
  return StepPhase::kOtherHost;
}

// PhaseOfName per interned name, computed once.
class NamePhases {
 public:
  explicit NamePhases(const RankTrace& trace) : trace_(trace), cache_(trace.strings.size(), -1) {}
  StepPhase Of(size_t event) {
    int8_t& c = cache_[trace_.name[event]];
    if (c < 0)
      c = static_cast<int8_t>(PhaseOfName(trace_.event_name(event)));
    return static_cast<StepPhase>(c);
  }

 private:
  const RankTrace& trace_;
  std::vector<int8_t> cache_;
};

// The events that start inside [lo, hi): events are sorted by start.
std::pair<size_t, size_t> EventsStartingIn(const RankTrace& trace, int64_t lo, int64_t hi) {
  auto first = std::lower_bound(trace.ts_ns.begin(), trace.ts_ns.end(), lo);
  auto last = std::lower_bound(first, trace.ts_ns.end(), hi);
  return {static_cast<size_t>(first - trace.ts_ns.begin()), static_cast<size_t>(last - trace.ts_ns.begin())};
}

bool IsHostToDeviceCopy(std::string_view name) {
  return name == "aten::to" || name == "aten::_to_copy" || name == "aten::copy_" || name == "aten::pin_memory";
}

struct PhaseIntervals {
  std::array<std::vector<Interval>, kNumStepPhases> by_phase;
  std::vector<Interval> backward_events;  // hulled into one span below
  bool forward_annotated = false;
};

// Intervals named by phase inside [lo, hi). Backward comes from every CPU
// thread; the other phases from the loop's thread only.
PhaseIntervals NamedIntervals(const RankTrace& trace, NamePhases& names, uint32_t main_track, size_t step_event,
                              int64_t lo, int64_t hi) {
  PhaseIntervals p;
  auto [first, last] = EventsStartingIn(trace, lo, hi);
  for (size_t i = first; i < last; ++i) {
    const TraceEventKind kind = trace.kind[i];
    if (kind != TraceEventKind::kCpuOp && kind != TraceEventKind::kUserAnnotation)
      continue;
    if (i == step_event)
      continue;
    const Interval iv{trace.ts_ns[i], std::min(trace.end_ns(i), hi)};
    StepPhase phase = names.Of(i);
    // "forward" names a phase only in a record_function range: cpu_ops such
    // as aten::_flash_attention_forward run inside any phase.
    if (phase == StepPhase::kForward && kind != TraceEventKind::kUserAnnotation)
      phase = StepPhase::kOtherHost;
    if (phase == StepPhase::kBackward) {
      p.backward_events.push_back(iv);
      continue;
    }
    if (trace.track[i] != main_track || phase == StepPhase::kOtherHost)
      continue;
    if (phase == StepPhase::kForward)
      p.forward_annotated = true;
    p.by_phase[static_cast<size_t>(phase)].push_back(iv);
  }
  return p;
}

// The top-level events of the loop's thread: host-to-device copies before
// the forward are data loading; without forward annotations, the forward is
// the span from the first other top-level op to the start of backward (else
// of the optimizer, else the end of the last op).
void ScanTopLevel(const RankTrace& trace, NamePhases& names, uint32_t main_track, size_t step_event, int64_t lo,
                  int64_t hi, PhaseIntervals& p) {
  std::vector<Interval>& forward = p.by_phase[static_cast<size_t>(StepPhase::kForward)];
  int64_t annotated_start = INT64_MAX;
  for (const Interval& iv : forward)
    annotated_start = std::min(annotated_start, iv.start);
  int64_t top_end = lo, forward_start = -1, last_op_end = -1;
  for (size_t i = step_event + 1; i < trace.num_events() && trace.ts_ns[i] < hi; ++i) {
    if (trace.track[i] != main_track || trace.ts_ns[i] < top_end)
      continue;
    const TraceEventKind kind = trace.kind[i];
    if (kind != TraceEventKind::kCpuOp && kind != TraceEventKind::kUserAnnotation)
      continue;
    top_end = std::max(top_end, trace.end_ns(i));  // a top-level event: later ones inside it are skipped
    const StepPhase named = names.Of(i);
    if (named == StepPhase::kDataLoading || named == StepPhase::kOptimizer || named == StepPhase::kBackward) {
      continue;
    }
    const bool before_forward = p.forward_annotated ? trace.ts_ns[i] < annotated_start : forward_start < 0;
    if (before_forward && kind == TraceEventKind::kCpuOp && IsHostToDeviceCopy(trace.event_name(i))) {
      p.by_phase[static_cast<size_t>(StepPhase::kDataLoading)].push_back({trace.ts_ns[i], std::min(top_end, hi)});
      continue;
    }
    if (forward_start < 0)
      forward_start = trace.ts_ns[i];
    last_op_end = std::min(top_end, hi);
  }
  if (p.forward_annotated || forward_start < 0)
    return;
  auto earliest = [](const std::vector<Interval>& v) {
    int64_t t = INT64_MAX;
    for (const Interval& iv : v)
      t = std::min(t, iv.start);
    return t;
  };
  int64_t forward_end = last_op_end;
  if (!p.backward_events.empty()) {
    forward_end = earliest(p.backward_events);
  } else if (const auto& opt = p.by_phase[static_cast<size_t>(StepPhase::kOptimizer)]; !opt.empty()) {
    forward_end = earliest(opt);
  }
  if (forward_start < forward_end)
    forward.push_back({forward_start, forward_end});
}

StepPhases Decompose(const RankTrace& trace, NamePhases& names, size_t step_event) {
  StepPhases s;
  s.label = std::string(trace.event_name(step_event));
  s.start_ns = trace.ts_ns[step_event];
  s.end_ns = trace.end_ns(step_event);
  s.track = trace.track[step_event];
  PhaseIntervals p = NamedIntervals(trace, names, s.track, step_event, s.start_ns, s.end_ns);
  if (!p.backward_events.empty()) {
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (const Interval& iv : p.backward_events) {
      first = std::min(first, iv.start);
      last = std::max(last, iv.end);
    }
    p.by_phase[static_cast<size_t>(StepPhase::kBackward)].push_back({first, last});
  }
  s.forward_annotated = p.forward_annotated;
  ScanTopLevel(trace, names, s.track, step_event, s.start_ns, s.end_ns, p);

  std::vector<Interval> claimed;
  int64_t total = 0;
  for (StepPhase phase : {StepPhase::kDataLoading, StepPhase::kOptimizer, StepPhase::kCommunication,
                          StepPhase::kBackward, StepPhase::kForward}) {
    std::vector<Interval>& v = p.by_phase[static_cast<size_t>(phase)];
    MergeIntervals(v);
    std::vector<Interval> mine = Subtract(v, claimed);
    const int64_t ns = TotalLength(mine);
    s.phase_ns[static_cast<size_t>(phase)] = ns;
    total += ns;
    claimed.insert(claimed.end(), mine.begin(), mine.end());
    MergeIntervals(claimed);
  }
  s.phase_ns[static_cast<size_t>(StepPhase::kOtherHost)] = s.step_ns() - total;
  return s;
}

}  // namespace

const char* StepPhaseName(StepPhase phase) {
  switch (phase) {
    case StepPhase::kDataLoading:
      return "data_loading";
    case StepPhase::kForward:
      return "forward";
    case StepPhase::kBackward:
      return "backward";
    case StepPhase::kOptimizer:
      return "optimizer";
    case StepPhase::kCommunication:
      return "communication";
    case StepPhase::kOtherHost:
      return "other_host";
  }
  return "?";
}

std::vector<StepPhases> ComputeStepPhases(const RankTrace& trace, std::span<const ProfilerStepInfo> steps) {
  std::vector<StepPhases> out;
  NamePhases names(trace);
  for (const ProfilerStepInfo& step : steps) {
    if (step.event != kNoIndex && step.cpu_end_ns > step.cpu_start_ns)
      out.push_back(Decompose(trace, names, step.event));
  }
  return out;
}

Status CheckConsistency(const StepPhases& phases) {
  int64_t sum = 0;
  for (size_t p = 0; p < kNumStepPhases; ++p) {
    if (phases.phase_ns[p] < 0) {
      return InternalError("phases '" + phases.label + "': " + StepPhaseName(static_cast<StepPhase>(p)) +
                           " is negative");
    }
    sum += phases.phase_ns[p];
  }
  if (sum != phases.step_ns()) {
    return InternalError("phases '" + phases.label + "': sum " + std::to_string(sum) + " ns != step " +
                         std::to_string(phases.step_ns()) + " ns");
  }
  return Status::Ok();
}

}  // namespace mfu
