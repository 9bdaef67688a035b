// Every real capture in tests/data/telemetry/, with the values read by hand
// from the files and written here (percent fields / 100).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "fleet/telemetry_test_util.h"
#include "mfu/telemetry.h"

// Helpers in their own namespace: the unity build compiles this file with
// its target's other tests.
namespace mfu::telemetry_captures_test {
namespace {

using F = TelemetryField;

std::string Data(const std::string& name) {
  return testing::Slurp(std::string(MFU_SOURCE_DIR) + "/tests/data/telemetry/" + name);
}

TelemetryCapture Read(const std::string& name) {
  return testing::ReadOk(Data(name), name);
}

// Tesla T4 under load, no HELP/TYPE lines: "GPU_UTIL 91% but tensor pipes
// 0.6% busy".
TEST(TelemetryCaptures, T4LoadedNoHelpOrType) {
  TelemetryCapture c = Read("dcgm-exporter_T4_loaded_k8s.prom");
  ASSERT_EQ(c.devices.size(), 1u);
  const TelemetryDevice& d = c.devices[0];
  EXPECT_EQ(d.vendor, "nvidia");
  EXPECT_EQ(d.uuid, "GPU-6d5c0ac5-74d7-3130-46f1-e93ed57f469a");
  EXPECT_EQ(d.model_name, "Tesla T4");
  EXPECT_EQ(d.hostname, "cp-bm14r7");
  EXPECT_EQ(d.gpu, "0");
  EXPECT_EQ(d.device, "nvidia0");
  EXPECT_EQ(d.pci_bus_id, "00000000:37:00.0");
  EXPECT_EQ(d.driver_version, "590.48.01");
  EXPECT_EQ(d.pod, "");
  ASSERT_EQ(c.points[0].size(), 1u);
  const TelemetryPoint& p = c.points[0][0];
  EXPECT_DOUBLE_EQ(p.Get(F::kGpuUtil), 0.91);
  EXPECT_DOUBLE_EQ(p.Get(F::kTensorActive), 0.005822);
  EXPECT_DOUBLE_EQ(p.Get(F::kGrEngineActive), 0.156205);
  EXPECT_DOUBLE_EQ(p.Get(F::kDramActive), 0.092781);
  EXPECT_DOUBLE_EQ(p.Get(F::kSmClockMhz), 660);
  EXPECT_DOUBLE_EQ(p.Get(F::kMemClockMhz), 5000);
  EXPECT_DOUBLE_EQ(p.Get(F::kPowerWatts), 68.244);
  EXPECT_DOUBLE_EQ(p.Get(F::kEnergyMillijoules), 15152422938.0);
  EXPECT_DOUBLE_EQ(p.Get(F::kGpuTempC), 74);
  EXPECT_DOUBLE_EQ(p.Get(F::kMemoryTempC), 0);
  EXPECT_DOUBLE_EQ(p.Get(F::kFbFreeMib), 9791);
  EXPECT_DOUBLE_EQ(p.Get(F::kFbUsedMib), 5120);
  EXPECT_DOUBLE_EQ(p.Get(F::kPcieTxBytes), 4791810);
  EXPECT_DOUBLE_EQ(p.Get(F::kPcieRxBytes), 6935930);
  EXPECT_FALSE(p.Has(F::kSmActive));  // commented out in default-counters.csv
  EXPECT_EQ(c.stats.lines, 20);
  EXPECT_EQ(c.stats.samples, 20);
  // PCIE_REPLAY_COUNTER, MEM_COPY_UTIL, ENC_UTIL, DEC_UTIL, FB_RESERVED,
  // VGPU_LICENSE_STATUS.
  EXPECT_EQ(c.stats.unknown_metric_samples, 6);
  EXPECT_EQ(c.stats.sentinels, 0);
  EXPECT_EQ(c.stats.fields_seen.size(), 14u);
}

// Idle L40S with HELP/TYPE lines (69 lines, 23 samples).
TEST(TelemetryCaptures, L40sIdleWithHelpAndType) {
  TelemetryCapture c = Read("dcgm-exporter_L40S_idle_k8s.prom");
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].uuid, "GPU-5b4e07f6-3a86-4340-039d-25f2a83cdc43");
  EXPECT_EQ(c.devices[0].model_name, "NVIDIA L40S");
  EXPECT_EQ(c.devices[0].hostname, "gpu1-wl8sg");
  EXPECT_EQ(c.devices[0].driver_version, "595.58.03");
  const TelemetryPoint& p = c.points[0][0];
  EXPECT_DOUBLE_EQ(p.Get(F::kPowerWatts), 35.686);
  EXPECT_DOUBLE_EQ(p.Get(F::kSmClockMhz), 210);
  EXPECT_DOUBLE_EQ(p.Get(F::kMemClockMhz), 405);
  EXPECT_DOUBLE_EQ(p.Get(F::kGpuTempC), 32);
  EXPECT_DOUBLE_EQ(p.Get(F::kEnergyMillijoules), 5551899580.0);
  EXPECT_DOUBLE_EQ(p.Get(F::kGpuUtil), 0);
  EXPECT_DOUBLE_EQ(p.Get(F::kTensorActive), 0);
  EXPECT_DOUBLE_EQ(p.Get(F::kGrEngineActive), 0);
  EXPECT_DOUBLE_EQ(p.Get(F::kDramActive), 0.000131);
  EXPECT_DOUBLE_EQ(p.Get(F::kFbFreeMib), 45459);
  EXPECT_DOUBLE_EQ(p.Get(F::kPcieTxBytes), 175084);
  EXPECT_DOUBLE_EQ(p.Get(F::kPcieRxBytes), 19831);
  EXPECT_EQ(c.stats.lines, 69);
  EXPECT_EQ(c.stats.samples, 23);
  EXPECT_EQ(c.stats.unknown_metric_samples, 9);
}

