// End-to-end tests of mfu trace on hostile input (issue #12): a truncated
// gzip named as such, the --max-events cap (exit 1 naming the file and the
// cap) and --quiet.

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
std::string Temp(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// The first 43 bytes of a real gzip trace: "no traceEvents array found in 43
// bytes" before; now the stream is named truncated.
TEST(TraceInputE2e, TruncatedGzipIsNamed) {
  std::ifstream in(SourcePath("tests/data/traces/h100_qwen_inference.json.gz"), std::ios::binary);
  std::string head(43, '\0');
  ASSERT_TRUE(in.read(head.data(), 43));
  const std::string path = Temp("cut43.json.gz", head);
  ExpectOneLineError(RunMfu({"trace", path}), 1, path + ": truncated gzip stream");
}

TEST(TraceInputE2e, MaxEventsCapIsADataError) {
  const std::string path = SourcePath("tests/data/traces/h100_qwen_inference.json.gz");
  ExpectOneLineError(RunMfu({"trace", path, "--max-events", "1000"}), 1,
                     path + ": more than 1000 events (the --max-events cap");
  Result ok = RunMfu({"trace", path, "--max-events", "0", "--quiet", "--json"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(ok.err.empty()) << ok.err;  // stderr is a pipe: no progress line
}

}  // namespace
