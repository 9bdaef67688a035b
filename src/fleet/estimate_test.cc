// Estimation tests: every expected figure is computed by hand from the
// accelerator database's row (data/hardware/accelerators.csv) in the
// comment above it, never pasted from the program's output.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fleet/fleet_internal.h"
#include "fleet/fleet_test_util.h"
#include "mfu/fleet.h"

namespace mfu {
namespace {

using F = TelemetryField;
using testing::H100;
using testing::Point;

class EstimateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<HardwareDb> db = HardwareDb::LoadBuiltin();
    ASSERT_TRUE(db.ok());
    db_ = std::move(*db);
  }
  FleetReport Analyze(const std::vector<std::pair<TelemetryDevice, std::vector<TelemetryPoint>>>& devices,
                      FleetOptions options = {}) {
    options.hardware = &db_;
    FleetAnalyzer analyzer(options);
    for (const auto& [device, points] : devices)
      EXPECT_TRUE(analyzer.OnDevice(device, points).ok());
    TelemetryReadStats stats;
    StatusOr<FleetReport> r = analyzer.Finish(stats, "test");
    EXPECT_TRUE(r.ok()) << r.status().message();
    return *r;
  }
  static bool HasFinding(const GpuEstimate& g, const std::string& code) {
    for (const FleetFinding& f : g.findings) {
      if (f.code == code)
        return true;
    }
    return false;
  }
  static std::string Finding(const GpuEstimate& g, const std::string& code) {
    for (const FleetFinding& f : g.findings) {
      if (f.code == code)
        return f.message;
    }
    return "";
  }
  HardwareDb db_;
};

