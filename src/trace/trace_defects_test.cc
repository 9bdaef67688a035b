// The four trace-analysis defects found side by side with HTA (issue #12),
// on hand-built traces with hand-computed expectations: every launch API
// joined, HTA's min(correlation, 0) join in the idle breakdown, GPU ops
// without a launch kept in step windows by their time, no negative bucket;
// and one window per step label (CPU and GPU annotations merged, the step's
// waterfall over the step's own ops).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mfu/trace_breakdown.h"
#include "mfu/trace_classify.h"
#include "mfu/trace_flops.h"
#include "mfu/trace_waterfall.h"
#include "testing/trace_builder.h"

namespace mfu {
namespace {

using B = testing::TraceBuilder;

// Renames the runtime event that launched GPU op `gpu` (the builder names
// every launch cudaLaunchKernel).
void RenameLaunch(RankTrace& t, const std::vector<uint32_t>& launches, size_t gpu, const std::string& api) {
  ASSERT_NE(launches[gpu], kNoIndex);
  t.name[launches[gpu]] = t.strings.Intern(api);
}

size_t FindEvent(const RankTrace& t, const std::string& name) {
  for (size_t i = 0; i < t.num_events(); ++i) {
    if (t.event_name(i) == name)
      return i;
  }
  ADD_FAILURE() << "no event " << name;
  return 0;
}

// (a) HTA v0.6.1 joins only cudaLaunchKernel / cudaMemcpyAsync /
// cudaMemsetAsync (qwen_h100: 1,029 of 1,198 launches; MTIA: 0 of 3,453).
TEST(TraceDefects, LaunchStatsJoinEveryLaunchApi) {
  const std::vector<std::string> apis = {"cudaLaunchKernel",   "cudaLaunchKernelExC",
                                         "cuLaunchKernel",     "cuLaunchKernelEx",
                                         "cudaGraphLaunch",    "runFunction - job_prep_and_submit_for_execution",
                                         "cudaStreamWaitEvent"};
  B b;
  for (size_t k = 0; k < apis.size(); ++k) {
    const auto at = static_cast<int64_t>(k) * 1000;
    b.Launch(at, 5, TraceEventKind::kKernel, "k" + std::to_string(k), at + 100, 50, B::kStream7);
  }
  RankTrace t = b.Build();
  std::vector<uint32_t> launches = LinkLaunches(t);
  for (size_t k = 0; k < apis.size(); ++k)
    RenameLaunch(t, launches, FindEvent(t, "k" + std::to_string(k)), apis[k]);
  BreakdownOptions hta;
  hta.variant = BreakdownVariant::kHtaCompat;
  // Six launch APIs; cudaStreamWaitEvent launches nothing.
  EXPECT_EQ(ComputeLaunchStats(t, launches, WholeTraceWindow(), hta).launches, 6u);
  // mfu's own variant: every runtime event a GPU op links to.
  EXPECT_EQ(ComputeLaunchStats(t, launches, WholeTraceWindow(), {}).launches, 7u);
  for (const std::string& api : apis)
    EXPECT_EQ(IsLaunchApi(api), api != "cudaStreamWaitEvent") << api;
  EXPECT_TRUE(IsLaunchApi("cudaMemcpyAsync"));
  EXPECT_TRUE(IsLaunchApi("hipLaunchKernel"));
  EXPECT_FALSE(IsLaunchApi("cudaDeviceSynchronize"));
}

// (b) HTA: index_correlation = min(correlation, 0) without a CPU match. An op
// with a correlation joins row 0 (its ts compared with the previous end); an
// op without one (-1) joins nothing and is never host wait.
TEST(TraceDefects, HtaIdleJoinsRowZeroOnlyWithACorrelation) {
  B b;
  b.Launch(0, 5, TraceEventKind::kKernel, "k0", 0, 10'000, B::kStream7);
  b.Orphan("k1", 100'000, 10'000, B::kStream7);  // correlation 4242, no CPU event
  b.Orphan("k2", 200'000, 10'000, B::kStream7);  // no correlation
  RankTrace t = b.Build();
  t.correlation[FindEvent(t, "k1")] = 4242;
  const std::vector<uint32_t> launches = LinkLaunches(t);
  BreakdownOptions hta;
  hta.variant = BreakdownVariant::kHtaCompat;
  hta.hta_row0_ts_ns = 150'000;  // later than both previous ends (file order is not time order)
  const IdleBreakdown idle = ComputeIdleBreakdown(t, {}, launches, WholeTraceWindow(), hta);
  ASSERT_EQ(idle.streams.size(), 1u);
  const StreamIdle& s = idle.streams[0];
  // k1: row 0 at 150 us > k0's end at 10 us: host wait, 90 us.
  EXPECT_EQ(s.idle_ns[static_cast<size_t>(IdleCategory::kHostWait)], 90'000);
  // k2: no join; its 90 us gap is over the 30 us kernel-wait threshold: other.
  EXPECT_EQ(s.idle_ns[static_cast<size_t>(IdleCategory::kOther)], 90'000);
  EXPECT_EQ(s.idle_ns[static_cast<size_t>(IdleCategory::kKernelWait)], 0);
}

// (c) GPU ops without a launch (MTIA's dma_request) fell out of step windows:
// kept by their own start, counted.
TEST(TraceDefects, UnlinkedOpsStayInTheirStepWindow) {
  B b;
  b.Annotation("ProfilerStep#1", 0, 1'000'000);
  b.Launch(1000, 5, TraceEventKind::kKernel, "gemm", 2000, 100'000, B::kStream7);
  b.Gpu(TraceEventKind::kMemcpy, "dma_request", 500'000, 40'000, B::kStream8);    // in the step
  b.Gpu(TraceEventKind::kMemcpy, "dma_request", 2'000'000, 40'000, B::kStream8);  // after it
  const RankTrace t = b.Build();
  const std::vector<uint32_t> launches = LinkLaunches(t);
  const std::vector<KernelClass> classes = testing::ClassesByName(t);
  const std::vector<ProfilerStepInfo> steps = FindProfilerSteps(t, launches);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].num_gpu_ops, 2u);
  EXPECT_EQ(steps[0].gpu_start_ns, 2000);
  EXPECT_EQ(steps[0].gpu_end_ns, 540'000);
  const std::vector<TraceWindow> windows = {StepWindow(steps[0]), StepsWindow(steps)};
  for (const WindowBreakdown& w : AnalyzeWindows(t, classes, launches, windows, {})) {
    EXPECT_EQ(w.temporal.num_gpu_ops, 2u) << w.window.name;
    EXPECT_EQ(w.unlinked_ops, 1u);
    EXPECT_EQ(w.temporal.exposed_memcpy_ns, 40'000);
  }
  // The same selection through the one-window path.
  EXPECT_EQ(AnalyzeWindow(t, classes, launches, StepWindow(steps[0]), {}).temporal.num_gpu_ops, 2u);
  // HTA's window keeps HTA's rule (no launch, no step).
  TraceWindow hta = StepWindow(steps[0]);
  hta.unlinked_by_time = false;
  EXPECT_EQ(AnalyzeWindow(t, classes, launches, hta, {}).temporal.num_gpu_ops, 1u);
  EXPECT_EQ(AnalyzeWindow(t, classes, launches, WholeTraceWindow(), {}).unlinked_ops, 2u);
}

// (d) HTA rounding: a memset at [20.2, 20.7) us becomes [21, 20]: -1 us of
// busy time, so non-compute = 20 - 10 - 11 = -1 us. Clamped, counted.
TEST(TraceDefects, NoNegativeNonComputeBucket) {
  B b;
  b.Launch(0, 5, TraceEventKind::kKernel, "gemm", 0, 10'000, B::kStream7);
  b.Launch(100, 5, TraceEventKind::kMemset, "Memset (Device)", 20'200, 500, B::kStream7);
  const RankTrace t = b.Build();
  const std::vector<uint32_t> launches = LinkLaunches(t);
  BreakdownOptions hta;
  hta.variant = BreakdownVariant::kHtaCompat;
  const TemporalBreakdown r = ComputeTemporalBreakdown(t, testing::ClassesByName(t), launches, WholeTraceWindow(), hta);
  EXPECT_EQ(r.span_ns, 20'000);
  EXPECT_EQ(r.compute_ns, 10'000);
  EXPECT_EQ(r.non_compute_ns, 0);
  EXPECT_EQ(r.idle_ns, 10'000);  // 11 us less the 1 us clamped back
  EXPECT_EQ(r.clamped_ns, 1'000);
  EXPECT_EQ(r.inverted_ops, 1u);
  EXPECT_EQ(r.compute_ns + r.non_compute_ns + r.idle_ns, r.span_ns);
  // Exact nanoseconds (mfu's variant): nothing inverted, nothing clamped.
  const TemporalBreakdown exact =
      ComputeTemporalBreakdown(t, testing::ClassesByName(t), launches, WholeTraceWindow(), {});
  EXPECT_EQ(exact.clamped_ns, 0);
  EXPECT_EQ(exact.inverted_ops, 0u);
  EXPECT_EQ(exact.non_compute_ns, 500);
}

// One window per step label (the H100 trace showed 100% FLOPs coverage next
// to a waterfall with 10.4% matrix_unknown_flops): the CPU and GPU-side
// ProfilerStep annotations merge into one step, and its waterfall counts the
// step's own ops, from its first GPU work, for the CPU step's duration.
TEST(TraceDefects, OneWindowPerStepLabel) {
  B b;
  b.Annotation("ProfilerStep#6", 10'000, 47'000);
  b.Annotation("ProfilerStep#6", 24'500, 34'900, B::kStream7, TraceEventKind::kGpuUserAnnotation);
  // Launched before the step, still running in its CPU range: not its op.
  b.Launch(1000, 5, TraceEventKind::kKernel, "gemm_before", 12'000, 6000, B::kStream7);
  b.Launch(11'000, 5, TraceEventKind::kKernel, "gemm_own", 30'000, 10'000, B::kStream7);
  const RankTrace t = b.Build();
  const std::vector<uint32_t> launches = LinkLaunches(t);
  const std::vector<ProfilerStepInfo> steps = FindProfilerSteps(t, launches);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_TRUE(steps[0].has_gpu_annotation);
  EXPECT_EQ(steps[0].gpu_annotation_start_ns, 24'500);
  EXPECT_EQ(steps[0].gpu_start_ns, 24'500);  // the annotation starts before the op
  EXPECT_EQ(steps[0].gpu_end_ns, 59'400);    // and ends after it
  EXPECT_EQ(steps[0].num_gpu_ops, 1u);

  const std::vector<KernelClass> classes = testing::ClassesByName(t);
  const FlopsAttribution attribution = AttributeOpFlops(t, classes, launches);
  const Accelerator gpu = testing::TestGpu();
  WaterfallOptions cpu{&gpu};
  auto by_cpu = ComputeStepWaterfalls(t, classes, launches, attribution, cpu);
  ASSERT_TRUE(by_cpu.ok()) << by_cpu.status().message();
  ASSERT_EQ(by_cpu->size(), 1u);
  const StepWaterfall& w = (*by_cpu)[0];
  EXPECT_EQ(w.start_ns, 24'500);
  EXPECT_EQ(w.step_ns, 47'000);
  EXPECT_EQ(w.matrix_ns, 10'000);  // gemm_own only (gemm_before ran at [12, 18) us)
  EXPECT_EQ(w.busy_ns, 10'000);
  WaterfallOptions span{&gpu};
  span.step_time = StepTimeKind::kGpuSpan;
  auto by_span = ComputeStepWaterfalls(t, classes, launches, attribution, span);
  ASSERT_TRUE(by_span.ok());
  ASSERT_EQ(by_span->size(), 1u);
  EXPECT_EQ((*by_span)[0].start_ns, 24'500);
  EXPECT_EQ((*by_span)[0].step_ns, 34'900);
  EXPECT_EQ((*by_span)[0].busy_ns, 10'000);
}

}  // namespace
}  // namespace mfu
