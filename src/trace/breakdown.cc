#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "mfu/trace_breakdown.h"
#include "trace/intervals.h"
#include "trace/steps.h"

namespace mfu {
namespace {

using trace::Interval;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kUs = 1000;

// What a GPU op contributes to: the temporal breakdown's buckets.
enum class Category : uint8_t { kCompute = 0, kComm, kMemcpy, kMemset };

KernelType TypeOf(Category c) {
  switch (c) {
    case Category::kCompute:
      return KernelType::kComputation;
    case Category::kComm:
      return KernelType::kCommunication;
    default:
      return KernelType::kMemory;
  }
}

// One GPU op of the window, with the times the variant uses (HTA: rounded to
// whole microseconds, so end may precede start).
struct Op {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t event = 0;
  Category category = Category::kCompute;
  KernelClass cls = KernelClass::kUnclassified;
  int64_t dur_ns() const { return end_ns - start_ns; }
};

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
int64_t CeilDiv(int64_t a, int64_t b) {
  return -FloorDiv(-a, b);
}

// HTA's rounding of a float-us timestamp: ceil(ts), floor(ts + dur), taken on
// the trace's own time base (Kineto writes ts relative to baseTimeNanoseconds).
Interval HtaRound(const RankTrace& trace, size_t i) {
  const int64_t base = trace.base_time_ns;
  const int64_t start = CeilDiv(trace.ts_ns[i] - base, kUs) * kUs + base;
  const int64_t end = FloorDiv(trace.end_ns(i) - base, kUs) * kUs + base;
  return {start, end};
}

Interval EventTimes(const RankTrace& trace, size_t i, BreakdownVariant variant) {
  if (variant == BreakdownVariant::kHtaCompat)
    return HtaRound(trace, i);
  return {trace.ts_ns[i], trace.end_ns(i)};
}

Category CategoryOf(const RankTrace& trace, size_t i, KernelClass cls, BreakdownVariant variant) {
  if (variant == BreakdownVariant::kHtaCompat) {
    switch (HtaKernelType(trace.event_name(i))) {
      case KernelType::kCommunication:
        return Category::kComm;
      case KernelType::kMemory:
        return trace.kind[i] == TraceEventKind::kMemset ? Category::kMemset : Category::kMemcpy;
      default:
        return Category::kCompute;
    }
  }
  switch (cls) {
    case KernelClass::kCommunication:
      return Category::kComm;
    case KernelClass::kMemcpy:
      return Category::kMemcpy;
    case KernelClass::kMemset:
      return Category::kMemset;
    default:
      return Category::kCompute;
  }
}

// The selected GPU ops (event indices in time order) in start order.
std::vector<Op> CollectOps(const RankTrace& trace, std::span<const KernelClass> classes,
                           std::span<const uint32_t> selected, const BreakdownOptions& options) {
  std::vector<Op> ops;
  ops.reserve(selected.size());
  for (uint32_t i : selected) {
    Op op;
    const Interval t = EventTimes(trace, i, options.variant);
    op.start_ns = t.start;
    op.end_ns = t.end;
    op.event = i;
    op.cls = i < classes.size() ? classes[i] : KernelClass::kUnclassified;
    op.category = CategoryOf(trace, i, op.cls, options.variant);
    ops.push_back(op);
  }
  // Events are sorted by exact ts; rounding keeps that order, but be safe.
  std::stable_sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.start_ns < b.start_ns; });
  return ops;
}

// The window's GPU ops in start order.
std::vector<Op> CollectOps(const RankTrace& trace, std::span<const KernelClass> classes,
                           std::span<const uint32_t> launches, const TraceWindow& window,
                           const BreakdownOptions& options) {
  return CollectOps(trace, classes, trace::SelectGpuOps(trace, launches, window), options);
}

template <typename Pred>
std::vector<Interval> IntervalsOf(const std::vector<Op>& ops, Pred pred) {
  std::vector<Interval> v;
  for (const Op& op : ops) {
    if (pred(op))
      v.push_back({op.start_ns, op.end_ns});
  }
  return v;
}

