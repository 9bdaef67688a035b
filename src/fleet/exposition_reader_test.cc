// The exposition reader on hand-written bodies: every expected value is the
// one written in the input, scaled by hand (percent / 100).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fleet/telemetry_test_util.h"
#include "mfu/telemetry.h"
#include "testing/telemetry_gen.h"

namespace mfu {
namespace {

using F = TelemetryField;

TelemetryCapture Read(std::string_view text, const TelemetryReadOptions& options = {}) {
  return testing::ReadOk(text, "m.prom", options);
}

std::string ErrorOf(std::string_view text, const TelemetryReadOptions& options = {}) {
  return testing::ReadError(text, "m.prom", options);
}

TEST(ExpositionReader, UntypedSamplesOneDevicePercentScaled) {
  TelemetryCapture c = Read(
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"n1\"} 91\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"0\",UUID=\"GPU-a\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"n1\"} "
      "0.005822\n");
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].uuid, "GPU-a");
  EXPECT_EQ(c.devices[0].vendor, "nvidia");
  EXPECT_EQ(c.devices[0].hostname, "n1");
  ASSERT_EQ(c.points[0].size(), 1u);
  EXPECT_EQ(c.points[0][0].time_ms, 0);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kGpuUtil), 0.91);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kTensorActive), 0.005822);
  EXPECT_FALSE(c.points[0][0].Has(F::kSmClockMhz));
  EXPECT_EQ(c.stats.samples, 2);
  EXPECT_EQ(c.stats.lines, 2);
  EXPECT_EQ(c.stats.devices, 1);
  EXPECT_EQ(c.stats.fields_seen, (std::vector<std::string>{"gpu_util", "tensor_active"}));
}

TEST(ExpositionReader, EscapesSpacesTrailingCommaCrlfAndBlankLines) {
  TelemetryCapture c = Read(
      "# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).\r\n"
      "# TYPE DCGM_FI_DEV_SM_CLOCK gauge\r\n"
      "\r\n"
      "   \n"
      "DCGM_FI_DEV_SM_CLOCK { UUID = \"GPU-\\\"q\\\\b\\nc\" , modelName=\"a\\tb\", } 1980\r\n");
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].uuid, "GPU-\"q\\b\nc");
  EXPECT_EQ(c.devices[0].model_name, "a\\tb");  // an unknown escape is kept as written
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kSmClockMhz), 1980);
  EXPECT_EQ(c.stats.lines, 5);
}

TEST(ExpositionReader, TimestampsMakePointsInTimeOrder) {
  TelemetryCapture c = Read(
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"g\"} 1500 2000\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"g\"} 1400 1000\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"g\"} 0.25 1000\n");
  ASSERT_EQ(c.points.size(), 1u);
  ASSERT_EQ(c.points[0].size(), 2u);
  EXPECT_EQ(c.points[0][0].time_ms, 1000);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kSmClockMhz), 1400);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kTensorActive), 0.25);
  EXPECT_EQ(c.points[0][1].time_ms, 2000);
  EXPECT_DOUBLE_EQ(c.points[0][1].Get(F::kSmClockMhz), 1500);
  EXPECT_FALSE(c.points[0][1].Has(F::kTensorActive));
}

TEST(ExpositionReader, SpecialValuesAndEmptyLabelSet) {
  TelemetryCapture c = Read(
      "DCGM_FI_DEV_SM_CLOCK{} +Inf\n"
      "DCGM_FI_DEV_MEM_CLOCK NaN\n"
      "DCGM_FI_DEV_POWER_USAGE -1.5e2\n");
  ASSERT_EQ(c.devices.size(), 1u);  // no labels at all: one anonymous device
  EXPECT_FALSE(c.points[0][0].Has(F::kSmClockMhz));
  EXPECT_FALSE(c.points[0][0].Has(F::kMemClockMhz));
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kPowerWatts), -150);
  EXPECT_EQ(c.stats.sentinels, 2);  // non-finite values are "no value"
}

