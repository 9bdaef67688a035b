// Warm-up and the steady-state window of a timeline's throughput. One pass
// to classify lines against the median, one to find the longest window: the
// 10-million-line log stays linear.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "log/log_analysis_internal.h"

namespace mfu::log_internal {
namespace {

bool InBand(double rate, double median, double band) {
  return Positive(rate) && std::fabs(rate / median - 1) <= band;
}

// Marks the first lines of each attempt that are farther than `band` from
// `median` (compile, initialization), at most half of the attempt's lines.
void MarkWarmup(const std::vector<LogStep>& steps, const std::vector<double>& rate, double median, double band,
                std::vector<bool>& warmup) {
  size_t begin = 0;
  while (begin < steps.size()) {
    size_t end = begin;
    while (end < steps.size() && steps[end].attempt == steps[begin].attempt)
      ++end;
    size_t training = 0;
    for (size_t i = begin; i < end; ++i)
      training += steps[i].validation ? size_t{0} : size_t{1};
    size_t marked = 0;
    for (size_t i = begin; i < end && 2 * (marked + 1) <= training; ++i) {
      if (steps[i].validation)
        continue;
      if (InBand(rate[i], median, band))
        break;
      // A line without the figure at the start is not evidence of warm-up.
      if (!Positive(rate[i]))
        break;
      warmup[i] = true;
      ++marked;
    }
    begin = end;
  }
}

}  // namespace

RateKind ChooseRateKind(const std::vector<LogStep>& steps) {
  size_t counts[5] = {0, 0, 0, 0, 0};
  size_t training = 0;
  for (const LogStep& s : steps) {
    if (s.validation)
      continue;
    ++training;
    counts[1] += Positive(s.tokens_per_s_per_gpu) ? size_t{1} : size_t{0};
    counts[2] += Positive(s.step_time_s) ? size_t{1} : size_t{0};
    counts[3] += Positive(s.logged_tflops_per_gpu) ? size_t{1} : size_t{0};
    counts[4] += Positive(s.logged_mfu) ? size_t{1} : size_t{0};
  }
  for (size_t k = 1; k < 5; ++k) {
    if (training > 0 && 2 * counts[k] >= training)
      return static_cast<RateKind>(k);
  }
  return RateKind::kNone;
}

double StepRate(const LogStep& s, RateKind kind) {
  switch (kind) {
    case RateKind::kTokensPerGpu:
      return s.tokens_per_s_per_gpu;
    case RateKind::kStepsPerS:
      return Positive(s.step_time_s) ? 1 / s.step_time_s : kLogNaN;
    case RateKind::kLoggedTflops:
      return s.logged_tflops_per_gpu;
    case RateKind::kLoggedMfu:
      return s.logged_mfu;
    case RateKind::kNone:
      break;
  }
  return kLogNaN;
}

const char* RateKindName(RateKind kind) {
  switch (kind) {
    case RateKind::kTokensPerGpu:
      return "tokens/s per GPU";
    case RateKind::kStepsPerS:
      return "steps/s";
    case RateKind::kLoggedTflops:
      return "logged TFLOP/s per GPU";
    case RateKind::kLoggedMfu:
      return "logged MFU";
    case RateKind::kNone:
      break;
  }
  return "none";
}

double Median(std::vector<double> values) {
  return MedianInPlace(values);
}

double MedianInPlace(std::vector<double>& values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }), values.end());
  if (values.empty())
    return kLogNaN;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  double upper = values[mid];
  if (values.size() % 2 == 1)
    return upper;
  double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

RateProfile ProfileRates(const std::vector<LogStep>& steps, double band) {
  RateProfile p;
  p.kind = ChooseRateKind(steps);
  p.rate.assign(steps.size(), kLogNaN);
  p.warmup.assign(steps.size(), false);
  if (p.kind == RateKind::kNone)
    return p;
  for (size_t i = 0; i < steps.size(); ++i) {
    const double r = StepRate(steps[i], p.kind);
    if (!steps[i].validation && Positive(r))
      p.rate[i] = r;
  }
  std::vector<double> kept(p.rate);
  const double first_median = MedianInPlace(kept);
  if (!Positive(first_median))
    return p;
  MarkWarmup(steps, p.rate, first_median, band, p.warmup);
  kept.clear();
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!p.warmup[i])
      kept.push_back(p.rate[i]);
  }
  p.median = MedianInPlace(kept);
  // The longest run of non-warm-up training lines of one attempt in which
  // no two consecutive lines are out of band; it starts and ends in band.
  size_t best_begin = 0, best_end = 0, best_in = 0;
  size_t begin = 0, in = 0, last_in = 0;
  bool open = false, previous_out = false;
  auto close = [&]() {
    if (open && in > best_in) {
      best_begin = begin;
      best_end = last_in + 1;
      best_in = in;
    }
    open = false;
    in = 0;
    previous_out = false;
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].validation)
      continue;
    if (open && steps[i].attempt != steps[begin].attempt)
      close();
    const bool ok = !p.warmup[i] && InBand(p.rate[i], p.median, band);
    if (ok) {
      if (!open) {
        open = true;
        begin = i;
      }
      ++in;
      last_in = i;
      previous_out = false;
    } else if (open) {
      if (previous_out || p.warmup[i]) {
        close();
      } else {
        previous_out = true;
      }
    }
  }
  close();
  p.window_begin = best_begin;
  p.window_end = best_end;
  return p;
}

LogSteadyState SummarizeSteadyState(const std::vector<LogStep>& steps, const RateProfile& p, double band) {
  LogSteadyState out;
  if (p.window_end <= p.window_begin)
    return out;
  std::vector<size_t> in;  // the in-band training lines of the window
  for (size_t i = p.window_begin; i < p.window_end; ++i) {
    if (!steps[i].validation && InBand(p.rate[i], p.median, band))
      in.push_back(i);
  }
  out.step_lines = static_cast<int64_t>(in.size());
  out.first_step = steps[p.window_begin].step;
  out.last_step = steps[p.window_end - 1].step;
  // One buffer for the eight medians.
  std::vector<double> values;
  values.reserve(in.size());
  auto median = [&](double LogStep::*field) {
    values.clear();
    for (size_t i : in)
      values.push_back(steps[i].*field);
    return MedianInPlace(values);
  };
  out.mfu = median(&LogStep::mfu);
  out.mfu_megatron = median(&LogStep::mfu_megatron);
  out.hfu = median(&LogStep::hfu);
  out.logged_mfu = median(&LogStep::logged_mfu);
  out.tokens_per_s_per_gpu = median(&LogStep::tokens_per_s_per_gpu);
  out.step_time_s = median(&LogStep::step_time_s);
  out.tflops_per_gpu = median(&LogStep::tflops_per_gpu);
  out.logged_tflops_per_gpu = median(&LogStep::logged_tflops_per_gpu);
  return out;
}

}  // namespace mfu::log_internal