// HTA's merge_kernel_intervals: sorted by start, an interval opens a new group
// when it starts after every earlier end; a group spans [first start, max
// end]. Unlike MergeIntervals it keeps inverted (rounded) intervals, whose
// negative length HTA adds up.
std::vector<Interval> HtaMerge(std::vector<Interval> v) {
  std::stable_sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> groups;
  int64_t max_end = std::numeric_limits<int64_t>::min();
  for (const Interval& iv : v) {
    if (groups.empty() || iv.start > max_end) {
      groups.push_back(iv);
    } else {
      groups.back().end = std::max(groups.back().end, iv.end);
    }
    max_end = std::max(max_end, iv.end);
  }
  return groups;
}

// The union the variant uses.
std::vector<Interval> Union(std::vector<Interval> v, BreakdownVariant variant) {
  if (variant == BreakdownVariant::kHtaCompat)
    return HtaMerge(std::move(v));
  trace::MergeIntervals(v);
  return v;
}

// A proper union (inverted intervals dropped), for the set arithmetic.
std::vector<Interval> ProperUnion(std::vector<Interval> v) {
  trace::MergeIntervals(v);
  return v;
}

bool IsCategory(const Op& op, Category c) {
  return op.category == c;
}

TemporalBreakdown Temporal(const std::vector<Op>& ops, BreakdownVariant variant) {
  TemporalBreakdown r;
  r.num_gpu_ops = ops.size();
  const std::vector<Interval> all = Union(IntervalsOf(ops, [](const Op&) { return true; }), variant);
  if (all.empty())
    return r;
  r.gpu_start_ns = all.front().start;
  r.gpu_end_ns = all.back().end;  // HTA: merged.iloc[-1]["end"]; the max end for a proper union
  r.span_ns = r.gpu_end_ns - r.gpu_start_ns;
  r.busy_ns = trace::TotalLength(all);
  r.idle_ns = r.span_ns - r.busy_ns;
  auto of = [&](Category c) { return IntervalsOf(ops, [c](const Op& op) { return IsCategory(op, c); }); };
  r.compute_ns = trace::TotalLength(Union(of(Category::kCompute), variant));
  r.non_compute_ns = r.span_ns - r.compute_ns - r.idle_ns;
  for (const Op& op : ops)
    r.inverted_ops += op.end_ns < op.start_ns ? 1u : 0u;
  if (r.non_compute_ns < 0) {
    // HTA's rounding turns sub-us ops into inverted intervals whose negative
    // length shrinks the busy time (HTA asserts here): the deficit goes back
    // from idle, so no bucket is negative and the three still sum to the span.
    r.clamped_ns = -r.non_compute_ns;
    r.idle_ns -= r.clamped_ns;
    r.non_compute_ns = 0;
  }

  const std::vector<Interval> comp = ProperUnion(of(Category::kCompute));
  const std::vector<Interval> comm = ProperUnion(of(Category::kComm));
  const std::vector<Interval> copies = ProperUnion(of(Category::kMemcpy));
  const std::vector<Interval> sets = ProperUnion(of(Category::kMemset));
  const std::vector<Interval> comm_exposed = trace::Subtract(comm, comp);
  const std::vector<Interval> comp_or_comm = ProperUnion([&] {
    std::vector<Interval> v = comp;
    v.insert(v.end(), comm.begin(), comm.end());
    return v;
  }());
  const std::vector<Interval> memcpy_exposed = trace::Subtract(copies, comp_or_comm);
  r.exposed_comm_ns = trace::TotalLength(comm_exposed);
  r.exposed_memcpy_ns = trace::TotalLength(memcpy_exposed);
  r.exposed_memset_ns = trace::TotalLength(trace::Subtract(trace::Subtract(sets, comp_or_comm), copies));
  r.unclassified_ns = trace::TotalLength(
      ProperUnion(IntervalsOf(ops, [](const Op& op) { return op.cls == KernelClass::kUnclassified; })));
  return r;
}