TEST(ExpositionReader, MigInstancesAreDevices) {
  TelemetryCapture c = Read(
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"0\",UUID=\"GPU-m\",modelName=\"NVIDIA A100-SXM4-40GB\","
      "GPU_I_PROFILE=\"3g.20gb\",GPU_I_ID=\"1\",Hostname=\"h\"} 0.4\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"0\",UUID=\"GPU-m\",modelName=\"NVIDIA A100-SXM4-40GB\","
      "GPU_I_PROFILE=\"3g.20gb\",GPU_I_ID=\"2\",Hostname=\"h\"} 0.1\n");
  ASSERT_EQ(c.devices.size(), 2u);
  EXPECT_EQ(c.devices[0].mig_profile, "3g.20gb");
  EXPECT_EQ(c.devices[0].mig_instance, "1");
  EXPECT_EQ(c.devices[1].mig_instance, "2");
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kTensorActive), 0.4);
  EXPECT_DOUBLE_EQ(c.points[1][0].Get(F::kTensorActive), 0.1);
}

TEST(ExpositionReader, TimeSlicedPodsAreTwoDevicesWithOneUuid) {
  TelemetryCapture c = Read(
      "DCGM_FI_DEV_GPU_UTIL{UUID=\"GPU-t\",namespace=\"a\",pod=\"p1\",container=\"c\"} 40\n"
      "DCGM_FI_DEV_GPU_UTIL{UUID=\"GPU-t\",namespace=\"a\",pod=\"p2\",container=\"c\"} 40\n");
  ASSERT_EQ(c.devices.size(), 2u);
  EXPECT_EQ(c.devices[0].uuid, c.devices[1].uuid);
  EXPECT_EQ(c.devices[0].pod, "p1");
  EXPECT_EQ(c.devices[1].pod, "p2");
  EXPECT_EQ(c.devices[1].k8s_namespace, "a");
}

TEST(ExpositionReader, Dcgm46NamesAndHpcJob) {
  TelemetryCapture c = Read(
      "DCGM_FI_PROF_TENSOR_UTIL_RATIO{UUID=\"g\",hostname=\"h\",hpc_job=\"4711\"} 0.5\n"
      "DCGM_FI_DEV_GPU_UTIL_RATIO{UUID=\"g\",hostname=\"h\",hpc_job=\"4711\"} 97\n"
      "DCGM_FI_DEV_BOARD_POWER_WATTS{UUID=\"g\",hostname=\"h\",hpc_job=\"4711\"} 612.5\n");
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].hpc_job, "4711");
  EXPECT_EQ(c.devices[0].hostname, "h");
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kTensorActive), 0.5);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kGpuUtil), 0.97);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kPowerWatts), 612.5);
}

TEST(ExpositionReader, AmdLabelsPercentScalingAndClockTypes) {
  TelemetryCapture c = Read(
      "amd_gpu_prof_tensor_active_percent{gpu_id=\"3\",serial_number=\"S1\",card_model=\"AMD Instinct MI300X\","
      "gpu_partition_id=\"0\",hostname=\"m1\",pod=\"p\",namespace=\"ns\",container=\"c\",job_id=\"77\"} 42.5\n"
      "amd_gpu_clock{gpu_id=\"3\",serial_number=\"S1\",card_model=\"AMD Instinct MI300X\",gpu_partition_id=\"0\","
      "hostname=\"m1\",pod=\"p\",namespace=\"ns\",container=\"c\",job_id=\"77\",clock_type=\"GPU_CLOCK_TYPE_MEMORY\"} "
      "1300\n"
      "amd_gpu_clock{gpu_id=\"3\",serial_number=\"S1\",card_model=\"AMD Instinct MI300X\",gpu_partition_id=\"0\","
      "hostname=\"m1\",pod=\"p\",namespace=\"ns\",container=\"c\",job_id=\"77\",clock_type=\"GPU_CLOCK_TYPE_SYSTEM\"} "
      "2100\n");
  ASSERT_EQ(c.devices.size(), 1u);
  const TelemetryDevice& d = c.devices[0];
  EXPECT_EQ(d.vendor, "amd");
  EXPECT_EQ(d.gpu, "3");
  EXPECT_EQ(d.model_name, "AMD Instinct MI300X");
  EXPECT_EQ(d.mig_profile, "0");
  EXPECT_EQ(d.hostname, "m1");
  EXPECT_EQ(d.pod, "p");
  EXPECT_EQ(d.hpc_job, "77");
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kTensorActive), 0.425);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kSmClockMhz), 2100);  // the system clock, not the memory clock
  EXPECT_EQ(c.stats.duplicate_samples, 0);
}

