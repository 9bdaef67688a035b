// End-to-end tests of the CLI surface of issue #12: one flag vocabulary
// (canonical flags, hidden old spellings, one meaning per short option),
// unknown and missing flags, values checked against their range at parse time
// (no "0 means not given"), the command overview, `mfu clusters`, exit codes
// and the --json error object, width-aware text, and docs/cli.md's vocabulary
// table against every command's --help. Each test reproduces an example of
// the issue and checks the fixed behaviour.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run_mfu.h"

namespace {

using mfu_e2e::Result;
using mfu_e2e::RunMfu;
using mfu_e2e::SourcePath;

void ExpectUsageError(const Result& r, const std::string& fragment, int code = 2) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(r.err.rfind("mfu: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << "missing '" << fragment << "' in: " << r.err;
}

const std::vector<std::string> kCalc = {"calc",   "--model", "llama-3.1-8b", "--gpu", "h100",
                                        "--gpus", "8",       "--seq-len",    "8192"};
const std::vector<std::string> kPlan = {"plan",   "--model", "llama-3.2-1b", "--gpu", "h100",
                                        "--gpus", "8",       "--seq-len",    "2048"};
const std::vector<std::string> kPredict = {"predict", "--model", "llama-3.1-8b", "--gpu", "h100",
                                           "--gpus",  "8",       "--seq-len",    "8192"};
const std::vector<std::string> kInfer = {"infer",       "--model", "llama-3.1-8b", "--gpu", "h100",
                                         "--input-len", "1000",    "--output-len", "200"};

std::vector<std::string> With(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

// Issue: "mfu calc ... --tokens-per-second 1000" -> "the following arguments
// were not expected: 1000 --tokens-per-second".
TEST(CliFlags, UnknownFlagSuggestsTheClosest) {
  Result r = RunMfu(With(kCalc, {"--tokens-per-second", "1000"}));
  ExpectUsageError(r, "unknown flag '--tokens-per-second' (did you mean '--tokens-per-sec'?)");
  EXPECT_EQ(r.err.find("not expected"), std::string::npos) << r.err;
  // A hidden old spelling is a candidate too, suggested as the canonical flag.
  ExpectUsageError(RunMfu(With(kPlan, {"--gbz", "64"})), "(did you mean '--global-batch'?)");
}

TEST(CliFlags, UnderscoresReadAsDashes) {
  Result r = RunMfu({"flops", "--model", "llama-3.1-8b", "--seq_len", "2048", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["seq_len"], 2048);
}

// Issue: "mfu plan ... --global-batch 64" -> "--gbs is required".
TEST(CliFlags, OneBatchVocabulary) {
  Result plan = RunMfu(With(kPlan, {"--global-batch", "64", "--top", "1", "--json"}));
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  Result old = RunMfu(With(kPlan, {"--gbs", "64", "--top", "1", "--json"}));
  ASSERT_EQ(old.exit_code, 0) << old.err;
  EXPECT_EQ(nlohmann::json::parse(plan.out)["top"], nlohmann::json::parse(old.out)["top"]);
  Result predict = RunMfu(With(kPredict, {"--tp", "2", "--global-batch", "64", "--micro-batch", "1", "--json"}));
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  EXPECT_EQ(predict.out, RunMfu(With(kPredict, {"--tp", "2", "--gbs", "64", "--mbs", "1", "--json"})).out);
  Result flops = RunMfu({"flops", "--model", "llama-3.1-8b", "--global-batch", "4", "--json"});
  ASSERT_EQ(flops.exit_code, 0) << flops.err;
  Result flops_old = RunMfu({"flops", "--model", "llama-3.1-8b", "--batch", "4", "--json"});
  EXPECT_EQ(flops.out, flops_old.out);
  Result memory = RunMfu({"memory", "--model", "llama-3.1-8b", "--micro-batch", "2", "--json"});
  EXPECT_EQ(memory.out, RunMfu({"memory", "--model", "llama-3.1-8b", "--mbs", "2", "--json"}).out);
}

// Old spellings still work but are not shown in --help.
TEST(CliFlags, DeprecatedSpellingsHidden) {
  struct Case {
    std::string command, old_flag, canonical;
  };
  for (const Case& c :
       {Case{"memory", "--weight-dtype", "--weight-precision"}, Case{"memory", "--kv-dtype", "--kv-precision"},
        Case{"memory", "--grad-dtype", "--grad-precision"}, Case{"memory", "--mbs", "--micro-batch"},
        Case{"memory", "--gbs", "--global-batch"}, Case{"predict", "--gbs", "--global-batch"},
        Case{"plan", "--mbs", "--micro-batch"}, Case{"trace", "--step-time", "--step-window"},
        Case{"flops", "--batch", "--global-batch"}}) {
    Result help = RunMfu({c.command, "--help"});
    ASSERT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find(c.canonical), std::string::npos) << c.command << " " << c.canonical;
    EXPECT_EQ(std::regex_search(help.out, std::regex(c.old_flag + "\\b")), false) << c.command << " " << c.old_flag;
  }
  Result a = RunMfu({"memory", "--model", "llama-3.1-8b", "--weight-dtype", "fp8", "--kv-dtype", "fp8", "--json"});
  Result b =
      RunMfu({"memory", "--model", "llama-3.1-8b", "--weight-precision", "fp8", "--kv-precision", "fp8", "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

// Issue: "--step-time is seconds in calc and cpu|gpu in trace".
TEST(CliFlags, TraceStepWindow) {
  const std::string trace = SourcePath("tests/data/traces/triton.json.gz");
  Result a = RunMfu({"trace", trace, "--step-window", "gpu", "--json"});
  Result b = RunMfu({"trace", trace, "--step-time", "gpu", "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

// Issue: "-k is --top in plan and --draft-tokens in infer".
TEST(CliFlags, ShortOptionOneMeaning) {
  Result plan = RunMfu(With(kPlan, {"--global-batch", "64", "-k", "2", "--json"}));
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_EQ(nlohmann::json::parse(plan.out)["top"].size(), 2u);
  ExpectUsageError(RunMfu(With(kInfer, {"-k", "4"})), "unknown flag '-k'");
  Result infer = RunMfu(With(kInfer, {"--draft-tokens", "4", "--acceptance", "0.7"}));
  EXPECT_EQ(infer.exit_code, 0) << infer.err;
}

// Issue: "--mla defaults differ between flops and infer".
TEST(CliFlags, MlaSameDefault) {
  Result flops = RunMfu({"flops", "--model", "deepseek-v3", "--inference", "decode", "--context", "4096", "--json"});
  ASSERT_EQ(flops.exit_code, 0) << flops.err;
  Result explicit_flops = RunMfu(
      {"flops", "--model", "deepseek-v3", "--inference", "decode", "--context", "4096", "--mla", "absorbed", "--json"});
  EXPECT_EQ(flops.out, explicit_flops.out);
  Result help = RunMfu({"infer", "--help"});
  EXPECT_NE(help.out.find("absorbed"), std::string::npos);
}

// Issue: every missing required flag in one message.
TEST(CliFlags, EveryMissingFlagAtOnce) {
  ExpectUsageError(RunMfu({"plan", "--model", "llama-3.2-1b", "--gpu", "h100", "--gpus", "8"}),
                   "missing --seq-len, --global-batch");
  ExpectUsageError(RunMfu({"calc", "--model", "llama-3.1-8b"}), "missing --gpu, --gpus, --seq-len");
}

TEST(CliFlags, StrayValuesNamed) {
  ExpectUsageError(RunMfu(With(kCalc, {"--tokens-per-sec", "1000", "2000"})), "unexpected value '2000'");
  ExpectUsageError(RunMfu({"hw", "show", "h100", "a100"}), "unexpected extra value 'a100'");
}

// Issue: zero, negative, NaN and infinite values read as "not given" or
// silently replaced by a default.
TEST(CliFlags, ValuesCheckedAgainstTheirRange) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {With(kCalc, {"--step-time", "0", "--global-batch", "8"}), "--step-time must be a finite number > 0"},
      {With(kCalc, {"--step-time", "-1", "--global-batch", "8"}), "(got -1)"},
      {With(kCalc, {"--step-time", "nan", "--global-batch", "8"}), "(got nan)"},
      {With(kCalc, {"--step-time", "inf", "--global-batch", "8"}), "(got inf)"},
      {With(kCalc, {"--tokens-per-sec", "1e308"}), "--tokens-per-sec must be"},
      {{"flops", "--model", "llama-3.1-8b", "--inference", "decode", "--context", "-1"},
       "--context must be a positive integer"},
      {With(kPredict, {"--gbs", "0"}), "--global-batch must be a positive integer up to 1000000000 (got 0)"},
      {{"memory", "--model", "llama-3.1-8b", "--context", "0"}, "--context must be a positive integer"},
      {With(kInfer, {"--batch", "0"}), "--batch must be a positive integer"},
      {With(kInfer, {"--measured-tokens-per-sec", "0"}), "--measured-tokens-per-sec must be a finite number > 0"},
      {With(kPlan, {"--gbs", "64", "--max-vpp", "0"}), "--max-vpp must be a positive integer"},
      {With(kPlan, {"--gbs", "64", "--price-per-gpu-hour", "-1"}), "--price-per-gpu-hour must be a finite number >= 0"},
      {With(kPlan, {"--gbs", "64", "--price-per-gpu-hour", "nan"}), "(got nan)"},
      {With(kPlan, {"--gbs", "64", "--micro-batch", "1,0"}), "--micro-batch must be a comma-separated list"},
      {With(kPredict, {"--zero", "4"}), "--zero must be an integer in [0, 3] (got 4)"},
      {{"flops", "--model", ""}, "--model must be a non-empty value (got an empty value)"},
      {With(kInfer, {"--acceptance", "1"}), "--acceptance must be a number in [0, 1) (got 1)"},
      {{"flops", "--model", "llama-3.1-8b", "--seq-len"}, "--seq-len needs a value"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    ExpectUsageError(RunMfu(c.args), c.message);
  }
}

// Issue: "mfu alone says 'a subcommand is required' without listing them;
// mfu help prints the help of help".
TEST(CliOverview, BareAndHelp) {
  Result help = RunMfu({"help"});
  EXPECT_EQ(help.exit_code, 0);
  Result bare = RunMfu({});
  EXPECT_EQ(bare.exit_code, 2);  // a usage error: the overview goes to stderr
  EXPECT_TRUE(bare.out.empty());
  EXPECT_EQ(bare.err, help.out);
  for (const char* command : {"flops", "memory", "calc", "trace", "predict", "plan", "infer", "hw", "clusters",
                              "models", "calibrate", "kernels"}) {
    EXPECT_TRUE(std::regex_search(help.out, std::regex(std::string("\n  ") + command + " +[A-Z]"))) << command;
  }
  for (const char* group : {"count:", "explain:", "optimize:", "data:", "mfu help COMMAND"})
    EXPECT_NE(help.out.find(group), std::string::npos) << group;
}

TEST(CliClusters, ListAndShow) {
  Result list = RunMfu({"clusters", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("dgx-h100"), std::string::npos);
  Result json = RunMfu({"clusters", "list", "--json"});
  ASSERT_EQ(json.exit_code, 0);
  auto j = nlohmann::json::parse(json.out);
  ASSERT_TRUE(j["clusters"].is_array());
  EXPECT_GT(j["clusters"].size(), 3u);
  Result show = RunMfu({"clusters", "show", "dgx-h100", "--json"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  auto s = nlohmann::json::parse(show.out);
  EXPECT_EQ(s["id"], "dgx-h100");
  EXPECT_EQ(s["gpus_per_node"], 8);  // DGX H100: 8 GPUs per node (NVIDIA DGX H100 user guide)
  Result text = RunMfu({"clusters", "show", "dgx-h100"});
  EXPECT_NE(text.out.find("source"), std::string::npos);
  ExpectUsageError(RunMfu({"clusters", "show", "no-such-cluster"}), "no-such-cluster");
  ExpectUsageError(RunMfu({"clusters", "lst"}), "(did you mean 'list'?)");
}

// Issue: "plan --json exits 0 when nothing fits (text exits 1); predict
// exits 0 on DOES NOT FIT".
TEST(CliExitCodes, NothingFitsIsOneInTextAndJson) {
  const std::vector<std::string> plan = {"plan", "--model",   "llama-3.1-405b", "--gpu",          "h100", "--gpus",
                                         "8",    "--seq-len", "8192",           "--global-batch", "64"};
  Result text = RunMfu(plan);
  EXPECT_EQ(text.exit_code, 1) << text.err;
  Result json = RunMfu(With(plan, {"--json"}));
  EXPECT_EQ(json.exit_code, 1) << json.err;
  EXPECT_TRUE(nlohmann::json::parse(json.out)["top"].empty());
  const std::vector<std::string> predict = {"predict",   "--model", "llama-3.1-405b", "--gpu", "h100", "--gpus", "8",
                                            "--seq-len", "8192",    "--global-batch", "64"};
  Result p = RunMfu(predict);
  EXPECT_EQ(p.exit_code, 1) << p.err;
  EXPECT_NE(p.out.find("DOES NOT FIT"), std::string::npos);
  EXPECT_EQ(RunMfu(With(predict, {"--json"})).exit_code, 1);
}

// Issue: "errors under --json put nothing on stdout".
TEST(CliExitCodes, JsonErrorObject) {
  Result usage = RunMfu({"flops", "--model", "llama-3.1-8b", "--seq-len", "0", "--json"});
  ExpectUsageError(usage, "--seq-len must be");
  auto u = nlohmann::json::parse(usage.out);
  EXPECT_EQ(u["error"]["kind"], "usage");
  EXPECT_EQ("mfu: " + u["error"]["message"].get<std::string>() + "\n", usage.err);
  Result data = RunMfu({"flops", "--model", SourcePath("tests/data/bad_configs/missing_key.json"), "--json"});
  ExpectUsageError(data, "num_hidden_layers", 1);
  EXPECT_EQ(nlohmann::json::parse(data.out)["error"]["kind"], "data");
  Result unknown = RunMfu({"flops", "--modle", "x", "--json"});
  EXPECT_EQ(nlohmann::json::parse(unknown.out)["error"]["kind"], "usage");
}

// Every documented exit code: 0, 1 (data), 2 (usage), text and JSON alike.
TEST(CliExitCodes, Documented) {
  EXPECT_EQ(RunMfu({"hw", "list"}).exit_code, 0);
  EXPECT_EQ(RunMfu({"hw", "list", "--json"}).exit_code, 0);
  EXPECT_EQ(RunMfu({"flops", "--model", SourcePath("tests/data/no_such_config.json")}).exit_code, 1);
  EXPECT_EQ(RunMfu({"flopz"}).exit_code, 2);
  EXPECT_EQ(RunMfu({"flops", "--bogus"}).exit_code, 2);
}

// Every example docs/cli.md's exit-code table gives, run: the phrase must be
// in the table and the command must exit with the row's code.
TEST(CliExitCodes, EveryDocumentedExample) {
  std::ifstream in(SourcePath("docs/cli.md"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string docs = buffer.str();
  const size_t at = docs.find("## Exit codes and errors");
  ASSERT_NE(at, std::string::npos);
  const std::string table = docs.substr(at, docs.find("\n## ", at + 1) - at);
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/not_a_trace.json") << R"({"a": 1})";
  std::ofstream(dir + "/error_trace.json")
      << R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": "abc", "dur": 5},
  {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 10, "dur": 5, "args": {"stream": 7, "device": 0}}]})";
  std::ofstream(dir + "/bad_rule.csv") << "class,match,pattern,source\ngemm,regex,([unclosed,x\n";
  const std::string trace = SourcePath("tests/data/traces/triton.json.gz");
  struct Example {
    const char* phrase;  // as docs/cli.md says it
    std::vector<std::string> args;
    int code;
  };
  const std::vector<std::string> calc = {"calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8"};
  const std::vector<Example> examples = {
      {"a config file that is malformed", {"flops", "--model", SourcePath("tests/data/bad_configs/malformed.json")}, 1},
      {"misses a key", {"flops", "--model", SourcePath("tests/data/bad_configs/missing_key.json")}, 1},
      {"has a wrong type", {"flops", "--model", SourcePath("tests/data/bad_configs/wrong_type.json")}, 1},
      {"unsupported `model_type`", {"flops", "--model", SourcePath("tests/data/bad_configs/unknown_type.json")}, 1},
      {"a file that cannot be read", {"flops", "--model", dir + "/no_such_config.json"}, 1},
      {"a `--hardware-file` with a bad row",
       {"hw", "list", "--hardware-file", SourcePath("tests/data/bad_hardware.csv")},
       1},
      {"a trace that is not a Kineto/Chrome trace", {"trace", dir + "/not_a_trace.json"}, 1},
      {"`mfu trace --strict` on a trace with error diagnostics", {"trace", dir + "/error_trace.json", "--strict"}, 1},
      {"`plan` when no configuration fits",
       {"plan", "--model", "llama-3.1-405b", "--gpu", "h100", "--gpus", "8", "--seq-len", "8192", "--global-batch",
        "64"},
       1},
      {"`predict` when the configuration does not fit",
       {"predict", "--model", "llama-3.1-405b", "--gpu", "h100", "--gpus", "8", "--seq-len", "8192", "--global-batch",
        "64"},
       1},
      {"longer than the model's `max_position_embeddings` (flops, memory, calc, infer alike)",
       {"flops", "--model", "llama-3.1-8b", "--seq-len", "200000"},
       1},
      {"(flops, memory, calc, infer alike)", {"memory", "--model", "llama-3.1-8b", "--seq-len", "200000"}, 1},
      {"(flops, memory, calc, infer alike)", With(calc, {"--seq-len", "200000", "--tokens-per-sec", "1000"}), 1},
      {"(flops, memory, calc, infer alike)",
       {"infer", "--model", "llama-3.1-8b", "--gpu", "h100", "--input-len", "200000", "--output-len", "10"},
       1},
      {"a measured throughput implying more than 100% of the dense peak (calc, infer)",
       With(calc, {"--seq-len", "4096", "--tokens-per-sec", "1e12"}), 1},
      {"(calc, infer)",
       {"infer", "--model", "llama-3.1-8b", "--gpu", "h100", "--input-len", "1000", "--output-len", "10",
        "--measured-tokens-per-sec", "1e12"},
       1},
      {"unknown command or flag", {"flopz"}, 2},
      {"unknown command or flag", {"flops", "--bogus"}, 2},
      {"stray argument", {"flops", "--model", "llama-3.1-8b", "extra"}, 2},
      {"a missing required flag", {"predict", "--model", "llama-3.1-8b"}, 2},
      {"a value outside its range", {"flops", "--model", "llama-3.1-8b", "--seq-len", "0"}, 2},
      {"unknown or ambiguous preset or GPU name", {"flops", "--model", "llama"}, 2},
      {"unknown or ambiguous preset or GPU name",
       {"calc", "--model", "llama-3.1-8b", "--gpu", "h1000", "--gpus", "8", "--seq-len", "4096", "--tokens-per-sec",
        "1000"},
       2},
      {"contradictory flags", With(calc, {"--seq-len", "4096", "--tokens-per-sec", "1000", "--step-time", "1"}), 2},
      {"a GPU without a peak for `--precision`",
       {"calc", "--model", "llama-3.1-8b", "--gpu", "v100", "--gpus", "8", "--seq-len", "4096", "--tokens-per-sec",
        "1000", "--precision", "fp8"},
       2},
      {"an invalid rule in `mfu trace --kernel-classes`",
       {"trace", trace, "--kernel-classes", dir + "/bad_rule.csv"},
       2},
      {"`mfu` without a command", {}, 2},
  };
  for (const Example& e : examples) {
    EXPECT_NE(table.find(e.phrase), std::string::npos) << "not in docs/cli.md's exit-code table: " << e.phrase;
    Result r = RunMfu(e.args);
    EXPECT_EQ(r.exit_code, e.code) << e.phrase << ": " << r.err;
    if (!e.args.empty()) {
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << e.phrase << ": " << r.err;
    }
  }
}

size_t Widest(const std::string& text) {
  size_t widest = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    widest = std::max(widest, line.size());
  return widest;
}

// Issue: "plan's table is 143-151 columns, hw list 143, ..., help lines up to
// 210; COLUMNS=80 changes nothing".
TEST(CliWidth, TablesFitColumns) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"hw", "list"}, std::vector<std::string>{"clusters", "list"},
        std::vector<std::string>{"trace", SourcePath("tests/data/traces/dlrm_kineto")},
        std::vector<std::string>{"flops", "--model", "llama-3.1-70b"}, std::vector<std::string>{"plan", "--help"},
        std::vector<std::string>{"infer", "--help"}, std::vector<std::string>{"help"}}) {
    for (int columns : {80, 120}) {
      Result r = RunMfu(args, {"COLUMNS=" + std::to_string(columns)});
      ASSERT_LE(r.exit_code, 1) << args[0] << ": " << r.err;
      EXPECT_LE(Widest(r.out), static_cast<size_t>(columns)) << args[0] << " at " << columns << ":\n" << r.out;
    }
  }
  // plan's table was 143-151 columns: at 120 its configuration column wraps.
  Result plan = RunMfu(With(kPlan, {"--global-batch", "64"}), {"COLUMNS=120"});
  EXPECT_LE(Widest(plan.out), 120u) << plan.out;
  Result piped = RunMfu({"hw", "list"});
  EXPECT_LE(Widest(piped.out), 100u);
  Result wide = RunMfu({"hw", "list", "--wide"}, {"COLUMNS=80"});
  EXPECT_GT(Widest(wide.out), 100u);
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Every flag of every command's --help is in docs/cli.md's vocabulary table.
TEST(CliDocs, EveryHelpFlagInVocabularyTable) {
  const std::string doc = ReadFile(SourcePath("docs/cli.md"));
  const size_t begin = doc.find("## Flag vocabulary");
  ASSERT_NE(begin, std::string::npos);
  const std::string table = doc.substr(begin, doc.find("\n## ", begin + 1) - begin);
  const std::regex flag_re("--[a-z][a-z0-9-]*");
  for (const char* command : {"flops", "memory", "calc", "trace", "predict", "plan", "infer", "hw list", "hw show",
                              "clusters list", "clusters show", "models", "calibrate", "kernels"}) {
    std::vector<std::string> args;
    std::istringstream words(command);
    for (std::string w; words >> w;)
      args.push_back(w);
    args.push_back("--help");
    Result help = RunMfu(args, {"COLUMNS=1000"});
    ASSERT_EQ(help.exit_code, 0) << command;
    std::set<std::string> flags;
    for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), flag_re); it != std::sregex_iterator(); ++it)
      flags.insert(it->str());
    for (const std::string& flag : flags) {
      if (flag == "--help")
        continue;
      EXPECT_NE(table.find("`" + flag + "`"), std::string::npos) << command << ": " << flag << " not in cli.md";
    }
  }
}

}  // namespace
