#pragma once

// Per-rank GPU time analyses of a parsed trace, over an explicit analysis
// window: temporal breakdown (compute / non-compute / idle by interval union
// across streams), comm/compute overlap, kernel-type breakdown with overlap
// combinations, time per kernel class, idle time per stream (host wait,
// kernel wait, other), top kernels per class and kernel launch statistics.
//
// Every figure exists in two variants (BreakdownVariant):
//  * kMfu: exact nanoseconds, our kernel classes (KernelClassifier); GPU
//    activity is kernel, memcpy and memset events (cuda_sync excluded).
//  * kHtaCompat: Holistic Trace Analysis' definitions, so that its numbers
//    are reproduced (shared/reference/trace-anchors.md section 1.1): every
//    GPU event rounded to whole microseconds the way HTA does (ceil start,
//    floor end), HTA's name-regex classification (COMMUNICATION
//    `^nccl.*|^hip|^hccl|.*ncclKernel.*`, MEMORY
//    `^(hip)?Memcpy|^(hip)?Memset|^dma`, else COMPUTATION), HTA's window
//    (HtaWindow: last ProfilerStep dropped when there are >= 2) and HTA's
//    interval-merge arithmetic. Results are still in ns (multiples of 1000).
//    It reproduces HTA v0.6.1 on both reference sets to the microsecond
//    (src/trace/breakdown_test.cc). Known differences: HTA rounds only traces
//    whose `ts` are floats (we always round; a no-op on integer-us traces);
//    HTA counts any row with a stream as GPU time (cuda_sync rows in some
//    versions), we count kernel, memcpy and memset; HTA's top-kernel table
//    folds names past a cumulative-time quantile into "others" and then
//    reports per-name sums as max/min/mean, TopKernels reports per-kernel
//    statistics; HTA decides ">= 2 steps" over all ranks' step names, we per
//    rank.
//
// Analysis windows (TraceWindow) select GPU operations by the CPU runtime
// event that launched them (same `correlation`, HTA's rule): a GPU op belongs
// to a window when its launch happened inside the window's CPU time range; an
// op without a launch, when it starts inside that range (counted:
// WindowBreakdown::unlinked_ops). Whole-trace windows take every GPU op.
//
// Durations are int64 ns; names carry units. Nothing here prints.

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/trace.h"
#include "mfu/trace_classify.h"

