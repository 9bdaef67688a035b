// The MFU waterfall (trace_waterfall.h): interval unions per layer, then
// buckets by subtraction so that they sum to the step time by construction.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mfu/trace_waterfall.h"
#include "trace/intervals.h"
#include "trace/steps.h"

namespace mfu {
namespace {

using trace::Interval;

// GPU events of one window, split into the layers the buckets come from.
struct Layers {
  std::vector<Interval> all, compute, matrix, matrix_with_flops, comm, mem;
  double matrix_flops = 0;
  double non_matrix_flops = 0;
  double at_peak_ns = 0;
  double flops_without_peak = 0;
  std::array<double, kNumDTypes> matrix_flops_by_dtype{};
};

// Events [first, last) of the trace hold every event that can overlap a
// window; the caller narrows them (events are sorted by start).
struct EventRange {
  size_t first = 0;
  size_t last = 0;
};

// The events that start before `hi`: a binary search on the sorted starts.
size_t EndOfWindow(const RankTrace& trace, int64_t hi) {
  return static_cast<size_t>(std::lower_bound(trace.ts_ns.begin(), trace.ts_ns.end(), hi) - trace.ts_ns.begin());
}

// Running maximum of the GPU events' ends in event order: the events before
// the first entry above `lo` all end by `lo`, so windows skip them.
std::vector<int64_t> PrefixMaxGpuEnd(const RankTrace& trace) {
  std::vector<int64_t> max_end(trace.num_events());
  int64_t m = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < trace.num_events(); ++i) {
    if (IsGpuActivity(trace.kind[i]))
      m = std::max(m, trace.end_ns(i));
    max_end[i] = m;
  }
  return max_end;
}

EventRange RangeOf(const RankTrace& trace, const std::vector<int64_t>& prefix_max_end, int64_t lo, int64_t hi) {
  EventRange r;
  r.first =
      static_cast<size_t>(std::upper_bound(prefix_max_end.begin(), prefix_max_end.end(), lo) - prefix_max_end.begin());
  r.last = std::max(r.first, EndOfWindow(trace, hi));
  return r;
}

// Which ops a window takes: with `step_of`, only those of step `step` (the
// ones its breakdown and FLOPs coverage count), else every op in time.
struct Members {
  const std::vector<uint32_t>* step_of = nullptr;
  uint32_t step = kNoIndex;
  bool Has(size_t i) const { return step_of == nullptr || (*step_of)[i] == step; }
};

Layers CollectLayers(const RankTrace& trace, std::span<const KernelClass> classes, const FlopsAttribution& attribution,
                     const Accelerator& gpu, int64_t lo, int64_t hi, EventRange range, Members members) {
  Layers l;
  for (size_t i = range.first; i < range.last; ++i) {
    const TraceEventKind kind = trace.kind[i];
    if (!IsGpuActivity(kind) || !members.Has(i))
      continue;
    const int64_t start = std::max(trace.ts_ns[i], lo), end = std::min(trace.end_ns(i), hi);
    if (start >= end)
      continue;  // outside the window, or zero length (no time to place)
    const Interval iv{start, end};
    const double fraction = static_cast<double>(end - start) / static_cast<double>(trace.dur_ns[i]);
    const double flops = attribution.flops[i] * fraction;
    const KernelClass cls = classes[i];
    l.all.push_back(iv);
    if (kind == TraceEventKind::kMemcpy || kind == TraceEventKind::kMemset || cls == KernelClass::kMemcpy ||
        cls == KernelClass::kMemset) {
      l.mem.push_back(iv);
      l.non_matrix_flops += flops;
      continue;
    }
    switch (cls) {
      case KernelClass::kGemm:
      case KernelClass::kAttention:
      case KernelClass::kConvolution: {
        l.compute.push_back(iv);
        l.matrix.push_back(iv);
        if (flops <= 0)
          break;
        const OpCost* cost = attribution.cost_of(i);
        const double peak = cost != nullptr ? DensePeakFlops(gpu, cost->dtype, PeakFallbacks::Kernel()) : 0;
        l.matrix_flops += flops;
        if (peak <= 0) {
          l.flops_without_peak += flops;
          break;
        }
        l.matrix_flops_by_dtype[static_cast<size_t>(cost->dtype)] += flops;
        l.at_peak_ns += flops / peak * 1e9;
        l.matrix_with_flops.push_back(iv);
        break;
      }
      case KernelClass::kElementwise:
      case KernelClass::kReduction:
        l.compute.push_back(iv);
        l.non_matrix_flops += flops;
        break;
      case KernelClass::kCommunication:
        l.comm.push_back(iv);
        l.non_matrix_flops += flops;
        break;
      default:  // unclassified: busy, but never silently called compute
        l.non_matrix_flops += flops;
        break;
    }
  }
  for (auto* v : {&l.all, &l.compute, &l.matrix, &l.matrix_with_flops, &l.comm, &l.mem})
    trace::MergeIntervals(*v);
  return l;
}

double Ratio(double num, double den) {
  return den > 0 ? num / den : 0;
}

void FillBuckets(const Layers& l, StepWaterfall& w) {
  const int64_t t = w.step_ns;
  w.busy_ns = trace::TotalLength(l.all);
  w.compute_ns = trace::TotalLength(l.compute);
  w.matrix_ns = trace::TotalLength(l.matrix);
  w.matrix_with_flops_ns = trace::TotalLength(l.matrix_with_flops);
  const std::vector<Interval> comm_exposed = trace::Subtract(l.comm, l.compute);
  const int64_t exposed_comm = trace::TotalLength(comm_exposed);
  const int64_t exposed_mem = trace::TotalLength(trace::Subtract(trace::Subtract(l.mem, l.compute), l.comm));

  w.matrix_flops = l.matrix_flops;
  w.non_matrix_flops = l.non_matrix_flops;
  w.matrix_flops_without_peak = l.flops_without_peak;
  w.at_peak_exact_ns = l.at_peak_ns;
  const int64_t at_peak_raw = std::llround(l.at_peak_ns);
  const int64_t at_peak = std::clamp<int64_t>(at_peak_raw, 0, w.matrix_with_flops_ns);
  w.over_peak_ns = std::max<int64_t>(0, at_peak_raw - w.matrix_with_flops_ns);

  w[WaterfallBucket::kIdle] = t - w.busy_ns;
  w[WaterfallBucket::kExposedCommunication] = exposed_comm;
  w[WaterfallBucket::kExposedMemcpy] = exposed_mem;
  w[WaterfallBucket::kUnattributed] = w.busy_ns - w.compute_ns - exposed_comm - exposed_mem;
  w[WaterfallBucket::kNonMatrixKernels] = w.compute_ns - w.matrix_ns;
  w[WaterfallBucket::kMatrixUnknownFlops] = w.matrix_ns - w.matrix_with_flops_ns;
  w[WaterfallBucket::kMatrixBelowPeak] = w.matrix_with_flops_ns - at_peak;
  w[WaterfallBucket::kMatrixAtPeak] = at_peak;

  const double at_peak_d = static_cast<double>(at_peak);
  w.compute_share = Ratio(static_cast<double>(w.compute_ns), static_cast<double>(t));
  w.matrix_share = Ratio(static_cast<double>(w.matrix_ns), static_cast<double>(w.compute_ns));
  w.matrix_efficiency = Ratio(at_peak_d, static_cast<double>(w.matrix_ns));
  w.mfu_hw = Ratio(at_peak_d, static_cast<double>(t));
  w.coverage = Ratio(static_cast<double>(w.matrix_with_flops_ns), static_cast<double>(w.matrix_ns));
}

StatusOr<ModelStepMfu> ModelMfu(const ModelStepInput& in, const Layers& l, const Accelerator& gpu, int64_t step_ns) {
  if (in.model == nullptr)
    return InvalidArgumentError("waterfall: the model input has no model");
  if (!(in.tokens_per_step > 0))
    return InvalidArgumentError("waterfall: tokens per step must be > 0");
  MFU_ASSIGN_OR_RETURN(TrainingFlops tf, ComputeTrainingFlops(*in.model, in.convention, in.seq_len, in.recompute));
  ModelStepMfu m;
  if (in.precision) {
    m.precision = *in.precision;
  } else {
    auto top = std::max_element(l.matrix_flops_by_dtype.begin(), l.matrix_flops_by_dtype.end());
    m.precision = *top > 0 ? static_cast<DType>(top - l.matrix_flops_by_dtype.begin()) : DType::kBf16;
  }
  const PeakFallbacks fallbacks = in.precision ? PeakFallbacks::StatedTracePrecision() : PeakFallbacks::Kernel();
  m.peak_precision = DensePeakPrecision(gpu, m.precision, fallbacks);
  m.peak_flops_per_s = DensePeakFlops(gpu, m.precision, fallbacks);
  if (!(m.peak_flops_per_s > 0)) {
    return InvalidArgumentError("waterfall: " + gpu.id + " has no dense " + DTypeName(m.precision) + " peak");
  }
  const double forward = tf.forward.total();
  m.model_flops = (in.training ? tf.model_per_token : forward) * in.tokens_per_step;
  m.hardware_flops = (in.training ? tf.hardware_per_token : forward) * in.tokens_per_step;
  m.executed_flops = l.matrix_flops;
  const double capacity = static_cast<double>(step_ns) * 1e-9 * m.peak_flops_per_s;
  m.mfu = m.model_flops / capacity;
  m.hfu = m.hardware_flops / capacity;
  m.executed_over_model = Ratio(m.executed_flops, m.model_flops);
  const double seconds = static_cast<double>(step_ns) * 1e-9;
  m.utilization = MakeUtilization(in.convention, m.precision, m.model_flops / seconds, m.hardware_flops / seconds,
                                  m.peak_flops_per_s);
  return m;
}

struct Window {
  std::string label;
  int64_t start = 0;
  int64_t end = 0;
  uint32_t step = kNoIndex;  // into the steps; kNoIndex: every op in time
};

std::vector<Window> StepWindows(const RankTrace& trace, std::span<const uint32_t> launches, StepTimeKind kind,
                                const std::vector<ProfilerStepInfo>* known_steps) {
  std::vector<Window> windows;
  const std::vector<ProfilerStepInfo> found =
      known_steps != nullptr ? std::vector<ProfilerStepInfo>{} : FindProfilerSteps(trace, launches);
  const std::vector<ProfilerStepInfo>& steps = known_steps != nullptr ? *known_steps : found;
  for (size_t s = 0; s < steps.size(); ++s) {
    const ProfilerStepInfo& step = steps[s];
    const auto id = static_cast<uint32_t>(s);
    const bool has_gpu = step.gpu_start_ns < step.gpu_end_ns;
    if (kind == StepTimeKind::kCpuStep) {
      // The step's period on the GPU timeline: from its first GPU work, as
      // long as the CPU step (steps tile time in steady state).
      const int64_t start = has_gpu ? step.gpu_start_ns : step.cpu_start_ns;
      windows.push_back({step.name, start, start + (step.cpu_end_ns - step.cpu_start_ns), id});
    } else if (has_gpu) {
      windows.push_back({step.name, step.gpu_start_ns, step.gpu_end_ns, id});
    }
  }
  if (!steps.empty())
    return windows;
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < trace.num_events(); ++i) {
    if (!IsGpuActivity(trace.kind[i]))
      continue;
    lo = std::min(lo, trace.ts_ns[i]);
    hi = std::max(hi, trace.end_ns(i));
  }
  if (lo < hi)
    windows.push_back({"trace", lo, hi});
  return windows;
}

}  // namespace

