// The findings of a recomputed timeline: the logged MFU and TFLOP/s checked
// against the recomputed ones with the cause named by the ratio, HF's
// total_flos explained, figures above the peak, and the shape of the run
// (warm-up, regressions, spikes, restarts, skipped iterations).

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

constexpr double kA100Peak = 312e12;  // A100 dense BF16, the fallback of torchtitan/nanoGPT/OLMo-core
constexpr double kCauseMatch = 0.03;  // a ratio within 3% of a cause's factor is that cause

double Pct(double fraction) {
  return 100 * fraction;
}

double Tf(double flops) {
  return flops / 1e12;
}

std::string GpuName(const LogAnalysis& a) {
  return a.gpu ? a.gpu->name : std::string("device");
}

LogFinding Make(const char* kind, const LogStep* s, std::string message) {
  LogFinding f;
  f.kind = kind;
  if (s) {
    f.step = s->step;
    f.line = s->line;
    f.attempt = s->attempt;
  }
  f.message = std::move(message);
  return f;
}

// A factor a logged/recomputed ratio may equal, and what it means.
struct Cause {
  const char* kind;
  double factor;
  std::string why;  // "divides by the A100's 312 TFLOP/s", completes "the logged MFU ..."
};

// The cause whose factor is closest to `ratio`; null when none is within
// kCauseMatch (and within a quarter of the factor's own distance from 1, so
// that a factor near 1 is not matched by noise). A factor inside the
// tolerance cannot explain a disagreement beyond it and is skipped.
const Cause* Closest(const std::vector<Cause>& causes, double ratio, double tolerance) {
  const Cause* best = nullptr;
  double best_err = kCauseMatch;
  for (const Cause& c : causes) {
    if (!(c.factor > 0) || std::fabs(c.factor - 1) <= tolerance)
      continue;
    const double err = std::fabs(ratio / c.factor - 1);
    if (err <= best_err && err <= std::fabs(std::log(c.factor)) / 4) {
      best_err = err;
      best = &c;
    }
  }
  return best;
}

// Causes shared by the MFU and TFLOP/s checks: scope and the attention term.
void AddScopeCauses(const LogAnalysis& a, const FlopsAlternatives& alt, std::vector<Cause>& out) {
  if (a.gpus > 1) {
    const auto g = static_cast<double>(a.gpus);
    out.push_back({"per_job_vs_per_device", g, fmt::format("is the whole job's ({} GPUs) over one device", a.gpus)});
    out.push_back({"per_job_vs_per_device", 1 / g, fmt::format("is one device's figure divided by {} GPUs", a.gpus)});
  }
  const LogHeader& h = a.timeline.header;
  const std::pair<const char*, int64_t> sizes[] = {{"tensor-parallel", h.tensor_parallel},
                                                   {"pipeline-parallel", h.pipeline_parallel},
                                                   {"context-parallel", h.context_parallel},
                                                   {"data-parallel", h.data_parallel}};
  for (const auto& [name, size] : sizes) {
    if (size > 1 && size != a.gpus) {
      const auto x = static_cast<double>(size);
      out.push_back({"world_size", x, fmt::format("is off by the {} size {}", name, size)});
      out.push_back({"world_size", 1 / x, fmt::format("is divided by the {} size {}", name, size)});
    }
  }
  const double f = a.model_flops_per_token;
  if (f > 0 && alt.attention_full > 0) {
    const bool counts_full = alt.attention_counted > 0.75 * alt.attention_full;
    if (counts_full) {
      out.push_back({"attention_factor", (f - alt.attention_full / 2) / f,
                     "counts causal (halved) attention where this convention counts the full T^2"});
    } else {
      out.push_back({"attention_factor", (f - alt.attention_counted + alt.attention_full) / f,
                     "counts the full T^2 attention where this convention halves it for the causal mask"});
    }
    if (alt.attention_counted > 0)
      out.push_back({"attention_factor", (f - alt.attention_counted) / f, "leaves the attention T^2 term out"});
  }
}

std::vector<Cause> MfuCauses(const LogAnalysis& a, const FlopsAlternatives& alt) {
  std::vector<Cause> out;
  if (a.gpu && a.peak_flops > 0) {
    const double dense = a.peak_flops;
    const double bf16 = a.gpu->peak_flops(DType::kBf16);
    const double tf32 = a.gpu->peak_flops(DType::kTf32);
    if (std::fabs(dense / kA100Peak - 1) > kCauseMatch)
      out.push_back({"peak_a100_fallback", dense / kA100Peak, "divides by the A100's 312 TFLOP/s"});
    out.push_back(
        {"peak_sparse", 0.5, fmt::format("divides by the 2:4-sparse {:.0f} TFLOP/s datasheet figure", Tf(2 * dense))});
    if (tf32 > 0)
      out.push_back({"peak_tf32", dense / tf32, fmt::format("divides by the TF32 peak ({:.0f} TFLOP/s)", Tf(tf32))});
    if ((a.precision == DType::kFp8 || a.precision == DType::kFp4) && bf16 > 0)
      out.push_back(
          {"quantized_vs_bf16_peak", dense / bf16,
           fmt::format("divides {} matmuls by the BF16 peak ({:.0f} TFLOP/s)", DTypeName(a.precision), Tf(bf16))});
  }
  AddScopeCauses(a, alt, out);
  return out;
}

