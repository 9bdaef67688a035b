// Breakdowns: hand-built traces with hand-computed expectations for every
// analysis (both variants), the invariants on the real traces, and
// AnalyzeWindows against AnalyzeWindow. Parity with Holistic Trace Analysis
// is in breakdown_hta_test.cc.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "mfu/trace_breakdown.h"
#include "mfu/trace_classify.h"
#include "testing/trace_builder.h"

namespace mfu {
namespace {

using testing::TraceBuilder;

// A trace, its classes and launch links.
struct Prepared {
  RankTrace trace;
  std::vector<KernelClass> classes;
  std::vector<uint32_t> launches;
};

Prepared Prepare(RankTrace trace) {
  Prepared p;
  p.trace = std::move(trace);
  p.classes = ClassifyEvents(p.trace, testing::BuiltinClassifier());
  p.launches = LinkLaunches(p.trace);
  return p;
}

WindowBreakdown Analyze(const Prepared& p, const TraceWindow& window, BreakdownVariant variant,
                        BreakdownOptions options = {}) {
  options.variant = variant;
  return AnalyzeWindow(p.trace, p.classes, p.launches, window, options);
}

// The example used by most tests (ns):
//   stream 7: gemm [10000, 20000) launched at 0; memcpy [20000, 25000) launched
//             at 8000; memset [45000, 46000) launched at 9000; gemm
//             [100000, 110000) launched at 50000 (CPU call 20 us long);
//   stream 8: NCCL all-reduce [15000, 40000) launched at 6000; an unknown
//             kernel [200000, 201000) with no launch in the trace.
RankTrace Example() {
  TraceBuilder b;
  using K = TraceEventKind;
  b.Launch(0, 5000, K::kKernel, "volta_sgemm_128x32_nt", 10000, 10000, TraceBuilder::kStream7);
  b.Launch(6000, 2000, K::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 15000, 25000,
           TraceBuilder::kStream8);
  b.Launch(8000, 1000, K::kMemcpy, "Memcpy DtoD (Device -> Device)", 20000, 5000, TraceBuilder::kStream7);
  b.Launch(9000, 1000, K::kMemset, "Memset (Device)", 45000, 1000, TraceBuilder::kStream7);
  b.Launch(50000, 20000, K::kKernel, "ampere_sgemm_128x64_nn", 100000, 10000, TraceBuilder::kStream7);
  b.Gpu(K::kKernel, "mystery_kernel", 200000, 1000, TraceBuilder::kStream8);
  b.Cpu(K::kCpuOp, "aten::mm", 0, 60000);
  return b.Build();
}

TEST(TemporalBreakdown, ExampleMfu) {
  const Prepared p = Prepare(Example());
  const TemporalBreakdown t = Analyze(p, WholeTraceWindow(), BreakdownVariant::kMfu).temporal;
  EXPECT_EQ(t.num_gpu_ops, 6u);
  EXPECT_EQ(t.gpu_start_ns, 10000);
  EXPECT_EQ(t.gpu_end_ns, 201000);
  EXPECT_EQ(t.span_ns, 191000);
  EXPECT_EQ(t.busy_ns, 42000);  // [10, 40) + [45, 46) + [100, 110) + [200, 201) us
  EXPECT_EQ(t.idle_ns, 149000);
  EXPECT_EQ(t.compute_ns, 21000);  // both GEMMs and the unknown kernel
  EXPECT_EQ(t.unclassified_ns, 1000);
  EXPECT_EQ(t.exposed_comm_ns, 20000);  // [20, 40): the rest runs under the first GEMM
  EXPECT_EQ(t.exposed_memcpy_ns, 0);    // hidden under the all-reduce
  EXPECT_EQ(t.exposed_memset_ns, 1000);
  EXPECT_EQ(t.non_compute_ns, 21000);
  EXPECT_EQ(t.compute_ns + t.exposed_comm_ns + t.exposed_memcpy_ns + t.exposed_memset_ns + t.idle_ns, t.span_ns);
  EXPECT_NEAR(t.idle_pct() + t.compute_pct() + t.non_compute_pct(), 100.0, 1e-9);
}

TEST(TemporalBreakdown, HtaVariantMatchesOnWholeMicroseconds) {
  const Prepared p = Prepare(Example());
  const TemporalBreakdown mfu = Analyze(p, WholeTraceWindow(), BreakdownVariant::kMfu).temporal;
  const TemporalBreakdown hta = Analyze(p, WholeTraceWindow(), BreakdownVariant::kHtaCompat).temporal;
  EXPECT_EQ(hta.span_ns, mfu.span_ns);
  EXPECT_EQ(hta.idle_ns, mfu.idle_ns);
  EXPECT_EQ(hta.compute_ns, mfu.compute_ns);
  EXPECT_EQ(hta.non_compute_ns, mfu.non_compute_ns);
}

TEST(TemporalBreakdown, HtaRoundsToMicrosecondsAndKeepsInvertedIntervals) {
  // [1.5, 3.2) us becomes [2, 3); [3.4, 3.9) becomes [4, 3): HTA keeps the
  // inverted interval and its -1 us.
  TraceBuilder b;
  b.Gpu(TraceEventKind::kKernel, "a", 1500, 1700, TraceBuilder::kStream7);
  b.Gpu(TraceEventKind::kKernel, "b", 3400, 500, TraceBuilder::kStream7);
  const Prepared p = Prepare(b.Build());
  const TemporalBreakdown hta = Analyze(p, WholeTraceWindow(), BreakdownVariant::kHtaCompat).temporal;
  EXPECT_EQ(hta.gpu_start_ns, 2000);
  EXPECT_EQ(hta.span_ns, 1000);  // last merged group's end (3) - first start (2)
  EXPECT_EQ(hta.busy_ns, 0);     // 1 + (-1)
  EXPECT_EQ(hta.idle_ns, 1000);
  EXPECT_EQ(hta.compute_ns, 0);
  EXPECT_EQ(hta.non_compute_ns, 0);
  const TemporalBreakdown mfu = Analyze(p, WholeTraceWindow(), BreakdownVariant::kMfu).temporal;
  EXPECT_EQ(mfu.span_ns, 2400);
  EXPECT_EQ(mfu.busy_ns, 2200);
  EXPECT_EQ(mfu.compute_ns, 2200);
}

TEST(TemporalBreakdown, EmptyWindow) {
  TraceBuilder b;
  b.Cpu(TraceEventKind::kCpuOp, "aten::add", 0, 100);
  const Prepared p = Prepare(b.Build());
  const WindowBreakdown r = Analyze(p, WholeTraceWindow(), BreakdownVariant::kMfu);
  EXPECT_EQ(r.temporal.span_ns, 0);
  EXPECT_EQ(r.temporal.idle_pct(), 0.0);
  EXPECT_TRUE(std::isnan(r.overlap.overlap_pct));
  EXPECT_EQ(r.kernel_types.total_ns(), 0);
  EXPECT_TRUE(r.idle.streams.empty());
  EXPECT_TRUE(r.top_kernels.empty());
  EXPECT_EQ(r.launches.launches, 0u);
}

TEST(CommComputeOverlap, Example) {
  const Prepared p = Prepare(Example());
  for (BreakdownVariant v : {BreakdownVariant::kMfu, BreakdownVariant::kHtaCompat}) {
    const CommComputeOverlap o = Analyze(p, WholeTraceWindow(), v).overlap;
    EXPECT_EQ(o.comm_ns, 25000);
    EXPECT_EQ(o.overlap_ns, 5000);  // [15, 20) us
    EXPECT_DOUBLE_EQ(o.overlap_pct, 20.0);
  }
}

TEST(KernelTypeBreakdown, ExactSetsSumToBusyTime) {
  const Prepared p = Prepare(Example());
  for (BreakdownVariant v : {BreakdownVariant::kMfu, BreakdownVariant::kHtaCompat}) {
    const WindowBreakdown r = Analyze(p, WholeTraceWindow(), v);
    const KernelTypeBreakdown& k = r.kernel_types;
    EXPECT_EQ(k.exact_ns[1], 16000);  // COMPUTATION alone
    EXPECT_EQ(k.exact_ns[3], 5000);   // COMPUTATION overlapping COMMUNICATION
    EXPECT_EQ(k.exact_ns[2], 15000);  // COMMUNICATION alone
    EXPECT_EQ(k.exact_ns[6], 5000);   // COMMUNICATION overlapping MEMORY
    EXPECT_EQ(k.exact_ns[4], 1000);   // MEMORY alone
    EXPECT_EQ(k.total_ns(), r.temporal.busy_ns);
  }
  EXPECT_EQ(KernelTypeBreakdown::MaskName(3), "COMPUTATION overlapping COMMUNICATION");
  EXPECT_EQ(KernelTypeBreakdown::MaskName(7), "COMPUTATION overlapping COMMUNICATION overlapping MEMORY");
  KernelTypeBreakdown a, b;
  a.exact_ns[1] = 5;
  b.exact_ns[1] = 7;
  b.exact_ns[2] = 1;
  a += b;
  EXPECT_EQ(a.exact_ns[1], 12);
  EXPECT_EQ(a.total_ns(), 13);
}

TEST(KernelClassTimes, Example) {
  const Prepared p = Prepare(Example());
  const WindowBreakdown r = Analyze(p, WholeTraceWindow(), BreakdownVariant::kMfu);
  const ClassTime& gemm = r.classes[static_cast<size_t>(KernelClass::kGemm)];
  EXPECT_EQ(gemm.count, 2u);
  EXPECT_EQ(gemm.sum_ns, 20000);
  EXPECT_EQ(gemm.union_ns, 20000);
  EXPECT_EQ(r.classes[static_cast<size_t>(KernelClass::kCommunication)].sum_ns, 25000);
  EXPECT_EQ(r.classes[static_cast<size_t>(KernelClass::kUnclassified)].count, 1u);
  EXPECT_EQ(r.classes[static_cast<size_t>(KernelClass::kMemset)].union_ns, 1000);
}

TEST(KernelTypes, HtaNameRules) {
  EXPECT_EQ(HtaKernelType("ncclKernel_AllReduce_RING_LL_Sum_float"), KernelType::kCommunication);
  EXPECT_EQ(HtaKernelType("ncclDevKernel_Generic"), KernelType::kCommunication);
  EXPECT_EQ(HtaKernelType("hipExtModuleLaunchKernel"), KernelType::kCommunication);  // HTA's ^hip quirk
  EXPECT_EQ(HtaKernelType("void foo<ncclKernel>"), KernelType::kCommunication);
  EXPECT_EQ(HtaKernelType("Memcpy HtoD (Pinned -> Device)"), KernelType::kMemory);
  EXPECT_EQ(HtaKernelType("Memset (Device)"), KernelType::kMemory);
  EXPECT_EQ(HtaKernelType("dma_request"), KernelType::kMemory);
  EXPECT_EQ(HtaKernelType("hipMemcpyAsync"), KernelType::kCommunication);  // ^hip wins, as in HTA
  EXPECT_EQ(HtaKernelType("void dpsk::ep::internode::dispatch<false>"), KernelType::kComputation);  // HTA's blind spot
  EXPECT_EQ(KernelTypeOf(KernelClass::kCommunication), KernelType::kCommunication);
  EXPECT_EQ(KernelTypeOf(KernelClass::kMemset), KernelType::kMemory);
  EXPECT_EQ(KernelTypeOf(KernelClass::kUnclassified), KernelType::kComputation);
  EXPECT_STREQ(KernelTypeName(KernelType::kMemory), "MEMORY");
}

TEST(IdleBreakdown, CategoriesPerStream) {
  const Prepared p = Prepare(Example());
  const IdleBreakdown idle = Analyze(p, WholeTraceWindow(), BreakdownVariant::kMfu).idle;
  ASSERT_EQ(idle.streams.size(), 2u);
  const StreamIdle& s7 = idle.streams[0];
  EXPECT_EQ(s7.stream, 7);
  EXPECT_EQ(s7.device, 0);
  EXPECT_EQ(s7.num_ops, 4u);
  // memcpy: gap 0, launched long before -> kernel wait; memset: gap 20 us <
  // 30 us -> kernel wait; second GEMM launched at 50 us after the memset ended
  // at 46 us -> host wait of 54 us.
  EXPECT_EQ(s7.idle_ns[static_cast<size_t>(IdleCategory::kKernelWait)], 20000);
  EXPECT_EQ(s7.stats[static_cast<size_t>(IdleCategory::kKernelWait)].count, 2u);
  EXPECT_DOUBLE_EQ(s7.stats[static_cast<size_t>(IdleCategory::kKernelWait)].mean_ns, 10000);
  EXPECT_DOUBLE_EQ(s7.stats[static_cast<size_t>(IdleCategory::kKernelWait)].std_ns, std::sqrt(2e8));
  EXPECT_EQ(s7.idle_ns[static_cast<size_t>(IdleCategory::kHostWait)], 54000);
  EXPECT_EQ(s7.idle_ns[static_cast<size_t>(IdleCategory::kOther)], 0);
  const IntervalStats& other7 = s7.stats[static_cast<size_t>(IdleCategory::kOther)];
  EXPECT_EQ(other7.count, 0u);
  EXPECT_TRUE(std::isnan(other7.mean_ns));
  EXPECT_EQ(s7.total_idle_ns(), 74000);
  // Stream 8: the unknown kernel has no launch: 160 us of "other".
  const StreamIdle& s8 = idle.streams[1];
  EXPECT_EQ(s8.stream, 8);
  EXPECT_EQ(s8.idle_ns[static_cast<size_t>(IdleCategory::kOther)], 160000);
  const IntervalStats& other8 = s8.stats[static_cast<size_t>(IdleCategory::kOther)];
  EXPECT_EQ(other8.count, 1u);
  EXPECT_TRUE(std::isnan(other8.std_ns));
  EXPECT_DOUBLE_EQ(other8.p75_ns, 160000);
}

TEST(IdleBreakdown, HtaRowZeroQuirkAndThreshold) {
  const Prepared p = Prepare(Example());
  BreakdownOptions options;
  options.hta_row0_ts_ns = 50000;  // HTA compares unmatched ops with traceEvents[0].ts
  IdleBreakdown idle = Analyze(p, WholeTraceWindow(), BreakdownVariant::kHtaCompat, options).idle;
  // HTA's join is min(correlation, 0): the launch-less kernel has no
  // correlation, so it joins nothing and is never host wait (an op with an
  // unmatched correlation joins row 0: trace_defects_test.cc).
  EXPECT_EQ(idle.streams[1].idle_ns[static_cast<size_t>(IdleCategory::kHostWait)], 0);
  EXPECT_EQ(idle.streams[1].idle_ns[static_cast<size_t>(IdleCategory::kOther)], 160000);
  options.hta_row0_ts_ns.reset();
  idle = Analyze(p, WholeTraceWindow(), BreakdownVariant::kHtaCompat, options).idle;
  EXPECT_EQ(idle.streams[1].idle_ns[static_cast<size_t>(IdleCategory::kOther)], 160000);
  // The threshold is an option: at 10 us the 20 us memset gap becomes "other".
  options.kernel_wait_threshold_ns = 10000;
  idle = Analyze(p, WholeTraceWindow(), BreakdownVariant::kMfu, options).idle;
  EXPECT_EQ(idle.streams[0].idle_ns[static_cast<size_t>(IdleCategory::kOther)], 20000);
  EXPECT_EQ(idle.streams[0].idle_ns[static_cast<size_t>(IdleCategory::kKernelWait)], 0);
}

TEST(TopKernels, StatsAndOthers) {
  TraceBuilder b;
  int64_t ts = 0;
  for (int64_t dur : {1000, 2000, 3000}) {
    b.Gpu(TraceEventKind::kKernel, "volta_sgemm_a", ts, dur, TraceBuilder::kStream7);
    ts += 10000;
  }
  b.Gpu(TraceEventKind::kKernel, "volta_sgemm_b", ts, 10000, TraceBuilder::kStream7);
  b.Gpu(TraceEventKind::kKernel, "ncclKernel_AllReduce", ts, 500, TraceBuilder::kStream8);
  const Prepared p = Prepare(b.Build());
  BreakdownOptions options;
  options.top_kernels = 1;
  const std::vector<KernelGroup> groups = Analyze(p, WholeTraceWindow(), BreakdownVariant::kMfu, options).top_kernels;
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].group, "gemm");
  EXPECT_EQ(groups[0].count, 4u);
  EXPECT_EQ(groups[0].total_ns, 16000);
  ASSERT_EQ(groups[0].top.size(), 1u);
  EXPECT_EQ(groups[0].top[0].name, "volta_sgemm_b");
  EXPECT_EQ(groups[0].top[0].std_ns, 0.0);
  const KernelStats& others = groups[0].others;
  EXPECT_EQ(others.count, 3u);
  EXPECT_EQ(others.total_ns, 6000);
  EXPECT_EQ(others.min_ns, 1000);
  EXPECT_EQ(others.max_ns, 3000);
  EXPECT_DOUBLE_EQ(others.mean_ns, 2000);
  EXPECT_DOUBLE_EQ(others.std_ns, 1000);  // sample std, as HTA's pandas
  EXPECT_EQ(groups[1].group, "communication");
  EXPECT_EQ(groups[1].others.count, 0u);

