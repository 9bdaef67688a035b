// mfu fleet analyze: a telemetry capture (dcgm-exporter or AMD
// device-metrics-exporter exposition text, or a Prometheus query_range
// answer, from a file or a URL) to estimated MFU per GPU, job, node and the
// fleet, with throttling and health findings (docs/fleet.md).

#include <CLI/CLI.hpp>
#include <cmath>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/fleet_commands.h"
#include "cli/output_files.h"
#include "mfu/file_system.h"
#include "mfu/fleet.h"
#include "mfu/http_fetch.h"
#include "mfu/hwdb.h"
#include "mfu/report_fleet.h"

namespace mfu::cli {
namespace {

// A day of query_range at 30 s for 1,000 GPUs is ~0.6 GB of JSON.
constexpr uint64_t kMaxTelemetryBytes = uint64_t{2} << 30;

class FleetAnalyzeCommand final : public Command {
 public:
  const char* name() const override { return "analyze"; }
  const char* summary() const override { return "Estimated MFU per GPU, job, node and fleet from telemetry"; }

  void Register(CLI::App& app) override {
    app.add_option("input", input_,
                   "dcgm-exporter / AMD exporter /metrics text, or Prometheus query_range JSON: a file or an "
                   "http(s) URL")
        ->required();
    app.add_option("--precision", precision_,
                   "Precision of the jobs' GEMMs: the dense peak that is the denominator [default: bf16, stated]");
    app.add_option("--jobs", jobs_file_, "JSON of the jobs' own throughput: model MFU beside the estimate");
    app.add_option("--job-log", job_logs_,
                   "JOB=FILE: a job's training log (mfu log's formats); its steady-state MFU is the job's reported "
                   "MFU. Repeat it: a job's files are its attempts, in order");
    app.add_option("--hpc-job-mapping-dir", mapping_dir_,
                   "dcgm-exporter's --hpc-job-mapping-dir: a file per GPU index holding job ids");
    app.add_option("--hardware-file", hardware_file_, "CSV adding or overriding accelerators");
    app.add_option("--now", now_s_, "Unix time (s) the staleness check compares with [default: the newest sample]");
    app.add_option("--interval", interval_s_, "Seconds one exposition snapshot stands for")->capture_default_str();
    app.add_option("--stale-after", stale_after_s_, "Seconds after which a GPU's newest sample is stale")
        ->capture_default_str();
    app.add_flag("--json", json_, "Machine-readable output (docs/fleet.md)");
    app.add_option("--csv", csv_dir_, "Also write gpus.csv, jobs.csv and nodes.csv into this directory");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(HardwareDb hw, HardwareDb::LoadBuiltin());
    const RealFileSystem fs;
    if (!hardware_file_.empty())
      MFU_RETURN_IF_ERROR(hw.AddFile(fs, hardware_file_));
    FleetOptions options;
    options.hardware = &hw;
    options.file_system = &fs;
    options.snapshot_interval_s = interval_s_;
    options.stale_after_s = stale_after_s_;
    options.hpc_job_mapping_dir = mapping_dir_;
    if (now_s_)
      options.now_ms = static_cast<int64_t>(std::llround(*now_s_ * 1000));
    if (!precision_.empty()) {
      StatusOr<DType> d = ParseDType(precision_);
      if (!d.ok())
        return InvalidArgumentError("--precision: " + d.status().message());
      options.precision = *d;
    }
    if (!jobs_file_.empty()) {
      MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(jobs_file_, kMaxConfigFileBytes));
      MFU_ASSIGN_OR_RETURN(options.job_reports, ParseFleetJobs(text, jobs_file_, job_logs_));
    } else {
      MFU_RETURN_IF_ERROR(AddFleetJobLogs(job_logs_, options.job_reports));
    }
    if (!mapping_dir_.empty()) {
      MFU_ASSIGN_OR_RETURN(FileInfo info, fs.Stat(mapping_dir_));
      if (info.kind != FileKind::kDirectory)
        return NotFoundError("--hpc-job-mapping-dir " + mapping_dir_ + ": not a directory");
    }
    std::string text;
    if (IsHttpUrl(input_)) {
      HttpFetchOptions fetch;
      fetch.timeout_s = 30;
      fetch.max_bytes = kMaxTelemetryBytes;
      MFU_ASSIGN_OR_RETURN(text, HttpGet(input_, fetch));
    } else {
      MFU_ASSIGN_OR_RETURN(text, fs.ReadFile(input_, kMaxTelemetryBytes));
    }
    MFU_ASSIGN_OR_RETURN(FleetReport report, AnalyzeFleet(text, input_, options));
    if (!csv_dir_.empty())
      MFU_RETURN_IF_ERROR(WriteOutputFiles(csv_dir_, RenderFleetCsv(report)));
    ctx.out << ctx.reporter(json_).Report(report);
    return Status::Ok();
  }

 private:
  std::string input_, precision_, jobs_file_, mapping_dir_, hardware_file_, csv_dir_;
  std::vector<std::string> job_logs_;
  std::optional<double> now_s_;
  double interval_s_ = 30, stale_after_s_ = 120;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeFleetAnalyzeCommand() {
  return std::make_unique<FleetAnalyzeCommand>();
}

}  // namespace mfu::cli
