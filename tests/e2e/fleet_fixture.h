#pragma once

// Fixtures of the fleet exporter tests and benchmark
// (tests/e2e/fleet_*_e2e_test.cc, bench/fleet_serve_benchmark.cc): an
// upstream exporter on loopback whose answer a test sets (a body, garbage, a
// slow answer, an HTTP error), child processes stopped by their PID (SIGTERM,
// wait, SIGKILL) when they go out of scope, scratch directories, free ports
// and a bounded run of a tool with its output captured.

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testing/telemetry_gen.h"

namespace mfu_fleet_test {

// What the fixture upstream answers on /metrics.
enum class UpstreamMode { kBody, kGarbage, kSlow, kError500 };

class UpstreamFixture {
 public:
  // Listens on 127.0.0.1:`port` (0: a free port; a port given again after a
  // fixture on it is gone: an upstream restarted).
  explicit UpstreamFixture(int port = 0) {
    server_.new_task_queue = [] { return new httplib::ThreadPool(8); };
    // An idle kept-alive connection is closed after 1 s (cpp-httplib's 5 s
    // default made stopping a fixture with a client connected take 5 s).
    server_.set_keep_alive_timeout(1);
    // dcgm-exporter (Go's net/http) serves any number of requests on one
    // connection; cpp-httplib's default closes it after 5.
    server_.set_keep_alive_max_count(100000);
    server_.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
      ++requests_;
      {
        std::lock_guard lock(mu_);
        client_ports_.insert(req.remote_port);
      }
      switch (mode_.load()) {
        case UpstreamMode::kBody: {
          std::lock_guard lock(mu_);
          res.set_content(body_, "text/plain; version=0.0.4");
          return;
        }
        case UpstreamMode::kGarbage:
          res.set_content("<html><body>502 Bad Gateway {{{ not exposition\n", "text/html");
          return;
        case UpstreamMode::kSlow:
          std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms_.load()));
          res.set_content("", "text/plain");
          return;
        case UpstreamMode::kError500:
          res.status = 500;
          res.set_content("internal error\n", "text/plain");
          return;
      }
    });
    port_ = port == 0 ? server_.bind_to_any_port("127.0.0.1") : (server_.bind_to_port("127.0.0.1", port) ? port : -1);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // Until the thread is inside listen_after_bind, stop() is a no-op
    // (cpp-httplib only stops a running server), so a fixture destroyed
    // that soon would join a thread that never ends: wait for it.
    if (port_ > 0) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!server_.is_running() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~UpstreamFixture() {
    server_.stop();
    thread_.join();
  }
  UpstreamFixture(const UpstreamFixture&) = delete;
  UpstreamFixture& operator=(const UpstreamFixture&) = delete;

  void SetBody(std::string body) {
    std::lock_guard lock(mu_);
    body_ = std::move(body);
    mode_ = UpstreamMode::kBody;
  }
  void SetMode(UpstreamMode mode) { mode_ = mode; }
  void SetSlowMs(int ms) { slow_ms_ = ms; }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/metrics"; }
  int requests() const { return requests_; }
  // TCP connections that sent a request (distinct client ports on loopback).
  size_t connections() {
    std::lock_guard lock(mu_);
    return client_ports_.size();
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  std::mutex mu_;
  std::string body_;
  std::set<int> client_ports_;
  std::atomic<UpstreamMode> mode_{UpstreamMode::kBody};
  std::atomic<int> slow_ms_{3000};
  std::atomic<int> requests_{0};
};

// A port nothing listens on right now (bound, read, closed). Used both for
// "connection refused" and as a free port for a child to bind.
inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  const int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

// A scratch directory removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "mfu-fleet-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : "";
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty())
      std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& content) const {
    const std::string file = path_ + "/" + name;
    std::ofstream(file, std::ios::binary) << content;
    return file;
  }

 private:
  std::string path_;
};

inline std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A child process with stdout and stderr in files; stopped by its PID when
// it goes out of scope, even after a failed assertion: SIGTERM, up to
// `grace_s` to exit, then SIGKILL.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::string& out_file, const std::string& err_file)
      : err_file_(err_file) {
    pid_ = fork();
    if (pid_ == 0) {
      const int out = open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, 1);
      dup2(err, 2);
      const int null = open("/dev/null", O_RDONLY);
      dup2(null, 0);
      std::vector<std::string> copy = argv;
      std::vector<char*> args;
      for (auto& a : copy)
        args.push_back(a.data());
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
  }
  ~ChildProcess() { Stop(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running() {
    if (exited_ || pid_ <= 0)
      return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      status_ = status;
      return false;
    }
    return true;
  }
  // SIGTERM, then SIGKILL after `grace_s`. Returns the exit status
  // (waitpid's), -1 if there was no child.
  int Stop(double grace_s = 5) {
    if (pid_ <= 0)
      return -1;
    if (!exited_) {
      kill(pid_, SIGTERM);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
      while (running() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (!exited_) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status_, 0);
        exited_ = true;
        killed_ = true;
      }
    }
    return status_;
  }
  bool killed() const { return killed_; }
  std::string Stderr() const { return ReadWhole(err_file_); }

  // Waits up to `timeout_s` for `needle` in the child's stderr; returns the
  // text from the needle to the end of its line ("" on time-out or exit).
  std::string WaitForStderr(const std::string& needle, double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string err = Stderr();
      const size_t at = err.find(needle);
      if (at != std::string::npos && err.find('\n', at) != std::string::npos)
        return err.substr(at, err.find('\n', at) - at);
      if (!running())
        return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "";
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false, killed_ = false;
  int status_ = -1;
  std::string err_file_;
};