  const std::vector<KernelGroup> hta =
      Analyze(p, WholeTraceWindow(), BreakdownVariant::kHtaCompat, options).top_kernels;
  ASSERT_EQ(hta.size(), 2u);
  EXPECT_EQ(hta[0].group, "COMPUTATION");
  EXPECT_EQ(hta[1].group, "COMMUNICATION");
}

TEST(LaunchStats, Example) {
  const Prepared p = Prepare(Example());
  const LaunchStats l = Analyze(p, WholeTraceWindow(), BreakdownVariant::kMfu).launches;
  // Delays (us): 10-5, 15-8, 20-9, 45-10, 100-70 -> 5, 7, 11, 35, 30.
  EXPECT_EQ(l.launches, 5u);
  EXPECT_EQ(l.short_kernels, 1u);  // the last GEMM: 10 us on the GPU, 20 us on the CPU
  EXPECT_DOUBLE_EQ(l.launch_delay_median_ns, 11000);
  EXPECT_DOUBLE_EQ(l.launch_delay_p95_ns, 34000);  // 30 + 0.8 * (35 - 30)
  EXPECT_DOUBLE_EQ(l.launch_delay_mean_ns, 17600);
  EXPECT_EQ(l.launch_delay_min_ns, 5000);
  EXPECT_EQ(l.launch_delay_max_ns, 35000);
  EXPECT_DOUBLE_EQ(l.cpu_duration_median_ns, 2000);
  EXPECT_DOUBLE_EQ(l.gpu_duration_median_ns, 10000);
}