namespace mfu {

// ---------------------------------------------------------------------------
// Launch links, profiler steps and analysis windows (src/trace/steps.cc).

// For every event of `trace`, the index of the CPU runtime event (cuda_runtime,
// cuda_driver, hip*: TraceEventKind::kRuntime) that launched it, matched by
// `correlation`; kNoIndex for events without one (CPU events, GPU ops whose
// launch is outside the trace, sampled traces). Build once per trace and pass
// to the analyses below.
std::vector<uint32_t> LinkLaunches(const RankTrace& trace);

// A ProfilerStep#N annotation (user_annotation, or cpu_op / Operator in older
// traces) and the GPU work launched inside it.
struct ProfilerStepInfo {
  std::string name;     // "ProfilerStep#12"
  int64_t number = -1;  // 12
  uint32_t event = kNoIndex;
  int64_t cpu_start_ns = 0;  // the annotation on the CPU: [start, end)
  int64_t cpu_end_ns = 0;
  // The GPU ops (kernel, memcpy, memset) whose launch (or, without one, whose
  // own start) lies in [cpu_start_ns, cpu_end_ns): first start and last end;
  // 0, 0 when none.
  // Widened to the step's GPU-side annotation (gpu_user_annotation of the
  // same name) when there is one.
  int64_t gpu_start_ns = 0;
  int64_t gpu_end_ns = 0;
  size_t num_gpu_ops = 0;
  bool has_gpu_annotation = false;
  int64_t gpu_annotation_start_ns = 0;
  int64_t gpu_annotation_end_ns = 0;
};

// The profiler steps of `trace` in time order: one per distinct name, the
// CPU annotation and the GPU-side one of that name merged into it.
// `launches` comes from LinkLaunches(trace).
std::vector<ProfilerStepInfo> FindProfilerSteps(const RankTrace& trace, std::span<const uint32_t> launches);

// Which GPU operations an analysis covers.
struct TraceWindow {
  std::string name;  // "trace", "ProfilerStep#12", "ProfilerStep#10..#12", "hta: ..."
  // True: every GPU op. False: the GPU ops whose launching runtime event
  // starts in [cpu_start_ns, cpu_end_ns), and (unlinked_by_time) the ops
  // without any correlation (MTIA's dma_request) that themselves start in
  // it. Ops whose correlation has no runtime event were launched before the
  // trace began and are left out.
  bool whole_trace = true;
  // False only for HtaWindow (HTA leaves unlinked ops out of its steps).
  bool unlinked_by_time = true;
  int64_t cpu_start_ns = std::numeric_limits<int64_t>::min();
  int64_t cpu_end_ns = std::numeric_limits<int64_t>::max();
};

// Every GPU op of the trace.
TraceWindow WholeTraceWindow();
// The ops launched inside `step`.
TraceWindow StepWindow(const ProfilerStepInfo& step);
// The ops launched from the start of the first to the end of the last of
// `steps` (time order); WholeTraceWindow() when `steps` is empty.
TraceWindow StepsWindow(std::span<const ProfilerStepInfo> steps);
// HTA's window (Trace.load_traces(include_last_profiler_step=False)): with
// >= 2 steps, the ops launched before the last step starts (earlier steps and
// anything before the first); with 0 or 1 step, every op.
TraceWindow HtaWindow(std::span<const ProfilerStepInfo> steps);

// ---------------------------------------------------------------------------
// Analyses (src/trace/breakdown.cc).

// True for the runtime/driver calls that put work on a GPU stream: kernel
// launches (cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel(Ex), the
// cooperative variants), graph launches (cudaGraphLaunch, cuGraphLaunch),
// async copies and sets, their HIP names, and MTIA's runFunction.
bool IsLaunchApi(std::string_view name);

enum class BreakdownVariant : uint8_t { kMfu = 0, kHtaCompat };
const char* BreakdownVariantName(BreakdownVariant v);  // "mfu", "hta"

// HTA's three kernel types; also the coarse type of our classes.
enum class KernelType : uint8_t { kComputation = 0, kCommunication, kMemory };
inline constexpr size_t kNumKernelTypes = 3;
const char* KernelTypeName(KernelType t);  // "COMPUTATION", "COMMUNICATION", "MEMORY"
// HTA's classification of a GPU event by name alone (see the file comment).
KernelType HtaKernelType(std::string_view name);
// kCommunication for communication, kMemory for memcpy / memset, else
// kComputation (unclassified kernels included).
KernelType KernelTypeOf(KernelClass c);

struct BreakdownOptions {
  BreakdownVariant variant = BreakdownVariant::kMfu;
  // Idle gaps shorter than this on a stream are "kernel wait" (HTA's
  // consecutive_kernel_delay: documented as 30 ns but compared with us
  // values, so effectively 30 us).
  int64_t kernel_wait_threshold_ns = 30'000;
  // Kernels listed per group by TopKernels; the rest are "others".
  size_t top_kernels = 10;
  // kHtaCompat only. HTA sets index_correlation = min(correlation, 0) for a
  // GPU op whose correlation matches no CPU event: an op with a correlation
  // (>= 0) joins row 0 of its dataframe, the first event of the file
  // (traceEvents[0]), whose `ts` the idle breakdown compares with the
  // previous op's end; an op without one (-1) joins nothing and is never
  // host wait. Set this to that event's ts to reproduce HTA; unset, no
  // unlinked op is ever "host wait" (the mfu behaviour).
  std::optional<int64_t> hta_row0_ts_ns;
};

// GPU time of one rank in one window. Invariant:
// compute_ns + exposed_comm_ns + exposed_memcpy_ns + exposed_memset_ns +
// idle_ns == span_ns (kMfu; in kHtaCompat when no rounded interval is
// inverted) and compute_ns + non_compute_ns + idle_ns == span_ns (always).
struct TemporalBreakdown {
  int64_t gpu_start_ns = 0;    // first GPU op start in the window
  int64_t gpu_end_ns = 0;      // last GPU op end
  int64_t span_ns = 0;         // gpu_end_ns - gpu_start_ns (HTA's kernel_time)
  int64_t busy_ns = 0;         // |union of all GPU ops|
  int64_t idle_ns = 0;         // span_ns - busy_ns
  int64_t compute_ns = 0;      // |union of compute kernels| (every class but communication, memcpy, memset)
  int64_t non_compute_ns = 0;  // span_ns - compute_ns - idle_ns
  // The parts of non_compute_ns (busy but not computing):
  int64_t exposed_comm_ns = 0;    // |COMM - COMP|
  int64_t exposed_memcpy_ns = 0;  // |MEMCPY - COMP - COMM|
  int64_t exposed_memset_ns = 0;  // |MEMSET - COMP - COMM - MEMCPY|
  int64_t unclassified_ns = 0;    // |union of kUnclassified kernels| (counted in compute_ns)
  size_t num_gpu_ops = 0;
  // Diagnostics (kHtaCompat): ops whose rounded interval is inverted (sub-us
  // ops: ceil(start) > floor(end)), and the time moved from idle_ns back to
  // keep non_compute_ns from going negative (HTA asserts instead).
  uint64_t inverted_ops = 0;
  int64_t clamped_ns = 0;

