// Findings about the run's shape (warm-up, regressions, spikes, restarts,
// skipped iterations), figures above the peak, and HF's total_flos.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "log/log_analysis_internal.h"

namespace mfu::log_internal {
namespace {

constexpr double kRegressionDrop = 0.15;      // a regression: >= 15% below the median ...
constexpr size_t kRegressionLines = 3;        // ... for >= 3 consecutive lines
constexpr double kSpikeFactor = 2;            // a spike: 2x slower or faster than both neighbours
constexpr double kPeriodicSpikeFactor = 1.5;  // ... or slower than both and 1.5x below the median, at a
                                              // fixed step period (>= 3 lines)
constexpr double kShapeCauseMatch = 0.05;     // a ratio within 5% of a cause's factor

LogFinding Make(const char* kind, const LogStep& s, std::string message) {
  LogFinding f;
  f.kind = kind;
  f.step = s.step;
  f.line = s.line;
  f.attempt = s.attempt;
  f.message = std::move(message);
  return f;
}

// "1 line", "3 lines".
std::string Lines(size_t n, const char* word = "line") {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::string Rate(double value, RateKind kind) {
  if (kind == RateKind::kLoggedMfu)
    return fmt::format("{:.2f}% logged MFU", 100 * value);
  return fmt::format("{:.4g} {}", value, RateKindName(kind));
}

void AddWarmup(const std::vector<LogStep>& steps, const RateProfile& p, std::vector<LogFinding>& out) {
  CappedFindings found("warmup");  // one per attempt
  std::vector<double> rates;       // reused: no allocation per attempt
  size_t i = 0;
  while (i < steps.size()) {
    if (!p.warmup[i]) {
      ++i;
      continue;
    }
    size_t j = i;
    rates.clear();
    while (j < steps.size() && (p.warmup[j] || steps[j].validation) && steps[j].attempt == steps[i].attempt) {
      if (p.warmup[j])
        rates.push_back(p.rate[j]);
      ++j;
    }
    found.Add([&]() {
      const LogStep& last = steps[j - 1];
      const size_t lines = rates.size();
      const double median = MedianInPlace(rates);
      return Make("warmup", steps[i],
                  fmt::format("steps {}-{} ({}) run at {}, {:.0f}% of the median {}: compilation and "
                              "initialization; they are left out of the steady state",
                              steps[i].step, last.step, Lines(lines), Rate(median, p.kind), 100 * median / p.median,
                              Rate(p.median, p.kind)));
    });
    i = j;
  }
  found.Finish(out);
}

void AddRegressions(const std::vector<LogStep>& steps, const RateProfile& p, std::vector<LogFinding>& out) {
  CappedFindings found("regression");
  const double floor = (1 - kRegressionDrop) * p.median;
  std::vector<double> rates;  // reused: no allocation per window
  size_t i = 0;
  while (i < steps.size()) {
    if (p.warmup[i] || !Positive(p.rate[i]) || p.rate[i] > floor) {
      ++i;
      continue;
    }
    size_t j = i;
    rates.clear();
    while (j < steps.size() && steps[j].attempt == steps[i].attempt &&
           (steps[j].validation || (Positive(p.rate[j]) && p.rate[j] <= floor))) {
      if (!steps[j].validation)
        rates.push_back(p.rate[j]);
      ++j;
    }
    if (rates.size() >= kRegressionLines) {
      found.Add([&]() {
        const size_t lines = rates.size();
        const double median = MedianInPlace(rates);
        return Make("regression", steps[i],
                    fmt::format("from step {} to step {} ({} lines) throughput fell to {}, {:.0f}% below the "
                                "run's median {}: look for a slow node, thermal or power throttling, or a "
                                "data-loader stall in that window",
                                steps[i].step, steps[j - 1].step, lines, Rate(median, p.kind),
                                100 * (1 - median / p.median), Rate(p.median, p.kind)));
      });
    }
    i = j;
  }
  found.Finish(out);
}

// Equal spacing of at least three spikes: nanoGPT's eval_interval, a
// checkpoint interval.
int64_t Period(const std::vector<LogStep>& steps, const std::vector<size_t>& spikes) {
  if (spikes.size() < 3)
    return 0;
  const int64_t period = steps[spikes[1]].step - steps[spikes[0]].step;
  for (size_t k = 2; k < spikes.size(); ++k) {
    if (steps[spikes[k]].step - steps[spikes[k - 1]].step != period)
      return 0;
  }
  return period > 0 ? period : 0;
}

void AddSpikes(const std::vector<LogStep>& steps, const RateProfile& p, const std::vector<size_t>& spikes,
               std::vector<LogFinding>& out) {
  if (spikes.empty())
    return;
  if (const int64_t period = Period(steps, spikes); period > 0) {
    std::vector<double> rates;
    for (size_t i : spikes)
      rates.push_back(p.rate[i]);
    const double median = Median(rates);
    out.push_back(
        Make("spike", steps[spikes[0]],
             fmt::format("every {} steps from step {} ({} lines) a line runs at {} against the median {}: "
                         "an evaluation or checkpoint is folded into that step's time (nanoGPT's "
                         "eval_interval); those lines are left out of the steady state",
                         period, steps[spikes[0]].step, spikes.size(), Rate(median, p.kind), Rate(p.median, p.kind))));
    return;
  }
  CappedFindings found("spike");
  for (size_t i : spikes) {
    found.Add([&]() {
      const bool slow = p.rate[i] < p.median;
      return Make(
          "spike", steps[i],
          fmt::format("step {} runs at {}, {:.1f}x {} than its neighbours: {}", steps[i].step, Rate(p.rate[i], p.kind),
                      slow ? p.median / p.rate[i] : p.rate[i] / p.median, slow ? "slower" : "faster",
                      slow ? "an evaluation, checkpoint or data stall folded into the line; it is left out of the "
                             "steady state"
                           : "a timing artefact (asynchronous dispatch, a profiler step); it is left out of the "
                             "steady state"));
    });
  }
  found.Finish(out);
}

void AddRestarts(const std::vector<LogStep>& steps, std::vector<LogFinding>& out) {
  CappedFindings found("restart");
  for (size_t i = 1; i < steps.size(); ++i) {
    const LogStep& prev = steps[i - 1];
    const LogStep& s = steps[i];
    if (s.attempt == prev.attempt && s.step >= prev.step)
      continue;
    found.Add([&]() {
      std::string message;
      if (s.step <= prev.step) {
        message = fmt::format(
            "the step count goes back from {} to {} (attempt {}): a restart from a checkpoint; {} "
            "run again",
            prev.step, s.step, s.attempt, Lines(static_cast<size_t>(prev.step - s.step + 1), "step"));
      } else {
        message = fmt::format(
            "a new run begins at step {} after step {} (attempt {}): a restart; run command 'goodput' on "
            "the logs for the time it cost",
            s.step, prev.step, s.attempt);
      }
      return Make("restart", s, std::move(message));
    });
  }
  found.Finish(out);
}

void AddSkipped(const std::vector<LogStep>& steps, std::vector<LogFinding>& out) {
  int64_t skipped = 0, lines = 0;
  const LogStep* first = nullptr;
  for (const LogStep& s : steps) {
    if (s.skipped_iterations <= 0)
      continue;
    skipped += s.skipped_iterations;
    ++lines;
    if (!first)
      first = &s;
  }
  if (!first)
    return;
  out.push_back(Make("skipped_iterations", *first,
                     fmt::format("{} iterations skipped on {} lines from step {} (fp16 loss-scale overflow): their "
                                 "time was spent without an update; a steady stream means the loss scale or the "
                                 "learning rate is too high (BF16 avoids it)",
                                 skipped, lines, first->step)));
}

}  // namespace

void CappedFindings::Finish(std::vector<LogFinding>& out) {
  if (total_ > kMaxPerKind) {
    LogFinding more = found_.back();
    more.message = fmt::format("{} more {} lines like the above (the JSON and CSV outputs list the steps)",
                               total_ - kMaxPerKind, kind_);
    found_.push_back(std::move(more));
  }
  for (LogFinding& f : found_)
    out.push_back(std::move(f));
  found_.clear();
  total_ = 0;
}

std::vector<size_t> FindSpikes(const std::vector<LogStep>& steps, const RateProfile& p) {
  // Neighbours: the previous and next training lines with a rate, of the
  // same attempt.
  std::vector<size_t> idx;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!steps[i].validation && !p.warmup[i] && Positive(p.rate[i]))
      idx.push_back(i);
  }
  std::vector<size_t> single, periodic;
  for (size_t k = 1; k + 1 < idx.size(); ++k) {
    const size_t a = idx[k - 1], i = idx[k], b = idx[k + 1];
    if (steps[a].attempt != steps[i].attempt || steps[b].attempt != steps[i].attempt)
      continue;
    const double r = p.rate[i];
    const double slow = std::min(p.rate[a], p.rate[b]) / r;
    const double fast = r / std::max(p.rate[a], p.rate[b]);
    if (slow >= kSpikeFactor || fast >= kSpikeFactor)
      single.push_back(i);
    if (slow > 1 && p.median / r >= kPeriodicSpikeFactor)
      periodic.push_back(i);
  }
  // Slow lines at a fixed step period are evidence enough at a lower
  // factor: an evaluation or checkpoint every N steps.
  return Period(steps, periodic) > 0 ? periodic : single;
}

