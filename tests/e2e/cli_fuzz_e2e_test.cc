// A seeded fuzz-style test of the whole CLI (issue #12, "Must show"): random
// flag/value combinations drawn from every command's --help (the vocabulary)
// with hostile values (0, -1, nan, inf, 1e308, empty, huge, text), over every
// command with small inputs. Every run must exit 0, 1 or 2 (no signal, no
// hang past the per-run limit), print exactly one stderr line when it fails,
// and never print an MFU above 100% without a warning.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
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

struct Base {
  std::vector<std::string> args;  // a valid invocation
};

std::vector<Base> Bases() {
  return {
      {{"flops", "--model", "llama-3.2-1b"}},
      {{"memory", "--model", "llama-3.2-1b"}},
      {{"calc", "--model", "llama-3.2-1b", "--gpu", "h100", "--gpus", "8", "--seq-len", "2048", "--tokens-per-sec",
        "100k"}},
      {{"trace", SourcePath("tests/data/traces/triton.json.gz")}},
      {{"predict", "--model", "llama-3.2-1b", "--gpu", "h100", "--gpus", "8", "--seq-len", "2048"}},
      {{"plan", "--model", "llama-3.2-1b", "--gpu", "h100", "--gpus", "8", "--seq-len", "2048", "--global-batch",
        "64"}},
      {{"infer", "--model", "llama-3.2-1b", "--gpu", "h100", "--input-len", "512", "--output-len", "128"}},
      {{"hw", "list"}},
      {{"hw", "show", "h100"}},
      {{"clusters", "list"}},
      {{"clusters", "show", "dgx-h100"}},
      {{"models"}},
      {{"kernels", "--summary"}},
  };
}

// The flags a command's --help lists, except those that write files.
std::vector<std::string> HelpFlags(const std::vector<std::string>& base) {
  std::vector<std::string> args(base.begin(), base.begin() + (base[0] == "hw" || base[0] == "clusters" ? 2 : 1));
  args.push_back("--help");
  Result help = RunMfu(args);
  std::set<std::string> flags;
  const std::regex flag_re("(^|[ ,])(--[a-z][a-z0-9-]*|-[a-zA-Z])\\b");
  for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), flag_re); it != std::sregex_iterator(); ++it)
    flags.insert((*it)[2].str());
  for (const char* skip : {"--help", "-h", "--write", "-w", "--write-vector-kernels", "--csv"})
    flags.erase(skip);
  return {flags.begin(), flags.end()};
}

// The largest percentage after "MFU" on a line without a warning nearby.
bool UnflaggedMfuAbove100(const std::string& out, std::string& line_out) {
  if (out.find("warning") != std::string::npos || out.find("WARNING") != std::string::npos)
    return false;
  std::istringstream in(out);
  const std::regex pct("([0-9][0-9,]*\\.?[0-9]*)%");
  for (std::string line; std::getline(in, line);) {
    if (line.find("MFU") == std::string::npos)
      continue;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), pct); it != std::sregex_iterator(); ++it) {
      std::string number = (*it)[1].str();
      number.erase(std::remove(number.begin(), number.end(), ','), number.end());
      if (std::stod(number) > 100) {
        line_out = line;
        return true;
      }
    }
  }
  return false;
}

TEST(CliFuzz, RandomFlagsNeverCrashHangOrMislead) {
  const std::vector<std::string> values = {"0",
                                           "-1",
                                           "nan",
                                           "inf",
                                           "-inf",
                                           "1e308",
                                           "",
                                           "1",
                                           "2",
                                           "8",
                                           "64",
                                           "0.5",
                                           "1,2",
                                           "bf16",
                                           "fp8",
                                           "int4",
                                           "abc",
                                           "none",
                                           "99999999999999999999",
                                           "1e-300",
                                           "4096",
                                           "1k"};
  std::vector<Base> bases = Bases();
  std::vector<std::vector<std::string>> flags;
  for (const Base& b : bases)
    flags.push_back(HelpFlags(b.args));
  std::mt19937 rng(20261201);
  int failures = 0;
  for (int run = 0; run < 300 && failures < 10; ++run) {
    const size_t which = rng() % bases.size();
    std::vector<std::string> args = bases[which].args;
    const int extra = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < extra && !flags[which].empty(); ++k) {
      std::string flag = flags[which][rng() % flags[which].size()];
      if (rng() % 8 == 0)
        std::replace(flag.begin(), flag.end(), '-', '_'), flag.replace(0, 2, "--");  // --seq_len style
      args.push_back(flag);
      if (rng() % 6 != 0)  // sometimes a switch, or a flag missing its value
        args.push_back(values[rng() % values.size()]);
    }
    std::string command;
    for (const std::string& a : args)
      command += " '" + a + "'";
    SCOPED_TRACE("mfu" + command);
    Result r = RunMfu(args, {}, 20);
    bool ok = !r.signaled && r.exit_code >= 0 && r.exit_code <= 2;
    EXPECT_TRUE(ok) << "exit " << r.exit_code << "\n" << r.err;
    if (r.exit_code != 0) {
      const bool one_line = std::count(r.err.begin(), r.err.end(), '\n') == 1 && r.err.rfind("mfu: ", 0) == 0;
      EXPECT_TRUE(one_line) << r.err;
      ok = ok && one_line;
    }
    std::string line;
    const bool misleading = UnflaggedMfuAbove100(r.out, line);
    EXPECT_FALSE(misleading) << line;
    if (!ok || misleading)
      ++failures;
  }
}

}  // namespace
