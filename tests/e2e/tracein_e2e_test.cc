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

namespace {
struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs the mfu binary with `args`, capturing stdout and stderr separately.
Result RunMfu(const std::vector<std::string>& args) {
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0)
    return {};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    std::vector<char*> argv;
    std::string binary = MFU_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  Result r;
  std::array<pollfd, 2> fds{{{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0 && poll(fds.data(), fds.size(), 30000) > 0) {
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
        continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// Bad input gives exactly one line on stderr, starting "mfu: ".
void ExpectOneLineError(const Result& r, int code, const std::string& fragment) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(r.err.rfind("mfu: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << "missing '" << fragment << "' in: " << r.err;
}

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
