// mfu goodput: a job's events (training logs, progress.txt,
// ml-goodput-measurement JSONL, Slurm accounting; several files merged)
// to productive time, badput by category, ETTR, MTBF and the optimal
// checkpoint interval; --what-if: the intervals and expected goodput from
// an MTBF, a checkpoint time and a restart time alone (docs/goodput.md).

#include <CLI/CLI.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "mfu/file_system.h"
#include "mfu/goodput.h"
#include "mfu/report_goodput.h"

namespace mfu::cli {
namespace {

// A file's content that is not what it should be is a data error (exit 1),
// not a usage error, whatever code the library chose.
Status AsDataError(const Status& s) {
  return s.code() == StatusCode::kInvalidArgument ? ParseError(s.message()) : s;
}

// `text` of `flag` as seconds: a usage error naming the flag.
StatusOr<double> Duration(const std::string& flag, const std::string& text) {
  StatusOr<double> d = ParseDuration(text);
  if (!d.ok())
    return InvalidArgumentError(flag + ": " + d.status().message());
  return *d;
}

class GoodputCommand final : public Command {
 public:
  const char* name() const override { return "goodput"; }
  const char* summary() const override {
    return "Productive time, badput, ETTR and the checkpoint interval from a job's events";
  }

  void Register(CLI::App& app) override {
    app.add_option("events", events_,
                   "Event files, merged: training logs, progress.txt, ml-goodput-measurement JSONL, sacct "
                   "--parsable2 output, Slurm job-completion logs");
    app.add_option("--format", format_,
                   "Source format of every file: megatron-progress, goodput-jsonl, sacct, slurm-jobcomp, "
                   "training-log [default: detected per file]");
    app.add_option("--mfu", mfu_, "Steady-state MFU (a fraction, 0.4): effective MFU = MFU x ETTR");
    app.add_flag("--what-if", what_if_, "No events: the intervals and expected goodput from the three durations");
    app.add_option("--mtbf", mtbf_,
                   "The job's mean time between failures (24h, 90m, ...) [default with events: observed]");
    app.add_option("--checkpoint-time", checkpoint_time_,
                   "Blocking time of one checkpoint save (60s) [default with events: observed]");
    app.add_option("--restart-time", restart_time_,
                   "Failure to training again (detect, reschedule, init, restore) [default: observed with events, "
                   "else 0]");
    app.add_option("--interval", interval_, "--what-if: also the expected goodput at this checkpoint interval");
    app.add_flag("--json", json_, "Machine-readable output (docs/goodput.md)");
  }

  Status Run(const CommandContext& ctx) override { return what_if_ ? RunWhatIf(ctx) : RunEvents(ctx); }

 private:
  Status RunWhatIf(const CommandContext& ctx) {
    if (!events_.empty())
      return InvalidArgumentError("--what-if takes no event files (got " + events_.front() + ")");
    std::string missing;
    if (mtbf_.empty())
      missing += "--mtbf";
    if (checkpoint_time_.empty())
      missing += std::string(missing.empty() ? "" : ", ") + "--checkpoint-time";
    if (!missing.empty())
      return InvalidArgumentError("--what-if: missing " + missing);
    GoodputWhatIfRequest request;
    MFU_ASSIGN_OR_RETURN(request.mtbf_s, Duration("--mtbf", mtbf_));
    MFU_ASSIGN_OR_RETURN(request.checkpoint_time_s, Duration("--checkpoint-time", checkpoint_time_));
    if (!restart_time_.empty()) {
      MFU_ASSIGN_OR_RETURN(request.restart_time_s, Duration("--restart-time", restart_time_));
    }
    if (!interval_.empty()) {
      MFU_ASSIGN_OR_RETURN(request.interval_s, Duration("--interval", interval_));
      if (!(request.interval_s > 0))
        return InvalidArgumentError("--interval must be a positive duration (got " + interval_ + ")");
    }
    MFU_ASSIGN_OR_RETURN(GoodputWhatIf study, GoodputWhatIfStudy(request));
    ctx.out << ctx.reporter(json_).Report(study);
    return Status::Ok();
  }

  Status RunEvents(const CommandContext& ctx) {
    if (events_.empty())
      return InvalidArgumentError("give event files, or --what-if with --mtbf and --checkpoint-time");
    if (!interval_.empty())
      return InvalidArgumentError("--interval needs --what-if");
    GoodputOptions options;
    if (mfu_)
      options.steady_state_mfu = *mfu_;
    // In place of the observed figures in the interval formulas.
    const std::tuple<const char*, const std::string*, double*> given[] = {
        {"--mtbf", &mtbf_, &options.mtbf_s},
        {"--checkpoint-time", &checkpoint_time_, &options.checkpoint_time_s},
        {"--restart-time", &restart_time_, &options.restart_time_s}};
    for (const auto& [flag, text, value] : given) {
      if (!text->empty()) {
        MFU_ASSIGN_OR_RETURN(*value, Duration(flag, *text));
      }
    }
    MFU_RETURN_IF_ERROR(ValidateGoodputOptions(options));
    GoodputSourceFormat format = GoodputSourceFormat::kAuto;
    if (!format_.empty()) {
      std::optional<GoodputSourceFormat> f = ParseGoodputSourceFormat(format_);
      if (!f)
        return InvalidArgumentError("--format: unknown source '" + format_ +
                                    "' (megatron-progress, goodput-jsonl, sacct, slurm-jobcomp, training-log)");
      format = *f;
    }
    const RealFileSystem fs;
    std::vector<GoodputEvent> all;
    for (const std::string& path : events_) {
      StatusOr<std::vector<GoodputEvent>> ev = ReadGoodputEventsFile(fs, path, format);
      if (!ev.ok())
        return AsDataError(ev.status());
      all.insert(all.end(), ev->begin(), ev->end());
    }
    StatusOr<GoodputReport> report = ComputeGoodput(all, options);
    if (!report.ok())
      return AsDataError(report.status());
    ctx.out << ctx.reporter(json_).Report(*report, events_);
    return Status::Ok();
  }

  std::vector<std::string> events_;
  std::string format_, mtbf_, checkpoint_time_, restart_time_, interval_;
  std::optional<double> mfu_;
  bool what_if_ = false;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeGoodputCommand() {
  return std::make_unique<GoodputCommand>();
}

}  // namespace mfu::cli