namespace {

StatusOr<StepWaterfall> WaterfallOf(const RankTrace& trace, std::span<const KernelClass> classes,
                                    const FlopsAttribution& attribution, int64_t start_ns, int64_t end_ns,
                                    std::string label, const WaterfallOptions& options, EventRange range,
                                    Members members = {}) {
  if (end_ns <= start_ns) {
    return InvalidArgumentError("waterfall: window '" + label + "' is empty (" + std::to_string(start_ns) +
                                " >= " + std::to_string(end_ns) + ")");
  }
  if (options.gpu == nullptr)
    return InvalidArgumentError("waterfall: no accelerator to take peaks from");
  StepWaterfall w;
  w.label = std::move(label);
  w.start_ns = start_ns;
  w.end_ns = end_ns;
  w.step_ns = end_ns - start_ns;
  const Layers layers = CollectLayers(trace, classes, attribution, *options.gpu, start_ns, end_ns, range, members);
  FillBuckets(layers, w);
  if (options.model) {
    MFU_ASSIGN_OR_RETURN(w.model, ModelMfu(*options.model, layers, *options.gpu, w.step_ns));
  }
  return w;
}

}  // namespace

StatusOr<StepWaterfall> ComputeWaterfall(const RankTrace& trace, std::span<const KernelClass> classes,
                                         const FlopsAttribution& attribution, int64_t start_ns, int64_t end_ns,
                                         std::string label, const WaterfallOptions& options) {
  return WaterfallOf(trace, classes, attribution, start_ns, end_ns, std::move(label), options,
                     {0, EndOfWindow(trace, end_ns)});
}