// H100 SXM5 80GB row: bf16 989.4 TFLOP/s dense, 132 SMs, boost 1,980 MHz.
// FLOP per clock per SM = 989.4e12 / (132 x 1,980e6) = 3,785.58.
// At tensor activity 0.5 and SM clock 1,980 MHz:
//   0.5 x 132 x 3,785.58 x 1,980e6 = 494.7e12 FLOP/s; MFU = 494.7 / 989.4 = 0.5.
// At 1,410 MHz: 0.5 x 132 x 3,785.58 x 1,410e6 = 352.28e12; MFU = 0.35606.
TEST_F(EstimateTest, H100HalfTensorActivityAtBoostAndBelow) {
  FleetReport at_boost = Analyze({{H100("GPU-a"), {Point(0, {{F::kTensorActive, 0.5}, {F::kSmClockMhz, 1980}})}}});
  ASSERT_EQ(at_boost.gpus.size(), 1u);
  const GpuEstimate& g = at_boost.gpus[0];
  EXPECT_EQ(g.accelerator, "h100-sxm5-80gb");
  EXPECT_NEAR(g.estimated_flops, 494.7e12, 1e9);
  EXPECT_NEAR(g.estimated_mfu, 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(g.peak_flops, 989.4e12);

  FleetReport slow = Analyze({{H100("GPU-a"), {Point(0, {{F::kTensorActive, 0.5}, {F::kSmClockMhz, 1410}})}}});
  EXPECT_NEAR(slow.gpus[0].estimated_flops, 352.28e12, 0.01e12);
  EXPECT_NEAR(slow.gpus[0].estimated_mfu, 0.35606, 1e-5);
}

// FP8: 1,978.9 TFLOP/s dense on the same 132 SMs at 1,980 MHz, so the same
// tensor activity 0.5 is 0.5 x 1,978.9e12 = 989.45e12 FLOP/s: twice the
// bf16 figure, the same MFU (0.5) against the fp8 denominator.
TEST_F(EstimateTest, Bf16AndFp8Denominators) {
  const std::vector<TelemetryPoint> points = {Point(0, {{F::kTensorActive, 0.5}, {F::kSmClockMhz, 1980}})};
  FleetOptions fp8;
  fp8.precision = DType::kFp8;
  FleetReport r8 = Analyze({{H100("GPU-a"), points}}, fp8);
  FleetReport r16 = Analyze({{H100("GPU-a"), points}});
  EXPECT_DOUBLE_EQ(r8.gpus[0].peak_flops, 1978.9e12);
  EXPECT_NEAR(r8.gpus[0].estimated_flops, 989.45e12, 1e9);
  EXPECT_NEAR(r16.gpus[0].estimated_flops, 494.7e12, 1e9);
  EXPECT_NEAR(r8.gpus[0].estimated_mfu, 0.5, 1e-12);
  // Only the defaulted run says it assumed bf16.
  auto has_note = [](const FleetReport& r, const char* code) {
    for (const Note& n : r.notes) {
      if (n.code == code)
        return true;
    }
    return false;
  };
  EXPECT_TRUE(has_note(r16, "default_precision"));
  EXPECT_FALSE(has_note(r8, "default_precision"));
}

// nvml.h: sw_power_cap 0x4, hw_thermal 0x40 (nvmlClocksEventReasonSwPowerCap,
// nvmlClocksEventReasonHwThermalSlowdown); gpu_idle 0x1 and
// applications_clocks_setting 0x2 are not throttling.
TEST_F(EstimateTest, DecodesClockEventReasons) {
  EXPECT_EQ(DecodeClocksEventReasons(0x4 | 0x40), (std::vector<std::string>{"sw_power_cap", "hw_thermal"}));
  EXPECT_EQ(DecodeClocksEventReasons(0x1ff).size(), 9u);
  EXPECT_EQ(DecodeClocksEventReasons(0x1 | 0x800), (std::vector<std::string>{"gpu_idle", "unknown_0x800"}));
  EXPECT_TRUE(DecodeClocksEventReasons(0).empty());
}

// A throttled interval: 0x44 held over the second of two 30 s intervals at
// tensor activity 0.8; the clock falls from 1,980 to 1,410 MHz.
// Interval MFUs: 0.8 x 1980/1980 = 0.8 and 0.8 x 1410/1980 = 0.56970; the
// mean over 30 s + 30 s (the last point stands for the median step, 30 s)
// is 0.68485. Throttled share of the tensor-busy time: 30 / 60 = 50%.
TEST_F(EstimateTest, ThrottledInterval) {
  FleetReport r = Analyze(
      {{H100("GPU-a"),
        {Point(1'000'000, {{F::kTensorActive, 0.8}, {F::kSmClockMhz, 1980}, {F::kClocksEventReasons, 0}}),
         Point(1'030'000, {{F::kTensorActive, 0.8}, {F::kSmClockMhz, 1410}, {F::kClocksEventReasons, 0x4 | 0x40}})}}});
  const GpuEstimate& g = r.gpus[0];
  EXPECT_NEAR(g.estimated_mfu, (0.8 + 0.8 * 1410.0 / 1980.0) / 2, 1e-12);
  EXPECT_NEAR(g.estimated_mfu, 0.68485, 1e-5);
  EXPECT_EQ(g.throttle_reasons, (std::vector<std::string>{"sw_power_cap", "hw_thermal"}));
  EXPECT_EQ(Finding(g, "throttled"),
            "clocks held by sw_power_cap, hw_thermal during 50% of the tensor-busy time (mean SM clock 1695 of "
            "1980 MHz)");
  // Bands: 0.8 -> above 60% for 30 s; 0.5697 -> 30-60% for 30 s.
  EXPECT_NEAR(g.gpu_hours_by_band[static_cast<size_t>(MfuBand::kAbove60)], 30.0 / 3600, 1e-12);
  EXPECT_NEAR(g.gpu_hours_by_band[static_cast<size_t>(MfuBand::k30To60)], 30.0 / 3600, 1e-12);
}

// An idle interval (0x1 gpu_idle, activity 0) is no throttling.
TEST_F(EstimateTest, IdleIsNotThrottled) {
  FleetReport r =
      Analyze({{H100("GPU-a"), {Point(0, {{F::kTensorActive, 0}, {F::kGpuUtil, 0}, {F::kClocksEventReasons, 0x1}})}}});
  EXPECT_FALSE(HasFinding(r.gpus[0], "throttled"));
  EXPECT_NEAR(r.gpus[0].gpu_hours_by_band[static_cast<size_t>(MfuBand::kIdle)], 30.0 / 3600, 1e-12);
}

// Each point stands for the time to the next; the last for the median step.
// Points at 0, 10 s, 40 s with activity 0.2, 0.8, 0.5: 10 s, 30 s and
// median(10, 30) = 20 s. Mean = (0.2x10 + 0.8x30 + 0.5x20) / 60 = 0.6.
TEST_F(EstimateTest, TimeWeighting) {
  FleetReport r = Analyze({{H100("GPU-a"),
                            {Point(100'000, {{F::kTensorActive, 0.2}}), Point(110'000, {{F::kTensorActive, 0.8}}),
                             Point(140'000, {{F::kTensorActive, 0.5}})}}});
  EXPECT_DOUBLE_EQ(r.gpus[0].seconds, 60);
  EXPECT_NEAR(r.gpus[0].tensor_active, 0.6, 1e-12);
  // No SM clock: the boost clock is assumed (MFU = activity) and said.
  EXPECT_NEAR(r.gpus[0].estimated_mfu, 0.6, 1e-12);
  EXPECT_TRUE(HasFinding(r.gpus[0], "missing_field"));
}

// A sentinel the reader dropped is NaN in its point: it never reaches a
// figure. Activity 0.4, (dropped), 0.6 at 0/30/60 s: the mean is over the
// two valid 30 s intervals, (0.4 + 0.6) / 2 = 0.5, not 0.333.
TEST_F(EstimateTest, SentinelsNeverReachAFigure) {
  FleetReport r = Analyze({{H100("GPU-a"),
                            {Point(30'000, {{F::kTensorActive, 0.4}}), Point(60'000, {{F::kSmClockMhz, 1980}}),
                             Point(90'000, {{F::kTensorActive, 0.6}})}}});
  EXPECT_NEAR(r.gpus[0].tensor_active, 0.5, 1e-12);
  EXPECT_NEAR(r.gpus[0].estimated_mfu, 0.5, 1e-12);
  TelemetryReadStats stats;
  stats.sentinels = 2;
  stats.sentinel_metrics = {"DCGM_FI_DEV_MEMORY_TEMP"};
  FleetOptions options;
  options.hardware = &db_;
  FleetAnalyzer a(options);
  StatusOr<FleetReport> with = a.Finish(stats, "x");
  ASSERT_TRUE(with.ok());
  bool noted = false;
  for (const Note& n : with->notes)
    noted = noted || (n.code == "sentinel" && n.message.find("DCGM_FI_DEV_MEMORY_TEMP") != std::string::npos);
  EXPECT_TRUE(noted);
}

// MIG 3g.40gb on an H100: 3 of 7 compute slices. Instance peak 989.4e12 x
// 3/7 = 424.03e12; activity 0.6 at boost: 0.6 x 424.03e12 = 254.42e12
// FLOP/s, MFU 0.6 of the instance. 30 s stand for 30 x 3/7 = 12.857 GPU-s.
// DCGM reports no GPU_UTIL on MIG: said.
TEST_F(EstimateTest, MigInstance) {
  TelemetryDevice d = H100("GPU-m");
  d.mig_profile = "3g.40gb";
  d.mig_instance = "2";
  FleetReport r = Analyze({{d, {Point(0, {{F::kTensorActive, 0.6}, {F::kSmClockMhz, 1980}})}}});
  const GpuEstimate& g = r.gpus[0];
  EXPECT_NEAR(g.gpu_share, 3.0 / 7, 1e-12);
  EXPECT_NEAR(g.peak_flops, 424.03e12, 0.01e12);
  EXPECT_NEAR(g.estimated_flops, 254.42e12, 0.01e12);
  EXPECT_NEAR(g.estimated_mfu, 0.6, 1e-12);
  EXPECT_TRUE(HasFinding(g, "no_gpu_util_on_mig"));
  EXPECT_NEAR(r.fleet.gpu_hours, 30.0 * 3 / 7 / 3600, 1e-12);
}

// Two pods time-sharing one GPU, identical series (dcgm-exporter#587): each
// stands for half the GPU, so the fleet holds 1 GPU and 30 GPU-seconds.
TEST_F(EstimateTest, TimeSlicedPodsAreOneGpu) {
  const std::vector<TelemetryPoint> points = {Point(0, {{F::kTensorActive, 0.4}, {F::kGpuUtil, 0.9}})};
  TelemetryDevice a = H100("GPU-t"), b = H100("GPU-t");
  a.pod = "infer-a";
  b.pod = "infer-b";
  FleetReport r = Analyze({{a, points}, {b, points}});
  ASSERT_EQ(r.gpus.size(), 2u);
  for (const GpuEstimate& g : r.gpus) {
    EXPECT_TRUE(HasFinding(g, "time_sliced_identical"));
    EXPECT_DOUBLE_EQ(g.gpu_share, 0.5);
  }
  EXPECT_EQ(r.fleet.gpus, 1);
  EXPECT_NEAR(r.fleet.gpu_hours, 30.0 / 3600, 1e-12);
  EXPECT_NEAR(r.fleet.estimated_mfu, 0.4, 1e-12);
}

// The T4 capture's values (../shared/telemetry/dcgm-exporter_T4_loaded_k8s.prom):
// GPU_UTIL 91 (-> 0.91), PIPE_TENSOR_ACTIVE 0.005822, SM clock 660 MHz.
// T4 has no bf16 path: no MFU at the default. At fp16 (65 TFLOP/s, boost
// 1,590 MHz): MFU = 0.005822 x 660 / 1,590 = 0.0024167.
TEST_F(EstimateTest, T4BusyButTensorPipesIdle) {
  TelemetryDevice d;
  d.vendor = "nvidia";
  d.uuid = "GPU-6d5c";
  d.model_name = "Tesla T4";
  const std::vector<TelemetryPoint> points = {Point(
      0, {{F::kGpuUtil, 0.91}, {F::kTensorActive, 0.005822}, {F::kGrEngineActive, 0.156205}, {F::kSmClockMhz, 660}})};
  FleetReport bf16 = Analyze({{d, points}});
  EXPECT_TRUE(std::isnan(bf16.gpus[0].estimated_mfu));
  EXPECT_TRUE(HasFinding(bf16.gpus[0], "unsupported_precision"));
  EXPECT_EQ(Finding(bf16.gpus[0], "low_tensor_while_busy").rfind("GPU_UTIL 91% but tensor pipes 0.6% busy", 0), 0u);
  FleetOptions fp16;
  fp16.precision = DType::kFp16;
  FleetReport r = Analyze({{d, points}}, fp16);
  EXPECT_NEAR(r.gpus[0].estimated_mfu, 0.0024167, 1e-7);
}

TEST_F(EstimateTest, UnknownAcceleratorIsNeverGuessed) {
  TelemetryDevice d = H100("GPU-x");
  d.model_name = "NVIDIA Foo 9000";
  FleetReport r = Analyze({{d, {Point(0, {{F::kTensorActive, 0.5}})}}});
  EXPECT_EQ(r.gpus[0].accelerator, "");
  EXPECT_TRUE(std::isnan(r.gpus[0].estimated_mfu));
  EXPECT_TRUE(HasFinding(r.gpus[0], "unknown_accelerator"));
  EXPECT_TRUE(std::isnan(r.fleet.estimated_mfu));
}

// GR_ENGINE_ACTIVE at 0 for every sample while GPU_UTIL is 97%
// (dcgm-exporter#662); PIPE_TENSOR_ACTIVE absent: the fix is named.
TEST_F(EstimateTest, StuckProfilingAndMissingTensorField) {
  FleetReport r = Analyze({{H100("GPU-s"),
                            {Point(0, {{F::kGpuUtil, 0.97}, {F::kGrEngineActive, 0}}),
                             Point(30'000, {{F::kGpuUtil, 0.97}, {F::kGrEngineActive, 0}})}}});
  EXPECT_TRUE(HasFinding(r.gpus[0], "profiling_stuck_zero"));
  EXPECT_NE(Finding(r.gpus[0], "missing_field").find("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"), std::string::npos);
}

// Newest sample 300 s before `now` against a 120 s limit: stale. XID 0 -> 79.
TEST_F(EstimateTest, StaleAndXid) {
  FleetOptions options;
  options.now_ms = 400'000;
  FleetReport r = Analyze({{H100("GPU-s"),
                            {Point(70'000, {{F::kTensorActive, 0.5}, {F::kXidErrors, 0}}),
                             Point(100'000, {{F::kTensorActive, 0.5}, {F::kXidErrors, 79}})}}},
                          options);
  EXPECT_EQ(Finding(r.gpus[0], "stale").rfind("newest sample 300 s old (limit 120 s)", 0), 0u);
  EXPECT_EQ(Finding(r.gpus[0], "xid").rfind("XID changed from 0 to 79", 0), 0u);
}

// AMD MI300X (bf16 1,307.4 TFLOP/s dense): GPU_PROF_TOTAL_16_OPS grows by
// 6.537e15 in 10 s -> 653.7e12 FLOP/s, MFU 653.7 / 1,307.4 = 0.5, whatever
// the MFMA activity says.
TEST_F(EstimateTest, AmdOpCounters) {
  TelemetryDevice d;
  d.vendor = "amd";
  d.uuid = "amd-0";
  d.model_name = "AMD Instinct MI300X";
  FleetReport r = Analyze({{d,
                            {Point(1'000'000, {{F::kAmdTotal16Ops, 1e15}, {F::kTensorActive, 0.9}}),
                             Point(1'010'000, {{F::kAmdTotal16Ops, 1e15 + 6.537e15}, {F::kTensorActive, 0.9}})}}});
  EXPECT_EQ(r.gpus[0].accelerator, "mi300x-oam-192gb");
  EXPECT_NEAR(r.gpus[0].estimated_flops, 653.7e12, 1e9);
  EXPECT_NEAR(r.gpus[0].estimated_mfu, 0.5, 1e-9);
}

TEST_F(EstimateTest, MigShareOfProfiles) {
  EXPECT_DOUBLE_EQ(fleet::MigShare("1g.10gb", nullptr), 1.0 / 7);
  EXPECT_DOUBLE_EQ(fleet::MigShare("7g.80gb", nullptr), 1.0);
  EXPECT_DOUBLE_EQ(fleet::MigShare("", nullptr), 1.0);
  EXPECT_DOUBLE_EQ(fleet::MigShare("garbage", nullptr), 1.0);
}

}  // namespace
}  // namespace mfu
