// `mfu goodput` end to end: the hand-written progress.txt and
// ml-goodput-measurement records of tests/data/goodput (figures worked
// out in the comments from the event times), the two merged, --what-if
// against section 2.5's worked example, and every bad flag or file (one-line
// error, documented exit code).

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cli_run_mfu.h"

namespace {

using mfu_e2e::ExpectOneLineError;
using mfu_e2e::Result;
using mfu_e2e::RunMfu;
using mfu_e2e::SourcePath;
using nlohmann::json;

const std::string kProgress = SourcePath("tests/data/goodput/progress.txt");
const std::string kJsonl = SourcePath("tests/data/goodput/run.jsonl");

double Sum(const json& j) {
  double s = j["productive_s"].get<double>();
  for (const char* c : {"initialization", "data_loading", "checkpoint_save", "checkpoint_restore", "wasted_progress",
                        "idle_between_attempts", "evaluation", "other"})
    s += j["badput_s"][c].get<double>();
  return s;
}

// run.jsonl by hand: attempt 1 (0-315 s, failed): step 0 starts at 120 and
// is charged the mean of steps 1-8 ((5 x 10 + 20 + 10 + 10) / 8 = 11.25 s);
// init is 0 -> 208.75; steps 1-5 50 s; step 6 270-290 less the save
// 280-290: 10 s; steps 7, 8 (290-310) follow the last save: wasted 20;
// step 9 never ended: other 5. Idle 315-400 = 85. Attempt 2: restore
// 400-430, init 430-450, steps 7-10 40 s. Productive 11.25 + 50 + 10 + 40.
TEST(GoodputE2e, JsonlAccounting) {
  Result r = RunMfu({"goodput", kJsonl, "--json", "--mfu", "0.4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 3);
  EXPECT_EQ(j["wall_s"], 490.0);
  EXPECT_EQ(j["productive_s"], 111.25);
  EXPECT_EQ(j["badput_s"]["initialization"], 208.75 + 20);
  EXPECT_EQ(j["badput_s"]["checkpoint_save"], 10.0);
  EXPECT_EQ(j["badput_s"]["checkpoint_restore"], 30.0);
  EXPECT_EQ(j["badput_s"]["wasted_progress"], 20.0);
  EXPECT_EQ(j["badput_s"]["idle_between_attempts"], 85.0);
  EXPECT_EQ(j["badput_s"]["other"], 5.0);
  EXPECT_EQ(Sum(j), j["wall_s"].get<double>());
  EXPECT_DOUBLE_EQ(j["ettr"].get<double>(), 111.25 / 490);
  EXPECT_EQ(j["attempts"], 2);
  EXPECT_EQ(j["interruptions"], 1);
  EXPECT_EQ(j["mtbf_s"], 405.0);      // running time 490 - 85 idle, one failure
  EXPECT_EQ(j["recovery_s"], 145.0);  // failure at 315 -> step 7 ends at 460
  EXPECT_EQ(j["checkpoint_time_s"], 10.0);
  EXPECT_EQ(j["checkpoint_interval"]["young_s"], 90.0);  // sqrt(2 x 10 x 405)
  const double x = 10.0 / 810;
  EXPECT_DOUBLE_EQ(j["checkpoint_interval"]["daly_s"].get<double>(), 90 * (1 + std::sqrt(x) / 3 + x / 9) - 10);
  EXPECT_TRUE(j["checkpoint_interval"]["observed_s"].is_null());  // one save: no interval between saves
  EXPECT_DOUBLE_EQ(j["effective_mfu"].get<double>(), 0.4 * 111.25 / 490);
  EXPECT_EQ(j["wasted_steps"], 2);
}

// progress.txt by hand: job 4242 10:00-11:10 (saves at 10:30, 11:00,
// 11:10), job 4243 11:30-12:00. The first save's 30 min is charged the
// segment's mean (30 and 10 min: 20 min), 10 min startup; job 4243's only
// save is charged the mean of the segments (20 min). Productive 20 + 30 +
// 10 + 20 = 80 min of 120; idle 11:10-11:30.
TEST(GoodputE2e, ProgressTextAndJson) {
  Result r = RunMfu({"goodput", kProgress, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["wall_s"], 7200.0);
  EXPECT_EQ(j["productive_s"], 4800.0);
  EXPECT_EQ(j["badput_s"]["idle_between_attempts"], 1200.0);
  EXPECT_EQ(j["badput_s"]["initialization"], 1200.0);
  EXPECT_EQ(j["mtbf_s"], 6000.0);
  EXPECT_EQ(j["recovery_s"], 3000.0);  // 11:10 -> 12:00
  EXPECT_EQ(j["checkpoints"], 4);
  EXPECT_EQ(Sum(j), 7200.0);
  Result text = RunMfu({"goodput", kProgress}, {"COLUMNS=100"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("ETTR 0.667"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("idle_between_attempts"), std::string::npos);
  EXPECT_NE(text.out.find("without their blocking time"), std::string::npos) << text.out;
}

// progress.txt records saves without their blocking time, so its intervals
// are unknown until a checkpoint time is given; the observed MTBF (6000 s)
// and recovery (3000 s) stay, and --mtbf replaces the MTBF. Young and Daly
// by hand from the formulas (docs/goodput.md).
TEST(GoodputE2e, GivenCheckpointTimeAndMtbfWithEvents) {
  Result before = RunMfu({"goodput", kProgress, "--json"});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  EXPECT_TRUE(json::parse(before.out)["checkpoint_interval"]["young_s"].is_null());
  Result r = RunMfu({"goodput", kProgress, "--checkpoint-time", "60s", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_NEAR(j["checkpoint_interval"]["young_s"].get<double>(), std::sqrt(2 * 60.0 * 6000), 1e-9);
  EXPECT_EQ(j["interval_inputs"]["mtbf_s"], 6000.0);
  EXPECT_EQ(j["interval_inputs"]["restart_time_s"], 3000.0);
  EXPECT_EQ(j["interval_inputs"]["given"], json::array({"checkpoint_time_s"}));
  EXPECT_TRUE(j["checkpoint_time_s"].is_null());  // still what the events say
  Result m = RunMfu({"goodput", kProgress, "--checkpoint-time", "60s", "--mtbf", "24h", "--json"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  json k = json::parse(m.out);
  const double delta = 60, big_m = 86400, x = delta / (2 * big_m);
  EXPECT_NEAR(k["checkpoint_interval"]["young_s"].get<double>(), std::sqrt(2 * delta * big_m), 1e-9);
  EXPECT_NEAR(k["checkpoint_interval"]["daly_s"].get<double>(),
              std::sqrt(2 * delta * big_m) * (1 + std::sqrt(x) / 3 + x / 9) - delta, 1e-9);
  EXPECT_EQ(k["mtbf_s"], 6000.0);
  Result text = RunMfu({"goodput", kProgress, "--checkpoint-time", "60s"}, {"COLUMNS=100"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("checkpoint time delta 60.0 s (given), MTBF M 100.0 min (observed)"), std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("--checkpoint-time"), std::string::npos) << text.out;  // the note no longer asks for it
}

// A real NeMo 2 log (tests/data/logs, NVIDIA/NeMo @8cfedd72's resiliency
// notebook) has no timestamps: its timeline runs on the printed
// train_step_timing values, so the wall is their sum and the first step
// (10.31 s, compilation) is charged the mean of the other 19; the rest is
// startup. Both figures are computed here from the log's own numbers.
TEST(GoodputE2e, RealTrainingLogWithoutTimestamps) {
  const std::string path = SourcePath("tests/data/logs/nemo2_resiliency-demo-notebook.log");
  std::ifstream in(path);
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::regex timing("train_step_timing in s: ([0-9.]+)");
  std::vector<double> steps;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), timing); it != std::sregex_iterator(); ++it)
    steps.push_back(std::stod((*it)[1].str()));
  ASSERT_EQ(steps.size(), 20u);
  double sum = 0, rest = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    sum += steps[i];
    rest += i > 0 ? steps[i] : 0;
  }
  const double mean = rest / 19;
  Result r = RunMfu({"goodput", path, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_NEAR(j["wall_s"].get<double>(), sum, 1e-6);
  EXPECT_NEAR(j["badput_s"]["initialization"].get<double>(), steps[0] - mean, 1e-6);
  EXPECT_NEAR(j["productive_s"].get<double>(), rest + mean, 1e-6);
  EXPECT_EQ(j["attempts"], 1);
  EXPECT_EQ(Sum(j), j["wall_s"].get<double>());
}

// Two files, one timeline: the events merge by time.
TEST(GoodputE2e, MergedFiles) {
  Result r = RunMfu({"goodput", kProgress, kJsonl, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["sources"].size(), 2u);
  EXPECT_EQ(Sum(j), j["wall_s"].get<double>());
}

// section 2.5 (telemetry-goodput-inference.md): M = 2.78 h, delta = 60 s,
// R = 10 min -> Young tau = 18.3 min, exact Daly G = 0.842.
TEST(GoodputE2e, WhatIf) {
  Result r = RunMfu({"goodput", "--what-if", "--mtbf", "2.78h", "--checkpoint-time", "60s", "--restart-time", "10m",
                     "--interval", "1h", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_NEAR(j["young_s"].get<double>() / 60, 18.3, 0.05);
  EXPECT_NEAR(j["goodput_young"].get<double>(), 0.842, 0.0005);
  EXPECT_EQ(j["interval_s"], 3600.0);
  EXPECT_LT(j["goodput_interval"].get<double>(), j["goodput_daly"].get<double>());
  Result text =
      RunMfu({"goodput", "--what-if", "--mtbf", "2.78h", "--checkpoint-time", "60s", "--restart-time", "10m"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("18.3 min"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("0.842"), std::string::npos) << text.out;
}

TEST(GoodputE2e, BadFlagsAndFiles) {
  ExpectOneLineError(RunMfu({"goodput", "--what-if", "--mtbf", "5x", "--checkpoint-time", "60s"}), 2,
                     "--mtbf: '5x' is not a duration");
  ExpectOneLineError(RunMfu({"goodput", "--what-if", "--mtbf", "0", "--checkpoint-time", "60s"}), 2, "--mtbf");
  ExpectOneLineError(RunMfu({"goodput", "--what-if", "--mtbf", "24h"}), 2, "--what-if: missing --checkpoint-time");
  ExpectOneLineError(RunMfu({"goodput", "--what-if", "--mtbf", "24h", "--checkpoint-time", "1m", "--interval", "0"}), 2,
                     "--interval");
  ExpectOneLineError(RunMfu({"goodput", "--what-if", "--mtbf", "24h", "--checkpoint-time", "1m", kJsonl}), 2,
                     "--what-if takes no event files");
  ExpectOneLineError(RunMfu({"goodput"}), 2, "give event files");
  ExpectOneLineError(RunMfu({"goodput", kJsonl, "--interval", "1h"}), 2, "--interval needs --what-if");
  ExpectOneLineError(RunMfu({"goodput", kJsonl, "--checkpoint-time", "0"}), 2, "--checkpoint-time");
  ExpectOneLineError(RunMfu({"goodput", kJsonl, "--mfu", "1.5"}), 2, "--mfu");
  ExpectOneLineError(RunMfu({"goodput", kJsonl, "--format", "nope"}), 2, "--format: unknown source 'nope'");
  ExpectOneLineError(RunMfu({"goodput", SourcePath("tests/data/goodput/missing.jsonl")}), 1, "missing.jsonl");
  ExpectOneLineError(RunMfu({"goodput", SourcePath("tests/data/goodput/README.md"), "--format", "goodput-jsonl"}), 1,
                     "README.md:1: record: not valid JSON");
  ExpectOneLineError(RunMfu({"goodput", kJsonl, "--format", "megatron-progress"}), 1, "run.jsonl:1: record");
  Result json_error = RunMfu({"goodput", "--what-if", "--mtbf", "x", "--checkpoint-time", "1m", "--json"});
  EXPECT_EQ(json_error.exit_code, 2);
  EXPECT_EQ(json::parse(json_error.out)["error"]["kind"], "usage");
}

// mfu plan --mtbf: the time to train divided by Daly's expected goodput at
// Daly's interval, here by hand: M = 10,008 s (2.78 h), delta = 60 s,
// R = 600 s.
TEST(GoodputE2e, PlanMtbfFoldsGoodputIntoTimeToTrain) {
  const std::vector<std::string> plan = {"plan",   "--model",  "llama-3.1-8b", "--gpu", "h100",
                                         "--gpus", "64",       "--seq-len",    "8192",  "--global-batch",
                                         "256",    "--tokens", "1T",           "--json"};
  Result base = RunMfu(plan);
  ASSERT_EQ(base.exit_code, 0) << base.err;
  std::vector<std::string> with = plan;
  for (const char* a : {"--mtbf", "2.78h", "--checkpoint-time", "60s", "--restart-time", "10m"})
    with.push_back(a);
  Result failures = RunMfu(with);
  ASSERT_EQ(failures.exit_code, 0) << failures.err;
  const double m = 10008, delta = 60, r = 600, x = delta / (2 * m);
  const double tau = std::sqrt(2 * delta * m) * (1 + std::sqrt(x) / 3 + x / 9) - delta;
  const double g = tau / (m * std::exp(r / m) * (std::exp((tau + delta) / m) - 1));
  const json b = json::parse(base.out), f = json::parse(failures.out);
  const double days = b["top"][0]["time_to_train_days"].get<double>();
  EXPECT_NEAR(f["goodput"]["expected_goodput"].get<double>(), g, 1e-12);
  EXPECT_NEAR(f["goodput"]["daly_s"].get<double>(), tau, 1e-9);
  EXPECT_NEAR(f["top"][0]["failure_free_days"].get<double>(), days, 1e-12 * days);
  EXPECT_NEAR(f["top"][0]["time_to_train_days"].get<double>(), days / g, 1e-9 * days);
  EXPECT_FALSE(b.contains("goodput"));
  std::vector<std::string> text = with;
  std::erase(text, std::string("--json"));
  Result t = RunMfu(text);
  EXPECT_NE(t.out.find("expected goodput 0.842"), std::string::npos) << t.out;
  std::vector<std::string> bad = plan;
  bad.push_back("--checkpoint-time");
  bad.push_back("1m");
  ExpectOneLineError(RunMfu(bad), 2, "--checkpoint-time needs --mtbf");
  bad = plan;
  bad.push_back("--mtbf");
  bad.push_back("soon");
  ExpectOneLineError(RunMfu(bad), 2, "--mtbf: 'soon' is not a duration");
}

// The goodput examples of docs/cli.md's exit-code table, run.
TEST(GoodputE2e, DocumentedExitCodes) {
  std::ifstream in(SourcePath("docs/cli.md"));
  const std::string docs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = docs.find("## Exit codes and errors");
  ASSERT_NE(at, std::string::npos);
  const std::string table = docs.substr(at, docs.find("\n## ", at + 1) - at);
  const std::string no_steps = ::testing::TempDir() + "/goodput_e2e_no_steps.jsonl";
  std::ofstream(no_steps)
      << "{\"job_name\": \"j\", \"job_start_time\": 0}\n{\"job_name\": \"j\", \"job_end_time\": 9}\n";
  struct Example {
    const char* phrase;
    std::vector<std::string> args;
    int code;
  };
  const std::vector<Example> examples = {
      {"a goodput event file that is malformed",
       {"goodput", SourcePath("tests/data/goodput/README.md"), "--format", "goodput-jsonl"},
       1},
      {"holds no training step", {"goodput", no_steps}, 1},
      {"a duration that is not one (`--mtbf 5x`)",
       {"goodput", "--what-if", "--mtbf", "5x", "--checkpoint-time", "1m"},
       2},
  };
  for (const Example& e : examples) {
    EXPECT_NE(table.find(e.phrase), std::string::npos) << e.phrase;
    EXPECT_EQ(RunMfu(e.args).exit_code, e.code) << e.phrase;
  }
}

}  // namespace
