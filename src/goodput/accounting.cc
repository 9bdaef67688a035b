// ComputeGoodput (goodput.h): events from any mix of sources -> attempts,
// preserved and wasted steps, badput by category, ETTR, MTBF, recovery and
// the checkpoint intervals.
//
// The wall time is painted: every event that spans time (a step, a blocking
// save, a restore, an init phase, data loading, an evaluation, the gap
// between attempts) becomes an interval in integer nanoseconds with a
// category, and where intervals overlap the higher-priority one wins
// (restore > save > evaluation > data loading > init > step), so nothing
// is counted twice. Time no interval covers is `other`. The sum is then
// made exact in doubles (FinishBuckets). Definitions: docs/goodput.md.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/stats.h"
#include "goodput/parameter_checks.h"
#include "mfu/goodput.h"

namespace mfu {
namespace {

using Ns = int64_t;
constexpr double kNsPerS = 1e9;
constexpr double kMaxTimeS = 4e9;      // 2096-10-02
constexpr double kMaxDurationS = 1e9;  // 31 years
constexpr Ns kDuplicateWindowNs = Ns{60} * 1'000'000'000;

// Painting priority, low to high; kProductive and kWasted are the steps.
enum class Paint : uint8_t {
  kOther = 0,
  kProductive,
  kWasted,
  kInit,
  kDataLoading,
  kEvaluation,
  kSave,
  kRestore,
  kIdle,
  kCount,
};

struct Span {
  Ns begin = 0, end = 0;
  Paint paint = Paint::kOther;
};

struct StepRec {
  int64_t step = 0;
  Ns end = 0;
  double duration_s = kLogNaN;
  bool wasted = false;
  Ns begin = 0;  // filled when painted
};

struct Attempt {
  Ns start = 0, end = 0;
  bool failed = false;
  bool ended = false;
  std::vector<StepRec> steps;
  std::vector<const GoodputEvent*> events;  // non-step, non-boundary events
};

Ns ToNs(double s) {
  return static_cast<Ns>(std::llround(s * kNsPerS));
}
double ToS(Ns ns) {
  return static_cast<double>(ns) / kNsPerS;
}

// Exact equality without -Wfloat-equal's complaint: the sums here are
// meant to be bit-equal.
bool Same(double a, double b) {
  return !(a < b) && !(a > b);
}

// Splits time-sorted events into attempts. A start with no step since the
// open attempt began is the same attempt seen by another source; a start
// after steps without an end, or a step number going back, is a restart of
// a failed attempt.
std::vector<Attempt> SplitAttempts(std::span<const GoodputEvent* const> events, GoodputReport& report) {
  std::vector<Attempt> attempts;
  bool open = false;
  int64_t duplicates = 0;
  std::map<int64_t, Ns> seen;  // step number -> end, in the open attempt
  auto open_at = [&](Ns t) {
    attempts.push_back({});
    attempts.back().start = t;
    attempts.back().end = t;
    open = true;
    seen.clear();
  };
  for (const GoodputEvent* e : events) {
    const Ns t = ToNs(e->time_s);
    switch (e->kind) {
      case GoodputEventKind::kQueued:
        continue;
      case GoodputEventKind::kJobStart:
        if (open && attempts.back().steps.empty()) {
          attempts.back().end = std::max(attempts.back().end, t);
          continue;
        }
        if (open) {  // restarted without an end: the attempt died
          attempts.back().failed = true;
        }
        open_at(t);
        continue;
      case GoodputEventKind::kJobEnd:
      case GoodputEventKind::kJobFailed: {
        if (attempts.empty())
          open_at(t);
        Attempt& a = attempts.back();
        a.end = std::max(a.end, t);
        a.ended = true;
        a.failed = a.failed || e->kind == GoodputEventKind::kJobFailed;
        open = false;
        continue;
      }
      default:
        break;
    }
    if (!open) {
      // An event after an attempt ended and before the next start: a step
      // opens an attempt (the start was not recorded); other events of a
      // closed attempt (a late "saved async checkpoint") stay with it.
      if (e->kind != GoodputEventKind::kStep && !attempts.empty()) {
        attempts.back().events.push_back(e);
        continue;
      }
      // A step's own duration says when the attempt was at least running.
      const bool timed = e->kind == GoodputEventKind::kStep && std::isfinite(e->duration_s) && e->duration_s > 0;
      open_at(timed ? t - ToNs(e->duration_s) : t);
    }
    Attempt* a = &attempts.back();
    if (e->kind == GoodputEventKind::kStep) {
      // The last step again, or an earlier one within a minute, is another
      // source or rank printing it; a step number going back later is a
      // restart nobody recorded.
      auto it = seen.find(e->step);
      const bool again = !a->steps.empty() && e->step == a->steps.back().step;
      if (again || (it != seen.end() && t - it->second <= kDuplicateWindowNs)) {
        ++duplicates;
        continue;
      }
      if (!a->steps.empty() && e->step < a->steps.back().step) {  // a restart nobody recorded
        a->failed = true;
        a->ended = true;
        const Ns last = a->steps.back().end;
        open_at(last);
        a = &attempts.back();
      }
      seen[e->step] = t;
      a->steps.push_back({e->step, t, e->duration_s});
    } else {
      a->events.push_back(e);
    }
    a->end = std::max(a->end, t);
  }
  if (duplicates > 0) {
    report.notes.push_back({NoteKind::kAssumption, "duplicate_steps",
                            fmt::format("{} step records repeated a step number already seen in the same attempt "
                                        "(another source or rank): the first was kept",
                                        duplicates)});
  }
  return attempts;
}

// Time-sorted events put a start before an end at the same instant (so a
// start precedes the steps stamped with it and an end follows them). When
// an attempt is open at such a start, the end is that attempt's: one job
// ended in the instant the next began (a requeue, a restart, Slurm's
// whole seconds). The start moves to just after the end, so the steps of
// that instant stay with the attempt that ran them (the new one cannot
// have finished a step in no time).
void EndsBeforeNextStart(std::vector<const GoodputEvent*>& events) {
  auto is_end = [](const GoodputEvent* e) {
    return e->kind == GoodputEventKind::kJobEnd || e->kind == GoodputEventKind::kJobFailed;
  };
  bool open = false;
  for (size_t i = 0; i < events.size(); ++i) {
    const GoodputEvent* e = events[i];
    if (is_end(e)) {
      open = false;
      continue;
    }
    if (e->kind != GoodputEventKind::kJobStart) {
      open = open || e->kind == GoodputEventKind::kStep;
      continue;
    }
    if (open) {
      size_t j = i + 1;
      while (j < events.size() && Same(events[j]->time_s, e->time_s) && !is_end(events[j]))
        ++j;
      if (j < events.size() && Same(events[j]->time_s, e->time_s)) {
        std::rotate(events.begin() + static_cast<std::ptrdiff_t>(i),
                    events.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                    events.begin() + static_cast<std::ptrdiff_t>(j) + 1);
        i = j;  // the start, now after the end
        continue;
      }
    }
    open = true;
  }
}

// Google's rule: when a step number is seen again, the earlier records of
// that step and every later one are discarded. The checkpoint rule: after
// a failure, the steps after the last save persisted before it are lost.
void MarkWasted(std::vector<Attempt>& attempts, bool have_checkpoints) {
  for (size_t i = 0; i < attempts.size(); ++i) {
    Attempt& a = attempts[i];
    if (a.failed && have_checkpoints) {
      int64_t saved = -1;
      Ns saved_at = -1;
      for (const GoodputEvent* e : a.events) {
        const bool save =
            e->kind == GoodputEventKind::kCheckpointSaveEnd || e->kind == GoodputEventKind::kCheckpointSaveAsync;
        if (save && ToNs(e->time_s) <= a.end && e->step >= saved) {
          saved = e->step;
          saved_at = ToNs(e->time_s);
        }
      }
      for (StepRec& s : a.steps) {
        // A save naming no step preserves what ended before it.
        const bool preserved = saved >= 0 ? s.step <= saved : (saved_at >= 0 && s.end <= saved_at);
        if (!preserved)
          s.wasted = true;
      }
    }
  }
  // The earlier steps still counted, as a stack: every attempt's steps
  // increase and every earlier one left is below its first, so the stack
  // increases and the steps a restart repeats are on top (O(steps) in all).
  std::vector<StepRec*> kept;
  for (Attempt& a : attempts) {
    if (a.steps.empty())
      continue;
    const int64_t first = a.steps.front().step;
    while (!kept.empty() && kept.back()->step >= first) {
      kept.back()->wasted = true;
      kept.pop_back();
    }
    for (StepRec& s : a.steps)
      kept.push_back(&s);
  }
}

double MeanKnownStep(const std::vector<StepRec>& steps, size_t from) {
  double sum = 0;
  int64_t n = 0;
  for (size_t i = from; i < steps.size(); ++i) {
    double d = steps[i].duration_s;
    if (!std::isfinite(d) && i > 0)
      d = ToS(steps[i].end - steps[i - 1].end);
    if (std::isfinite(d) && d >= 0) {
      sum += d;
      ++n;
    }
  }
  return n > 0 ? sum / static_cast<double>(n) : kLogNaN;
}

// Paints an attempt's steps; returns the first step's begin (where init ends).
Ns PaintSteps(Attempt& a, double fallback_step_s, std::vector<Span>& spans) {
  if (a.steps.empty())
    return a.end;
  const double segment_mean = MeanKnownStep(a.steps, 1);
  Ns previous = a.start;
  for (size_t i = 0; i < a.steps.size(); ++i) {
    StepRec& s = a.steps[i];
    Ns begin = previous;
    if (i == 0) {
      // Google: the first step of a segment is charged the segment's mean
      // step time; the excess (compilation, warm-up) is startup.
      double charge = std::isfinite(segment_mean) ? segment_mean : s.duration_s;
      if (!std::isfinite(charge))
        charge = fallback_step_s;
      if (std::isfinite(s.duration_s))
        charge = std::min(charge, s.duration_s);
      begin = std::isfinite(charge) ? s.end - ToNs(charge) : s.end;
    } else if (std::isfinite(s.duration_s) && s.duration_s >= 0) {
      begin = s.end - ToNs(s.duration_s);
    }
    begin = std::clamp(begin, previous, s.end);
    s.begin = begin;
    spans.push_back({begin, s.end, s.wasted ? Paint::kWasted : Paint::kProductive});
    previous = s.end;
  }
  return a.steps.front().begin;
}

// The end of the step numbered `step` in `a`, or -1.
Ns StepEnd(const Attempt& a, int64_t step) {
  for (const StepRec& s : a.steps) {
    if (s.step == step)
      return s.end;
  }
  return -1;
}

struct SaveStats {
  std::vector<double> blocking_s;
  std::vector<std::pair<Ns, Ns>> saves;  // (begin, end) of each save, for the observed interval
};

// Begin/end pairs and single events with durations -> spans.
void PaintEvents(const Attempt& a, std::vector<Span>& spans, SaveStats& saves) {
  std::map<GoodputEventKind, Ns> open;
  auto pair = [&](const GoodputEvent& e, GoodputEventKind begin_kind, Paint paint) {
    const Ns t = ToNs(e.time_s);
    auto it = open.find(begin_kind);
    Ns begin = t;
    if (it != open.end()) {
      begin = it->second;
      open.erase(it);
    } else if (std::isfinite(e.duration_s) && e.duration_s > 0) {
      begin = t - ToNs(e.duration_s);
    }
    begin = std::max(begin, a.start);
    if (begin < t)
      spans.push_back({begin, t, paint});
    return std::make_pair(begin, t);
  };
  for (const GoodputEvent* e : a.events) {
    const Ns t = ToNs(e->time_s);
    switch (e->kind) {
      case GoodputEventKind::kCheckpointSaveBegin:
      case GoodputEventKind::kCheckpointRestoreBegin:
      case GoodputEventKind::kInitBegin:
      case GoodputEventKind::kDataLoadingBegin:
      case GoodputEventKind::kCustomBegin:
        open[e->kind] = t;
        break;
      case GoodputEventKind::kCheckpointSaveEnd: {
        const bool timed = open.count(GoodputEventKind::kCheckpointSaveBegin) != 0 ||
                           (std::isfinite(e->duration_s) && e->duration_s >= 0);
        auto [b, en] = pair(*e, GoodputEventKind::kCheckpointSaveBegin, Paint::kSave);
        if (timed)
          saves.blocking_s.push_back(ToS(en - b));
        saves.saves.emplace_back(b, en);
        break;
      }
      case GoodputEventKind::kCheckpointSaveAsync: {
        // The blocking part follows the step it saves; the save is
        // persisted at time_s.
        Ns b = StepEnd(a, e->step);
        if (b < 0)
          b = t;
        Ns en = b;
        if (std::isfinite(e->duration_s) && e->duration_s >= 0) {
          en = b + ToNs(e->duration_s);
          en = std::min(en, std::max(a.end, b));
          saves.blocking_s.push_back(ToS(en - b));
          if (b < en)
            spans.push_back({b, en, Paint::kSave});
        }
        saves.saves.emplace_back(b, en);
        break;
      }
      case GoodputEventKind::kCheckpointRestoreEnd:
        pair(*e, GoodputEventKind::kCheckpointRestoreBegin, Paint::kRestore);
        break;
      case GoodputEventKind::kInitEnd:
        pair(*e, GoodputEventKind::kInitBegin, Paint::kInit);
        break;
      case GoodputEventKind::kDataLoadingEnd:
        pair(*e, GoodputEventKind::kDataLoadingBegin, Paint::kDataLoading);
        break;
      case GoodputEventKind::kCustomEnd:
        pair(*e, GoodputEventKind::kCustomBegin, Paint::kEvaluation);
        break;
      default:
        break;
    }
  }
  // A begin whose end never came (the attempt died inside it) lasts to the
  // attempt's end.
  for (const auto& [kind, begin] : open) {
    Paint paint = kind == GoodputEventKind::kCheckpointSaveBegin      ? Paint::kSave
                  : kind == GoodputEventKind::kCheckpointRestoreBegin ? Paint::kRestore
                  : kind == GoodputEventKind::kInitBegin              ? Paint::kInit
                  : kind == GoodputEventKind::kDataLoadingBegin       ? Paint::kDataLoading
                                                                      : Paint::kEvaluation;
    if (begin < a.end)
      spans.push_back({begin, a.end, paint});
  }
}

// Sweep: the length of each elementary segment goes to the highest paint
// covering it, or kOther.
std::array<Ns, static_cast<size_t>(Paint::kCount)> Sweep(std::vector<Span>& spans, Ns wall_begin, Ns wall_end) {
  struct Edge {
    Ns t;
    int delta;
    Paint paint;
  };
  std::vector<Edge> edges;
  edges.reserve(spans.size() * 2);
  for (const Span& s : spans) {
    const Ns b = std::max(s.begin, wall_begin), e = std::min(s.end, wall_end);
    if (b >= e)
      continue;
    edges.push_back({b, +1, s.paint});
    edges.push_back({e, -1, s.paint});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) { return x.t < y.t; });
  std::array<int64_t, static_cast<size_t>(Paint::kCount)> depth{};
  std::array<Ns, static_cast<size_t>(Paint::kCount)> total{};
  Ns at = wall_begin;
  for (size_t i = 0; i < edges.size();) {
    const Ns t = edges[i].t;
    size_t top = 0;
    for (size_t p = depth.size(); p-- > 1;) {
      if (depth[p] > 0) {
        top = p;
        break;
      }
    }
    total[top] += t - at;
    at = t;
    for (; i < edges.size() && edges[i].t == t; ++i)
      depth[static_cast<size_t>(edges[i].paint)] += edges[i].delta;
  }
  total[static_cast<size_t>(Paint::kOther)] += wall_end - at;
  return total;
}

// productive + badput[0] + ... + badput[kOther] == wall, summed in that
// order, exactly: `other` is the remainder, nudged by an ulp where the
// rounding of the sum needs it, and never negative.
void FinishBuckets(GoodputReport& r) {
  auto sum_known = [&]() {
    double s = r.productive_s;
    for (size_t c = 0; c + 1 < kNumBadputCategories; ++c)
      s += r.badput_s[c];
    return s;
  };
  auto total = [&]() { return sum_known() + r.badput_s[kNumBadputCategories - 1]; };
  double& other = r.badput_s[static_cast<size_t>(BadputCategory::kOther)];
  other = std::max(0.0, r.wall_s - sum_known());
  for (int i = 0; i < 64 && !Same(total(), r.wall_s); ++i) {
    const double next = total() < r.wall_s ? std::nextafter(other, r.wall_s + 1) : std::nextafter(other, 0.0);
    if (next < 0)
      break;
    other = next;
  }
  if (!Same(total(), r.wall_s)) {  // rounding of the known buckets overshoots: take it from the largest
    r.wall_s = total();
    r.notes.push_back({NoteKind::kWarning, "wall_rounded",
                       "the wall time was adjusted by a rounding step so the buckets sum to it exactly"});
  }
}

// The formulas' inputs: a given value in place of the observed one.
void FillIntervals(GoodputReport& r, const GoodputOptions& options) {
  IntervalInputs& in = r.interval_inputs;
  in.checkpoint_time_given = std::isfinite(options.checkpoint_time_s);
  in.mtbf_given = std::isfinite(options.mtbf_s);
  in.restart_time_given = std::isfinite(options.restart_time_s);
  in.checkpoint_time_s = in.checkpoint_time_given ? options.checkpoint_time_s : r.checkpoint_time_s;
  in.mtbf_s = in.mtbf_given ? options.mtbf_s : r.mtbf_s;
  in.restart_time_s =
      in.restart_time_given ? options.restart_time_s : (std::isfinite(r.recovery_s) ? r.recovery_s : 0.0);
  r.checkpoint_interval =
      IntervalsFor(in.checkpoint_time_s, in.mtbf_s, in.restart_time_s, r.checkpoint_interval.observed_s);
}

// Checks each event's time and duration; returns pointers to the events in
// time order, boundaries first at equal times: a start precedes the steps
// stamped with it, and an end follows them.
StatusOr<std::vector<const GoodputEvent*>> SortedEvents(std::span<const GoodputEvent> events) {
  std::vector<const GoodputEvent*> sorted;
  sorted.reserve(events.size());
  for (const GoodputEvent& e : events) {
    // Nanoseconds in int64 reach the year 2262; these bounds keep every
    // sum of a time and a duration inside them.
    if (!std::isfinite(e.time_s) || std::fabs(e.time_s) > kMaxTimeS)
      return InvalidArgumentError(
          fmt::format("{}:{}: event '{}' has no valid time", e.source, e.line, GoodputEventKindId(e.kind)));
    if (std::isfinite(e.duration_s) && (e.duration_s < 0 || e.duration_s > kMaxDurationS))
      return InvalidArgumentError(fmt::format("{}:{}: event '{}' has a duration outside [0, 1e9] s ({})", e.source,
                                              e.line, GoodputEventKindId(e.kind), e.duration_s));
    sorted.push_back(&e);
  }
  auto rank = [](GoodputEventKind k) {
    return k == GoodputEventKind::kJobStart
               ? 0
               : (k == GoodputEventKind::kJobEnd || k == GoodputEventKind::kJobFailed ? 2 : 1);
  };
  std::stable_sort(sorted.begin(), sorted.end(), [&](const GoodputEvent* a, const GoodputEvent* b) {
    if (!Same(a->time_s, b->time_s))
      return a->time_s < b->time_s;
    return rank(a->kind) < rank(b->kind);
  });
  return sorted;
}

bool AnyStep(const std::vector<Attempt>& attempts) {
  bool have_step = false;
  for (const Attempt& a : attempts)
    have_step = have_step || !a.steps.empty();
  return have_step;
}

bool AnyCheckpoint(const std::vector<Attempt>& attempts) {
  bool have_checkpoints = false;
  for (const Attempt& a : attempts) {
    for (const GoodputEvent* e : a.events) {
      have_checkpoints = have_checkpoints || e->kind == GoodputEventKind::kCheckpointSaveEnd ||
                         e->kind == GoodputEventKind::kCheckpointSaveAsync;
    }
  }
  return have_checkpoints;
}

// The wall-clock window [begin, end]: from the first attempt's start to the
// latest attempt end (or `now_s`, if later); stretches the last attempt to it.
std::pair<Ns, Ns> WallWindow(std::vector<Attempt>& attempts, const GoodputOptions& options) {
  Ns wall_begin = attempts.front().start;
  Ns wall_end = attempts.back().end;
  for (const Attempt& a : attempts)
    wall_end = std::max(wall_end, a.end);
  if (options.now_s > 0)
    wall_end = std::max(wall_end, ToNs(options.now_s));
  attempts.back().end = std::max(attempts.back().end, wall_end);
  return {wall_begin, wall_end};
}

// The step time for steps with no known duration: the mean over attempts of
// each attempt's mean known step (its first step excluded), else the mean of
// all known steps.
double FallbackStepS(const std::vector<Attempt>& attempts) {
  std::vector<StepRec> all;
  for (const Attempt& a : attempts)
    all.insert(all.end(), a.steps.begin(), a.steps.end());
  double sum = 0;
  int64_t n = 0;
  for (const Attempt& a : attempts) {
    const double m = MeanKnownStep(a.steps, 1);
    if (std::isfinite(m)) {
      sum += m;
      ++n;
    }
  }
  return n > 0 ? sum / static_cast<double>(n) : MeanKnownStep(all, 0);
}

// Paints every attempt's steps, start-up, events and the idle gap after it
// into `spans`; records saves, the gaps between saves and the step counts.
void PaintAttempts(std::vector<Attempt>& attempts, double fallback_step, GoodputReport& r, std::vector<Span>& spans,
                   SaveStats& saves, std::vector<double>& between_saves) {
  for (size_t i = 0; i < attempts.size(); ++i) {
    Attempt& a = attempts[i];
    const Ns first_step_begin = PaintSteps(a, fallback_step, spans);
    if (a.start < first_step_begin)
      spans.push_back({a.start, first_step_begin, Paint::kInit});
    const size_t before = saves.saves.size();
    PaintEvents(a, spans, saves);
    for (size_t k = before + 1; k < saves.saves.size(); ++k)
      between_saves.push_back(ToS(saves.saves[k].first - saves.saves[k - 1].second));
    if (i + 1 < attempts.size() && a.end < attempts[i + 1].start)
      spans.push_back({a.end, attempts[i + 1].start, Paint::kIdle});
    for (const StepRec& s : a.steps) {
      if (s.wasted)
        ++r.wasted_steps;
      else
        ++r.steps;
    }
  }
}

// Sets the wall time, productive time, badput buckets and ETTR from `spans`.
void FillTimes(GoodputReport& r, std::vector<Span>& spans, Ns wall_begin, Ns wall_end) {
  const auto totals = Sweep(spans, wall_begin, wall_end);
  auto at = [&](Paint p) { return ToS(totals[static_cast<size_t>(p)]); };
  r.start_s = ToS(wall_begin);
  r.end_s = ToS(wall_end);
  r.wall_s = ToS(wall_end - wall_begin);
  r.productive_s = at(Paint::kProductive);
  auto set = [&](BadputCategory c, Paint p) { r.badput_s[static_cast<size_t>(c)] = at(p); };
  set(BadputCategory::kInitialization, Paint::kInit);
  set(BadputCategory::kDataLoading, Paint::kDataLoading);
  set(BadputCategory::kCheckpointSave, Paint::kSave);
  set(BadputCategory::kCheckpointRestore, Paint::kRestore);
  set(BadputCategory::kWastedProgress, Paint::kWasted);
  set(BadputCategory::kIdleBetweenAttempts, Paint::kIdle);
  set(BadputCategory::kEvaluation, Paint::kEvaluation);
  FinishBuckets(r);
  r.ettr = r.wall_s > 0 ? r.productive_s / r.wall_s : kLogNaN;
}

// Sets the attempt and interruption counts, the MTBF and the mean recovery
// time (a failure's end to the next attempt's first step end).
void FillFailures(GoodputReport& r, const std::vector<Attempt>& attempts) {
  r.attempts = static_cast<int64_t>(attempts.size());
  std::vector<double> recoveries;
  for (size_t i = 0; i < attempts.size(); ++i) {
    if (!attempts[i].failed)
      continue;
    ++r.interruptions;
    for (size_t j = i + 1; j < attempts.size(); ++j) {
      if (!attempts[j].steps.empty()) {
        recoveries.push_back(ToS(attempts[j].steps.front().end - attempts[i].end));
        break;
      }
    }
  }
  const double running_s = r.wall_s - r.badput_s[static_cast<size_t>(BadputCategory::kIdleBetweenAttempts)];
  if (r.interruptions > 0)
    r.mtbf_s = running_s / static_cast<double>(r.interruptions);
  if (!recoveries.empty())
    r.recovery_s = std::accumulate(recoveries.begin(), recoveries.end(), 0.0) / static_cast<double>(recoveries.size());
}

// Sets the checkpoint count, mean blocking time, observed and optimal
// intervals, and the effective MFU.
void FillCheckpoints(GoodputReport& r, const SaveStats& saves, std::vector<double> between_saves,
                     const GoodputOptions& options) {
  r.checkpoints = static_cast<int64_t>(saves.saves.size());
  if (!saves.blocking_s.empty()) {
    r.checkpoint_time_s = std::accumulate(saves.blocking_s.begin(), saves.blocking_s.end(), 0.0) /
                          static_cast<double>(saves.blocking_s.size());
  }
  r.checkpoint_interval.observed_s = base::Median(std::move(between_saves), kLogNaN);
  FillIntervals(r, options);
  r.steady_state_mfu = options.steady_state_mfu;
  if (std::isfinite(options.steady_state_mfu) && std::isfinite(r.ettr))
    r.effective_mfu = options.steady_state_mfu * r.ettr;
}

// The assumptions the figures rest on, as notes.
void AddNotes(GoodputReport& r, bool have_checkpoints, const SaveStats& saves) {
  if (!have_checkpoints && r.interruptions > 0) {
    r.notes.push_back({NoteKind::kAssumption, "no_checkpoint_events",
                       "no checkpoint save was recorded: progress lost at a failure is known only where a later "
                       "attempt repeats step numbers"});
  }
  if (r.checkpoints > 0 && saves.blocking_s.empty()) {
    r.notes.push_back(
        {NoteKind::kAssumption, "checkpoint_time_unknown",
         r.interval_inputs.checkpoint_time_given
             ? "checkpoint saves were recorded without their blocking time: save time is in the steps or other"
             : "checkpoint saves were recorded without their blocking time: save time is in the steps or other, "
               "and the optimal intervals need parameter 'checkpoint_time'"});
  }
  if (r.interruptions == 0 && !r.interval_inputs.mtbf_given) {
    r.notes.push_back(
        {NoteKind::kAssumption, "no_failures",
         "no failure was observed: the MTBF and the optimal intervals are not known from this run (parameter "
         "'mtbf' gives them)"});
  }
}

}  // namespace

