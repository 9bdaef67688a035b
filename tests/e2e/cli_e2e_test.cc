// End-to-end tests of the mfu binary: exit codes (0 ok, 1 data error, 2 usage
// error), one-line stderr messages naming the flag/file and field, JSON fields
// scripts rely on, and --help.

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run_mfu.h"

namespace {

using mfu_e2e::ExpectOneLineError;
using mfu_e2e::Result;
using mfu_e2e::RunMfu;

std::string SourcePath(const std::string& rel) {
  return std::string(MFU_SOURCE_DIR) + "/" + rel;
}

TEST(Cli, FlopsJsonFields) {
  Result r = RunMfu({"flops", "--model", "llama-3.1-8b", "--seq-len", "8192", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 3);
  EXPECT_EQ(j["params"]["total"], 8030261248.0);  // model-configs/README.md
  EXPECT_EQ(j["params"]["active"], 8030261248.0);
  EXPECT_NEAR(j["flops_per_token"]["training"].get<double>() / 5.147040e10, 1.0, 1e-6);  // flops-reference.csv
  EXPECT_EQ(j["convention"]["name"], "megatron");
}

TEST(Cli, FlopsTextStatesConvention) {
  Result r = RunMfu({"flops", "--model", "llama-3.1-8b", "--seq-len", "8192", "--convention", "all"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("convention  megatron"), std::string::npos);
  for (const char* name : {"palm", "kaplan", "exact", "hf", "maxtext", "llm-foundry"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  }
}

TEST(Cli, CalcJsonFields) {
  Result r = RunMfu({"calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--seq-len", "8192",
                     "--tokens-per-sec-per-gpu", "6667", "--convention", "palm", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["mfu"].get<double>(), 0.39, 0.005);  // torchtitan: 39% MFU
  EXPECT_DOUBLE_EQ(j["hfu"].get<double>(), j["mfu"].get<double>());
  EXPECT_NEAR(j["utilization"]["model_flops_per_s"].get<double>(), 0.39 * 989.4e12, 5e12);
  EXPECT_DOUBLE_EQ(j["utilization"]["peak_flops_per_s"].get<double>(), 989.4e12);
  EXPECT_EQ(j["convention"]["name"], "palm");
  EXPECT_EQ(j["gpu"]["id"], "h100-sxm5-80gb");
  EXPECT_EQ(j["gpus"], 8);
}

TEST(Cli, CalcTextShowsPeakConventionAndBand) {
  Result r = RunMfu({"calc", "--model", "llama-3.1-8b", "--gpu", "NVIDIA H100 80GB HBM3", "--gpus", "8", "--seq-len",
                     "8192", "--tokens-per-sec", "46k"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dense bf16 peak 989.4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("megatron"), std::string::npos);
  EXPECT_NE(r.out.find("typical 30-60% band"), std::string::npos) << r.out;
}

TEST(Cli, HwShowJson) {
  Result r = RunMfu({"hw", "show", "h100", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 3);
  EXPECT_DOUBLE_EQ(j["peak_flops_per_s"]["bf16"].get<double>(), 989.4e12);  // datasheet 1979 sparse / 2
}

TEST(Cli, MemoryAndModels) {
  Result m = RunMfu({"memory", "--model", "llama-3.1-8b", "--json"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  auto j = nlohmann::json::parse(m.out);
  EXPECT_EQ(j["kv_cache"]["bytes_per_token"], 131072);
  Result l = RunMfu({"models"});
  ASSERT_EQ(l.exit_code, 0) << l.err;
  EXPECT_NE(l.out.find("deepseek-v3"), std::string::npos);
}

// mfu memory --framework counts the framework row's stored dtypes, as predict does.
TEST(Cli, MemoryFramework) {
  Result m = RunMfu({"memory", "--model", "llama-3.1-8b", "--framework", "torchtitan", "--json"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  auto j = nlohmann::json::parse(m.out);
  EXPECT_EQ(j["training"]["state"], "torchtitan");
  EXPECT_EQ(j["training"]["state_bytes_per_param"], 16.0);  // fp32 shards 4 + fp32 grads 4 + two moments 8
  ExpectOneLineError(RunMfu({"memory", "--model", "llama-3.1-8b", "--framework", "vllm"}), 2, "--framework");
  ExpectOneLineError(RunMfu({"memory", "--model", "llama-3.1-8b", "--state", "torchtitn"}), 2,
                     "did you mean 'torchtitan'");
}

TEST(Cli, HelpAndVersion) {
  Result top = RunMfu({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("flops"), std::string::npos);
  Result a = RunMfu({"flops", "--help"});
  Result b = RunMfu({"help", "flops"});
  EXPECT_EQ(a.exit_code, 0);
  EXPECT_EQ(b.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("--convention"), std::string::npos);
  EXPECT_EQ(RunMfu({"--version"}).exit_code, 0);
}

// mfu trace on the 8-rank DLRM set (param, MIT): with --hta-compat the JSON
// reproduces HTA's get_temporal_breakdown (hta-reference-outputs.md section 3:
// rank 0 idle 6419, compute 1034, non-compute 5556, kernel time 13009 us;
// overlap 4.50%) and its stragglers [2, 7].
TEST(CliTrace, HtaCompatJsonFields) {
  Result r = RunMfu({"trace", SourcePath("tests/data/traces/dlrm_kineto"), "--hta-compat", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 3);
  ASSERT_EQ(j["ranks"].size(), 8u);
  const auto& rank0 = j["ranks"][0];
  EXPECT_EQ(rank0["rank"], 0);
  EXPECT_EQ(rank0["temporal"]["idle_ns"].get<int64_t>(), 6'419'000);
  EXPECT_EQ(rank0["temporal"]["compute_ns"].get<int64_t>(), 1'034'000);
  EXPECT_EQ(rank0["temporal"]["non_compute_ns"].get<int64_t>(), 5'556'000);
  EXPECT_EQ(rank0["temporal"]["span_ns"].get<int64_t>(), 13'009'000);
  EXPECT_NEAR(rank0["overlap_pct"].get<double>(), 4.50, 0.005);
  EXPECT_TRUE(rank0["steps"].is_array());
  EXPECT_EQ(j["collectives"]["hta_stragglers"], nlohmann::json::array({2, 7}));
}

TEST(CliTrace, WaterfallSumsToStepTime) {
  Result r = RunMfu(
      {"trace", SourcePath("tests/data/traces/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json.gz"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& w = j["ranks"][0]["waterfall"];
  int64_t sum = 0;
  for (const auto& [name, ns] : w["buckets_ns"].items())
    sum += ns.get<int64_t>();
  EXPECT_EQ(sum, w["step_ns"].get<int64_t>());  // integer ns, exactly
  EXPECT_NEAR(w["mfu_hw"].get<double>(),
              w["compute_share"].get<double>() * w["matrix_share"].get<double>() * w["matrix_efficiency"].get<double>(),
              1e-12);
}

// Rows of a CSV file written by mfu (fields without embedded commas; quotes
// stripped).
std::vector<std::vector<std::string>> ReadCsvRows(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    std::vector<std::string> fields;
    size_t start = 0;
    while (true) {
      const size_t comma = line.find(',', start);
      std::string field = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (field.size() >= 2 && field.front() == '"' && field.back() == '"')
        field = field.substr(1, field.size() - 2);
      fields.push_back(field);
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    rows.push_back(fields);
  }
  return rows;
}

// --csv: per-step waterfalls and host phases equal the JSON's, to full
// precision (a 3-step NCCL trace: the main waterfall plus three step rows;
// the CSV in us, the JSON in integer ns).
TEST(CliTrace, CsvStepWaterfallsAndPhasesMatchJson) {
  char tmpl[] = "/tmp/mfu_csv_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  Result r = RunMfu({"trace", SourcePath("tests/data/traces/nccl_collectives_a100.json.gz"), "--csv", dir, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& steps = j["ranks"][0]["steps"];
  ASSERT_EQ(steps.size(), 3u);
  const auto waterfall = ReadCsvRows(dir + "/waterfall.csv");
  const auto phases = ReadCsvRows(dir + "/phases.csv");
  const size_t buckets = j["ranks"][0]["waterfall"]["buckets_ns"].size();
  EXPECT_EQ(waterfall.size(), buckets * 4);  // "all steps" and each step
  EXPECT_EQ(phases.size(), 6u * 3);
  size_t checked = 0;
  for (const auto& step : steps) {
    const std::string name = step["name"];
    for (const auto& row : waterfall) {
      if (row[1] == name) {
        EXPECT_DOUBLE_EQ(std::stod(row[3]), step["waterfall"]["buckets_ns"][row[2]].get<double>() / 1e3)
            << name << row[2];
        ++checked;
      }
    }
    for (const auto& row : phases) {
      if (row[1] == name) {
        EXPECT_DOUBLE_EQ(std::stod(row[3]), step["phases_ns"][row[2]].get<double>() / 1e3) << name << row[2];
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 3 * (buckets + 6));
  std::filesystem::remove_all(dir);
}

TEST(CliTrace, CsvAndText) {
  Result r = RunMfu({"trace", SourcePath("tests/data/traces/b200_vllm_eager.json.gz")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("b200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("communication"), std::string::npos);  // ncclDevKernel_* classified
  EXPECT_NE(r.out.find("diagnostics:"), std::string::npos);
}

// --- bad input: usage errors exit 2, data errors exit 1 ---

TEST(Cli, HelpForNestedCommandsAndTypos) {
  Result nested = RunMfu({"help", "hw", "list"});
  EXPECT_EQ(nested.exit_code, 0);
  EXPECT_NE(nested.out.find("Usage: mfu hw list"), std::string::npos) << nested.out;
  ExpectOneLineError(RunMfu({"help", "flps"}), 2, "did you mean 'flops'");
}

TEST(CliErrors, NothingOnStdoutWhenACommandFails) {
  // Beyond the model's maximum: a data error (exit 1), as in infer.
  Result r = RunMfu({"flops", "--model", "llama-3.1-8b", "--seq-len", "999999"});
  ExpectOneLineError(r, 1, "max_position_embeddings");
  EXPECT_EQ(r.out, "");
  ExpectOneLineError(
      RunMfu({"flops", "--model", "llama-3.1-8b", "--convention", "all", "--inference", "decode", "--context", "10"}),
      2, "--convention all");
}

TEST(CliErrors, UnknownCommandAndFlag) {
  ExpectOneLineError(RunMfu({"flopz"}), 2, "flopz");
  ExpectOneLineError(RunMfu({"flops", "--model", "llama-3.1-8b", "--bogus"}), 2, "--bogus");
  Result bare = RunMfu({});  // the command overview on stderr (docs/cli.md)
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("mfu help COMMAND"), std::string::npos) << bare.err;
}

TEST(CliErrors, UnknownAndAmbiguousModel) {
  ExpectOneLineError(RunMfu({"flops", "--model", "llama-9"}), 2, "model 'llama-9'");
  ExpectOneLineError(RunMfu({"flops", "--model", "llama-9"}), 2, "; see 'mfu models'");
  ExpectOneLineError(RunMfu({"flops", "--model", "mistral-7b"}), 2, "ambiguous; candidates: mistral-7b-instruct-v0.3");
}

TEST(CliErrors, UnknownAndAmbiguousGpu) {
  std::vector<std::string> base = {"calc",      "--model", "llama-3.1-8b",     "--gpus", "8",
                                   "--seq-len", "8192",    "--tokens-per-sec", "40000",  "--gpu"};
  auto with = [&](const char* gpu) {
    auto args = base;
    args.push_back(gpu);
    return RunMfu(args);
  };
  // The library names the report as "command 'hw list'"; the CLI as the command line.
  ExpectOneLineError(with("h1000"), 2, "gpu 'h1000': unknown accelerator (did you mean 'h100'?); see 'mfu hw list'");
  ExpectOneLineError(with("gaudi"), 2, "ambiguous, candidates: gaudi2-oam-96gb, gaudi3-oam-128gb");
}

// The generic model's checks name its fields as the library does
// ("parameter 'top_k'"); the CLI shows them as flags.
TEST(CliErrors, GenericModelMessagesNameFlags) {
  ExpectOneLineError(RunMfu({"flops", "--seq-len", "128", "--layers", "2", "--hidden", "64", "--heads", "4", "--vocab",
                             "100", "--ffn", "128", "--top-k", "2"}),
                     2, "mfu: --top-k: given without --experts\n");
  ExpectOneLineError(
      RunMfu({"flops", "--seq-len", "128", "--layers", "2", "--hidden", "64", "--heads", "5", "--vocab", "100"}), 2,
      "--heads: 5 does not divide --hidden 64; give --head-dim");
  // CLI parse errors are not library messages: "subcommand 'x'" stays.
  ExpectOneLineError(RunMfu({"hw", "lst"}), 2, "subcommand 'lst'");
}

TEST(CliErrors, ContradictoryFlags) {
  ExpectOneLineError(RunMfu({"flops", "--model", "llama-3.1-8b", "--layers", "4"}), 2, "alternatives");
  ExpectOneLineError(RunMfu({"calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--seq-len", "8192",
                             "--tokens-per-sec", "40000", "--step-time", "2", "--global-batch", "10"}),
                     2, "give only one");
  ExpectOneLineError(RunMfu({"flops", "--model", "llama-3.1-8b", "--inference", "decode"}), 2, "--context");
  ExpectOneLineError(RunMfu({"flops", "--model", "llama-3.1-8b", "--inference", "prefill", "--recompute", "full"}), 2,
                     "--recompute");
}

TEST(CliErrors, ZeroNegativeAndAbsurdNumbers) {
  ExpectOneLineError(RunMfu({"flops", "--model", "llama-3.1-8b", "--seq-len", "0"}), 2,
                     "--seq-len must be a positive integer");
  ExpectOneLineError(RunMfu({"flops", "--model", "llama-3.1-8b", "--seq-len", "abc"}), 2, "--seq-len");
  ExpectOneLineError(RunMfu({"flops", "--model", "llama-3.1-8b", "--seq-len", "999999999"}), 1,
                     "max_position_embeddings");
  ExpectOneLineError(RunMfu({"calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "-8", "--seq-len", "8192",
                             "--tokens-per-sec", "40000"}),
                     2, "--gpus");
  ExpectOneLineError(RunMfu({"calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--seq-len", "8192",
                             "--tokens-per-sec", "1e12"}),
                     1, "% of the dense bf16 peak");  // a measured figure above the peak: a data error
  ExpectOneLineError(RunMfu({"calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--seq-len", "8192",
                             "--tokens-per-sec", "-5"}),
                     2, "--tokens-per-sec");
  ExpectOneLineError(RunMfu({"flops", "--layers", "2", "--hidden", "64", "--heads", "4", "--vocab", "100", "--ffn",
                             "256", "--experts", "4", "--topk", "8"}),
                     2, "--top-k: 8 exceeds --experts 4");
}

TEST(CliErrors, BadConfigFilesAreDataErrors) {
  ExpectOneLineError(RunMfu({"flops", "--model", SourcePath("tests/data/bad_configs/malformed.json")}), 1,
                     "malformed.json: malformed JSON at byte");
  ExpectOneLineError(RunMfu({"flops", "--model", SourcePath("tests/data/bad_configs/missing_key.json")}), 1,
                     "missing_key.json: key 'num_hidden_layers' is missing");
  ExpectOneLineError(RunMfu({"flops", "--model", SourcePath("tests/data/bad_configs/wrong_type.json")}), 1,
                     "wrong_type.json: key 'hidden_size' must be a positive integer");
  ExpectOneLineError(RunMfu({"flops", "--model", SourcePath("tests/data/bad_configs/unknown_type.json")}), 1,
                     "unsupported model type 'bert'");
  ExpectOneLineError(RunMfu({"flops", "--model", SourcePath("tests/data/bad_configs/no_such_file.json")}), 1,
                     "cannot open file");
}

TEST(CliErrors, BadTraces) {
  ExpectOneLineError(RunMfu({"trace", SourcePath("tests/data/bad_configs/malformed.json")}), 1, "malformed.json");
  ExpectOneLineError(RunMfu({"trace", SourcePath("tests/data/no_such_trace.json")}), 1, "cannot open file");
  ExpectOneLineError(RunMfu({"trace", SourcePath("tests/data/traces/triton.json.gz"), "--tokens-per-step", "4k"}), 2,
                     "--model");
  ExpectOneLineError(RunMfu({"trace", SourcePath("tests/data/traces/triton.json.gz"), "--gpu", "h1000"}), 2, "h1000");
}

// --output-format: csv writes the result's JSON flattened (a list result
// one row per item); a format it does not know, or one contradicting
// --json, is a usage error that names both.
TEST(CliOutputFormat, CsvAndItsErrors) {
  Result csv = RunMfu({"plan", "-m", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "-s", "4096", "--global-batch",
                       "64", "--top", "3", "--output-format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("breakdown_s.attention,", 0), 0u) << csv.out.substr(0, 200);
  EXPECT_NE(csv.out.find(",config.tp,"), std::string::npos);
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 4);  // header + the top 3
  Result hw = RunMfu({"hw", "show", "h100", "--output-format=csv"});
  ASSERT_EQ(hw.exit_code, 0) << hw.err;
  EXPECT_EQ(std::count(hw.out.begin(), hw.out.end(), '\n'), 2);  // one row of every field
  ExpectOneLineError(RunMfu({"hw", "list", "--output-format", "xml"}), 2,
                     "--output-format: 'xml' is not text, json or csv");
  ExpectOneLineError(RunMfu({"hw", "list", "--json", "--output-format", "csv"}), 2,
                     "--json contradicts --output-format csv");
  Result json = RunMfu({"hw", "show", "h1000", "--output-format", "json"});
  EXPECT_EQ(json.exit_code, 2);
  EXPECT_NE(json.out.find("\"error\""), std::string::npos) << json.out;  // the error object, as with --json
}

TEST(CliErrors, BadHardwareFile) {
  Result r = RunMfu({"hw", "list", "--hardware-file", SourcePath("tests/data/bad_hardware.csv")});
  ExpectOneLineError(r, 1, "bad_hardware.csv:2");
}

TEST(Cli, PredictJsonFields) {
  Result r = RunMfu({"predict", "--model", "llama-3.1-70b", "--cluster", "dgx-h100", "--gpus", "64", "--seq-len",
                     "8192", "--tp", "8", "--pp", "4", "--vpp", "5", "--gbs", "128", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 3);
  const auto& p = j["prediction"];
  for (const char* key : {"step_time_s", "mfu", "hfu", "memory", "fits", "utilization"})
    EXPECT_TRUE(p.contains(key)) << key;
  EXPECT_FALSE(p.contains("tflops_per_gpu"));  // schema 3: utilization.model_flops_per_s, in FLOP/s
  EXPECT_GT(p["utilization"]["model_flops_per_s"].get<double>(), 1e14);
  EXPECT_TRUE(p["memory"].contains("total_bytes"));
  EXPECT_EQ(p["config"]["dp"], 2);  // derived: 64 / (8 x 4)
  EXPECT_EQ(j["setup"]["convention"]["name"], "megatron");
  // The step is the sum of its parts; the waterfall's integer ns sum to the
  // step rounded to ns.
  double sum = 0;
  int64_t waterfall = 0;
  for (const auto& [k, v] : p["breakdown_s"].items())
    sum += v.get<double>();
  for (const auto& [k, v] : p["waterfall"]["buckets_ns"].items())
    waterfall += v.get<int64_t>();
  EXPECT_NEAR(sum, p["step_time_s"].get<double>(), 1e-9 * sum);
  EXPECT_EQ(waterfall, p["waterfall"]["step_ns"].get<int64_t>());
  EXPECT_NEAR(static_cast<double>(waterfall) * 1e-9, p["step_time_s"].get<double>(), 1e-9);
  // MFU = model FLOPs/token x tokens/s / (GPUs x peak).
  EXPECT_NEAR(p["mfu"].get<double>(),
              p["model_flops_per_token"].get<double>() * p["tokens_per_s"].get<double>() /
                  (64 * p["peak_flops_per_s"].get<double>()),
              1e-9);
  EXPECT_NEAR(p["utilization"]["mfu"].get<double>(), p["mfu"].get<double>(), 1e-12);
  EXPECT_NE(std::find(j["derived"].begin(), j["derived"].end(), "dp = gpus / (tp x pp x cp) = 2"), j["derived"].end());
}

TEST(Cli, PlanRanksAndCosts) {
  Result r = RunMfu({"plan", "--model", "llama-3.1-8b", "--cluster", "dgx-h100", "--gpus", "64", "--seq-len", "8192",
                     "--gbs", "256", "--top", "3", "--tokens", "1T", "--price-per-gpu-hour", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["top"].size(), 3u);
  EXPECT_GT(j["search"]["evaluated"].get<double>(), 100);
  double previous = 1e300;
  for (const auto& p : j["top"]) {
    EXPECT_TRUE(p["fits"].get<bool>());
    EXPECT_LE(p["tokens_per_s"].get<double>(), previous);
    previous = p["tokens_per_s"].get<double>();
    // 1T tokens at the predicted rate, on 64 GPUs at $2/GPU-hour.
    const double hours = 1e12 / p["tokens_per_s"].get<double>() / 3600;
    EXPECT_NEAR(p["gpu_hours"].get<double>(), hours * 64, 1e-6 * hours * 64);
    EXPECT_NEAR(p["cost_usd"].get<double>(), hours * 64 * 2, 1e-6 * hours * 128);
  }
}

TEST(Cli, PlanNothingFitsSaysWhy) {
  Result r = RunMfu(
      {"plan", "--model", "llama-3.1-405b", "--gpu", "a100-40gb", "--gpus", "8", "--seq-len", "4096", "--gbs", "64"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("nothing fits"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("closest:"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("no configuration fits"), std::string::npos) << r.err;
}

TEST(Cli, CalibrateReportsAccuracy) {
  Result r = RunMfu({"calibrate", SourcePath("tests/data/training-runs-calibration.csv"), "--no-fit", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["after"]["overall"]["runs"], 253);
  EXPECT_EQ(j["runs"].size(), 253u);
  EXPECT_EQ(j["after"]["by_source"].size(), 6u);
}

// The shipped vector kernel table is what the documented operator fit
// writes (values columns; the sources are the file's prose), and a vector
// kernel table given to --efficiency-file changes inference: a 50 us floor
// for every vector kernel makes them take 32 layers x 5 kernels x 50 us =
// 8 ms of a batch-1 decode step of Llama-3.1-8B.
TEST(Cli, VectorKernelTableRoundTrip) {
  char tmpl[] = "/tmp/mfu_vk_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  Result fit = RunMfu({"calibrate", SourcePath("tests/data/training-runs-calibration.csv"), "--operators",
                       SourcePath("tests/data/vidur"), "--sweeps", "1", "--write-vector-kernels", dir + "/vk.csv"});
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  auto values = [](const std::string& path) {
    std::ifstream f(path);
    std::vector<std::string> rows;
    std::string line;
    while (std::getline(f, line)) {
      size_t cut = 0;
      for (int comma = 0; comma < 5 && cut != std::string::npos; ++comma)
        cut = line.find(',', cut == 0 ? 0 : cut + 1);
      rows.push_back(line.substr(0, cut));
    }
    return rows;
  };
  EXPECT_EQ(values(dir + "/vk.csv"), values(SourcePath("data/efficiency/vector_kernels.csv")));

  {
    std::ofstream slow(dir + "/slow.csv");
    slow << "family,kernel,min_us,row_ns_per_kib,bw_fraction,source\n";
    for (const char* kernel : {"norm", "residual_add", "activation"})
      slow << "hopper," << kernel << ",50,0,0.5,test\n";
  }
  const std::vector<std::string> infer = {"infer", "--model",      "llama-3.1-8b", "--gpu",   "h100", "--input-len",
                                          "1000",  "--output-len", "1000",         "--batch", "1",    "--json"};
  Result base = RunMfu(infer);
  std::vector<std::string> with_file = infer;
  with_file.insert(with_file.end(), {"--efficiency-file", dir + "/slow.csv"});
  Result slow = RunMfu(with_file);
  ASSERT_EQ(base.exit_code, 0) << base.err;
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  const double tpot = nlohmann::json::parse(base.out)["tpot_s"].get<double>();
  const double slow_tpot = nlohmann::json::parse(slow.out)["tpot_s"].get<double>();
  // The 50 us floors replace the shipped kernels' times (under 1 ms a step).
  EXPECT_LT(slow_tpot - tpot, 32 * 5 * 50e-6 * 1.001) << tpot << " " << slow_tpot;
  EXPECT_GT(slow_tpot - tpot, 32 * 5 * 50e-6 - 1e-3) << tpot << " " << slow_tpot;
  std::filesystem::remove_all(dir);
}

TEST(CliErrors, PlanAndPredictBadInput) {
  const std::vector<std::string> base = {"--model", "llama-3.1-8b", "--cluster", "dgx-h100", "--seq-len", "4096"};
  auto with = [&](std::string cmd, std::vector<std::string> extra) {
    std::vector<std::string> a = {cmd};
    a.insert(a.end(), base.begin(), base.end());
    a.insert(a.end(), extra.begin(), extra.end());
    return RunMfu(a);
  };
  ExpectOneLineError(with("predict", {"--gpus", "16", "--tp", "3"}), 2, "does not divide 16 GPUs");
  ExpectOneLineError(with("predict", {"--gpus", "16", "--tp", "8", "--dp", "4"}), 2, "but there are 16 GPUs");
  ExpectOneLineError(with("predict", {"--gpus", "16", "--tp", "0"}), 2, "--tp must be a positive integer");
  ExpectOneLineError(with("predict", {"--gpus", "16", "--ep", "2"}), 2, "mixture-of-experts");
  ExpectOneLineError(with("predict", {"--gpus", "16", "--vpp", "2"}), 2, "--vpp needs --pp");
  ExpectOneLineError(with("predict", {"--gpus", "16", "--zero", "7"}), 2, "--zero");
  ExpectOneLineError(with("predict", {"--gpus", "16", "--gbs", "3"}), 2, "global batch not a multiple");
  ExpectOneLineError(with("predict", {"--nodes", "2", "--gpus", "8"}), 2, "contradicts --nodes");
  ExpectOneLineError(with("predict", {}), 2, "--gpus");
  ExpectOneLineError(with("predict", {"--gpus", "16", "--gpu", "a100"}), 2, "contradicts --cluster");
  ExpectOneLineError(
      RunMfu({"predict", "--model", "llama-3.1-8b", "--gpu", "h20", "--gpus", "64", "--seq-len", "4096"}), 2,
      "needs --cluster");  // h20 has no cluster preset (h100 now defaults to dgx-h100)
  ExpectOneLineError(
      RunMfu({"predict", "--model", "llama-3.1-8b", "--cluster", "dgx-h999", "--gpus", "8", "--seq-len", "4096"}), 2,
      "dgx-h999");
  ExpectOneLineError(with("plan", {"--gpus", "16", "--gbs", "0"}), 2, "--global-batch must be a positive integer");
  ExpectOneLineError(with("plan", {"--gpus", "16", "--gbs", "64", "--recompute", "sometimes"}), 2, "sometimes");
  ExpectOneLineError(with("plan", {"--gpus", "16", "--gbs", "64", "--tokens", "-5"}), 2, "--tokens");
  ExpectOneLineError(RunMfu({"calibrate", SourcePath("tests/data/no_such_runs.csv")}), 1, "no_such_runs.csv");
  ExpectOneLineError(RunMfu({"predict", "--model", "llama-3.1-8b", "--cluster", "dgx-h100", "--gpus", "8", "--seq-len",
                             "4096", "--cluster-file", SourcePath("tests/data/bad_hardware.csv")}),
                     1, "bad_hardware.csv");
}

TEST(Cli, InferJsonFields) {
  Result r = RunMfu({"infer", "--model", "llama-3.1-8b", "--gpu", "h100", "--weight-precision", "fp8", "--kv-precision",
                     "fp8", "--input-len", "1000", "--output-len", "1000", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 3);
  for (const char* key : {"batch", "output_tokens_per_s", "ttft_s", "tpot_s", "mfu", "mbu", "kv_capacity_tokens"})
    EXPECT_TRUE(j.contains(key)) << key;
  // Without --batch: the largest batch whose 2000-token requests fit the KV cache.
  EXPECT_EQ(j["batch"].get<int64_t>(), j["kv_capacity_tokens"].get<int64_t>() / 2000);
  EXPECT_EQ(j["model"]["name"], "llama-3.1-8b-instruct");
  EXPECT_EQ(j["gpu"]["id"], "h100-sxm5-80gb");
  EXPECT_EQ(j["precision"], "fp8");
  EXPECT_EQ(j["weight_precision"], "fp8");
  EXPECT_EQ(j["kv_precision"], "fp8");
  EXPECT_EQ(j["convention"]["name"], "megatron");
  // Every decode and prefill step carries its waterfall and utilization.
  for (const auto& step : j["decode_sweep"]) {
    int64_t sum = 0;
    for (const auto& [bucket, ns] : step["waterfall"]["buckets_ns"].items())
      sum += ns.get<int64_t>();
    EXPECT_EQ(sum, step["waterfall"]["step_ns"].get<int64_t>());
    EXPECT_NEAR(step["utilization"]["mfu"].get<double>(), step["mfu"].get<double>(), 1e-9);
  }
  EXPECT_GT(j["mbu"].get<double>(), 0.2);
  EXPECT_LT(j["mbu"].get<double>(), 1.0);
  // Measured TTFT/TPOT: utilizations inversely proportional to the time.
  Result m = RunMfu({"infer", "--model", "llama-3.1-8b", "--gpu", "h100", "--input-len", "1000", "--output-len", "1000",
                     "--batch", "64", "--measured-ttft", "0.02", "--measured-tpot", "0.01", "--json"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  auto mj = nlohmann::json::parse(m.out);
  Result m2 = RunMfu({"infer", "--model", "llama-3.1-8b", "--gpu", "h100", "--input-len", "1000", "--output-len",
                      "1000", "--batch", "64", "--measured-ttft", "0.04", "--measured-tpot", "0.02", "--json"});
  ASSERT_EQ(m2.exit_code, 0) << m2.err;
  auto mj2 = nlohmann::json::parse(m2.out);
  EXPECT_NEAR(mj["measured_ttft"]["mfu"].get<double>(), 2 * mj2["measured_ttft"]["mfu"].get<double>(), 1e-12);
  EXPECT_NEAR(mj["measured_tpot"]["mbu"].get<double>(), 2 * mj2["measured_tpot"]["mbu"].get<double>(), 1e-12);
}

// --workload: the same shapes as a list and as a CSV file give the same
// rows, each equal to a single-shape run.
TEST(Cli, InferWorkloadListAndFile) {
  char tmpl[] = "/tmp/mfu_wl_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  {
    std::ofstream f(dir + "/w.csv");
    f << "input_len,output_len,requests\n128,128,2\n2048,128,1\n";
  }
  const std::vector<std::string> base = {"infer", "--model", "llama-3.1-8b", "--gpu", "h100", "--json"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    Result r = RunMfu(a);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out.empty() ? "{}" : r.out);
  };
  auto list = run({"--workload", "128:128:2,2048:128"});
  auto file = run({"--workload", dir + "/w.csv"});
  auto single = run({"--input-len", "2048", "--output-len", "128"});
  ASSERT_EQ(list["workload"]["pairs"].size(), 2u);
  EXPECT_EQ(list["workload"], file["workload"]);
  EXPECT_EQ(list["workload"]["pairs"][0]["requests"], 2);
  EXPECT_DOUBLE_EQ(list["workload"]["pairs"][1]["output_tokens_per_s"].get<double>(),
                   single["output_tokens_per_s"].get<double>());
  EXPECT_DOUBLE_EQ(list["kv_capacity_tokens"].get<double>(), single["kv_capacity_tokens"].get<double>());
  // With a single shape too: both in one report.
  auto both = run({"--input-len", "2048", "--output-len", "128", "--workload", "128:128"});
  EXPECT_TRUE(both.contains("tpot_s"));
  EXPECT_EQ(both["workload"]["pairs"].size(), 1u);
  std::filesystem::remove_all(dir);
}

// --attention-dp reaches the report: the layout says so, the KV capacity
// row names the ranks, and a MoE prediction carries moe_unvalidated.
TEST(InferE2e, AttentionDataParallelInTheReport) {
  const std::vector<std::string> args = {"infer",
                                         "--model",
                                         "mixtral-8x7b",
                                         "--gpu",
                                         "h100",
                                         "--tp",
                                         "4",
                                         "--gpus",
                                         "4",
                                         "--ep",
                                         "4",
                                         "--attention-dp",
                                         "--input-len",
                                         "1000",
                                         "--output-len",
                                         "1000",
                                         "--weight-precision",
                                         "fp8",
                                         "--kv-precision",
                                         "fp8"};
  Result text = RunMfu(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("ep 4, attention DP"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("KV capacity (90% of the rest, 4 ranks)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("per attention rank"), std::string::npos) << text.out;
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  Result json = RunMfu(json_args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["layout"]["attention_dp"], true);
  EXPECT_EQ(j["layout"]["ep"], 4);
  bool noted = false;
  for (const auto& n : j["notes"])
    noted = noted || n["code"] == "moe_unvalidated";
  EXPECT_TRUE(noted);
  // A draft model runs on one GPU of its own: without attention data
  // parallelism.
  std::vector<std::string> drafted = args;
  for (const char* a : {"--draft-tokens", "2", "--acceptance", "0.7", "--drafter", "llama-3.2-1b"})
    drafted.push_back(a);
  Result d = RunMfu(drafted);
  EXPECT_EQ(d.exit_code, 0) << d.err;
}

TEST(CliErrors, InferBadInput) {
  const std::vector<std::string> base = {"infer", "--model", "llama-3.1-8b", "--gpu", "h100"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return RunMfu(a);
  };
  ExpectOneLineError(with({"--input-len", "130000", "--output-len", "2000"}), 1, "maximum of 131072");
  ExpectOneLineError(with({"--input-len", "100", "--output-len", "100", "--draft-tokens", "4", "--acceptance", "1"}), 2,
                     "--acceptance must be a number in [0, 1)");
  ExpectOneLineError(with({"--input-len", "100", "--output-len", "100", "--tp", "3"}), 2, "--tp 3");
  ExpectOneLineError(with({"--input-len", "100", "--output-len", "100", "--gpus", "4"}), 2, "tp x pp");
  ExpectOneLineError(with({"--input-len", "100", "--output-len", "100", "--tp", "2", "--attention-dp"}), 2,
                     "--attention-dp needs a mixture-of-experts model");
  ExpectOneLineError(RunMfu({"infer", "--model", "mixtral-8x7b", "--gpu", "h100", "--input-len", "100", "--output-len",
                             "100", "--tp", "2", "--ep", "4", "--gpus", "2"}),
                     2, "--ep needs a mixture-of-experts model whose experts it divides, and must divide tp");
  ExpectOneLineError(with({"--input-len", "0", "--output-len", "100"}), 2, "--input-len");
  ExpectOneLineError(with({"--input-len", "100", "--output-len", "100", "--weight-precision", "fp7"}), 2,
                     "--weight-precision");
  ExpectOneLineError(
      RunMfu({"infer", "--model", "llama-3.1-405b", "--gpu", "h100", "--input-len", "100", "--output-len", "100"}), 1,
      "does not fit");
  ExpectOneLineError(with({}), 2, "--workload");
  ExpectOneLineError(with({"--workload", "128:128,64"}), 2, "'64' is not INPUT:OUTPUT");
  ExpectOneLineError(with({"--workload", "128:0"}), 2, "not a whole number");
  ExpectOneLineError(with({"--workload", "128:12.5"}), 2, "not a whole number");
  ExpectOneLineError(with({"--workload", "200000:128"}), 1, "maximum of 131072");
  ExpectOneLineError(with({"--workload", "128:128", "--measured-tpot", "0.01"}), 2, "one request shape");
  ExpectOneLineError(with({"--workload", SourcePath("tests/data/no_such_workload.csv")}), 1, "no_such_workload.csv");
  ExpectOneLineError(with({"--workload", SourcePath("tests/data/vidur/compute.csv")}), 1, "input_len");
  {
    char tmpl[] = "/tmp/mfu_badwl_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string file = std::string(tmpl) + "/w.csv";
    std::ofstream(file) << "input_len,output_len\n128,128\n128,0\n";
    ExpectOneLineError(with({"--workload", file}), 1, "w.csv:3: column 'output_len'");
    std::filesystem::remove_all(tmpl);
  }
}

// Framework profiles and validation notes in mfu predict / plan (issue 10).
TEST(CliFramework, ProfilesOptionsAndValidationNotes) {
  const std::vector<std::string> base = {"predict", "--model",   "llama-3.1-8b", "--gpu", "h100", "--gpus",
                                         "8",       "--seq-len", "8192",         "--tp",  "8"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return RunMfu(a);
  };
  ExpectOneLineError(with({"--framework", "megatron-cor"}), 2, "did you mean 'megatron-core'");
  ExpectOneLineError(with({"--framework", "composer", "--tp-comm-overlap"}), 2,
                     "composer cannot overlap tensor-parallel communication");
  ExpectOneLineError(with({"--tp-comm-overlap", "--no-tp-comm-overlap"}), 2, "contradicts");
  ExpectOneLineError(with({"--attention", "sdpa-math-x"}), 2, "--attention");
  ExpectOneLineError(with({"--compile", "on"}), 2,
                     "--compile on: framework megatron-core runs its own fused elementwise kernels");
  ExpectOneLineError(with({"--framework", "torchtitan", "--compile", "sometimes"}), 2,
                     "--compile: 'sometimes' is not on or off");
  // torchtitan without torch.compile is slower than with it, and says so.
  Result eager = with({"--framework", "torchtitan", "--json"});
  Result compiled = with({"--framework", "torchtitan", "--compile", "on", "--json"});
  ASSERT_EQ(eager.exit_code, 0) << eager.err;
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  const nlohmann::json je = nlohmann::json::parse(eager.out), jc = nlohmann::json::parse(compiled.out);
  EXPECT_EQ(je["setup"]["framework"]["elementwise"], "eager");
  EXPECT_EQ(jc["setup"]["framework"]["elementwise"], "compiled");
  EXPECT_GT(je["prediction"]["step_time_s"].get<double>(), jc["prediction"]["step_time_s"].get<double>());
  ExpectOneLineError(with({"--moe-imbalance", "0.5"}), 2, "--moe-imbalance");
  ExpectOneLineError(with({"--state", "megatorn"}), 2, "--state");
  ExpectOneLineError(with({"--ep-dispatch", "nvshmem"}), 2, "--ep-dispatch: 'nvshmem' is not alltoall or deepep");
  ExpectOneLineError(with({"--dropout", "1"}), 2, "--dropout");
  ExpectOneLineError(with({"--recompute", "selective", "--recompute-modules", "mla_up_proj"}), 2,
                     "--recompute-modules: mla_up_proj needs multi-latent attention");
  ExpectOneLineError(with({"--recompute", "selective", "--recompute-modules", "mla"}), 2,
                     "--recompute-modules: recompute module 'mla' is not one of");
  ExpectOneLineError(with({"--recompute-modules", "moe_act"}), 2,
                     "--recompute-modules applies to --recompute selective, not none");
  ExpectOneLineError(with({"--framework", "torchtitan", "--recompute", "selective", "--recompute-modules", "mlp"}), 2,
                     "torchtitan's selective is its op-level policy");
  ExpectOneLineError(RunMfu({"memory", "--model", "llama-3.1-8b", "--precision", "fp7"}), 2, "--precision");
  // Megatron's module list: recomputing the MLP costs step time and frees its activations.
  Result mlp = with({"--recompute", "selective", "--recompute-modules", "core_attn,mlp", "--json"});
  Result core = with({"--recompute", "selective", "--json"});
  ASSERT_EQ(mlp.exit_code, 0) << mlp.err;
  ASSERT_EQ(core.exit_code, 0) << core.err;
  const nlohmann::json jm = nlohmann::json::parse(mlp.out), jcore = nlohmann::json::parse(core.out);
  EXPECT_GT(jm["prediction"]["step_time_s"].get<double>(), jcore["prediction"]["step_time_s"].get<double>());
  EXPECT_LT(jm["prediction"]["memory"]["activations_bytes"].get<double>(),
            jcore["prediction"]["memory"]["activations_bytes"].get<double>());
  EXPECT_EQ(jcore["setup"]["framework"]["ep_dispatch"], "alltoall");
  // The framework, its attention kernel and the family's validation are stated.
  Result nemo = with({"--framework", "nemo", "--json"});
  ASSERT_EQ(nemo.exit_code, 0) << nemo.err;
  nlohmann::json j = nlohmann::json::parse(nemo.out);
  EXPECT_EQ(j["setup"]["framework"]["name"], "nemo");
  EXPECT_EQ(j["setup"]["validation"], "validated");
  EXPECT_EQ(j["prediction"]["config"]["tp_comm_overlap"], true);  // NeMo's recipes overlap TP
  Result b200 = RunMfu({"predict", "--model", "llama-3.1-8b", "--gpu", "b200", "--gpus", "8", "--seq-len", "8192"});
  ASSERT_EQ(b200.exit_code, 0) << b200.err;
  EXPECT_NE(b200.out.find("validation  unvalidated"), std::string::npos) << b200.out;
  Result unfused = with({"--attention", "unfused", "--json"});
  ASSERT_EQ(unfused.exit_code, 0) << unfused.err;
  EXPECT_EQ(nlohmann::json::parse(unfused.out)["setup"]["framework"]["attention"], "unfused");
}

// mfu calibrate --hold-out / --cross-validate (issue 10): bad combinations
// and values are one-line usage errors; the held-out source is reported apart.
TEST(CliCalibrate, HoldOutCrossValidateAndBadFlags) {
  const std::string runs = SourcePath("tests/data/training-runs-calibration.csv");
  ExpectOneLineError(RunMfu({"calibrate", runs, "--hold-out", "nemo"}), 2, "(sources: narayanan2021, ");
  ExpectOneLineError(RunMfu({"calibrate", runs, "--hold-out", "vtrain", "--cross-validate"}), 2, "--hold-out");
  ExpectOneLineError(RunMfu({"calibrate", runs, "--regularization", "-1"}), 2, "--regularization");
  ExpectOneLineError(RunMfu({"calibrate", runs, "--regularization", "nan"}), 2, "--regularization");
  Result held = RunMfu({"calibrate", runs, "--hold-out", "vtrain", "--sweeps", "2", "--json"});
  ASSERT_EQ(held.exit_code, 0) << held.err;
  auto j = nlohmann::json::parse(held.out);
  EXPECT_EQ(j["held_out"]["runs"], 54);
  EXPECT_EQ(j["fitted_on"]["runs"], 253 - 54);
  EXPECT_FALSE(j["parameters"].empty());
  Result cv = RunMfu({"calibrate", runs, "--cross-validate", "--sweeps", "2"});
  ASSERT_EQ(cv.exit_code, 0) << cv.err;
  EXPECT_NE(cv.out.find("mean over sources"), std::string::npos) << cv.out;
}

// --framework: the serving profile, its scheduling defaults (tensorrt-llm:
// whole prompts mixed with decode; vllm: chunked prefill at 8192 tokens on
// an H100), --chunked-prefill over them, and the validation note off H100.
TEST(Cli, InferFrameworkAndValidation) {
  const std::vector<std::string> base = {"infer", "--model",        "llama-3.1-8b", "--weight-precision",
                                         "fp8",   "--kv-precision", "fp8",          "--input-len",
                                         "2048",  "--output-len",   "128"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    Result r = RunMfu(a);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r;
  };
  auto json = [&](std::vector<std::string> extra) {
    extra.push_back("--json");
    Result r = run(extra);
    return nlohmann::json::parse(r.out.empty() ? "{}" : r.out);
  };
  auto trt = json({"--gpu", "h100"});
  EXPECT_EQ(trt["framework"]["name"], "tensorrt-llm");
  EXPECT_EQ(trt["framework"]["chunked_prefill"], false);
  EXPECT_EQ(trt["framework"]["mixed"], true);
  EXPECT_EQ(trt["validation"]["validated"], true);
  EXPECT_EQ(trt["validation"]["note"], "");
  auto vllm = json({"--gpu", "h100", "--framework", "vllm"});
  EXPECT_EQ(vllm["framework"]["chunked_prefill"], true);
  EXPECT_EQ(vllm["framework"]["token_budget"], 8192);
  EXPECT_EQ(vllm["framework"]["max_batch"], 1024);
  EXPECT_EQ(vllm["validation"]["validated"], false);
  auto whole = json({"--gpu", "h100", "--framework", "vllm", "--chunked-prefill", "0"});
  EXPECT_EQ(whole["framework"]["chunked_prefill"], false);
  auto chunked = json({"--gpu", "h100", "--chunked-prefill", "4096"});
  EXPECT_EQ(chunked["framework"]["chunked_prefill"], true);
  EXPECT_EQ(chunked["framework"]["token_budget"], 4096);
  EXPECT_LE(chunked["prefill_tokens"].get<double>() + chunked["decode_batch"].get<double>(), 4096 + 1e-6);
  auto b200 = json({"--gpu", "b200"});
  EXPECT_EQ(b200["validation"]["validated"], false);
  EXPECT_EQ(b200["validation"]["note"].get<std::string>().rfind("unvalidated", 0), 0u);
  Result text = run({"--gpu", "b200"});
  EXPECT_NE(text.out.find("note        unvalidated"), std::string::npos) << text.out;
  EXPECT_EQ(run({"--gpu", "h100"}).out.find("unvalidated"), std::string::npos);
  Result mix = run({"--gpu", "mi300x", "--workload", "128:128"});
  EXPECT_NE(mix.out.find("unvalidated"), std::string::npos) << mix.out;
}

TEST(CliErrors, InferBadFramework) {
  const std::vector<std::string> base = {"infer",       "--model", "llama-3.1-8b", "--gpu", "h100",
                                         "--input-len", "100",     "--output-len", "100"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return RunMfu(a);
  };
  ExpectOneLineError(with({"--framework", "vlm"}), 2, "did you mean 'vllm'");
  ExpectOneLineError(with({"--framework", "megatron-core"}), 2, "training framework");
  ExpectOneLineError(with({"--chunked-prefill", "-5"}), 2, "--chunked-prefill");
  ExpectOneLineError(with({"--max-batch", "0"}), 2, "--max-batch");
  ExpectOneLineError(with({"--framework-file", SourcePath("tests/data/no_such_frameworks.csv")}), 1,
                     "no_such_frameworks.csv");
}

}  // namespace