void AddShapeFindings(const LogAnalysisRequest& request, const RateProfile& profile, const std::vector<size_t>& spikes,
                      LogAnalysis& a) {
  (void)request;
  const auto& steps = a.timeline.steps;
  if (profile.kind != RateKind::kNone && Positive(profile.median)) {
    AddWarmup(steps, profile, a.findings);
    AddRegressions(steps, profile, a.findings);
    AddSpikes(steps, profile, spikes, a.findings);
  }
  AddRestarts(steps, a.findings);
  AddSkipped(steps, a.findings);
}

void AddAboveFindings(LogAnalysis& a) {
  const LogStep* logged = nullptr;
  const LogStep* recomputed = nullptr;
  const LogStep* tflops = nullptr;
  size_t logged_n = 0, recomputed_n = 0, tflops_n = 0;
  for (const LogStep& s : a.timeline.steps) {
    if (Positive(s.logged_mfu) && s.logged_mfu > 1) {
      ++logged_n;
      if (!logged || s.logged_mfu > logged->logged_mfu)
        logged = &s;
    }
    if (Positive(s.mfu) && s.mfu > 1) {
      ++recomputed_n;
      if (!recomputed || s.mfu > recomputed->mfu)
        recomputed = &s;
    }
    if (a.peak_flops > 0 && Positive(s.logged_tflops_per_gpu) && s.logged_tflops_per_gpu * 1e12 > a.peak_flops) {
      ++tflops_n;
      if (!tflops || s.logged_tflops_per_gpu > tflops->logged_tflops_per_gpu)
        tflops = &s;
    }
  }
  if (logged)
    a.findings.push_back(Make("mfu_above_100", *logged,
                              fmt::format("the logged MFU reaches {:.2f}% at step {} ({} lines above 100%): no device "
                                          "exceeds its dense peak, so the framework's peak or FLOPs are wrong",
                                          100 * logged->logged_mfu, logged->step, logged_n)));
  if (recomputed)
    a.findings.push_back(
        Make("mfu_above_100", *recomputed,
             fmt::format("the recomputed MFU reaches {:.2f}% at step {} ({} lines above 100%): check "
                         "parameter 'gpus', parameter 'seq_len', parameter 'precision' and parameter 'model'",
                         100 * recomputed->mfu, recomputed->step, recomputed_n)));
  if (tflops)
    a.findings.push_back(
        Make("tflops_above_peak", *tflops,
             fmt::format("step {} logs {:.1f} TFLOP/s per device ({} lines above the {}'s dense {} peak of {:.1f}): "
                         "the step time was taken before the device finished (MaxText's asynchronous dispatch, a "
                         "profiler step); read the steady state instead",
                         tflops->step, tflops->logged_tflops_per_gpu, tflops_n, a.gpu ? a.gpu->name : "device",
                         DTypeName(a.precision), a.peak_flops / 1e12)));
}