std::string Remedy(const LogAnalysis& a, const char* kind) {
  const LogFormat f = a.timeline.format;
  const std::string k = kind;
  if (k == "peak_a100_fallback") {
    if (f == LogFormat::kTorchtitan)
      return "upgrade torchtitan past PR #4779 (its peak table fell back to the A100) or pass the right peak";
    if (f == LogFormat::kNanoGpt)
      return "nanoGPT's estimate_mfu always divides by the A100's 312e12 (flops_promised): read mfu's figure";
    return "fix the peak the framework divides by";
  }
  if (k == "peak_sparse")
    return "divide by the dense peak (torchtitan PR #1393 fixed B200's)";
  if (k == "peak_tf32")
    return "divide by the dense peak of the GEMMs' precision";
  if (k == "quantized_vs_bf16_peak")
    return "pass parameter 'precision' bf16 to compare with the BF16 peak, or read it as an FP8 MFU";
  if (k == "per_job_vs_per_device")
    return "check parameter 'gpus' and the framework's per-device scope";
  if (k == "world_size")
    return "check how the framework divides by the parallel sizes (prime-rl#20)";
  if (k == "attention_factor")
    return "compare under one convention (parameter 'convention'; torchtitan PR #280 discusses the factor)";
  if (f == LogFormat::kNanoGpt)
    return "nanoGPT's mfu is an EMA (0.9 old + 0.1 new) that averages the slower eval-interval steps in, and its "
           "denominator is always the A100's 312e12";
  return "check parameter 'model', parameter 'gpus', parameter 'seq_len' and the peak";
}

// One attempt's logged figure against the recomputed one: the medians of
// its comparable lines (robust to an EMA such as nanoGPT's and to noise).
struct Comparison {
  const LogStep* first = nullptr;  // the attempt's first compared line (the evidence)
  size_t lines = 0;
  double logged = 0, recomputed = 0, ratio = 0;
};

// The comparisons, one per attempt with at least one comparable line having
// both figures.
template <typename Logged, typename Recomputed>
std::vector<Comparison> CompareByAttempt(const std::vector<LogStep>& steps, const std::vector<bool>& comparable,
                                         Logged logged, Recomputed recomputed) {
  std::vector<Comparison> out;
  std::vector<double> l, r;  // reused: no allocation per attempt
  size_t i = 0;
  while (i < steps.size()) {
    const int32_t attempt = steps[i].attempt;
    l.clear();
    r.clear();
    const LogStep* first = nullptr;
    for (; i < steps.size() && steps[i].attempt == attempt; ++i) {
      const double x = logged(steps[i]), y = recomputed(steps[i]);
      if (!comparable[i] || !Positive(x) || !Positive(y))
        continue;
      if (!first)
        first = &steps[i];
      l.push_back(x);
      r.push_back(y);
    }
    if (!first)
      continue;
    Comparison c;
    c.first = first;
    c.lines = l.size();
    c.logged = MedianInPlace(l);
    c.recomputed = MedianInPlace(r);
    c.ratio = c.logged / c.recomputed;
    out.push_back(c);
  }
  return out;
}

// Lines whose logged figure is compared: not warm-up, not a spike, not a
// validation line (EMA figures such as nanoGPT's lag behind those).
std::vector<bool> ComparableLines(const std::vector<LogStep>& steps, const RateProfile& p,
                                  const std::vector<size_t>& spikes) {
  std::vector<bool> ok(steps.size(), false);
  for (size_t i = 0; i < steps.size(); ++i)
    ok[i] = !steps[i].validation && !p.warmup[i];
  for (size_t i : spikes)
    ok[i] = false;
  return ok;
}

// The header's printed peak (torchtitan's `Peak FLOPS used for computing
// MFU`) against the device's dense peak. True when it explains the MFU.
bool CheckPrintedPeak(const LogAnalysis& a, double tolerance, std::vector<LogFinding>& out, double& printed_ratio) {
  const LogHeader& h = a.timeline.header;
  printed_ratio = 0;
  if (!Positive(h.peak_flops_used) || !a.gpu || !(a.peak_flops > 0))
    return false;
  const double dense = a.peak_flops;
  if (std::fabs(h.peak_flops_used / dense - 1) <= tolerance)
    return false;
  printed_ratio = dense / h.peak_flops_used;
  const char* kind = "peak_other";
  if (std::fabs(h.peak_flops_used / kA100Peak - 1) <= kCauseMatch)
    kind = "peak_a100_fallback";
  else if (std::fabs(h.peak_flops_used / (2 * dense) - 1) <= kCauseMatch)
    kind = "peak_sparse";
  else if (a.gpu->peak_flops(DType::kTf32) > 0 &&
           std::fabs(h.peak_flops_used / a.gpu->peak_flops(DType::kTf32) - 1) <= kCauseMatch)
    kind = "peak_tf32";
  LogFinding f = Make(kind, nullptr,
                      fmt::format("the log's MFU divides by {:.1f} TFLOP/s, not the {}'s dense {} {:.1f} TFLOP/s: its "
                                  "MFU reads {:.2f}x too {}; {}",
                                  Tf(h.peak_flops_used), GpuName(a), DTypeName(a.precision), Tf(dense),
                                  printed_ratio > 1 ? printed_ratio : 1 / printed_ratio,
                                  printed_ratio > 1 ? "high" : "low", Remedy(a, kind)));
  f.line = h.peak_flops_line;
  out.push_back(std::move(f));
  return true;
}

