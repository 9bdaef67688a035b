#pragma once

// Runs the mfu binary for every e2e test (tests/e2e/*_e2e_test.cc): stdout
// and stderr captured apart, the wall time measured, the environment
// changed by `env` ("COLUMNS=80"), and a time limit after which the run is
// killed (SIGALRM survives execv) and reported as exit 128 + SIGALRM.

#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

namespace mfu_e2e {

struct Result {
  int exit_code = -1;
  bool signaled = false;
  std::string out;
  std::string err;
  double seconds = 0;  // wall time of the run
};

// `run_as_uid` >= 0 (a root test only): the binary runs as that user, so a
// permission test means something when the suite runs as root.
inline Result RunMfu(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                     unsigned timeout_s = 30, int run_as_uid = -1) {
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0)
    return {};
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    unsetenv("COLUMNS");
    for (const std::string& e : env)
      putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv;
    std::string binary = MFU_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    if (run_as_uid >= 0 && (setgroups(0, nullptr) != 0 || setgid(static_cast<gid_t>(run_as_uid)) != 0 ||
                            setuid(static_cast<uid_t>(run_as_uid)) != 0))
      _exit(126);
    alarm(timeout_s);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  Result r;
  std::array<pollfd, 2> fds{{{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0 && poll(fds.data(), fds.size(), -1) > 0) {
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
  r.signaled = WIFSIGNALED(status);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

inline std::string SourcePath(const std::string& rel) {
  return std::string(MFU_SOURCE_DIR) + "/" + rel;
}

// Bad input gives exactly one line on stderr, starting "mfu: ", with the
// documented exit code and `fragment` in it.
inline void ExpectOneLineError(const Result& r, int code, const std::string& fragment) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(r.err.rfind("mfu: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << "missing '" << fragment << "' in: " << r.err;
}

}  // namespace mfu_e2e