void AddHfFindings(const FlopsAlternatives& flops, LogAnalysis& a) {
  const LogHeader& h = a.timeline.header;
  if (flops.total_params > 0 && Positive(h.parameters) && a.gpus > 1) {
    const double shard = flops.total_params / static_cast<double>(a.gpus);
    if (std::fabs(h.parameters / shard - 1) <= kShapeCauseMatch) {
      LogFinding f;
      f.kind = "sharded_parameters";
      f.message = fmt::format(
          "the log's parameter count {:.0f} is {}'s {:.4g} divided by {} GPUs: FSDP or ZeRO-3 "
          "counts one rank's shard; FLOPs from this count are {}x too low",
          h.parameters, a.model_name, flops.total_params, a.gpus, a.gpus);
      a.findings.push_back(std::move(f));
    }
  }
  const LogStep* last = nullptr;
  for (const LogStep& s : a.timeline.steps) {
    if (Positive(s.logged_total_flos) && s.step > 0)
      last = &s;
  }
  if (!last || !(flops.hf_six_n > 0))
    return;
  // The job's tokens: the log's own count (num_input_tokens_seen), else
  // steps x global batch x sequence length.
  double tokens = 0;
  std::string how;
  if (Positive(last->consumed_tokens)) {
    tokens = last->consumed_tokens;
    how = "as the log counts them";
  } else if (a.global_batch > 0 && a.seq_len > 0) {
    tokens = static_cast<double>(last->step) * static_cast<double>(a.global_batch) * static_cast<double>(a.seq_len);
    how = fmt::format("{} steps x {} x {}", last->step, a.global_batch, a.seq_len);
  } else {
    return;
  }
  const double expected = flops.hf_six_n * tokens;
  const double ratio = last->logged_total_flos / expected;
  const double n = flops.hf_six_n / 6;
  const std::string basis =
      fmt::format("6 x {:.4g} non-embedding parameters x {:.0f} tokens ({}) = {:.4g}", n, tokens, how, expected);
  const auto gpus = static_cast<double>(a.gpus);
  if (a.gpus > 1 && std::fabs(ratio * gpus - 1) <= kShapeCauseMatch) {
    a.findings.push_back(
        Make("sharded_parameters", *last,
             fmt::format("total_flos {:.4g} is 1/{} of {}: under FSDP or ZeRO-3 the Trainer's num_parameters() "
                         "counts one rank's shard, so total_flos is 6 x N x tokens / world size (and it counts "
                         "padding, no attention); take FLOPs from mfu's recomputed figures",
                         last->logged_total_flos, a.gpus, basis)));
  } else if (ratio > 1 + kShapeCauseMatch) {
    a.findings.push_back(
        Make("padding_counted", *last,
             fmt::format("total_flos {:.4g} is {:.2f}x {}: the Trainer counts input_ids.numel(), "
                         "padding tokens included; pass parameter 'seq_len' as the padded length or read "
                         "mfu's figures",
                         last->logged_total_flos, ratio, basis)));
  } else if (ratio < 1 - kShapeCauseMatch) {
    a.findings.push_back(
        Make("logged_tflops_mismatch", *last,
             fmt::format("total_flos {:.4g} is {:.3f}x {}: check parameter 'global_batch', parameter 'seq_len' and "
                         "parameter 'model'",
                         last->logged_total_flos, ratio, basis)));
  }
}

}  // namespace mfu::log_internal