struct ToolResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `argv` (absolute path first) with `stdin_file` as its input (or
// /dev/null), killed after `timeout_s`.
inline ToolResult RunTool(const std::vector<std::string>& argv, const std::string& stdin_file = "",
                          unsigned timeout_s = 30) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0)
    return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    close(pipe_fds[0]);
    const int in = open(stdin_file.empty() ? "/dev/null" : stdin_file.c_str(), O_RDONLY);
    dup2(in, 0);
    std::vector<std::string> copy = argv;
    std::vector<char*> args;
    for (auto& a : copy)
      args.push_back(a.data());
    args.push_back(nullptr);
    alarm(timeout_s);
    execv(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  ToolResult r;
  char buf[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;)
    r.output.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// Latency percentile `p` (0-1) of `samples` (sorted in place).
inline double Percentile(std::vector<double>& samples, double p) {
  if (samples.empty())
    return 0;
  std::sort(samples.begin(), samples.end());
  const size_t at = std::min(samples.size() - 1, static_cast<size_t>(p * static_cast<double>(samples.size())));
  return samples[at];
}

// The fleet of the end-to-end tests: 8 H100 SXM5 GPUs (989.4 dense BF16
// TFLOP/s, boost 1980 MHz: data/hardware/accelerators.csv) on two nodes, two
// Slurm jobs. Estimated MFU = tensor activity x SM clock / boost clock:
//   job 1000, GPUs 0-3 at 1980 MHz, tensor 0.5 0.5 0.7 0.7 -> MFU the same;
//   job 1001, GPUs 4-7 at 990 MHz (sw_power_cap, bit 0x4), tensor 0.4 0.4
//   0.4 0.2 -> MFU 0.2 0.2 0.2 0.1; GPU 7 a straggler (0.2 < 0.8 x 0.4).
// node-0 holds GPUs 0, 1, 4, 5 and node-1 GPUs 2, 3, 6, 7.
inline std::vector<mfu::testing::TelemetryGenGpu> E2eGpus() {
  auto gpus = mfu::testing::MakeTelemetryGpus(8, 8, 2, mfu::testing::TelemetryGenJobLabels::kHpcJob);
  const double tensor[] = {0.5, 0.5, 0.7, 0.7, 0.4, 0.4, 0.4, 0.2};
  for (size_t i = 0; i < gpus.size(); ++i) {
    auto& g = gpus[i];
    g.model_name = "NVIDIA H100 80GB HBM3";
    g.hostname = (i % 4) < 2 ? "node-0" : "node-1";
    g.index = static_cast<int>(i % 2 + (i >= 4 ? 2 : 0));
    g.tensor_active = tensor[i];
    g.sm_clock_mhz = i < 4 ? 1980 : 990;
    g.clocks_event_reasons = i < 4 ? 0 : 4;
    g.gpu_util_percent = 98;
    g.power_w = 600;
    g.xid = 0;
  }
  return gpus;
}

inline std::string E2eExposition() {
  mfu::testing::ExpositionGenOptions options;
  options.gpus = E2eGpus();
  return mfu::testing::GenerateExposition(options);
}

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
  int64_t timestamp_ms = 0;
};

// The samples of exposition text (the simple form mfu writes: no escapes
// inside label values beyond \", values without spaces).
inline std::vector<Sample> ParseSamples(const std::string& text) {
  std::vector<Sample> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    Sample s;
    size_t at = line.find_first_of("{ ");
    s.name = line.substr(0, at);
    if (line[at] == '{') {
      const size_t end = line.find("} ", at);
      std::string labels = line.substr(at + 1, end - at - 1);
      for (size_t p = 0; p < labels.size();) {
        const size_t eq = labels.find("=\"", p);
        size_t q = eq + 2;
        std::string value;
        while (q < labels.size() && labels[q] != '"') {
          if (labels[q] == '\\')
            ++q;
          value += labels[q++];
        }
        s.labels[labels.substr(p, eq - p)] = value;
        p = q + 2;
      }
      at = end + 1;
    }
    std::istringstream rest(line.substr(at));
    std::string value;
    rest >> value >> s.timestamp_ms;
    s.value = value == "+Inf" ? INFINITY : std::stod(value);
    out.push_back(s);
  }
  return out;
}

// The samples of `name` whose labels include `label`=`value`.
inline std::vector<Sample> Find(const std::vector<Sample>& samples, const std::string& name,
                                const std::string& label = "", const std::string& value = "") {
  std::vector<Sample> out;
  for (const Sample& s : samples) {
    if (s.name != name)
      continue;
    auto it = s.labels.find(label);
    if (label.empty() || (it != s.labels.end() && it->second == value))
      out.push_back(s);
  }
  return out;
}

}  // namespace mfu_fleet_test
