// `mfu fleet analyze` end to end: the real T4 capture (tests/data/telemetry),
// a hand-built Prometheus query_range answer with two Slurm jobs and a
// --jobs file, the CSV tables, and every flag's bad value (one-line error,
// documented exit code). Expected figures are worked out in the comments.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run_mfu.h"

namespace {

using mfu_e2e::ExpectOneLineError;
using mfu_e2e::RunMfu;
using mfu_e2e::SourcePath;

const std::string kT4 = SourcePath("tests/data/telemetry/dcgm-exporter_T4_loaded_k8s.prom");

std::string WriteTemp(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + "/fleet_e2e_" + name;
  std::ofstream(path) << content;
  return path;
}

// One series of a query_range answer: an H100 of Slurm job `job`.
std::string Series(const std::string& metric, const std::string& uuid, const std::string& gpu, const std::string& job,
                   const std::string& values) {
  return R"({"metric":{"__name__":")" + metric + R"(","UUID":")" + uuid + R"(","gpu":")" + gpu +
         R"(","modelName":"NVIDIA H100 80GB HBM3","Hostname":"node-1","hpc_job":")" + job +
         R"(","instance":"node-1:9400","job":"dcgm"},"values":[)" + values + "]}";
}

// Job 501: GPU 0 at activity 0.5 then 0.7 (SM clock 1,980 = boost), GPU 1 at
// 0.6 and 0.6. Each point stands for 30 s (the last for the median step),
// so GPU 0's MFU is (0.5 + 0.7) / 2 = 0.6 and GPU 1's 0.6: job 501 at 0.6.
// Job 502: GPU 2 at 0.2 and 0.2 at 1,485 MHz: 0.2 x 1485 / 1980 = 0.15.
// Fleet: (0.6 + 0.6 + 0.15) / 3 = 0.45 over 3 x 60 s = 0.05 GPU-hours.
std::string QueryRange() {
  auto pair = [](const char* a, const char* b) {
    return std::string(R"([1700000000,")") + a + R"("],[1700000030,")" + b + R"("])";
  };
  std::vector<std::string> series = {
      Series("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "GPU-aaaa", "0", "501", pair("0.5", "0.7")),
      Series("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "GPU-bbbb", "1", "501", pair("0.6", "0.6")),
      Series("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "GPU-cccc", "2", "502", pair("0.2", "0.2")),
      Series("DCGM_FI_DEV_SM_CLOCK", "GPU-aaaa", "0", "501", pair("1980", "1980")),
      Series("DCGM_FI_DEV_SM_CLOCK", "GPU-bbbb", "1", "501", pair("1980", "1980")),
      Series("DCGM_FI_DEV_SM_CLOCK", "GPU-cccc", "2", "502", pair("1485", "1485")),
  };
  std::string result;
  for (const std::string& s : series)
    result += (result.empty() ? "" : ",") + s;
  return R"({"status":"success","data":{"resultType":"matrix","result":[)" + result + "]}}";
}

TEST(FleetAnalyzeE2e, T4CaptureSaysBusyButTensorPipesIdle) {
  mfu_e2e::Result r = RunMfu({"fleet", "analyze", kT4});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU_UTIL 91% but tensor pipes 0.6% busy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unsupported_precision"), std::string::npos);  // T4 has no bf16 peak
}

// T4 at fp16: 65 TFLOP/s dense, boost 1,590 MHz; activity 0.005822 at 660 MHz:
// MFU 0.005822 x 660 / 1590 = 0.0024167; 0.0024167 x 65 = 0.15708 TFLOP/s.
TEST(FleetAnalyzeE2e, JsonSchema) {
  mfu_e2e::Result r = RunMfu({"fleet", "analyze", kT4, "--precision", "fp16", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_EQ(j["gpus"].size(), 1u);
  const nlohmann::json& g = j["gpus"][0];
  for (const char* key : {"uuid", "hostname", "gpu_model", "accelerator", "tensor_active", "sm_clock_mhz",
                          "estimated_tflops", "estimated_mfu", "estimated_mbu", "throttle_reasons", "findings"})
    EXPECT_TRUE(g.contains(key)) << key;
  EXPECT_EQ(g["uuid"], "GPU-6d5c0ac5-74d7-3130-46f1-e93ed57f469a");
  EXPECT_EQ(g["hostname"], "cp-bm14r7");
  EXPECT_EQ(g["gpu_model"], "Tesla T4");
  EXPECT_EQ(g["accelerator"], "t4-pcie-16gb");
  EXPECT_DOUBLE_EQ(g["tensor_active"].get<double>(), 0.005822);
  EXPECT_DOUBLE_EQ(g["sm_clock_mhz"].get<double>(), 660);
  EXPECT_NEAR(g["estimated_mfu"].get<double>(), 0.0024167, 1e-7);
  EXPECT_NEAR(g["estimated_tflops"].get<double>(), 0.15708, 1e-5);
  EXPECT_DOUBLE_EQ(g["estimated_mbu"].get<double>(), 0.092781);
  EXPECT_TRUE(j["jobs"].is_array());
  EXPECT_EQ(j["fleet"]["gpus"], 1);
  for (const char* band : {"idle", "below_30", "30_to_60", "above_60"})
    EXPECT_TRUE(j["fleet"]["gpu_hours_by_band"].contains(band)) << band;
  EXPECT_TRUE(j["notes"].is_array());
}

TEST(FleetAnalyzeE2e, QueryRangeJobsAndReportedMfu) {
  const std::string input = WriteTemp("range.json", QueryRange());
  const std::string jobs = WriteTemp(
      "jobs.json", R"({"jobs": [{"id": "501", "model": "llama-3-8b", "tokens_per_sec": 20000, "seq_len": 4096}]})");
  const std::string csv = ::testing::TempDir() + "/fleet_e2e_csv";
  mfu_e2e::Result r = RunMfu({"fleet", "analyze", input, "--jobs", jobs, "--json", "--csv", csv});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["jobs"].size(), 2u);
  EXPECT_EQ(j["jobs"][0]["id"], "501");
  EXPECT_EQ(j["jobs"][0]["gpus"], 2);
  EXPECT_NEAR(j["jobs"][0]["estimated_mfu"].get<double>(), 0.6, 1e-9);
  EXPECT_TRUE(j["jobs"][0]["reported_mfu"].is_number());
  EXPECT_TRUE(j["jobs"][1]["reported_mfu"].is_null());
  EXPECT_NEAR(j["jobs"][1]["estimated_mfu"].get<double>(), 0.15, 1e-9);
  EXPECT_NEAR(j["fleet"]["estimated_mfu"].get<double>(), 0.45, 1e-9);
  EXPECT_NEAR(j["fleet"]["gpu_hours"].get<double>(), 0.05, 1e-12);
  EXPECT_EQ(j["fleet"]["gpus"], 3);
  for (const char* name : {"gpus.csv", "jobs.csv", "nodes.csv"})
    EXPECT_TRUE(std::filesystem::exists(csv + "/" + name)) << name;
  std::ifstream jobs_csv(csv + "/jobs.csv");
  std::string header;
  std::getline(jobs_csv, header);
  EXPECT_EQ(header.rfind("id,source,gpus,estimated_mfu,", 0), 0u) << header;
}

TEST(FleetAnalyzeE2e, BadValuesAreOneLineErrors) {
  const std::string garbage = WriteTemp("garbage.prom", "this is { not telemetry\n");
  const std::string bad_jobs = WriteTemp("bad_jobs.json", R"({"jobs": [{"id": "a"}]})");
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {{"fleet", "analyze"}, 2, "missing input"},
      {{"fleet", "analyze", kT4, "--precision", "fp7"}, 2, "--precision"},
      {{"fleet", "analyze", kT4, "--interval", "0"}, 2, "--interval must be"},
      {{"fleet", "analyze", kT4, "--now", "-5"}, 2, "--now must be"},
      {{"fleet", "analyze", kT4, "--stale-after", "soon"}, 2, "--stale-after must be"},
      {{"fleet", "analyze", kT4, "--csv", ""}, 2, "--csv"},
      {{"fleet", "analyze", kT4, "--jobs", "/nonexistent/jobs.json"}, 1, "/nonexistent/jobs.json"},
      {{"fleet", "analyze", kT4, "--jobs", bad_jobs}, 1, "jobs[0]: missing 'model'"},
      {{"fleet", "analyze", kT4, "--hpc-job-mapping-dir", "/nonexistent-map"}, 1, "/nonexistent-map"},
      {{"fleet", "analyze", kT4, "--hardware-file", "/nonexistent.csv"}, 1, "/nonexistent.csv"},
      {{"fleet", "analyze", "/nonexistent.prom"}, 1, "/nonexistent.prom"},
      {{"fleet", "analyze", garbage}, 1, garbage},
      {{"fleet", "analyze", "http://127.0.0.1:1/metrics"}, 1, "http://127.0.0.1:1/metrics"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args.back());
    ExpectOneLineError(RunMfu(c.args), c.code, c.fragment);
  }
}

}  // namespace