StatusOr<std::vector<StepWaterfall>> ComputeStepWaterfalls(const RankTrace& trace, std::span<const KernelClass> classes,
                                                           std::span<const uint32_t> launches,
                                                           const FlopsAttribution& attribution,
                                                           const WaterfallOptions& options) {
  std::vector<Window> windows = StepWindows(trace, launches, options.step_time, options.steps);
  if (windows.empty())
    return NotFoundError(trace.path + ": no GPU activity to build a waterfall from");
  const std::vector<int64_t> prefix_max_end = PrefixMaxGpuEnd(trace);
  std::vector<ProfilerStepInfo> found;
  if (options.steps == nullptr)
    found = FindProfilerSteps(trace, launches);
  const std::vector<uint32_t> step_of =
      trace::StepOfGpuOps(trace, launches, options.steps != nullptr ? *options.steps : found);
  std::vector<StepWaterfall> out;
  out.reserve(windows.size());
  for (Window& win : windows) {
    const Members members{win.step == kNoIndex ? nullptr : &step_of, win.step};
    MFU_ASSIGN_OR_RETURN(StepWaterfall w,
                         WaterfallOf(trace, classes, attribution, win.start, win.end, std::move(win.label), options,
                                     RangeOf(trace, prefix_max_end, win.start, win.end), members));
    out.push_back(std::move(w));
  }
  return out;
}

