// `mfu fleet analyze` end to end: the real T4 capture (tests/data/telemetry),
// a hand-built Prometheus query_range answer with two Slurm jobs and a
// --jobs file, the CSV tables, and every flag's bad value (one-line error,
// documented exit code). Expected figures are worked out in the comments.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
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
  EXPECT_EQ(j["schema_version"], 3);
  ASSERT_EQ(j["gpus"].size(), 1u);
  const nlohmann::json& g = j["gpus"][0];
  for (const char* key :
       {"uuid", "hostname", "gpu_index", "gpu_model", "gpu", "tensor_active", "sm_clock_mhz", "covered_s",
        "peak_flops_per_s", "estimated_flops_per_s", "estimated_mfu", "estimated_mbu", "throttle_reasons", "findings"})
    EXPECT_TRUE(g.contains(key)) << key;
  EXPECT_EQ(g["uuid"], "GPU-6d5c0ac5-74d7-3130-46f1-e93ed57f469a");
  EXPECT_EQ(g["hostname"], "cp-bm14r7");
  EXPECT_EQ(g["gpu_model"], "Tesla T4");
  EXPECT_EQ(g["gpu"]["id"], "t4-pcie-16gb");
  EXPECT_DOUBLE_EQ(g["tensor_active"].get<double>(), 0.005822);
  EXPECT_DOUBLE_EQ(g["sm_clock_mhz"].get<double>(), 660);
  EXPECT_NEAR(g["estimated_mfu"].get<double>(), 0.0024167, 1e-7);
  EXPECT_NEAR(g["estimated_flops_per_s"].get<double>(), 0.15708e12, 1e7);
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

// --job-log (issue #14): job 501's training log is the torchtitan excerpt
// tests/data/logs/torchtitan_aws-llama3-8b-slurm-ansi.log (aws-samples/
// awsome-distributed-training @7217859f, torchtitan/slurm/README.md L59-67):
// `tps: 6,785  mfu: 39.73%` at step 1990, then a restart at step 1990.
// Llama-3.1-8B at 8192 under torchtitan's own count: 6 x (8,030,261,248 -
// 128,256 x 4,096) + 12 x 32 x 4,096 x 8,192 = 57,914,449,920 FLOPs per
// token; 57,914,449,920 x 6,785 / 989.4e12 (H100 dense BF16, the device the
// telemetry shows: the log names none) = 0.39716; job 501's estimate is 0.6
// (above), so reported / estimated = 0.66193.
const std::string kTitanLog = SourcePath("tests/data/logs/torchtitan_aws-llama3-8b-slurm-ansi.log");