// The exporter README's excerpt is not a /metrics body ("..." elisions at
// lines 7 and 11): read as is, one error naming line 7; with the elisions
// removed, its DCGM_INT64_NOT_SUPPORTED memory temperature is dropped and
// counted, and the ", UUID=" spacing is accepted as Prometheus accepts it.
TEST(TelemetryCaptures, QuickstartExcerptAsIsIsOneClearError) {
  const std::string name = "dcgm-exporter_README-quickstart-excerpt.txt";
  StatusOr<TelemetryCapture> c = ReadTelemetryCapture(Data(name), name);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kParse);
  EXPECT_EQ(c.status().message(),
            name + ":7: '...' is not a sample: an elided excerpt, not an exporter's /metrics body");
}

TEST(TelemetryCaptures, QuickstartExcerptWithoutElisionsDropsTheSentinel) {
  std::string text = Data("dcgm-exporter_README-quickstart-excerpt.txt");
  std::string kept;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line != "...")
      kept += line + "\n";
  }
  StatusOr<TelemetryCapture> c = ReadTelemetryCapture(kept, "excerpt");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->devices.size(), 1u);
  EXPECT_EQ(c->devices[0].uuid, "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52");
  const TelemetryPoint& p = c->points[0][0];
  EXPECT_DOUBLE_EQ(p.Get(F::kSmClockMhz), 139);
  EXPECT_DOUBLE_EQ(p.Get(F::kMemClockMhz), 405);
  EXPECT_FALSE(p.Has(F::kMemoryTempC));  // 9223372036854775794
  EXPECT_EQ(c->stats.samples, 3);
  EXPECT_EQ(c->stats.sentinels, 1);
  EXPECT_EQ(c->stats.sentinel_metrics, (std::vector<std::string>{"DCGM_FI_DEV_MEMORY_TEMP"}));
}

// AMD's metrics_mini.txt: old upper-case labels GPU_UUID / SERIAL_NUMBER.
TEST(TelemetryCaptures, AmdMetricsMini) {
  TelemetryCapture c = Read("amd-device-metrics-exporter_metrics_mini.prom");
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].vendor, "amd");
  EXPECT_EQ(c.devices[0].uuid, "6699c0a8-4200-4242-037f-f97e6cae0f09");
  const TelemetryPoint& p = c.points[0][0];
  EXPECT_DOUBLE_EQ(p.Get(F::kPowerWatts), 41);  // gpu_power_usage
  EXPECT_DOUBLE_EQ(p.Get(F::kGpuUtil), 0);      // gpu_usage 0 %
  EXPECT_EQ(c.stats.samples, 5);
  // gpu_average_package_power, gpu_nodes_total, gpu_total_memory.
  EXPECT_EQ(c.stats.unknown_metric_samples, 3);
  EXPECT_EQ(c.stats.unknown_metrics,
            (std::vector<std::string>{"gpu_average_package_power", "gpu_nodes_total", "gpu_total_memory"}));
}

}  // namespace
}  // namespace mfu::telemetry_captures_test