TEST(ProfilerSteps, GpuIntervalsAndWindows) {
  TraceBuilder b;
  using K = TraceEventKind;
  b.Cpu(K::kUserAnnotation, "ProfilerStep#4", 0, 100000);
  b.Cpu(K::kUserAnnotation, "ProfilerStep#5", 100000, 100000);
  b.Cpu(K::kCpuOp, "ProfilerStep#5", 100000, 100000);       // older traces: a cpu_op too; one step per name
  b.Cpu(K::kUserAnnotation, "ProfilerStep#x", 100000, 10);  // not a step
  b.Launch(1000, 1000, K::kKernel, "volta_sgemm_128x32_nt", 50000, 10000, TraceBuilder::kStream7);
  b.Launch(90000, 1000, K::kKernel, "volta_sgemm_128x32_nt", 120000, 10000, TraceBuilder::kStream7);  // step 4
  b.Launch(150000, 1000, K::kKernel, "volta_sgemm_128x32_nt", 160000, 30000, TraceBuilder::kStream7);
  b.Launch(250000, 1000, K::kKernel, "volta_sgemm_128x32_nt", 260000, 1000, TraceBuilder::kStream7);  // after
  b.Gpu(K::kKernel, "orphan", 300000, 1000, TraceBuilder::kStream8);
  const Prepared p = Prepare(b.Build());
  const std::vector<ProfilerStepInfo> steps = FindProfilerSteps(p.trace, p.launches);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].name, "ProfilerStep#4");
  EXPECT_EQ(steps[0].number, 4);
  EXPECT_EQ(steps[0].num_gpu_ops, 2u);
  EXPECT_EQ(steps[0].gpu_start_ns, 50000);
  EXPECT_EQ(steps[0].gpu_end_ns, 130000);  // the op launched at the step's end runs into step 5
  EXPECT_EQ(steps[1].num_gpu_ops, 1u);
  EXPECT_EQ(steps[1].gpu_start_ns, 160000);
  EXPECT_EQ(steps[1].gpu_end_ns, 190000);

  auto ops = [&](const TraceWindow& w) { return Analyze(p, w, BreakdownVariant::kMfu).temporal.num_gpu_ops; };
  EXPECT_EQ(ops(WholeTraceWindow()), 5u);
  EXPECT_EQ(ops(StepWindow(steps[1])), 1u);
  EXPECT_EQ(ops(StepsWindow(steps)), 3u);
  EXPECT_EQ(StepsWindow(steps).name, "ProfilerStep#4..#5");
  // HTA drops the last step: ops launched before it starts (orphans dropped too).
  const TraceWindow hta = HtaWindow(steps);
  EXPECT_FALSE(hta.whole_trace);
  EXPECT_EQ(hta.cpu_end_ns, 100000);
  EXPECT_EQ(ops(hta), 2u);
  // One step or none: everything.
  EXPECT_TRUE(HtaWindow(std::span(steps).first(1)).whole_trace);
  EXPECT_TRUE(HtaWindow({}).whole_trace);
  EXPECT_EQ(StepsWindow({}).name, "trace");
}