// HTA's status sweep: +bit at each merged start, -bit at each end, in time
// order; the running sum labels the time up to the next point.
struct SweepPoint {
  int64_t t;
  int delta;
};

std::vector<SweepPoint> SweepPoints(const std::vector<std::vector<Interval>>& merged_by_type) {
  std::vector<SweepPoint> points;
  for (size_t type = 0; type < merged_by_type.size(); ++type) {
    const int bit = 1 << type;
    for (const Interval& iv : merged_by_type[type]) {
      points.push_back({iv.start, bit});
      points.push_back({iv.end, -bit});
    }
  }
  std::stable_sort(points.begin(), points.end(), [](const SweepPoint& a, const SweepPoint& b) { return a.t < b.t; });
  return points;
}

KernelTypeBreakdown KernelTypes(const std::vector<Op>& ops, BreakdownVariant variant) {
  std::vector<std::vector<Interval>> merged(kNumKernelTypes);
  for (size_t t = 0; t < kNumKernelTypes; ++t) {
    merged[t] =
        Union(IntervalsOf(ops, [t](const Op& op) { return static_cast<size_t>(TypeOf(op.category)) == t; }), variant);
  }
  const std::vector<SweepPoint> points = SweepPoints(merged);
  KernelTypeBreakdown r;
  int running = 0;
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    running += points[i].delta;
    if (running <= 0)
      continue;
    const auto mask = static_cast<unsigned>(running) & 7u;
    if (mask != 0)
      r.exact_ns[mask] += points[i + 1].t - points[i].t;
  }
  return r;
}

CommComputeOverlap Overlap(const std::vector<Op>& ops, BreakdownVariant variant) {
  auto of = [&](Category c) {
    return Union(IntervalsOf(ops, [c](const Op& op) { return IsCategory(op, c); }), variant);
  };
  const std::vector<Interval> comp = of(Category::kCompute);
  const std::vector<Interval> comm = of(Category::kComm);
  CommComputeOverlap r;
  r.comm_ns = trace::TotalLength(comm);
  if (variant == BreakdownVariant::kHtaCompat) {
    // get_comm_comp_overlap: COMM = 1, COMP = 2, time where the sum is 3.
    const std::vector<SweepPoint> points = SweepPoints({comm, comp});
    int running = 0;
    for (size_t i = 0; i + 1 < points.size(); ++i) {
      running += points[i].delta;
      if (running == 3)
        r.overlap_ns += points[i + 1].t - points[i].t;
    }
  } else {
    r.overlap_ns = trace::TotalLength(trace::Intersect(comp, comm));
  }
  r.overlap_pct = r.comm_ns != 0 ? 100.0 * static_cast<double>(r.overlap_ns) / static_cast<double>(r.comm_ns) : kNaN;
  return r;
}

std::array<ClassTime, kNumKernelClasses> ClassTimes(const std::vector<Op>& ops) {
  std::array<ClassTime, kNumKernelClasses> r{};
  std::array<std::vector<Interval>, kNumKernelClasses> intervals;
  for (const Op& op : ops) {
    const auto c = static_cast<size_t>(op.cls);
    ++r[c].count;
    r[c].sum_ns += op.dur_ns();
    intervals[c].push_back({op.start_ns, op.end_ns});
  }
  for (size_t c = 0; c < kNumKernelClasses; ++c)
    r[c].union_ns = trace::TotalLength(ProperUnion(std::move(intervals[c])));
  return r;
}

// numpy/pandas linear-interpolation quantile of sorted values.
// The q-quantile of `v` with linear interpolation (pandas' default), by
// selection: O(n), reorders `v`.
double Quantile(std::vector<double>& v, double q) {
  if (v.empty())
    return kNaN;
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto at = v.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(v.begin(), at, v.end());
  const double a = *at;
  if (lo + 1 >= v.size())
    return a;
  const double b = *std::min_element(at + 1, v.end());
  return a + (b - a) * (pos - static_cast<double>(lo));
}

