#pragma once

// The phases of AnalyzeTrainingLog (log_analysis.cc): the steady-state window
// (steady_state.cc) and the findings (log_findings*.cc). Private to mfu_log.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mfu/log_analysis.h"

namespace mfu::log_internal {

// The throughput figure the windows and spikes are found on: tokens/s per
// GPU where any step has it, else steps per second (1 / step time), else the
// logged TFLOP/s or MFU. Higher is faster for every kind.
enum class RateKind { kNone = 0, kTokensPerGpu, kStepsPerS, kLoggedTflops, kLoggedMfu };

// The kind most training lines of `steps` can give (kNone when none can).
RateKind ChooseRateKind(const std::vector<LogStep>& steps);
// The figure of `kind` for `step`, NaN when the line lacks it.
double StepRate(const LogStep& step, RateKind kind);
const char* RateKindName(RateKind kind);

// A finite value above zero (a usable rate, time or count).
inline bool Positive(double x) {
  return std::isfinite(x) && x > 0;
}

// Median of the finite values (NaN when none); reorders a copy.
double Median(std::vector<double> values);
// The same, reordering (and dropping the non-finite values of) `values`
// itself: a buffer reused across windows, no allocation per window.
double MedianInPlace(std::vector<double>& values);

// Findings of one kind listed one by one up to kMaxPerKind, then one
// closing "N more" finding. Only the listed ones are built: a hostile log
// with a restart (or a spike, or a mismatched attempt) on every line costs
// a count per line, not a formatted message and a LogFinding.
class CappedFindings {
 public:
  static constexpr size_t kMaxPerKind = 20;
  explicit CappedFindings(const char* kind) : kind_(kind) {}
  // Counts one finding; `make` (returning a LogFinding) runs only while
  // the list is under the cap.
  template <typename Make>
  void Add(Make make) {
    if (total_++ < kMaxPerKind)
      found_.push_back(make());
  }
  // Appends the listed findings and, past the cap, the closing one (at the
  // last listed finding's line) to `out`.
  void Finish(std::vector<LogFinding>& out);

 private:
  const char* kind_;
  size_t total_ = 0;
  std::vector<LogFinding> found_;
};

// What the timeline's throughput looks like: the warm-up lines at the start
// of each attempt, the steady window, the median all windows are judged by.
struct RateProfile {
  RateKind kind = RateKind::kNone;
  std::vector<double> rate;  // per step (NaN for validation lines)
  std::vector<bool> warmup;  // per step
  double median = 0;         // of the non-warm-up training lines
  size_t window_begin = 0;   // [begin, end) indices into steps
  size_t window_end = 0;
};

// Finds warm-up and the steady window (docs/logs.md "Steady state"): the
// first lines of each attempt farther than `band` from the median (at most
// half of the attempt), then the longest run of lines within `band` of the
// median in which no two consecutive lines fall outside it (one-line spikes
// stay in the window, out of its medians).
RateProfile ProfileRates(const std::vector<LogStep>& steps, double band);

// The medians of the window of `profile` over its in-band lines.
LogSteadyState SummarizeSteadyState(const std::vector<LogStep>& steps, const RateProfile& profile, double band);

// FLOPs per token the findings compare the logged figures with (0 when
// the model or sequence length is unknown).
struct FlopsAlternatives {
  double attention_counted = 0;  // training attention-core FLOPs the source convention counts
  double attention_full = 0;     // the same, full (non-causal) T^2
  double hf_six_n = 0;           // 6 x non-embedding parameters (HF floating_point_ops)
  double total_params = 0;       // the model's parameters (ParamCounts::total)
};

// Every finding of `analysis` (its timeline already recomputed), appended
// to analysis.findings in a stable order.
void AddFindings(const LogAnalysisRequest& request, const RateProfile& profile, const FlopsAlternatives& flops,
                 LogAnalysis& analysis);

// The parts of AddFindings in log_findings_shape.cc.
// Indices of one-line spikes: a line at least 2x slower or faster than both
// neighbours (eval or checkpoint folded into it, a dispatch artefact).
std::vector<size_t> FindSpikes(const std::vector<LogStep>& steps, const RateProfile& profile);
// Warm-up, regressions, spikes, restarts, skipped iterations.
void AddShapeFindings(const LogAnalysisRequest& request, const RateProfile& profile, const std::vector<size_t>& spikes,
                      LogAnalysis& analysis);
// HF total_flos against 6 x non-embedding parameters x tokens; the header's
// parameter count against the model's.
void AddHfFindings(const FlopsAlternatives& flops, LogAnalysis& analysis);
// MFU above 100% (logged or recomputed), logged TFLOP/s above the peak.
void AddAboveFindings(LogAnalysis& analysis);

}  // namespace mfu::log_internal
