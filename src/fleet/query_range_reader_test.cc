// The query_range reader on hand-built Prometheus answers: the values are
// written by a formula in the test and checked against the same formula.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "fleet/telemetry_test_util.h"
#include "mfu/telemetry.h"
#include "testing/telemetry_gen.h"

// Helpers in their own namespace: the unity build compiles this file with
// its target's other tests.
namespace mfu::query_range_reader_test {
namespace {

using F = TelemetryField;

TelemetryCapture Read(std::string_view text, const TelemetryReadOptions& options = {}) {
  return testing::ReadOk(text, "q.json", options);
}

std::string ErrorOf(std::string_view text, const TelemetryReadOptions& options = {}) {
  return testing::ReadError(text, "q.json", options);
}

std::string Wrap(const std::string& result, const std::string& type = "matrix") {
  return R"({"status":"success","data":{"resultType":")" + type + R"(","result":[)" + result + "]}}";
}

std::string Series(const std::string& name, const std::string& uuid, const std::string& values) {
  return R"({"metric":{"__name__":")" + name + R"(","UUID":")" + uuid +
         R"(","Hostname":"h","instance":"h:9400","job":"dcgm"},"values":[)" + values + "]}";
}

double Tensor(int d, int s) {
  return 0.1 * (d + 1) + 0.01 * s;
}
double Clock(int d, int s) {
  return 1000 + 100 * d + s;
}

// 3 devices x 2 fields x 5 steps of 30 s, series ordered by name as
// Prometheus returns them (all SM_CLOCK series, then all TENSOR series).
std::string Matrix() {
  std::string result;
  for (int field = 0; field < 2; ++field) {
    for (int d = 0; d < 3; ++d) {
      std::string values;
      for (int s = 0; s < 5; ++s) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s[%d,\"%.17g\"]", s ? "," : "", 1700000000 + 30 * s,
                      field == 0 ? Clock(d, s) : Tensor(d, s));
        values += buf;
      }
      if (!result.empty())
        result += ",";
      result += Series(field == 0 ? "DCGM_FI_DEV_SM_CLOCK" : "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                       "GPU-" + std::to_string(d), values);
    }
  }
  return Wrap(result);
}

TEST(QueryRangeReader, MatrixThreeDevicesTwoFieldsFiveSteps) {
  TelemetryCapture c = Read(Matrix());
  ASSERT_EQ(c.devices.size(), 3u);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(c.devices[static_cast<size_t>(d)].uuid, "GPU-" + std::to_string(d));
    EXPECT_EQ(c.devices[static_cast<size_t>(d)].hostname, "h");
    const std::vector<TelemetryPoint>& p = c.points[static_cast<size_t>(d)];
    ASSERT_EQ(p.size(), 5u);
    for (int s = 0; s < 5; ++s) {
      EXPECT_EQ(p[static_cast<size_t>(s)].time_ms, (1700000000LL + 30 * s) * 1000);
      EXPECT_DOUBLE_EQ(p[static_cast<size_t>(s)].Get(F::kSmClockMhz), Clock(d, s));
      EXPECT_DOUBLE_EQ(p[static_cast<size_t>(s)].Get(F::kTensorActive), Tensor(d, s));
    }
  }
  EXPECT_EQ(c.stats.samples, 30);
  EXPECT_EQ(c.stats.series, 6);
  EXPECT_EQ(c.stats.devices, 3);
  EXPECT_EQ(c.stats.lines, 0);
}

TEST(QueryRangeReader, MisalignedSeriesMergeByTime) {
  const std::string text = Wrap(Series("DCGM_FI_DEV_SM_CLOCK", "g", R"([10,"1"],[20.5,"2"])") + "," +
                                Series("DCGM_FI_DEV_GPU_UTIL", "g", R"([20.5,"50"],[30,"60"])"));
  TelemetryCapture c = Read(text);
  ASSERT_EQ(c.points[0].size(), 3u);
  EXPECT_EQ(c.points[0][0].time_ms, 10000);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kSmClockMhz), 1);
  EXPECT_FALSE(c.points[0][0].Has(F::kGpuUtil));
  EXPECT_EQ(c.points[0][1].time_ms, 20500);
  EXPECT_DOUBLE_EQ(c.points[0][1].Get(F::kSmClockMhz), 2);
  EXPECT_DOUBLE_EQ(c.points[0][1].Get(F::kGpuUtil), 0.5);
  EXPECT_EQ(c.points[0][2].time_ms, 30000);
  EXPECT_DOUBLE_EQ(c.points[0][2].Get(F::kGpuUtil), 0.6);
}