IntervalStats Describe(std::vector<double> values) {
  IntervalStats s;
  s.count = values.size();
  if (values.empty()) {
    s.mean_ns = s.std_ns = s.min_ns = s.p25_ns = s.p50_ns = s.p75_ns = s.max_ns = kNaN;
    return s;
  }
  double sum = 0;
  for (double v : values)
    sum += v;
  s.mean_ns = sum / static_cast<double>(values.size());
  double m2 = 0;
  for (double v : values)
    m2 += (v - s.mean_ns) * (v - s.mean_ns);
  s.std_ns = values.size() > 1 ? std::sqrt(m2 / static_cast<double>(values.size() - 1)) : kNaN;
  const auto [min, max] = std::minmax_element(values.begin(), values.end());
  s.min_ns = *min;
  s.max_ns = *max;
  s.p25_ns = Quantile(values, 0.25);
  s.p50_ns = Quantile(values, 0.5);
  s.p75_ns = Quantile(values, 0.75);
  return s;
}

// When the op was launched, in the variant's time, if known.
std::optional<int64_t> LaunchTime(const RankTrace& trace, std::span<const uint32_t> launches, const Op& op,
                                  const BreakdownOptions& options) {
  const uint32_t launch = launches[op.event];
  const bool hta = options.variant == BreakdownVariant::kHtaCompat;
  if (launch != kNoIndex)
    return hta ? HtaRound(trace, launch).start : trace.ts_ns[launch];
  // HTA's join: index_correlation = min(correlation, 0) when no CPU event
  // matches, so an op with a correlation (>= 0) joins row 0 and one without
  // (-1) joins nothing, and is never host wait.
  if (hta && options.hta_row0_ts_ns && trace.correlation[op.event] >= 0) {
    return CeilDiv(*options.hta_row0_ts_ns - trace.base_time_ns, kUs) * kUs + trace.base_time_ns;
  }
  return std::nullopt;
}

IdleBreakdown Idle(const RankTrace& trace, std::span<const uint32_t> launches, const std::vector<Op>& ops,
                   const BreakdownOptions& options) {
  struct StreamState {
    StreamIdle result;
    int64_t prev_end = 0;
    std::array<std::vector<double>, kNumIdleCategories> gaps;
  };
  std::unordered_map<uint32_t, StreamState> by_track;
  for (const Op& op : ops) {
    StreamState& s = by_track[trace.track[op.event]];
    if (s.result.num_ops > 0) {
      int64_t gap = op.start_ns - s.prev_end;
      if (options.variant == BreakdownVariant::kMfu)
        gap = std::max<int64_t>(gap, 0);
      const std::optional<int64_t> launched = LaunchTime(trace, launches, op, options);
      IdleCategory category = IdleCategory::kOther;
      if (launched && *launched > s.prev_end) {
        category = IdleCategory::kHostWait;
      } else if (gap < options.kernel_wait_threshold_ns) {
        category = IdleCategory::kKernelWait;
      }
      const auto c = static_cast<size_t>(category);
      s.result.idle_ns[c] += gap;
      s.gaps[c].push_back(static_cast<double>(gap));
    }
    s.prev_end = op.end_ns;
    ++s.result.num_ops;
  }
  IdleBreakdown r;
  for (auto& [track, s] : by_track) {
    const TraceTrack& t = trace.tracks[track];
    s.result.track = track;
    s.result.device = t.device;
    s.result.stream = t.stream;
    for (size_t c = 0; c < kNumIdleCategories; ++c)
      s.result.stats[c] = Describe(std::move(s.gaps[c]));
    r.streams.push_back(std::move(s.result));
  }
  std::sort(r.streams.begin(), r.streams.end(), [](const StreamIdle& a, const StreamIdle& b) {
    return std::tie(a.device, a.stream, a.track) < std::tie(b.device, b.stream, b.track);
  });
  return r;
}

