// mfu fleet serve | rules | dashboard: mfu as a Prometheus exporter in front
// of dcgm-exporter (or AMD's device-metrics-exporter), the Prometheus rules
// that aggregate its per-GPU series, and the Grafana dashboard over them
// (mfu/fleet_exporter.h, docs/fleet.md "Serving to Prometheus").

#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <ctime>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/fleet_commands.h"
#include "mfu/file_system.h"
#include "mfu/fleet_exporter.h"
#include "mfu/version.h"

namespace mfu::cli {
namespace {

struct ListenAddress {
  std::string host;
  int port = 0;
};

// "HOST:PORT", ":PORT" (every interface) or "[::1]:PORT".
StatusOr<ListenAddress> ParseListen(const std::string& text) {
  const auto bad = [&] {
    return InvalidArgumentError("--listen must be HOST:PORT, e.g. 127.0.0.1:9401 (got " + text + ")");
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size())
    return bad();
  ListenAddress out;
  out.host = text.substr(0, colon);
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']')
    out.host = out.host.substr(1, out.host.size() - 2);
  if (out.host.empty())
    out.host = "0.0.0.0";
  const std::string port = text.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return bad();
  out.port = std::stoi(port);
  if (out.port > 65535)
    return bad();
  return out;
}

// Blocks SIGINT and SIGTERM in this thread and every thread it starts; they
// are taken with sigtimedwait, so the server stops from an ordinary thread.
sigset_t BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

class FleetServeCommand final : public Command {
 public:
  const char* name() const override { return "serve"; }
  const char* summary() const override {
    return "Prometheus exporter of estimated MFU per GPU (scrapes dcgm-exporter)";
  }

  void Register(CLI::App& app) override {
    app.add_option("--upstream", upstream_,
                   "Upstream exporter URL (http://host:9400/metrics) or a file read per scrape")
        ->required();
    app.add_option("--listen", listen_, "Address to serve /metrics and /healthz on (port 0: a free port)")
        ->capture_default_str();
    app.add_option("--precision", precision_,
                   "Precision of the jobs' matmuls, selecting the dense peak [default: bf16, stated as an assumption]");
    app.add_option("--jobs", jobs_, "Jobs file (JSON: id, model, tokens_per_sec or step time; docs/fleet.md)");
    app.add_option("--job-log", job_logs_,
                   "JOB=FILE: a job's training log; its steady-state MFU is served as mfu_job_reported_mfu_ratio "
                   "(re-read when it changes). Repeat it: a job's files are its attempts");
    app.add_option("--hpc-job-mapping-dir", mapping_dir_, "dcgm-exporter's --hpc-job-mapping-dir (Slurm job ids)");
    app.add_option("--goodput-events", goodput_events_,
                   "JOB=FILE: a job's goodput event file (mfu goodput's sources), served as "
                   "mfu_job_productive_seconds_total and mfu_job_badput_seconds_total; repeat it, a job's files merge");
    app.add_option("--upstream-timeout", timeout_s_, "Upstream connect and read time-out (s)")->capture_default_str();
    app.add_option("--max-age", max_age_s_,
                   "Serve the last good snapshot, with its own timestamp, for this long after the upstream fails (s; "
                   "0: drop per-GPU series at once)")
        ->capture_default_str();
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(ListenAddress address, ParseListen(listen_));
    MFU_ASSIGN_OR_RETURN(HardwareDb hardware, HardwareDb::LoadBuiltin());
    RealFileSystem fs;
    MFU_ASSIGN_OR_RETURN(FleetExporterOptions options, Options(fs, hardware));
    std::ostream& err = ctx.err;
    options.log = [&err](std::string_view line) {
      err << "mfu fleet serve: " << InFlagSpelling(std::string(line), "fleet") << std::endl;
    };
    MFU_ASSIGN_OR_RETURN(std::unique_ptr<FleetExporter> exporter, FleetExporter::Create(std::move(options)));
    MFU_ASSIGN_OR_RETURN(int port, exporter->Bind(address.host, address.port));
    const std::string shown_host =
        address.host.find(':') != std::string::npos ? "[" + address.host + "]" : address.host;
    return ServeUntilStopped(*exporter, "http://" + shown_host + ":" + std::to_string(port), err);
  }