TEST(QueryRangeReader, PrettyPrintedAndOtherSpellings) {
  // Whitespace everywhere, a negative time, an exponent time, more than 3
  // decimals (rounded to ms), a value with a leading '+'.
  const std::string text =
      "{ \"status\" : \"success\" , \"data\" : { \"resultType\" : \"matrix\" ,\n"
      "  \"result\" : [ { \"metric\" : { \"__name__\" : \"DCGM_FI_DEV_SM_CLOCK\" } ,\n"
      "    \"values\" : [ [ -1 , \"1\" ] ,\n [ 1.5e1 , \"+2\" ] , [15.0006,\"3\"] ] } ] } }\n";
  TelemetryCapture c = Read(text);
  ASSERT_EQ(c.points.size(), 1u);
  ASSERT_EQ(c.points[0].size(), 3u);
  EXPECT_EQ(c.points[0][0].time_ms, -1000);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kSmClockMhz), 1);
  EXPECT_EQ(c.points[0][1].time_ms, 15000);
  EXPECT_DOUBLE_EQ(c.points[0][1].Get(F::kSmClockMhz), 2);
  EXPECT_EQ(c.points[0][2].time_ms, 15001);
  EXPECT_DOUBLE_EQ(c.points[0][2].Get(F::kSmClockMhz), 3);
}

TEST(QueryRangeReader, VectorAnswer) {
  const std::string text = Wrap(
      R"({"metric":{"__name__":"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE","UUID":"g","pod":"p"},"value":[1700000000.25,"0.75"]})",
      "vector");
  TelemetryCapture c = Read(text);
  ASSERT_EQ(c.points.size(), 1u);
  ASSERT_EQ(c.points[0].size(), 1u);
  EXPECT_EQ(c.points[0][0].time_ms, 1700000000250);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kTensorActive), 0.75);
  EXPECT_EQ(c.devices[0].pod, "p");
}

TEST(QueryRangeReader, KeysInAnyOrderUnknownKeysAndEscapes) {
  const std::string text =
      R"( {"data":{"result":[{"values":[[1,"NaN"],[2,"+Inf"],[3,"1e3"]],"metric":{"UUID":"G\u00e9\"x","__name__":"DCGM_FI_DEV_SM_CLOCK"}}],)"
      R"("resultType":"matrix","stats":{"a":[1,{"b":"]"}]}},"warnings":["x"],"status":"success"} )";
  TelemetryCapture c = Read(text);
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].uuid, "G\xc3\xa9\"x");
  ASSERT_EQ(c.points[0].size(), 3u);
  EXPECT_FALSE(c.points[0][0].Has(F::kSmClockMhz));
  EXPECT_FALSE(c.points[0][1].Has(F::kSmClockMhz));
  EXPECT_DOUBLE_EQ(c.points[0][2].Get(F::kSmClockMhz), 1000);
  EXPECT_EQ(c.stats.sentinels, 2);
}

TEST(QueryRangeReader, ErrorAnswer) {
  EXPECT_EQ(ErrorOf(R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"query\""})"),
            "q.json: status: prometheus answered error (bad_data): invalid parameter \"query\"");
  EXPECT_EQ(ErrorOf(R"({"status":"success","data":{"resultType":"scalar","result":[1,"2"]}})"),
            "q.json: data.result[0]: expected an object");
  EXPECT_EQ(ErrorOf(R"({"status":"success","data":{"resultType":"string","result":[]}})"),
            "q.json: data.resultType: 'string' is not a series answer (want matrix or vector)");
  EXPECT_EQ(ErrorOf(R"({"status":"success"})"), "q.json: data: missing");
}

TEST(QueryRangeReader, TruncatedJson) {
  const std::string full = Matrix();
  for (size_t cut : {size_t{1}, size_t{30}, full.size() / 2, full.size() - 3, full.size() - 1}) {
    StatusOr<TelemetryCapture> c = ReadTelemetryCapture(full.substr(0, cut), "q.json");
    ASSERT_FALSE(c.ok()) << cut;
    EXPECT_EQ(c.status().code(), StatusCode::kParse) << cut;
    EXPECT_TRUE(c.status().message().starts_with("q.json: ")) << c.status().message();
  }
}

TEST(QueryRangeReader, BadElementsNameTheirPath) {
  EXPECT_EQ(ErrorOf(Wrap(Series("DCGM_FI_DEV_SM_CLOCK", "g", R"([1,"1"],[2,2])"))),
            "q.json: data.result[0].values[1]: expected a [time, \"value\"] pair");
  EXPECT_EQ(ErrorOf(Wrap(Series("DCGM_FI_DEV_SM_CLOCK", "g", R"([1,"x1"])"))),
            "q.json: data.result[0].values[0]: value \"x1\" is not a number");
  EXPECT_EQ(ErrorOf(Wrap(Series("DCGM_FI_DEV_SM_CLOCK", "g", R"([2,"1"],[1,"1"])"))),
            "q.json: data.result[0].values[1]: times do not increase");
  EXPECT_EQ(ErrorOf(Wrap(Series("DCGM_FI_DEV_SM_CLOCK", "g", R"([true,"1"])"))),
            "q.json: data.result[0].values[0]: time 'true' is not a number of seconds");
}