// Running duration statistics (Welford), mergeable.
struct DurationAcc {
  uint64_t count = 0;
  int64_t total = 0;
  int64_t min = 0;
  int64_t max = 0;
  double mean = 0;
  double m2 = 0;

  void Add(int64_t d) {
    if (count == 0 || d < min)
      min = d;
    if (count == 0 || d > max)
      max = d;
    ++count;
    total += d;
    const double delta = static_cast<double>(d) - mean;
    mean += delta / static_cast<double>(count);
    m2 += delta * (static_cast<double>(d) - mean);
  }
  void Merge(const DurationAcc& o) {
    if (o.count == 0)
      return;
    if (count == 0) {
      *this = o;
      return;
    }
    const double n = static_cast<double>(count + o.count);
    const double delta = o.mean - mean;
    m2 += o.m2 + delta * delta * static_cast<double>(count) * static_cast<double>(o.count) / n;
    mean += delta * static_cast<double>(o.count) / n;
    min = std::min(min, o.min);
    max = std::max(max, o.max);
    count += o.count;
    total += o.total;
  }
  KernelStats Stats(std::string name) const {
    KernelStats s;
    s.name = std::move(name);
    s.count = count;
    s.total_ns = total;
    s.min_ns = min;
    s.max_ns = max;
    s.mean_ns = mean;
    s.std_ns = count > 1 ? std::sqrt(m2 / static_cast<double>(count - 1)) : 0.0;
    return s;
  }
};

KernelGroup MakeGroup(const RankTrace& trace, std::string group, std::unordered_map<uint32_t, DurationAcc>& by_name,
                      size_t top_n) {
  std::vector<std::pair<uint32_t, DurationAcc>> names(by_name.begin(), by_name.end());
  std::sort(names.begin(), names.end(), [&](const auto& a, const auto& b) {
    if (a.second.total != b.second.total)
      return a.second.total > b.second.total;
    return trace.strings.Get(a.first) < trace.strings.Get(b.first);
  });
  KernelGroup g;
  g.group = std::move(group);
  DurationAcc all, others;
  for (size_t i = 0; i < names.size(); ++i) {
    all.Merge(names[i].second);
    if (i < top_n) {
      g.top.push_back(names[i].second.Stats(std::string(trace.strings.Get(names[i].first))));
    } else {
      others.Merge(names[i].second);
    }
  }
  g.count = all.count;
  g.total_ns = all.total;
  g.others = others.Stats("others");
  return g;
}

std::vector<KernelGroup> Top(const RankTrace& trace, const std::vector<Op>& ops, const BreakdownOptions& options) {
  const bool hta = options.variant == BreakdownVariant::kHtaCompat;
  const size_t num_groups = hta ? kNumKernelTypes : kNumKernelClasses;
  std::vector<std::unordered_map<uint32_t, DurationAcc>> groups(num_groups);
  for (const Op& op : ops) {
    const size_t g = hta ? static_cast<size_t>(TypeOf(op.category)) : static_cast<size_t>(op.cls);
    groups[g][trace.name[op.event]].Add(op.dur_ns());
  }
  std::vector<KernelGroup> r;
  for (size_t g = 0; g < num_groups; ++g) {
    if (groups[g].empty())
      continue;
    std::string name = hta ? KernelTypeName(static_cast<KernelType>(g)) : KernelClassName(static_cast<KernelClass>(g));
    r.push_back(MakeGroup(trace, std::move(name), groups[g], options.top_kernels));
  }
  return r;
}

}  // namespace

bool IsLaunchApi(std::string_view name) {
  // Prefixes cover the _v2 / _ptsz / _spt variants and MTIA's
  // "runFunction - job_prep_and_submit_for_execution".
  static constexpr std::string_view kPrefixes[] = {"cudaLaunch", "cuLaunch",     "cudaGraphLaunch", "cuGraphLaunch",
                                                   "cudaMemcpy", "cudaMemset",   "cuMemcpy",        "cuMemset",
                                                   "hipLaunch",  "hipExtLaunch", "hipModuleLaunch", "hipGraphLaunch",
                                                   "hipMemcpy",  "hipMemset",    "runFunction"};
  for (std::string_view p : kPrefixes) {
    if (name.substr(0, p.size()) == p)
      return true;
  }
  return false;
}

