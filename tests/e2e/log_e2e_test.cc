// `mfu log` end to end on the real excerpts of tests/data/logs (origins in
// its README): the recomputed MFU against the figure the log prints, the
// JSON schema docs/logs.md documents, CSV, and every documented exit code.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run_mfu.h"

namespace {

using mfu_e2e::ExpectOneLineError;
using mfu_e2e::Result;
using mfu_e2e::RunMfu;
using mfu_e2e::SourcePath;

std::string Log(const std::string& name) {
  return SourcePath("tests/data/logs/" + name);
}

nlohmann::json Json(const std::vector<std::string>& args) {
  Result r = RunMfu(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0)
    return {};
  return nlohmann::json::parse(r.out);
}

bool HasKind(const nlohmann::json& j, const std::string& kind) {
  for (const auto& f : j["findings"]) {
    if (f["kind"] == kind)
      return true;
  }
  return false;
}

// torchtitan_aws-llama3-8b-slurm-ansi.log (aws-samples/awsome-distributed-
// training @7217859f, torchtitan/slurm/README.md L59-67): `tps: 6,785
// mfu: 39.73%`, Llama-3-8B, 32 H100, seq 8192, BF16. Expected 39.73% within
// 1% (by hand: 5.791e10 FLOPs/token x 6,785 / 989.4e12 = 39.71%).
TEST(LogE2e, TorchtitanAwsExcerptReproducesTheLoggedMfu) {
  nlohmann::json j = Json({"log", Log("torchtitan_aws-llama3-8b-slurm-ansi.log"), "--model", "llama-3-8b", "--gpu",
                           "h100", "--gpus", "32", "--seq-len", "8192", "--json"});
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["format"], "torchtitan");
  ASSERT_FALSE(j["steps"].empty());
  const auto& s0 = j["steps"][0];
  EXPECT_DOUBLE_EQ(s0["tokens_per_s_per_gpu"].get<double>(), 6785);
  EXPECT_NEAR(s0["logged_mfu"].get<double>(), 0.3973, 1e-9);
  EXPECT_NEAR(s0["mfu"].get<double>() / 0.3973, 1, 0.01);
  EXPECT_FALSE(HasKind(j, "logged_mfu_mismatch"));
  EXPECT_FALSE(HasKind(j, "peak_a100_fallback"));
  EXPECT_EQ(j["inputs"]["convention"]["name"], "palm");
  EXPECT_EQ(j["inputs"]["gpu_source"], "flag");
  // The compile + float8 run after the BF16 one: step 1990 again, a restart
  // whose evidence is the line as printed, without its ANSI codes.
  bool restart = false;
  for (const auto& f : j["findings"]) {
    if (f["kind"] != "restart")
      continue;
    restart = true;
    EXPECT_EQ(f["line"], 12);  // rank "1:" is the one kept (its line comes first)
    const std::string evidence = f["evidence"];
    EXPECT_NE(evidence.find("tps: 7,865  mfu: 46.06%"), std::string::npos) << evidence;
    EXPECT_EQ(evidence.find('\x1b'), std::string::npos) << evidence;
  }
  EXPECT_TRUE(restart);
}