TEST(QueryRangeReader, HugeNumbers) {
  const std::string text =
      Wrap(Series("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "g", R"([1,"15152422938"],[2,"1e400"],[3,"-1e400"])") + "," +
           Series("DCGM_FI_DEV_MEMORY_TEMP", "g", R"([1,"9223372036854775794"],[2,"1e-400"],[3,"45"])"));
  TelemetryCapture c = Read(text);
  ASSERT_EQ(c.points[0].size(), 3u);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kEnergyMillijoules), 15152422938.0);
  EXPECT_FALSE(c.points[0][0].Has(F::kMemoryTempC));         // DCGM_INT64_NOT_SUPPORTED
  EXPECT_FALSE(c.points[0][1].Has(F::kEnergyMillijoules));   // overflow -> +Inf -> no value
  EXPECT_DOUBLE_EQ(c.points[0][1].Get(F::kMemoryTempC), 0);  // underflow -> 0
  EXPECT_EQ(c.stats.sentinels, 3);
  EXPECT_EQ(c.stats.sentinel_metrics,
            (std::vector<std::string>{"DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"}));
}

TEST(QueryRangeReader, DuplicateSeriesFirstWins) {
  // One GPU scraped under two Prometheus jobs: same device labels.
  const std::string text = Wrap(Series("DCGM_FI_DEV_SM_CLOCK", "g", R"([1,"1000"],[2,"1001"])") + "," +
                                Series("DCGM_FI_DEV_SM_CLOCK", "g", R"([1,"2000"],[2,"2001"])"));
  TelemetryCapture c = Read(text);
  ASSERT_EQ(c.devices.size(), 1u);
  ASSERT_EQ(c.points[0].size(), 2u);
  EXPECT_DOUBLE_EQ(c.points[0][0].Get(F::kSmClockMhz), 1000);
  EXPECT_DOUBLE_EQ(c.points[0][1].Get(F::kSmClockMhz), 1001);
  EXPECT_EQ(c.stats.duplicate_samples, 2);
}

TEST(QueryRangeReader, UnknownSeriesCountedWithoutParsing) {
  const std::string text =
      Wrap(Series("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "g", R"([1,"0"],[2,"0"],[3,"0"])") + "," +
           R"({"metric":{"UUID":"g"},"values":[[1,"5"]]})" + "," + Series("DCGM_FI_DEV_SM_CLOCK", "g", R"([1,"7"])"));
  TelemetryCapture c = Read(text);
  EXPECT_EQ(c.stats.unknown_metric_samples, 4);
  EXPECT_EQ(c.stats.unknown_metrics, (std::vector<std::string>{"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "(no __name__)"}));
  EXPECT_EQ(c.stats.samples, 5);
  ASSERT_EQ(c.devices.size(), 1u);
}

TEST(QueryRangeReader, MaxDevices) {
  TelemetryReadOptions options;
  options.max_devices = 2;
  EXPECT_EQ(ErrorOf(Matrix(), options), "q.json: more than 2 devices (max_devices)");
}

TEST(QueryRangeReader, EmptyResult) {
  TelemetryCapture c = Read(Wrap(""));
  EXPECT_TRUE(c.devices.empty());
}

// The generator's range answer (4 GPUs, 2 fields, 11 steps), read back with
// the values it was given: step s of GPU g has tensor 0.01 * (g + s).
TEST(QueryRangeReader, GeneratedRangeReadsBack) {
  testing::QueryRangeGenOptions gen;
  gen.gpus = testing::MakeTelemetryGpus(4, 2, 2, testing::TelemetryGenJobLabels::kHpcJob);
  gen.fields = {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_DEV_SM_CLOCK"};
  gen.duration_s = 300;
  gen.step_s = 30;
  gen.value = [](size_t g, int64_t s, std::string_view metric) {
    return metric == "DCGM_FI_DEV_SM_CLOCK" ? 1980.0 : 0.01 * static_cast<double>(static_cast<int64_t>(g) + s);
  };
  TelemetryCapture c = Read(testing::GenerateQueryRange(gen));
  ASSERT_EQ(c.devices.size(), 4u);
  EXPECT_EQ(c.devices[2].hpc_job, "1001");
  EXPECT_EQ(c.devices[2].hostname, "node-1");
  ASSERT_EQ(c.points[3].size(), 11u);
  EXPECT_DOUBLE_EQ(c.points[3][10].Get(F::kTensorActive), 0.13);
  EXPECT_DOUBLE_EQ(c.points[3][10].Get(F::kSmClockMhz), 1980);
  EXPECT_EQ(c.points[3][10].time_ms, 1700000300000);
  EXPECT_EQ(c.stats.samples, 4 * 2 * 11);
}

}  // namespace
}  // namespace mfu::query_range_reader_test