// The cause whose factor matches `c`'s ratio: its kind and how it explains
// the logged figure; else `unexplained` and the bare ratio.
std::pair<const char*, std::string> Explain(const std::vector<Cause>& causes, const Comparison& c, double tolerance,
                                            const char* unexplained) {
  if (const Cause* cause = Closest(causes, c.ratio, tolerance); cause != nullptr)
    return {cause->kind, cause->why};
  return {unexplained, fmt::format("is {:.2f}x the recomputed one", c.ratio)};
}

void CheckLoggedMfu(const LogAnalysis& a, const LogAnalysisRequest& r, const FlopsAlternatives& alt,
                    const std::vector<bool>& comparable, std::vector<LogFinding>& out) {
  double printed_ratio = 0;
  const bool printed = CheckPrintedPeak(a, r.tolerance, out, printed_ratio);
  const std::vector<Cause> causes = MfuCauses(a, alt);
  const auto comparisons = CompareByAttempt(
      a.timeline.steps, comparable, [](const LogStep& s) { return s.logged_mfu; },
      [](const LogStep& s) { return s.mfu; });
  // One finding per attempt, capped: a log restarting on every line must
  // not format a message per line.
  CappedFindings found("logged MFU mismatch");
  for (const Comparison& c : comparisons) {
    if (std::fabs(c.ratio - 1) <= r.tolerance)
      continue;
    if (printed && std::fabs(c.ratio / printed_ratio - 1) <= kCauseMatch)
      continue;  // the printed-peak finding explains it
    found.Add([&]() {
      const auto [kind, why] = Explain(causes, c, r.tolerance, "logged_mfu_mismatch");
      return Make(kind, c.first,
                  fmt::format("the logged MFU {:.2f}% {} (median of {} lines from step {}); against the {}'s "
                              "dense {} {:.1f} TFLOP/s under {} it is {:.2f}%: {}",
                              Pct(c.logged), why, c.lines, c.first->step, GpuName(a), DTypeName(a.precision),
                              Tf(a.peak_flops), ConventionName(a.convention), Pct(c.recomputed), Remedy(a, kind)));
    });
  }
  found.Finish(out);
}

void CheckLoggedTflops(const LogAnalysis& a, const LogAnalysisRequest& r, const FlopsAlternatives& alt,
                       const std::vector<bool>& comparable, std::vector<LogFinding>& out) {
  std::vector<Cause> causes;
  AddScopeCauses(a, alt, causes);
  if (a.hardware_flops_per_token > a.model_flops_per_token * (1 + kCauseMatch))
    causes.push_back({"logged_tflops_mismatch", a.hardware_flops_per_token / a.model_flops_per_token,
                      fmt::format("counts the {} recompute (hardware FLOPs, as Megatron-DeepSpeed does)",
                                  RecomputeName(a.recompute))});
  const auto comparisons = CompareByAttempt(
      a.timeline.steps, comparable, [](const LogStep& s) { return s.logged_tflops_per_gpu; },
      [](const LogStep& s) { return s.tflops_per_gpu; });
  CappedFindings found("logged TFLOP/s mismatch");
  for (const Comparison& c : comparisons) {
    if (std::fabs(c.ratio - 1) <= r.tolerance)
      continue;
    found.Add([&]() {
      const auto [kind, why] = Explain(causes, c, r.tolerance, "logged_tflops_mismatch");
      return Make(kind, c.first,
                  fmt::format("the logged {:.1f} TFLOP/s per GPU {} (median of {} lines from step {}); "
                              "recomputed under {} it is {:.1f}: {}",
                              c.logged, why, c.lines, c.first->step, ConventionName(a.convention), c.recomputed,
                              Remedy(a, kind)));
    });
  }
  found.Finish(out);
}

}  // namespace

void AddFindings(const LogAnalysisRequest& request, const RateProfile& profile, const FlopsAlternatives& flops,
                 LogAnalysis& analysis) {
  const std::vector<size_t> spikes = FindSpikes(analysis.timeline.steps, profile);
  const std::vector<bool> comparable = ComparableLines(analysis.timeline.steps, profile, spikes);
  CheckLoggedMfu(analysis, request, flops, comparable, analysis.findings);
  CheckLoggedTflops(analysis, request, flops, comparable, analysis.findings);
  AddHfFindings(flops, analysis);
  AddAboveFindings(analysis);
  AddShapeFindings(request, profile, spikes, analysis);
}

}  // namespace mfu::log_internal