TEST(LogE2e, JsonSchemaFields) {
  nlohmann::json j = Json({"log", Log("torchtitan_aurora-xpu-blendcorpus.log"), "--json"});
  ASSERT_FALSE(j.is_null());
  for (const char* key : {"schema_version", "format", "steps", "steady_state", "findings", "inputs", "notes",
                          "throughput_source", "read", "attempts", "origin"})
    EXPECT_TRUE(j.contains(key)) << key;
  ASSERT_FALSE(j["steps"].empty());
  for (const char* key :
       {"step", "time_s", "step_time_s", "tokens_per_s_per_gpu", "logged_flops_per_s_per_gpu", "logged_mfu", "mfu",
        "hfu", "loss", "attempt", "line", "mfu_megatron", "model_flops_per_s_per_gpu"})
    EXPECT_TRUE(j["steps"][0].contains(key)) << key;
  for (const char* key : {"first_step", "last_step", "mfu", "tokens_per_s_per_gpu"})
    EXPECT_TRUE(j["steady_state"].contains(key)) << key;
  // The log's warm-up step 1 (`mfu: 0.47%`, then ~20.8%): a finding.
  EXPECT_TRUE(HasKind(j, "warmup"));
  for (const auto& f : j["findings"]) {
    for (const char* key : {"kind", "step", "line", "message", "evidence"})
      EXPECT_TRUE(f.contains(key)) << key;
  }
  // The header gives world size, seq len and batch; no model or known GPU:
  // MFU stays null and missing_input says what to pass.
  EXPECT_EQ(j["inputs"]["gpus"], 24);
  EXPECT_EQ(j["inputs"]["seq_len"], 4096);
  EXPECT_TRUE(j["inputs"]["model"].is_null());
  EXPECT_TRUE(j["steps"][1]["mfu"].is_null());
  EXPECT_TRUE(HasKind(j, "missing_input"));
  // With a model: the model object of `mfu flops --json` (schema 3; was its name).
  nlohmann::json with =
      Json({"log", Log("torchtitan_aurora-xpu-blendcorpus.log"), "--model", "llama-3.1-8b", "--json"});
  ASSERT_FALSE(with.is_null());
  EXPECT_EQ(with["inputs"]["model"]["name"], "llama-3.1-8b-instruct");
  EXPECT_EQ(with["inputs"]["model"]["layers"], 32);
}

// The aurora excerpt (auroraGPT-ANL/torchtitan @8e5b1c92, docs/aurora.md):
// 6-layer Llama-2-7B dims at s = 4096, `Peak FLOPS used for computing MFU:
// 2.982e+14`, step 2 `tps: 6,697  tflops: 62.15  mfu: 20.84%`. By hand
// (training-logs.md section 5.3): 6 x (1.476e9 - 0.131e9) + 6 x 6 x 32 x 256 x 4096
// = 9.28e9 FLOPs/token, x 6,697 = 62.15 TFLOP/s; 62.15 / 298.2 = 20.84%. The
// Max 1550 is given by a hardware file at the log's own peak.
TEST(LogE2e, TorchtitanAuroraLoggedTflopsAndMfuReproduced) {
  const std::string hw = ::testing::TempDir() + "/max1550.csv";
  std::ofstream(hw) << "id,accelerator,vendor,aliases,bf16_tflops\n"
                       "max-1550,Data Center GPU Max 1550,Intel,Intel(R) Data Center GPU Max 1550,298.2\n";
  nlohmann::json j = Json({"log", Log("torchtitan_aurora-xpu-blendcorpus.log"), "--hardware-file", hw, "--layers", "6",
                           "--hidden", "4096", "--heads", "32", "--vocab", "32000", "--ffn", "11008", "--json"});
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["inputs"]["gpu_source"], "header");
  EXPECT_NEAR(j["inputs"]["model_flops_per_token"].get<double>() / 9.28e9, 1, 0.002);
  const auto& s2 = j["steps"][1];
  ASSERT_EQ(s2["step"], 2);
  EXPECT_NEAR(s2["model_flops_per_s_per_gpu"].get<double>() / 62.15e12, 1, 0.005);
  EXPECT_NEAR(s2["logged_flops_per_s_per_gpu"].get<double>(), 62.15e12, 1e9);  // as printed: "tflops: 62.15"
  EXPECT_NEAR(s2["mfu"].get<double>() / 0.2084, 1, 0.005);
  EXPECT_FALSE(HasKind(j, "logged_mfu_mismatch"));
  EXPECT_FALSE(HasKind(j, "logged_tflops_mismatch"));
  EXPECT_FALSE(HasKind(j, "peak_other"));
}

// hf-transformers_ezpz-fsdp-aurora.log (saforem2/ezpz @1229a179): FSDP on
// 24 XPUs, `total_flos = 4454709GF` and `Number of trainable parameters =
// 51,492,278`; by hand 6 x 973.1e6 x 19,660,800 / 24 = 4.783e15 and
// 1,235,814,400 / 24 = 51,492,267 (training-logs.md section 7.3).
TEST(LogE2e, HfEzpzTotalFlosExplained) {
  nlohmann::json j = Json({"log", Log("hf-transformers_ezpz-fsdp-aurora.log"), "--model", "llama-3.2-1b", "--gpu",
                           "h100", "--seq-len", "8192", "--json"});
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["format"], "hf-trainer");
  EXPECT_EQ(j["inputs"]["gpus"], 24);
  int sharded = 0;
  for (const auto& f : j["findings"]) {
    if (f["kind"] != "sharded_parameters")
      continue;
    ++sharded;
    EXPECT_NE(f["message"].get<std::string>().find("24"), std::string::npos) << f["message"];
  }
  EXPECT_EQ(sharded, 2);
}