TEST(FleetAnalyzeE2e, JobLogIsTheReportedMfu) {
  const std::string input = WriteTemp("range_log.json", QueryRange());
  const std::string jobs =
      WriteTemp("jobs_log.json", R"({"jobs": [{"id": "501", "model": "llama-3.1-8b", "seq_len": 8192}]})");
  mfu_e2e::Result r = RunMfu({"fleet", "analyze", input, "--jobs", jobs, "--job-log", "501=" + kTitanLog, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["jobs"].size(), 2u);
  const nlohmann::json& job = j["jobs"][0];
  ASSERT_EQ(job["id"], "501");
  const double expected = 57914449920.0 * 6785 / 989.4e12;
  EXPECT_NEAR(job["reported_mfu"].get<double>(), expected, 1e-9);
  EXPECT_NEAR(job["reported_to_estimated"].get<double>(), expected / 0.6, 1e-9);
  EXPECT_EQ(job["reported_source"], "log " + kTitanLog + ": steady state steps 1990-1990, convention palm");
  const nlohmann::json& log = job["reported_log"];
  EXPECT_EQ(log["files"], nlohmann::json::array({kTitanLog}));
  EXPECT_EQ(log["format"], "torchtitan");
  EXPECT_EQ(log["attempts"], 2);
  EXPECT_EQ(log["first_step"], 1990);
  EXPECT_EQ(log["last_step"], 1990);
  EXPECT_EQ(log["convention"], "palm");
  EXPECT_DOUBLE_EQ(log["tokens_per_s_per_gpu"].get<double>(), 6785);
  EXPECT_DOUBLE_EQ(log["logged_mfu"].get<double>(), 0.3973);
  EXPECT_NEAR(log["mfu"].get<double>(), expected, 1e-9);
  EXPECT_EQ(log["gpu"]["id"], "h100-sxm5-80gb");
  EXPECT_EQ(log["gpu"]["name"], "NVIDIA H100 SXM5 80GB");
  EXPECT_EQ(log["model"]["layers"], 32);  // the model object (schema 3; was the name)
  EXPECT_EQ(log["gpu_source"], "telemetry");
  EXPECT_EQ(log["model_source"], "jobs file");
  EXPECT_EQ(log["seq_len"], 8192);
  bool restart = false;
  for (const auto& f : job["findings"])
    restart =
        restart || (f["code"] == "log_restart" && f["message"].get<std::string>().find(":12:") != std::string::npos);
  EXPECT_TRUE(restart) << job["findings"].dump();
  EXPECT_TRUE(j["jobs"][1]["reported_source"].is_null());
  EXPECT_TRUE(j["jobs"][1]["reported_log"].is_null());
  // The text report says where the figure came from.
  mfu_e2e::Result text = RunMfu({"fleet", "analyze", input, "--jobs", jobs, "--job-log", "501=" + kTitanLog});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("reported 501"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("39.7%"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("log_restart"), std::string::npos) << text.out;
  // A --jobs entry with the throughput already: the jobs file's figure is
  // the same job's report, a usage error.
  const std::string tps = WriteTemp(
      "jobs_tps.json", R"({"jobs": [{"id": "501", "model": "llama-3-8b", "tokens_per_sec": 20000, "seq_len": 4096}]})");
  ExpectOneLineError(RunMfu({"fleet", "analyze", input, "--jobs", tps, "--job-log", "501=" + kTitanLog}), 2,
                     "--job-log 501=" + kTitanLog + ": the --jobs entry '501' gives its throughput already");
}

TEST(FleetAnalyzeE2e, JobLogWithoutModelSaysWhichFieldToAdd) {
  const std::string input = WriteTemp("range_log2.json", QueryRange());
  mfu_e2e::Result r = RunMfu({"fleet", "analyze", input, "--job-log", "501=" + kTitanLog, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& job = j["jobs"][0];
  EXPECT_TRUE(job["reported_mfu"].is_null());
  bool missing = false;
  for (const auto& f : job["findings"]) {
    missing = missing || (f["code"] == "log_missing_input" &&
                          f["message"].get<std::string>().find("add model, seq_len") != std::string::npos);
  }
  EXPECT_TRUE(missing) << job["findings"].dump();
}

// The --job-log examples of docs/cli.md's exit-code table, run.
TEST(FleetAnalyzeE2e, JobLogBadInputs) {
  // Job 501 is in the query_range answer: a log of a job the telemetry
  // does not show is checked to exist, not read.
  const std::string input = WriteTemp("range_bad.json", QueryRange());
  const std::string no_steps = WriteTemp("no_steps.log", "starting\nnothing to see\n");
  std::ifstream in(SourcePath("docs/cli.md"));
  const std::string docs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = docs.find("## Exit codes and errors");
  ASSERT_NE(at, std::string::npos);
  const std::string table = docs.substr(at, docs.find("\n## ", at + 1) - at);
  struct Case {
    const char* phrase;  // as docs/cli.md's exit-code table says it
    std::string value;
    int code;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"a `mfu fleet --job-log` file that cannot be read", "501=/nonexistent/train.log", 1,
       "--job-log 501=/nonexistent/train.log: /nonexistent/train.log"},
      {"or holds no training step line", "501=" + no_steps, 1,
       "--job-log 501=" + no_steps + ": " + no_steps + ": no training step lines"},
      {"`--job-log` without `JOB=`", "train.log", 2, "--job-log 'train.log': expected JOB=FILE"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value);
    EXPECT_NE(table.find(c.phrase), std::string::npos) << "not in docs/cli.md's exit-code table: " << c.phrase;
    ExpectOneLineError(RunMfu({"fleet", "analyze", input, "--job-log", c.value}), c.code, c.fragment);
  }
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