namespace {

LaunchStats Launches(const RankTrace& trace, std::span<const uint32_t> launches, const std::vector<Op>& ops,
                     const BreakdownOptions& options) {
  const bool hta = options.variant == BreakdownVariant::kHtaCompat;
  std::vector<double> delays, cpu, gpu;
  LaunchStats r;
  for (const Op& op : ops) {
    const uint32_t launch = launches[op.event];
    if (launch == kNoIndex || (hta && !IsLaunchApi(trace.event_name(launch))))
      continue;
    const Interval cpu_time = EventTimes(trace, launch, options.variant);
    const int64_t delay = op.start_ns - cpu_time.end;
    const int64_t cpu_dur = cpu_time.end - cpu_time.start;
    if (op.dur_ns() < cpu_dur)
      ++r.short_kernels;
    r.launch_delay_min_ns = delays.empty() ? delay : std::min(r.launch_delay_min_ns, delay);
    r.launch_delay_max_ns = delays.empty() ? delay : std::max(r.launch_delay_max_ns, delay);
    delays.push_back(static_cast<double>(delay));
    cpu.push_back(static_cast<double>(cpu_dur));
    gpu.push_back(static_cast<double>(op.dur_ns()));
  }
  r.launches = delays.size();
  const IntervalStats d = Describe(delays);
  r.launch_delay_mean_ns = d.mean_ns;
  r.launch_delay_median_ns = d.p50_ns;
  r.launch_delay_p95_ns = Quantile(delays, 0.95);
  r.cpu_duration_median_ns = Quantile(cpu, 0.5);
  r.gpu_duration_median_ns = Quantile(gpu, 0.5);
  return r;
}

WindowBreakdown Analyze(const RankTrace& trace, std::span<const uint32_t> launches, const TraceWindow& window,
                        const std::vector<Op>& ops, const BreakdownOptions& options) {
  WindowBreakdown r;
  r.window = window;
  r.variant = options.variant;
  r.temporal = Temporal(ops, options.variant);
  r.overlap = Overlap(ops, options.variant);
  r.kernel_types = KernelTypes(ops, options.variant);
  r.classes = ClassTimes(ops);
  r.idle = Idle(trace, launches, ops, options);
  r.top_kernels = Top(trace, ops, options);
  r.launches = Launches(trace, launches, ops, options);
  for (const Op& op : ops)
    r.unlinked_ops += launches[op.event] == kNoIndex ? 1u : 0u;
  return r;
}

}  // namespace

const char* BreakdownVariantName(BreakdownVariant v) {
  return v == BreakdownVariant::kHtaCompat ? "hta" : "mfu";
}

const char* KernelTypeName(KernelType t) {
  switch (t) {
    case KernelType::kCommunication:
      return "COMMUNICATION";
    case KernelType::kMemory:
      return "MEMORY";
    default:
      return "COMPUTATION";
  }
}

KernelType HtaKernelType(std::string_view name) {
  auto starts = [&](std::string_view p) { return name.substr(0, p.size()) == p; };
  // COMM: ^nccl.*|^hip|^hccl|.*ncclKernel.*
  if (starts("nccl") || starts("hip") || starts("hccl") || name.find("ncclKernel") != std::string_view::npos) {
    return KernelType::kCommunication;
  }
  // MEMORY: ^(hip)?Memcpy|^(hip)?Memset|^dma
  if (starts("Memcpy") || starts("Memset") || starts("dma"))
    return KernelType::kMemory;
  return KernelType::kComputation;
}

KernelType KernelTypeOf(KernelClass c) {
  switch (c) {
    case KernelClass::kCommunication:
      return KernelType::kCommunication;
    case KernelClass::kMemcpy:
    case KernelClass::kMemset:
      return KernelType::kMemory;
    default:
      return KernelType::kComputation;
  }
}