Status ValidateGoodputOptions(const GoodputOptions& options) {
  using goodput_internal::CheckDuration;
  using goodput_internal::DurationRange;
  // NaN: not given (the events' own figures are used).
  const std::tuple<const char*, double, DurationRange> durations[] = {
      {"checkpoint_time", options.checkpoint_time_s, DurationRange::kPositive},
      {"mtbf", options.mtbf_s, DurationRange::kPositive},
      {"restart_time", options.restart_time_s, DurationRange::kNonNegative}};
  for (const auto& [name, v, range] : durations) {
    if (!std::isnan(v))
      MFU_RETURN_IF_ERROR(CheckDuration(name, v, range, kMaxDurationS));
  }
  if (!std::isnan(options.steady_state_mfu) && !(options.steady_state_mfu >= 0 && options.steady_state_mfu <= 1))
    return InvalidArgumentError(
        fmt::format("parameter 'mfu' must be a fraction in [0, 1] (got {})", options.steady_state_mfu));
  return Status::Ok();
}

StatusOr<GoodputReport> ComputeGoodput(std::span<const GoodputEvent> events, const GoodputOptions& options) {
  if (events.empty())
    return InvalidArgumentError("no goodput events");
  MFU_RETURN_IF_ERROR(ValidateGoodputOptions(options));
  MFU_ASSIGN_OR_RETURN(std::vector<const GoodputEvent*> sorted, SortedEvents(events));
  EndsBeforeNextStart(sorted);
  GoodputReport r;
  std::vector<Attempt> attempts = SplitAttempts(sorted, r);
  const bool have_step = AnyStep(attempts);
  const bool have_checkpoints = AnyCheckpoint(attempts);
  if (!have_step)
    return InvalidArgumentError("no training step among the goodput events");
  MarkWasted(attempts, have_checkpoints);

  const auto [wall_begin, wall_end] = WallWindow(attempts, options);
  const double fallback_step = FallbackStepS(attempts);

  std::vector<Span> spans;
  SaveStats saves;
  std::vector<double> between_saves;
  PaintAttempts(attempts, fallback_step, r, spans, saves, between_saves);
  FillTimes(r, spans, wall_begin, wall_end);
  FillFailures(r, attempts);
  FillCheckpoints(r, saves, std::move(between_saves), options);
  AddNotes(r, have_checkpoints, saves);
  return r;
}

}  // namespace mfu