TEST(LogE2e, TextShowsSourcesFindingsAndSteps) {
  Result r = RunMfu({"log",
                     Log("nanogpt_rtx4070tis-shakespeare-char.log"),
                     "--layers",
                     "4",
                     "--hidden",
                     "256",
                     "--heads",
                     "4",
                     "--vocab",
                     "65",
                     "--mlp",
                     "plain",
                     "--norm",
                     "layernorm",
                     "--bias",
                     "--position-embeddings",
                     "256",
                     "--tied",
                     "--seq-len",
                     "256",
                     "--global-batch",
                     "2560",
                     "--gpus",
                     "1",
                     "--gpu",
                     "a100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Findings"), std::string::npos);
  EXPECT_NE(r.out.find("Steps"), std::string::npos);
  EXPECT_NE(r.out.find("evenly sampled"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(flag)"), std::string::npos);
  // eval every 50 iterations folded into the next iter line.
  EXPECT_NE(r.out.find("spike"), std::string::npos) << r.out;
}

TEST(LogE2e, CsvFilesWritten) {
  const std::string dir = ::testing::TempDir() + "/log_csv";
  Result r = RunMfu({"log", Log("maxtext_understand-logs-v5p.log"), "--gpu", "v5p", "--csv", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream steps(dir + "/steps.csv"), findings(dir + "/findings.csv");
  std::stringstream s, f;
  s << steps.rdbuf();
  f << findings.rdbuf();
  EXPECT_EQ(s.str().rfind("step,line,attempt,", 0), 0u);
  EXPECT_EQ(f.str().rfind("kind,step,line,origin,message,evidence\n", 0), 0u);
  // Step 1 at 2400 TFLOP/s/device on a 459 TFLOP/s v5p (the excerpt).
  EXPECT_NE(f.str().find("tflops_above_peak"), std::string::npos) << f.str();
}

TEST(LogE2e, SeveralFilesAreAttemptsOfOneJob) {
  const std::string log = Log("torchtitan_aurora-xpu-blendcorpus.log");
  nlohmann::json one = Json({"log", log, "--json"});
  nlohmann::json two = Json({"log", log, log, "--json"});
  ASSERT_FALSE(one.is_null() || two.is_null());
  EXPECT_EQ(two["steps"].size(), 2 * one["steps"].size());
  EXPECT_EQ(two["attempts"].get<int>(), 2 * one["attempts"].get<int>());
  EXPECT_TRUE(HasKind(two, "restart"));
}

TEST(LogE2e, ExitCodes) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/empty.log") << "";
  std::ofstream(dir + "/nosteps.log") << "hello\nthis is not a training log\n";
  ExpectOneLineError(RunMfu({"log", dir + "/no_such.log"}), 1, "no_such.log");
  ExpectOneLineError(RunMfu({"log", dir + "/empty.log"}), 1, "empty.log");
  ExpectOneLineError(RunMfu({"log", dir + "/nosteps.log"}), 1, "nosteps.log");
  const std::string log = Log("torchtitan_aws-llama3-8b-slurm-ansi.log");
  ExpectOneLineError(RunMfu({"log", log, "--bogus"}), 2, "--bogus");
  ExpectOneLineError(RunMfu({"log", log, "--format", "nope"}), 2, "--format");
  ExpectOneLineError(RunMfu({"log", log, "--gpu", "h1000"}), 2, "h1000");
  ExpectOneLineError(RunMfu({"log", log, "--convention", "nope"}), 2, "--convention");
  ExpectOneLineError(RunMfu({"log", log, "--tolerance", "0"}), 2, "--tolerance");
  ExpectOneLineError(RunMfu({"log", log, "--gpus", "0"}), 2, "--gpus");
  ExpectOneLineError(RunMfu({"log"}), 2, "FILE");
  // Forcing a format the file is not: no step lines of it (data, exit 1).
  ExpectOneLineError(RunMfu({"log", log, "--format", "maxtext"}), 1, "step");
}

}  // namespace