const char* IdleCategoryName(IdleCategory c) {
  switch (c) {
    case IdleCategory::kHostWait:
      return "host_wait";
    case IdleCategory::kKernelWait:
      return "kernel_wait";
    default:
      return "other";
  }
}

int64_t KernelTypeBreakdown::total_ns() const {
  int64_t total = 0;
  for (int64_t v : exact_ns)
    total += v;
  return total;
}

std::string KernelTypeBreakdown::MaskName(unsigned mask) {
  std::string name;
  for (size_t t = 0; t < kNumKernelTypes; ++t) {
    if ((mask & (1u << t)) == 0)
      continue;
    if (!name.empty())
      name += " overlapping ";
    name += KernelTypeName(static_cast<KernelType>(t));
  }
  return name;
}

KernelTypeBreakdown& KernelTypeBreakdown::operator+=(const KernelTypeBreakdown& other) {
  for (size_t m = 0; m < exact_ns.size(); ++m)
    exact_ns[m] += other.exact_ns[m];
  return *this;
}

TemporalBreakdown ComputeTemporalBreakdown(const RankTrace& trace, std::span<const KernelClass> classes,
                                           std::span<const uint32_t> launches, const TraceWindow& window,
                                           const BreakdownOptions& options) {
  return Temporal(CollectOps(trace, classes, launches, window, options), options.variant);
}

CommComputeOverlap ComputeCommComputeOverlap(const RankTrace& trace, std::span<const KernelClass> classes,
                                             std::span<const uint32_t> launches, const TraceWindow& window,
                                             const BreakdownOptions& options) {
  return Overlap(CollectOps(trace, classes, launches, window, options), options.variant);
}

KernelTypeBreakdown ComputeKernelTypes(const RankTrace& trace, std::span<const KernelClass> classes,
                                       std::span<const uint32_t> launches, const TraceWindow& window,
                                       const BreakdownOptions& options) {
  return KernelTypes(CollectOps(trace, classes, launches, window, options), options.variant);
}

IdleBreakdown ComputeIdleBreakdown(const RankTrace& trace, std::span<const KernelClass> classes,
                                   std::span<const uint32_t> launches, const TraceWindow& window,
                                   const BreakdownOptions& options) {
  return Idle(trace, launches, CollectOps(trace, classes, launches, window, options), options);
}

std::vector<KernelGroup> TopKernels(const RankTrace& trace, std::span<const KernelClass> classes,
                                    std::span<const uint32_t> launches, const TraceWindow& window,
                                    const BreakdownOptions& options) {
  return Top(trace, CollectOps(trace, classes, launches, window, options), options);
}

LaunchStats ComputeLaunchStats(const RankTrace& trace, std::span<const uint32_t> launches, const TraceWindow& window,
                               const BreakdownOptions& options) {
  return Launches(trace, launches, CollectOps(trace, {}, launches, window, options), options);
}

WindowBreakdown AnalyzeWindow(const RankTrace& trace, std::span<const KernelClass> classes,
                              std::span<const uint32_t> launches, const TraceWindow& window,
                              const BreakdownOptions& options) {
  return Analyze(trace, launches, window, CollectOps(trace, classes, launches, window, options), options);
}

std::vector<WindowBreakdown> AnalyzeWindows(const RankTrace& trace, std::span<const KernelClass> classes,
                                            std::span<const uint32_t> launches, std::span<const TraceWindow> windows,
                                            const BreakdownOptions& options) {
  const trace::GpuOpsByLaunch index(trace, launches);
  std::vector<WindowBreakdown> out;
  out.reserve(windows.size());
  for (const TraceWindow& window : windows) {
    const std::vector<Op> ops = CollectOps(trace, classes, index.Select(window), options);
    out.push_back(Analyze(trace, launches, window, ops, options));
  }
  return out;
}

}  // namespace mfu