TEST(ExpositionReader, UnknownMetricsAreCountedNotErrors) {
  std::string text;
  for (int i = 0; i < 20; ++i)
    text += "unknown_metric_" + std::to_string(i) + "{UUID=\"g\"} 1\n";
  text += "DCGM_FI_DEV_SM_CLOCK{UUID=\"g\"} 1\n";
  TelemetryCapture c = Read(text);
  EXPECT_EQ(c.stats.unknown_metric_samples, 20);
  EXPECT_EQ(c.stats.unknown_metrics.size(), 16u);  // capped
  EXPECT_EQ(c.stats.unknown_metrics[0], "unknown_metric_0");
  EXPECT_EQ(c.devices.size(), 1u);
}

TEST(ExpositionReader, DuplicateSampleKeepsTheFirst) {
  TelemetryCapture c = Read(
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"g\"} 1000\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"g\"} 2000\n");
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kSmClockMhz), 1000);
  EXPECT_EQ(c.stats.duplicate_samples, 1);
}

TEST(ExpositionReader, SentinelIsDroppedAndNamed) {
  TelemetryCapture c = Read(
      "DCGM_FI_DEV_MEMORY_TEMP{UUID=\"g\"} 9223372036854775794\n"
      "DCGM_FI_DEV_GPU_TEMP{UUID=\"g\"} 140737488355328\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"g\"} 1755\n");
  EXPECT_FALSE(c.points[0][0].Has(F::kMemoryTempC));
  EXPECT_FALSE(c.points[0][0].Has(F::kGpuTempC));
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kSmClockMhz), 1755);
  EXPECT_EQ(c.stats.sentinels, 2);
  EXPECT_EQ(c.stats.sentinel_metrics, (std::vector<std::string>{"DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_GPU_TEMP"}));
  EXPECT_EQ(c.stats.fields_seen, (std::vector<std::string>{"sm_clock_mhz"}));
}

TEST(ExpositionReader, MalformedLinesNameTheLine) {
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_SM_CLOCK{UUID=\"g\"} 1\n\nDCGM_FI_DEV_SM_CLOCK{UUID=\"g} 1\n"),
            "m.prom:3: unterminated value of label UUID");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_SM_CLOCK{UUID=\"g\"}\n"), "m.prom:1: metric DCGM_FI_DEV_SM_CLOCK has no value");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_SM_CLOCK{UUID=\"g\"} abc\n"),
            "m.prom:1: value 'abc' of DCGM_FI_DEV_SM_CLOCK is not a number");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_SM_CLOCK 1 12.5\n"), "m.prom:1: timestamp '12.5' is not an integer of milliseconds");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_SM_CLOCK 1 2 3\n"), "m.prom:1: unexpected '3' after the timestamp");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_SM_CLOCK{UUID \"g\"} 1\n"), "m.prom:1: expected '=' after label UUID");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_SM_CLOCK{UUID=\"g\" x=\"y\"} 1\n"), "m.prom:1: expected ',' or '}' after label UUID");
  EXPECT_EQ(ErrorOf("1abc{UUID=\"g\"} 1\n"), "m.prom:1: expected a metric name, got '1abc{UUID=\"g\"} 1'");
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_SM_CLOCK\"x\" 1\n"),
            "m.prom:1: expected a space after the metric name, got '\"x\" 1'");
  EXPECT_EQ(ErrorOf("x\n...\n"), "m.prom:1: metric x has no value");
}

TEST(ExpositionReader, VeryLongLineIsBounded) {
  std::string text = "DCGM_FI_DEV_SM_CLOCK{UUID=\"" + std::string(70000, 'a') + "\"} 1\n";
  EXPECT_EQ(ErrorOf(text), "m.prom:1: line longer than 65536 bytes");
}

TEST(ExpositionReader, MaxDevicesRefusesMore) {
  TelemetryReadOptions options;
  options.max_devices = 2;
  EXPECT_EQ(ErrorOf("DCGM_FI_DEV_SM_CLOCK{UUID=\"a\"} 1\nDCGM_FI_DEV_SM_CLOCK{UUID=\"b\"} 1\n"
                    "DCGM_FI_DEV_SM_CLOCK{UUID=\"c\"} 1\n",
                    options),
            "m.prom: more than 2 devices (max_devices)");
}