  // Shares of span_ns in percent (0 when the span is empty).
  double idle_pct() const { return Pct(idle_ns); }
  double compute_pct() const { return Pct(compute_ns); }
  double non_compute_pct() const { return Pct(non_compute_ns); }
  double Pct(int64_t ns) const {
    return span_ns > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(span_ns) : 0.0;
  }
};

// Share of communication time hidden under computation.
struct CommComputeOverlap {
  int64_t comm_ns = 0;     // |union of communication kernels|
  int64_t overlap_ns = 0;  // |COMP intersect COMM|
  // 100 * overlap_ns / comm_ns; NaN when there is no communication.
  double overlap_pct = 0;
};

// Time covered by exactly each set of kernel types: exact_ns[mask] where bit
// i is KernelType i ("COMPUTATION overlapping COMMUNICATION" = mask 3).
// Sums over masks equal the busy time. Adding two breakdowns pools them (HTA
// pools over ranks).
struct KernelTypeBreakdown {
  std::array<int64_t, 8> exact_ns{};  // [0] is unused (nothing running)
  int64_t total_ns() const;
  // HTA's label: "COMPUTATION", "COMMUNICATION overlapping MEMORY", ...
  static std::string MaskName(unsigned mask);
  KernelTypeBreakdown& operator+=(const KernelTypeBreakdown& other);
};

// Kernel time of one class.
struct ClassTime {
  uint64_t count = 0;
  int64_t sum_ns = 0;    // sum of durations
  int64_t union_ns = 0;  // |union| across streams
};

// Idle time on one stream. A gap is the time between an op's start and the
// previous op's end on the same stream (the first op has none). HTA's
// categories: kHostWait when the op's launch (runtime event start) came after
// the previous op ended; else kKernelWait when the gap is shorter than
// BreakdownOptions::kernel_wait_threshold_ns; else kOther (e.g. waiting for
// another stream).
enum class IdleCategory : uint8_t { kHostWait = 0, kKernelWait, kOther };
inline constexpr size_t kNumIdleCategories = 3;
const char* IdleCategoryName(IdleCategory c);  // "host_wait", "kernel_wait", "other"

// pandas' describe() of a set of gaps (linear-interpolation quartiles,
// sample std). All NaN when count == 0; std NaN when count == 1.
struct IntervalStats {
  uint64_t count = 0;
  double mean_ns = 0, std_ns = 0, min_ns = 0, p25_ns = 0, p50_ns = 0, p75_ns = 0, max_ns = 0;
};

struct StreamIdle {
  uint32_t track = kNoIndex;  // into RankTrace::tracks
  int64_t device = -1;
  int64_t stream = -1;
  size_t num_ops = 0;
  std::array<int64_t, kNumIdleCategories> idle_ns{};
  std::array<IntervalStats, kNumIdleCategories> stats{};
  int64_t total_idle_ns() const { return idle_ns[0] + idle_ns[1] + idle_ns[2]; }
};

// Streams sorted by (device, stream).
struct IdleBreakdown {
  std::vector<StreamIdle> streams;
};

// Duration statistics of one kernel name (or of the "others" bucket).
struct KernelStats {
  std::string name;
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double mean_ns = 0;
  double std_ns = 0;  // sample standard deviation (ddof 1, as HTA's pandas std); 0 when count < 2
};

// The kernels of one group by total time: the top BreakdownOptions::top_kernels
// names, then everything else in `others` (count 0 when nothing is left).
struct KernelGroup {
  std::string group;  // kMfu: a KernelClassName; kHtaCompat: a KernelTypeName
  uint64_t count = 0;
  int64_t total_ns = 0;
  std::vector<KernelStats> top;
  KernelStats others;
};

// Kernel launches: GPU ops joined to their runtime event by correlation.
// launch delay = GPU op start - runtime event end (negative when the GPU
// started before the CPU call returned).
struct LaunchStats {
  uint64_t launches = 0;              // GPU ops with a launching runtime event
  uint64_t short_kernels = 0;         // GPU duration < runtime (CPU) duration
  double launch_delay_median_ns = 0;  // pandas quantile (linear interpolation); NaN when no launch
  double launch_delay_p95_ns = 0;
  double launch_delay_mean_ns = 0;
  int64_t launch_delay_min_ns = 0;
  int64_t launch_delay_max_ns = 0;
  double cpu_duration_median_ns = 0;
  double gpu_duration_median_ns = 0;
};

// Every analysis of one rank in one window.
struct WindowBreakdown {
  TraceWindow window;
  BreakdownVariant variant = BreakdownVariant::kMfu;
  TemporalBreakdown temporal;
  CommComputeOverlap overlap;
  KernelTypeBreakdown kernel_types;
  std::array<ClassTime, kNumKernelClasses> classes{};  // kMfu classes (also filled in kHtaCompat)
  IdleBreakdown idle;
  std::vector<KernelGroup> top_kernels;
  LaunchStats launches;
  // Diagnostic: the window's GPU ops without a launch link (no runtime event
  // with their correlation); in a step window they were placed by their own
  // start time.
  uint64_t unlinked_ops = 0;
};

// The analyses. `classes` comes from ClassifyEvents(trace, ...) and
// `launches` from LinkLaunches(trace); both are indexed like the events.
// kHtaCompat ignores `classes` except for WindowBreakdown::classes.
TemporalBreakdown ComputeTemporalBreakdown(const RankTrace& trace, std::span<const KernelClass> classes,
                                           std::span<const uint32_t> launches, const TraceWindow& window,
                                           const BreakdownOptions& options);
CommComputeOverlap ComputeCommComputeOverlap(const RankTrace& trace, std::span<const KernelClass> classes,
                                             std::span<const uint32_t> launches, const TraceWindow& window,
                                             const BreakdownOptions& options);
KernelTypeBreakdown ComputeKernelTypes(const RankTrace& trace, std::span<const KernelClass> classes,
                                       std::span<const uint32_t> launches, const TraceWindow& window,
                                       const BreakdownOptions& options);
IdleBreakdown ComputeIdleBreakdown(const RankTrace& trace, std::span<const KernelClass> classes,
                                   std::span<const uint32_t> launches, const TraceWindow& window,
                                   const BreakdownOptions& options);
// Groups in class (kMfu) or type (kHtaCompat) order; empty groups are left out.
std::vector<KernelGroup> TopKernels(const RankTrace& trace, std::span<const KernelClass> classes,
                                    std::span<const uint32_t> launches, const TraceWindow& window,
                                    const BreakdownOptions& options);
// kMfu: every runtime event a GPU op links to (any such call is a launch).
// kHtaCompat: the launch APIs (IsLaunchApi) by name. HTA v0.6.1's
// get_cuda_kernel_launch_stats joins only cudaLaunchKernel, cudaMemcpyAsync
// and cudaMemsetAsync, which misses cudaLaunchKernelExC, cuLaunchKernel,
// CUDA-graph launches and MTIA's runFunction (docs/trace.md).
LaunchStats ComputeLaunchStats(const RankTrace& trace, std::span<const uint32_t> launches, const TraceWindow& window,
                               const BreakdownOptions& options);
// All of the above, selecting the window's GPU ops once.
WindowBreakdown AnalyzeWindow(const RankTrace& trace, std::span<const KernelClass> classes,
                              std::span<const uint32_t> launches, const TraceWindow& window,
                              const BreakdownOptions& options);
// AnalyzeWindow for each window, indexing the launches once (many steps cost
// O(n log n) in all instead of O(n) each).
std::vector<WindowBreakdown> AnalyzeWindows(const RankTrace& trace, std::span<const KernelClass> classes,
                                            std::span<const uint32_t> launches, std::span<const TraceWindow> windows,
                                            const BreakdownOptions& options);

}  // namespace mfu