 private:
  // The exporter's options from the flags.
  StatusOr<FleetExporterOptions> Options(FileSystem& fs, const HardwareDb& hardware) const {
    FleetExporterOptions options;
    options.upstream = upstream_;
    options.fs = &fs;
    options.upstream_timeout_s = timeout_s_;
    options.max_age_s = max_age_s_;
    options.version = kVersion;
    options.analysis.hardware = &hardware;
    options.analysis.hpc_job_mapping_dir = mapping_dir_;
    options.analysis.file_system = &fs;
    if (!precision_.empty()) {
      MFU_ASSIGN_OR_RETURN(DType dtype, ParseDType(precision_));
      options.analysis.precision = dtype;
    }
    if (!jobs_.empty()) {
      MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(jobs_));
      MFU_ASSIGN_OR_RETURN(options.analysis.job_reports, ParseFleetJobs(text, jobs_, job_logs_));
    } else {
      MFU_RETURN_IF_ERROR(AddFleetJobLogs(job_logs_, options.analysis.job_reports));
    }
    for (const std::string& entry : goodput_events_) {
      const size_t eq = entry.find('=');
      if (eq == 0 || eq == std::string::npos || eq + 1 == entry.size())
        return InvalidArgumentError("--goodput-events '" + entry + "': expected JOB=FILE");
      options.goodput_events[entry.substr(0, eq)].push_back(entry.substr(eq + 1));
    }
    return options;
  }

  // Serves on a thread until SIGINT/SIGTERM (or the server fails).
  Status ServeUntilStopped(FleetExporter& exporter, const std::string& url, std::ostream& err) const {
    const sigset_t stop_signals = BlockStopSignals();
    std::atomic<bool> done{false};
    Status served;
    std::thread server([&] {
      served = exporter.Serve();
      done = true;
    });
    err << "mfu fleet serve: listening on " << url << std::endl;
    if (precision_.empty())
      err << "mfu fleet serve: precision bf16 assumed (the dense BF16 peak is the denominator; --precision or a "
             "--jobs entry states it)"
          << std::endl;
    const timespec tick{0, 100'000'000};
    while (!done) {
      if (sigtimedwait(&stop_signals, nullptr, &tick) > 0)
        break;
    }
    while (!done) {  // Stop() may come before the server listens
      exporter.Stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    server.join();
    return served;
  }

  std::string upstream_, listen_ = ":9401", precision_, jobs_, mapping_dir_;
  std::vector<std::string> goodput_events_, job_logs_;
  double timeout_s_ = 5, max_age_s_ = 0;
};

class PrintCommand final : public Command {
 public:
  PrintCommand(const char* name, const char* summary, std::string (*render)())
      : name_(name), summary_(summary), render_(render) {}
  const char* name() const override { return name_; }
  const char* summary() const override { return summary_; }
  void Register(CLI::App&) override {}
  Status Run(const CommandContext& ctx) override {
    ctx.out << render_();
    return Status::Ok();
  }

 private:
  const char* name_;
  const char* summary_;
  std::string (*render_)();
};

}  // namespace

std::unique_ptr<Command> MakeFleetServeCommand() {
  return std::make_unique<FleetServeCommand>();
}

std::unique_ptr<Command> MakeFleetRulesCommand() {
  return std::make_unique<PrintCommand>(
      "rules", "Prometheus recording and alerting rules over mfu's series (per job, node, fleet)", RenderFleetRules);
}

std::unique_ptr<Command> MakeFleetDashboardCommand() {
  return std::make_unique<PrintCommand>("dashboard", "Grafana dashboard JSON over mfu's series and rules",
                                        RenderFleetDashboard);
}

}  // namespace mfu::cli
