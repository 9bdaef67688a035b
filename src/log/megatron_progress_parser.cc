// Megatron-LM / Megatron-Bridge progress.txt (training-logs.md sec. 2.3, sec. 3.3):
// append_to_progress_log (megatron/training/utils/log_utils.py L114-135
// @d98e8a64) writes, tab-separated,
//   f"{datetime.now().strftime('%Y-%m-%d %H:%M:%S')}\tJob ID: {job_id}\t# GPUs: {num_gpus}\t{string}\n"
// with `string` one of "Starting job" (training.py L1606), "Saved
// checkpoint" / "Saving async checkpoint" followed by
// "\tIteration: {iteration}\tJob throughput: {:.1f} TFLOP/s/GPU\tCumulative
// throughput: {:.1f} TFLOP/s/GPU\tFloating-point operations: {:.2e}\tTokens
// (in billions): {:.2f}" (training.py L3722-3753; Bridge writes
// MODEL_TFLOP/s/GPU), "Saved async checkpoint\tIteration: N", "Saved async
// local checkpoint\tIteration: N", "Deleted checkpoint\tIteration: N"
// (checkpointing.py L1042-1110, L1439-1442).

#include <cmath>
#include <string>

#include "log/log_line.h"
#include "log/log_parser.h"

namespace mfu::log_internal {
namespace {

struct ProgressRecord {
  double time_s = kLogNaN;
  std::string_view job_id;
  int64_t gpus = 0;
  std::string_view event;
  int64_t iteration = -1;
  double job_tflops = kLogNaN;
};

// "123.4 TFLOP/s/GPU" or "123.4 MODEL_TFLOP/s/GPU".
std::optional<double> Throughput(std::string_view value) {
  size_t space = value.find(' ');
  return ParseLogNumber(value.substr(0, space));
}

bool ParseRecord(std::string_view text, ProgressRecord& r) {
  size_t tab = text.find('\t');
  if (tab == std::string_view::npos)
    return false;
  std::optional<double> t = ParseLogTimestamp(text.substr(0, tab));
  if (!t)
    return false;
  r.time_s = *t;
  text.remove_prefix(tab + 1);
  int field = 0;
  while (!text.empty()) {
    tab = text.find('\t');
    std::string_view part = TrimLog(text.substr(0, tab));
    text = tab == std::string_view::npos ? std::string_view() : text.substr(tab + 1);
    if (ConsumePrefix(part, "Job ID:")) {
      r.job_id = TrimLog(part);
    } else if (ConsumePrefix(part, "# GPUs:")) {
      int64_t n = 0;
      if (ConsumeInt(part, n))
        r.gpus = n;
    } else if (ConsumePrefix(part, "Iteration:")) {
      int64_t n = 0;
      if (ConsumeInt(part, n))
        r.iteration = n;
    } else if (ConsumePrefix(part, "Job throughput:")) {
      if (std::optional<double> v = Throughput(TrimLog(part)))
        r.job_tflops = *v;
    } else if (field == 2 && r.event.empty()) {
      r.event = part;
    }
    ++field;
  }
  return field >= 3 && !r.event.empty();
}

class MegatronProgressParser final : public FormatParser {
 public:
  LogFormat format() const override { return LogFormat::kMegatronProgress; }

  int Signature(std::string_view text) const override {
    return FindLog(text, "\tJob ID:") != std::string_view::npos && FindLog(text, "\t# GPUs:") != std::string_view::npos
               ? 2
               : 0;
  }

  bool Consume(const CleanLine& line, TimelineBuilder& out) override {
    ProgressRecord r;
    // CleanLogLine trimmed the text; the record's own tabs are inside.
    if (!ParseRecord(line.text, r)) {
      if (FindLog(line.text, "\tJob ID:") != std::string_view::npos) {
        out.CountPartial();
        return true;
      }
      return false;
    }
    LogHeader& h = out.header();
    if (r.gpus > 0)
      h.world_size = r.gpus;
    if (!r.job_id.empty())
      h.job_id = std::string(r.job_id);
    LogEvent event;
    event.line = line.line;
    event.time_s = r.time_s;
    event.step = r.iteration;
    event.detail = EventDetail(r.event);
    bool step_entry = false;
    if (r.event == "Starting job") {
      out.NewAttempt(line.line);
      out.CountHeader();
      event.kind = LogEventKind::kJobStart;
    } else if (r.event == "Saved checkpoint") {
      event.kind = LogEventKind::kCheckpointSave;
      step_entry = true;
    } else if (r.event == "Saving async checkpoint") {
      event.kind = LogEventKind::kCheckpointSaveAsync;
      step_entry = true;
    } else if (StartsWith(r.event, "Saved async")) {
      event.kind = LogEventKind::kCheckpointSaveAsync;
    } else if (r.event == "Deleted checkpoint") {
      // Which checkpoints remain, not time spent: no event kind for it.
      return true;
    } else {
      return true;  // a record of a newer Megatron, kept out of the timeline
    }
    out.AddEvent(event);
    if (step_entry && r.iteration >= 0) {
      LogStep step;
      step.step = r.iteration;
      step.line = line.line;
      step.time_s = r.time_s;
      step.logged_tflops_per_gpu = r.job_tflops;
      // Progress records come at checkpoints, so a step entry covers the
      // iterations since the previous one of the same job.
      const std::vector<LogStep>& kept = out.steps();
      if (!kept.empty() && kept.back().attempt == out.attempt() && r.iteration > kept.back().step)
        step.steps_covered = static_cast<int32_t>(std::min<int64_t>(r.iteration - kept.back().step, 1 << 30));
      (void)out.AddStep(step, line.rank);
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<FormatParser> MakeMegatronProgressParser() {
  return std::make_unique<MegatronProgressParser>();
}

}  // namespace mfu::log_internal
