// Metric names, scales, sentinels and device keys. Every expectation is a
// row of DCGM 4.6.0's field table (../shared/telemetry/dcgm_fields_4.6.0.tsv,
// id in the comment), AMD's metricslist.md (percent 0..100) or DCGM's
// dcgm_structs.h blank values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include "mfu/telemetry.h"

namespace mfu {
namespace {

using F = TelemetryField;

void ExpectField(std::string_view name, F field, double scale) {
  double s = -1;
  std::optional<F> got = ResolveTelemetryMetric(name, &s);
  ASSERT_TRUE(got.has_value()) << name;
  EXPECT_EQ(*got, field) << name;
  EXPECT_DOUBLE_EQ(s, scale) << name;
}

TEST(TelemetryFields, LegacyDcgmExporterNames) {
  ExpectField("DCGM_FI_DEV_GPU_UTIL", F::kGpuUtil, 0.01);                         // 203, percent
  ExpectField("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", F::kTensorActive, 1);            // 1004
  ExpectField("DCGM_FI_PROF_GR_ENGINE_ACTIVE", F::kGrEngineActive, 1);            // 1001
  ExpectField("DCGM_FI_PROF_SM_ACTIVE", F::kSmActive, 1);                         // 1002
  ExpectField("DCGM_FI_PROF_SM_OCCUPANCY", F::kSmOccupancy, 1);                   // 1003
  ExpectField("DCGM_FI_PROF_DRAM_ACTIVE", F::kDramActive, 1);                     // 1005
  ExpectField("DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", F::kTensorHmmaActive, 1);   // 1014
  ExpectField("DCGM_FI_DEV_SM_CLOCK", F::kSmClockMhz, 1);                         // 100
  ExpectField("DCGM_FI_DEV_POWER_USAGE", F::kPowerWatts, 1);                      // 155
  ExpectField("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", F::kClocksEventReasons, 1);   // 112 (legacy)
  ExpectField("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", F::kClocksEventReasons, 1);     // 112
  ExpectField("DCGM_FI_DEV_XID_ERRORS", F::kXidErrors, 1);                        // 230
  ExpectField("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", F::kEnergyMillijoules, 1);  // 156
}

TEST(TelemetryFields, Dcgm46NamesAreAliases) {
  ExpectField("DCGM_FI_PROF_TENSOR_UTIL_RATIO", F::kTensorActive, 1);                   // 1004
  ExpectField("DCGM_FI_DEV_GPU_UTIL_RATIO", F::kGpuUtil, 0.01);                         // 203, INT64: still percent
  ExpectField("DCGM_FI_DEV_BOARD_POWER_WATTS", F::kPowerWatts, 1);                      // 155
  ExpectField("DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", F::kGrEngineActive, 1);              // 1001
  ExpectField("DCGM_FI_PROF_SM_UTIL_RATIO", F::kSmActive, 1);                           // 1002
  ExpectField("DCGM_FI_PROF_DRAM_UTIL_RATIO", F::kDramActive, 1);                       // 1005
  ExpectField("DCGM_FI_PROF_HMMA_UTIL_RATIO", F::kTensorHmmaActive, 1);                 // 1014
  ExpectField("DCGM_FI_DEV_GPU_TEMP_CELSIUS", F::kGpuTempC, 1);                         // 150
  ExpectField("DCGM_FI_DEV_XID_ERROR", F::kXidErrors, 1);                               // 230
  ExpectField("DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS", F::kPowerLimitWatts, 1);  // 164
}

TEST(TelemetryFields, AmdNamesAnyCaseWithOrWithoutPrefix) {
  ExpectField("GPU_PROF_TENSOR_ACTIVE_PERCENT", F::kTensorActive, 0.01);
  ExpectField("gpu_prof_tensor_active_percent", F::kTensorActive, 0.01);
  ExpectField("amd_gpu_prof_tensor_active_percent", F::kTensorActive, 0.01);
  ExpectField("amd_gpu_gfx_activity", F::kGpuUtil, 0.01);
  ExpectField("gpu_power_usage", F::kPowerWatts, 1);
  ExpectField("gpu_clock", F::kSmClockMhz, 1);
  ExpectField("gpu_prof_total_16_ops", F::kAmdTotal16Ops, 1);
  ExpectField("gpu_prof_total_32_ops", F::kAmdTotal32Ops, 1);
  ExpectField("GPU_PROF_TOTAL_64_OPS", F::kAmdTotal64Ops, 1);
  ExpectField("gpu_energy_consumed", F::kEnergyMillijoules, 0.001);  // uJ -> mJ
}

TEST(TelemetryFields, UnusedNamesAreNotResolved) {
  EXPECT_FALSE(ResolveTelemetryMetric("DCGM_FI_DEV_PCIE_REPLAY_COUNTER").has_value());
  EXPECT_FALSE(ResolveTelemetryMetric("DCGM_FI_DEV_GPU_UTILX").has_value());
  EXPECT_FALSE(ResolveTelemetryMetric("gpu_nodes_total").has_value());
  EXPECT_FALSE(ResolveTelemetryMetric("").has_value());
  EXPECT_FALSE(ResolveTelemetryMetric("amd_").has_value());
}

TEST(TelemetryFields, EveryFieldHasADistinctId) {
  std::set<std::string> ids;
  for (size_t i = 0; i < kNumTelemetryFields; ++i)
    ids.insert(TelemetryFieldId(static_cast<F>(i)));
  EXPECT_EQ(ids.size(), kNumTelemetryFields);
  EXPECT_STREQ(TelemetryFieldId(F::kTensorActive), "tensor_active");
  EXPECT_STREQ(TelemetryFieldId(F::kSmClockMhz), "sm_clock_mhz");
}

TEST(TelemetryFields, DcgmSentinels) {
  // dcgm_structs.h: DCGM_INT32_BLANK 0x7ffffff0 = 2147483632, +1 NOT_FOUND,
  // +2 NOT_SUPPORTED, +3 NOT_PERMISSIONED.
  EXPECT_TRUE(IsTelemetrySentinel(2147483632.0));
  EXPECT_TRUE(IsTelemetrySentinel(2147483634.0));
  EXPECT_TRUE(IsTelemetrySentinel(2147483635.0));
  EXPECT_FALSE(IsTelemetrySentinel(2147483631.0));
  // DCGM_INT64_BLANK 0x7ffffffffffffff0 = 9223372036854775792; +2 is the
  // quickstart excerpt's 9223372036854775794. As doubles both are 2^63.
  EXPECT_TRUE(IsTelemetrySentinel(9223372036854775792.0));
  EXPECT_TRUE(IsTelemetrySentinel(9223372036854775794.0));
  // DCGM_FP64_BLANK 140737488355328.0 (2^47) and +1..+3.
  EXPECT_TRUE(IsTelemetrySentinel(140737488355328.0));
  EXPECT_TRUE(IsTelemetrySentinel(140737488355331.0));
  EXPECT_FALSE(IsTelemetrySentinel(140737488355327.0));
  EXPECT_TRUE(IsTelemetrySentinel(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_TRUE(IsTelemetrySentinel(std::numeric_limits<double>::infinity()));
  // Real values: the T4 capture's energy counter and zero.
  EXPECT_FALSE(IsTelemetrySentinel(15152422938.0));
  EXPECT_FALSE(IsTelemetrySentinel(0.0));
}

TEST(TelemetryFields, DeviceKeySeparatesPodsAndMigInstances) {
  TelemetryDevice a;
  a.uuid = "GPU-1";
  a.pod = "p1";
  TelemetryDevice b = a;
  b.pod = "p2";
  EXPECT_NE(a.Key(), b.Key());  // time-slicing: two pods, one uuid
  TelemetryDevice c = a;
  c.mig_instance = "1";
  EXPECT_NE(a.Key(), c.Key());
  TelemetryDevice d = a;
  d.model_name = "other label";
  EXPECT_EQ(a.Key(), d.Key());  // descriptive labels do not split a device
  TelemetryDevice e;
  e.hostname = "h";
  e.gpu = "3";
  TelemetryDevice f = e;
  f.gpu = "4";
  EXPECT_NE(e.Key(), f.Key());  // no uuid: hostname + index
}

}  // namespace
}  // namespace mfu