TEST(ExpositionReader, VisitorErrorIsReturnedAsIs) {
  class Refuse : public TelemetryVisitor {
   public:
    Status OnDevice(const TelemetryDevice&, std::span<const TelemetryPoint>) override {
      return InvalidArgumentError("stop");
    }
  } refuse;
  Status s = ReadTelemetry("DCGM_FI_DEV_SM_CLOCK{UUID=\"a\"} 1\n", "m.prom", {}, refuse);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "stop");
}

// The generator's 8 GPUs x 60 fields, read back: values as the generator
// was told (tensor 0.5 -> 0.5, GPU_UTIL 98 % -> 0.98, its defaults), two
// jobs by pod, one device per GPU.
TEST(ExpositionReader, GeneratedEightGpusSixtyFields) {
  testing::ExpositionGenOptions gen;
  gen.gpus = testing::MakeTelemetryGpus(8, 8, 2);
  gen.gpus[3].tensor_active = 0.125;
  gen.gpus[5].overrides["DCGM_FI_DEV_MEMORY_TEMP"] = 9223372036854775794.0;
  const std::string text = testing::GenerateExposition(gen);
  TelemetryCapture c = Read(text);
  ASSERT_EQ(c.devices.size(), 8u);
  EXPECT_EQ(c.stats.samples, 8 * 60);
  EXPECT_EQ(c.stats.lines, 8 * 60 + 2 * 60);  // one HELP and one TYPE per metric
  EXPECT_EQ(c.stats.sentinels, 1);
  EXPECT_EQ(c.devices[0].pod, "train-0-0");
  EXPECT_EQ(c.devices[0].k8s_namespace, "team-0");
  EXPECT_EQ(c.devices[4].k8s_namespace, "team-1");
  EXPECT_EQ(c.devices[3].model_name, "NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(c.points[3][0].Get(F::kTensorActive), 0.125);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kTensorActive), 0.5);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kGpuUtil), 0.98);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kSmClockMhz), 1980);
  EXPECT_FALSE(c.points[5][0].Has(F::kMemoryTempC));
  EXPECT_TRUE(c.points[4][0].Has(F::kMemoryTempC));
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// The fixture generator is deterministic and its labels follow the seed and
// the job split it was asked for.
TEST(TelemetryGen, DeterministicSeededAndHpcJobs) {
  testing::ExpositionGenOptions a;
  a.gpus = testing::MakeTelemetryGpus(4, 2, 2, testing::TelemetryGenJobLabels::kHpcJob, 7);
  a.help_and_type = false;
  a.num_fields = 3;
  a.hostname_label = "hostname";
  a.timestamp_ms = 1700000000000;
  testing::ExpositionGenOptions b = a;
  EXPECT_EQ(testing::GenerateExposition(a), testing::GenerateExposition(b));
  b.gpus = testing::MakeTelemetryGpus(4, 2, 2, testing::TelemetryGenJobLabels::kHpcJob, 8);
  EXPECT_NE(a.gpus[0].uuid, b.gpus[0].uuid);
  TelemetryCapture c = Read(testing::GenerateExposition(a));
  ASSERT_EQ(c.devices.size(), 4u);
  EXPECT_EQ(c.stats.lines, 4 * 3);
  EXPECT_EQ(c.devices[0].hpc_job, "1000");
  EXPECT_EQ(c.devices[3].hpc_job, "1001");
  EXPECT_EQ(c.devices[3].hostname, "node-1");  // the "hostname" spelling after dcgm-exporter #655
  EXPECT_EQ(c.devices[3].gpu, "1");
  EXPECT_EQ(c.devices[3].pod, "");
  EXPECT_EQ(c.points[0][0].time_ms, 1700000000000);
  EXPECT_TRUE(c.devices[0].uuid.starts_with("GPU-"));
  EXPECT_EQ(c.devices[0].uuid.size(), 40u);  // GPU- + 8-4-4-4-12 hex, as NVIDIA's
}

}  // namespace
}  // namespace mfu