TEST(LinkLaunches, ByCorrelation) {
  const Prepared p = Prepare(Example());
  size_t linked = 0;
  for (size_t i = 0; i < p.trace.num_events(); ++i) {
    if (p.launches[i] == kNoIndex)
      continue;
    ++linked;
    EXPECT_TRUE(IsGpuActivity(p.trace.kind[i]));
    EXPECT_EQ(p.trace.kind[p.launches[i]], TraceEventKind::kRuntime);
    EXPECT_EQ(p.trace.correlation[p.launches[i]], p.trace.correlation[i]);
  }
  EXPECT_EQ(linked, 5u);
}

// Every trace in tests/data, every window, both variants: the accounting
// identities hold and nothing is left out.
TEST(Breakdown, InvariantsOnRealTraces) {
  for (const char* file : testing::kRealTraceFiles) {
    SCOPED_TRACE(file);
    auto trace = ParseTraceFile(RealFileSystem(), testing::TestTracePath(file));
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    const Prepared p = Prepare(std::move(trace).value());
    const std::vector<ProfilerStepInfo> steps = FindProfilerSteps(p.trace, p.launches);
    std::vector<TraceWindow> windows = {WholeTraceWindow(), StepsWindow(steps), HtaWindow(steps)};
    for (const ProfilerStepInfo& step : steps)
      windows.push_back(StepWindow(step));
    for (const TraceWindow& window : windows) {
      SCOPED_TRACE(window.name);
      const WindowBreakdown m = Analyze(p, window, BreakdownVariant::kMfu);
      const TemporalBreakdown& t = m.temporal;
      EXPECT_EQ(t.compute_ns + t.exposed_comm_ns + t.exposed_memcpy_ns + t.exposed_memset_ns + t.idle_ns, t.span_ns);
      EXPECT_GE(t.idle_ns, 0);
      EXPECT_LE(t.unclassified_ns, t.compute_ns);
      EXPECT_EQ(m.kernel_types.total_ns(), t.busy_ns);
      uint64_t ops = 0, class_ops = 0;
      for (const StreamIdle& s : m.idle.streams)
        ops += s.num_ops;
      for (const ClassTime& c : m.classes)
        class_ops += c.count;
      EXPECT_EQ(ops, t.num_gpu_ops);
      EXPECT_EQ(class_ops, t.num_gpu_ops);
      uint64_t top_count = 0;
      for (const KernelGroup& g : m.top_kernels)
        top_count += g.count;
      EXPECT_EQ(top_count, t.num_gpu_ops);
      EXPECT_LE(m.launches.launches, t.num_gpu_ops);

      const TemporalBreakdown h = Analyze(p, window, BreakdownVariant::kHtaCompat).temporal;
      EXPECT_EQ(h.compute_ns + h.non_compute_ns + h.idle_ns, h.span_ns);
      EXPECT_EQ(h.num_gpu_ops, t.num_gpu_ops);
      // Rounding moves each op by less than 1 us at either end.
      if (t.num_gpu_ops > 0) {
        EXPECT_LT(std::abs(h.gpu_start_ns - t.gpu_start_ns), 1000);
      }
    }
  }
}

