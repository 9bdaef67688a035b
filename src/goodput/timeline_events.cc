// GoodputEventsFromTimeline (goodput.h): a training log's timeline (one
// reader per framework, training_log.h) as goodput events.

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "mfu/goodput.h"

namespace mfu {
namespace {

using K = GoodputEventKind;

// Steps looked at on each side of an untimed event for its time.
constexpr size_t kNeighbourSteps = 64;

// Seconds one LogStep stands for (its interval of steps), NaN if unknown.
double Covered(const LogStep& s) {
  if (!std::isfinite(s.step_time_s) || s.step_time_s < 0)
    return kLogNaN;
  return s.step_time_s * (s.steps_covered > 0 ? s.steps_covered : 1);
}

// Times of every training step: the log's timestamps where printed, else
// accumulated step times (from the previous timestamp, or from 0: such a
// timeline's times are relative and say so in `detail`).
std::vector<double> StepTimes(const std::vector<LogStep>& steps) {
  std::vector<double> times(steps.size(), kLogNaN);
  double clock = 0;
  bool have_clock = false;
  for (size_t i = 0; i < steps.size(); ++i) {
    const LogStep& s = steps[i];
    if (s.validation)
      continue;
    if (std::isfinite(s.time_s)) {
      clock = s.time_s;
      have_clock = true;
    } else if (const double d = Covered(s); std::isfinite(d)) {
      clock += d;
      have_clock = true;
    } else {
      continue;
    }
    times[i] = have_clock ? clock : kLogNaN;
  }
  return times;
}

std::optional<K> EventKind(LogEventKind kind) {
  switch (kind) {
    case LogEventKind::kJobStart:
      return K::kJobStart;
    case LogEventKind::kCheckpointSave:
      return K::kCheckpointSaveEnd;
    case LogEventKind::kCheckpointSaveAsync:
      return K::kCheckpointSaveAsync;
    case LogEventKind::kCheckpointLoad:
      return K::kCheckpointRestoreEnd;
    case LogEventKind::kEvaluation:
      return K::kCustomEnd;
    case LogEventKind::kDataLoading:
      return K::kDataLoadingEnd;
    case LogEventKind::kJobEnd:
      return K::kJobEnd;
    case LogEventKind::kFailure:
      return K::kJobFailed;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::vector<GoodputEvent> GoodputEventsFromTimeline(const LogTimeline& timeline) {
  std::vector<GoodputEvent> out;
  const std::vector<double> times = StepTimes(timeline.steps);
  bool relative = true;
  for (const LogStep& s : timeline.steps)
    relative = relative && !std::isfinite(s.time_s);
  auto base = [&](int64_t line, int32_t attempt) {
    GoodputEvent e;
    e.source = timeline.origin;
    e.line = line;
    e.attempt = timeline.header.job_id.empty() ? std::to_string(attempt)
                                               : timeline.header.job_id + "." + std::to_string(attempt);
    if (relative)
      e.detail = "time from accumulated step times (the log prints no timestamps)";
    return e;
  };
  // The time of a non-step record: its own, else the end of the last step
  // printed before it in the same attempt, else the start of the next.
  // Steps are in log order, so a binary search by line finds the
  // neighbours; a few untimed steps are skipped.
  auto time_at = [&](const LogEvent& ev) {
    if (std::isfinite(ev.time_s))
      return ev.time_s;
    const std::vector<LogStep>& steps = timeline.steps;
    const auto next = std::upper_bound(steps.begin(), steps.end(), ev.line,
                                       [](int64_t line, const LogStep& s) { return line < s.line; });
    size_t i = static_cast<size_t>(next - steps.begin());
    for (size_t k = i, tries = 0; k-- > 0 && tries < kNeighbourSteps && steps[k].attempt == ev.attempt; ++tries) {
      if (std::isfinite(times[k]))
        return times[k];
    }
    for (size_t tries = 0; i < steps.size() && tries < kNeighbourSteps && steps[i].attempt == ev.attempt;
         ++i, ++tries) {
      if (std::isfinite(times[i])) {
        const double d = Covered(steps[i]);
        return times[i] - (std::isfinite(d) ? d : 0);
      }
    }
    return kLogNaN;
  };
  std::vector<bool> started(static_cast<size_t>(std::max(timeline.attempts, 1)) + 1, false);
  for (const LogEvent& ev : timeline.events) {
    std::optional<K> kind = EventKind(ev.kind);
    const double t = time_at(ev);
    if (!kind || !std::isfinite(t))
      continue;
    GoodputEvent e = base(ev.line, ev.attempt);
    e.kind = *kind;
    e.time_s = t;
    e.step = ev.step;
    e.duration_s = ev.duration_s;
    if (!ev.detail.empty())
      e.detail = ev.detail;
    if (*kind == K::kJobStart && ev.attempt >= 0 && static_cast<size_t>(ev.attempt) < started.size())
      started[static_cast<size_t>(ev.attempt)] = true;
    out.push_back(std::move(e));
  }
  for (size_t i = 0; i < timeline.steps.size(); ++i) {
    const LogStep& s = timeline.steps[i];
    if (s.validation || !std::isfinite(times[i]))
      continue;
    const double d = Covered(s);
    const size_t a = s.attempt >= 0 ? static_cast<size_t>(s.attempt) : 0;
    if (a < started.size() && !started[a]) {
      // No start line for this attempt: it began at least when its first
      // step did.
      started[a] = true;
      GoodputEvent e = base(s.line, s.attempt);
      e.kind = K::kJobStart;
      e.time_s = times[i] - (std::isfinite(d) ? d : 0);
      out.push_back(std::move(e));
    }
    GoodputEvent e = base(s.line, s.attempt);
    e.kind = K::kStep;
    e.time_s = times[i];
    e.step = s.step;
    e.duration_s = d;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace mfu