Status CheckConsistency(const StepWaterfall& w) {
  auto fail = [&w](const std::string& what) { return InternalError("waterfall '" + w.label + "': " + what); };
  const int64_t t = w.step_ns;
  if (t <= 0)
    return fail("step time " + std::to_string(t) + " ns is not positive");
  if (t != w.end_ns - w.start_ns)
    return fail("step_ns " + std::to_string(t) + " != end_ns - start_ns");
  if (Status common = CheckConsistency(static_cast<const Waterfall&>(w)); !common.ok())
    return fail(common.message());
  if (!(w.matrix_with_flops_ns <= w.matrix_ns && w.matrix_ns <= w.compute_ns && w.compute_ns <= w.busy_ns &&
        w.busy_ns <= t)) {
    return fail("layers do not nest (matrix_with_flops <= matrix <= compute <= busy <= step)");
  }
  if (w[WaterfallBucket::kIdle] != t - w.busy_ns)
    return fail("idle != step - busy");
  if (w[WaterfallBucket::kMatrixUnknownFlops] + w[WaterfallBucket::kMatrixBelowPeak] +
          w[WaterfallBucket::kMatrixAtPeak] !=
      w.matrix_ns) {
    return fail("matrix buckets do not sum to the matrix time");
  }
  if (w[WaterfallBucket::kNonMatrixKernels] != w.compute_ns - w.matrix_ns)
    return fail("non-matrix != compute - matrix");
  return Status::Ok();
}

}  // namespace mfu