// AnalyzeWindows (one launch index for all windows) against AnalyzeWindow
// (a scan per window) on every step of the real fixtures, both variants.
TEST(AnalyzeWindows, EqualsOneWindowAtATimeOnRealTraces) {
  size_t windows_checked = 0;
  for (const char* dir : {"dlrm_kineto", "hta_sampled"}) {
    auto traces = ParseTraceSet(RealFileSystem(), testing::TestTracePath(dir));
    ASSERT_TRUE(traces.ok()) << traces.status().message();
    for (RankTrace& t : *traces) {
      const Prepared p = Prepare(std::move(t));
      const std::vector<ProfilerStepInfo> steps = FindProfilerSteps(p.trace, p.launches);
      std::vector<TraceWindow> windows{WholeTraceWindow(), StepsWindow(steps), HtaWindow(steps)};
      for (const ProfilerStepInfo& step : steps)
        windows.push_back(StepWindow(step));
      for (BreakdownVariant variant : {BreakdownVariant::kMfu, BreakdownVariant::kHtaCompat}) {
        BreakdownOptions options;
        options.variant = variant;
        const std::vector<WindowBreakdown> all = AnalyzeWindows(p.trace, p.classes, p.launches, windows, options);
        ASSERT_EQ(all.size(), windows.size());
        for (size_t w = 0; w < windows.size(); ++w) {
          const WindowBreakdown one = AnalyzeWindow(p.trace, p.classes, p.launches, windows[w], options);
          const std::string where = p.trace.path + " " + windows[w].name;
          EXPECT_EQ(all[w].window.name, windows[w].name);
          EXPECT_EQ(all[w].temporal.num_gpu_ops, one.temporal.num_gpu_ops) << where;
          EXPECT_EQ(all[w].temporal.busy_ns, one.temporal.busy_ns) << where;
          EXPECT_EQ(all[w].temporal.compute_ns, one.temporal.compute_ns) << where;
          EXPECT_EQ(all[w].temporal.exposed_comm_ns, one.temporal.exposed_comm_ns) << where;
          EXPECT_EQ(all[w].kernel_types.exact_ns, one.kernel_types.exact_ns) << where;
          EXPECT_EQ(all[w].idle.streams.size(), one.idle.streams.size()) << where;
          EXPECT_EQ(all[w].launches.launches, one.launches.launches) << where;
          EXPECT_EQ(all[w].top_kernels.size(), one.top_kernels.size()) << where;
          ++windows_checked;
        }
      }
    }
  }
  EXPECT_GT(windows_checked, 40u);
}

}  // namespace
}  // namespace mfu
