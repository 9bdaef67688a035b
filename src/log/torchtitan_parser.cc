// torchtitan (pytorch/torchtitan @b5bcd76, training-logs.md section 5): the step
// line of MetricsProcessor.log (torchtitan/components/metrics.py L455-541)
// in every version since 2024-03 (wps/tps, with or without tflops and
// grad_norm, loss 7.4f/8.5f, "mfu: N/A" under quantization), "validate
// step:" lines, the header lines of trainer.py and the checkpointer's lines
// (torchtitan/components/checkpoint.py).
//
// Units: tps is tokens/s per device (the DP shard's tokens spread over the
// non-DP devices), tflops per device, mfu a percent of the BF16 dense peak
// that "Peak FLOPS used for computing MFU" prints. torchtitan prints no
// step time: it is the wall time since the previous log line, so it is
// derived from consecutive timestamps (FillStepTimesFromTimestamps).

#include <cmath>
#include <string>
#include <vector>

#include "log/format_common.h"
#include "log/log_parser.h"

namespace mfu::log_internal {
namespace {

constexpr std::string_view kPeakLine = "Peak FLOPS used for computing MFU:";
constexpr std::string_view kTrainerInit = "Trainer is initialized with ";

// "Saving the checkpoint at step 20" / "...step-20..." / the last step.
int64_t CheckpointStep(std::string_view text, int64_t last_step) {
  if (std::optional<int64_t> s = IntAfter(text, " at step ")) {
    return *s;
  }
  if (std::optional<int64_t> s = IntAfter(text, "step-")) {
    return *s;
  }
  if (std::optional<int64_t> s = IntAfter(text, "step ")) {
    return *s;
  }
  return last_step;
}

std::string Detail(std::string_view text) {
  return std::string(text.substr(0, 200));
}

class TorchtitanParser final : public FormatParser {
 public:
  LogFormat format() const override { return LogFormat::kTorchtitan; }

  int Signature(std::string_view text) const override {
    std::string_view t = StripLoggerPrefix(text).message;
    if (IsStepLine(t)) {
      return 2;
    }
    if (t.starts_with(kPeakLine) || t.starts_with(kTrainerInit)) {
      return 1;
    }
    return 0;
  }

  bool Consume(const CleanLine& line, TimelineBuilder& out) override {
    LoggerPrefix t = StripLoggerPrefix(line.text);
    if (IsStepLine(t.message)) {
      return ConsumeStep(t, line, out, false);
    }
    if (t.message.starts_with("validate step:")) {
      return ConsumeStep(t, line, out, true);
    }
    return ConsumeHeader(t, line, out) || ConsumeEvent(t, line, out);
  }

  void Finish(TimelineBuilder& out) override {
    if (pending_save_line_ != 0) {
      LogEvent e;
      e.kind = LogEventKind::kCheckpointSave;
      e.line = pending_save_line_;
      e.attempt = out.attempt();
      e.step = pending_save_step_;
      e.time_s = pending_save_time_s_;
      e.detail = "checkpoint save started, no end line";
      out.AddEvent(std::move(e));
      pending_save_line_ = 0;
    }
    FillStepTimesFromTimestamps(out, start_time_s_);
    FillThroughputScopes(out);
  }

 private:
  // "step: N  loss: ..." with a tps/wps field (the version-independent core).
  static bool IsStepLine(std::string_view t) {
    return t.starts_with("step:") && t.find("loss:") != std::string_view::npos &&
           (t.find("tps:") != std::string_view::npos || t.find("wps:") != std::string_view::npos);
  }

  bool ConsumeStep(const LoggerPrefix& t, const CleanLine& line, TimelineBuilder& out, bool validation) {
    std::string_view body = validation ? t.message.substr(9) : t.message;  // drop "validate "
    std::optional<int64_t> step = IntAfter(body, "step:");
    // Some forks print "step: 640/644 = 99.3789%": the id is before '/'.
    if (!step) {
      std::optional<std::string_view> rest = After(body, "step:");
      if (rest) {
        step = AsInt(ParseLogNumber(rest->substr(0, rest->find('/'))));
      }
    }
    std::optional<LogStep> parsed = StepWithLoss(step, NumberAfter(body, "loss:"), line.line, out);
    if (!parsed) {
      return true;
    }
    LogStep& s = *parsed;
    s.time_s = t.time_s;
    s.validation = validation;
    if (std::optional<double> g = NumberAfter(body, "grad_norm:")) {
      s.grad_norm = *g;
    }
    if (std::optional<std::string_view> mem = After(body, "memory:")) {
      size_t gib = mem->find("GiB");
      if (gib != std::string_view::npos) {
        if (std::optional<double> m = ParseLogNumber(mem->substr(0, gib))) {
          s.memory_gib = *m;
        }
      }
    }
    std::optional<double> tps = NumberAfter(body, "tps:");
    if (!tps) {
      tps = NumberAfter(body, "wps:");  // before 4d182a13e (2024-11-25)
    }
    if (tps) {
      s.tokens_per_s_per_gpu = *tps;
    }
    if (std::optional<double> tf = NumberAfter(body, "tflops:")) {
      s.logged_tflops_per_gpu = *tf;
    }
    if (std::optional<double> mfu = PercentAfter(body, "mfu:")) {
      s.logged_mfu = *mfu;  // "N/A" under quantized linears (f113706c4): no MFU
    }
    if (!validation) {
      MaybeNewRun(s, line, out);
      last_step_ = s.step;
      ++steps_since_start_;
    }
    Status st = out.AddStep(std::move(s), line.rank);
    (void)st;  // kOutOfRange is kept by the builder and reported by the reader
    return true;
  }

  // Two runs concatenated in one file (the AWS excerpt's BF16 and float8
  // runs both end at step 1990): on the first rank to print, a step id that
  // does not advance, printed far from the kept line's time, is another run
  // rather than a copy (ranks print one step within milliseconds, the loss
  // all-reduce keeps them together).
  void MaybeNewRun(const LogStep& s, const CleanLine& line, TimelineBuilder& out) {
    constexpr double kRerunGapS = 30;
    if (!have_rank_) {
      have_rank_ = true;
      first_rank_ = std::string(line.rank);
    }
    if (line.rank != first_rank_) {
      return;
    }
    if (first_rank_last_step_ >= 0 && s.step <= first_rank_last_step_ && !std::isnan(s.time_s) &&
        !std::isnan(first_rank_last_time_s_) && std::fabs(s.time_s - first_rank_last_time_s_) > kRerunGapS) {
      out.NewAttempt(line.line);
    }
    first_rank_last_step_ = s.step;
    first_rank_last_time_s_ = s.time_s;
  }

  bool ConsumeHeader(const LoggerPrefix& t, const CleanLine& line, TimelineBuilder& out) {
    std::string_view text = t.message;
    LogHeader& h = out.header();
    if (text.starts_with(kPeakLine)) {
      std::optional<double> peak = NumberAfter(text, kPeakLine);
      if (!peak) {
        return false;
      }
      h.peak_flops_used = *peak;
      h.peak_flops_line = line.line;
    } else if (size_t at = text.find(" capacity: "); at != std::string_view::npos &&
                                                     text.find(" with ") != std::string_view::npos &&
                                                     text.find("GiB memory") != std::string_view::npos) {
      std::string_view rest = text.substr(at + 11);
      h.device_name = std::string(rest.substr(0, rest.rfind(" with ")));
    } else if (text.starts_with("Model ") && text.find(" size: ") != std::string_view::npos &&
               text.find(" total parameters") != std::string_view::npos) {
      size_t size_at = text.find(" size: ");
      h.model_name = std::string(text.substr(6, size_at - 6));
      if (std::optional<double> n = NumberAfter(text, " size: ")) {
        h.parameters = *n;
      }
    } else if (text.starts_with(kTrainerInit)) {
      ReadTrainerInit(text, h);
    } else if (std::optional<std::string_view> used = After(text, "Using [");
               used && text.find("] GPUs") != std::string_view::npos &&
               AsInt(ParseLogNumber(used->substr(0, used->find('/'))))) {
      h.world_size = *AsInt(ParseLogNumber(used->substr(0, used->find('/'))));  // "Using [24/24] GPUs" (ezpz)
    } else {
      return false;
    }
    out.CountHeader();
    return true;
  }

  // Both forms: "local batch size 1, global batch size 24, gradient
  // accumulation steps 1, sequence length 4096, total steps 1000 (warmup 2)"
  // (until 73aed7f6c, 2026-08-20) and "8192 tokens per DP rank, 65536 tokens
  // per train step, gradient accumulation steps 1, maximum context length
  // 8192, total steps 1000 (warmup 2)" (trainer.py L621-629).
  static void ReadTrainerInit(std::string_view text, LogHeader& h) {
    if (std::optional<int64_t> v = IntAfter(text, "local batch size ")) {
      h.micro_batch = *v;
    }
    if (std::optional<int64_t> v = IntAfter(text, "global batch size ")) {
      h.global_batch = *v;
    }
    if (std::optional<int64_t> v = IntAfter(text, "gradient accumulation steps ")) {
      h.grad_accum = *v;
    }
    std::optional<int64_t> seq = IntAfter(text, "sequence length ");
    if (!seq) {
      seq = IntAfter(text, "maximum context length ");
    }
    if (seq) {
      h.seq_len = *seq;
    }
    if (std::optional<int64_t> v = IntAfter(text, "total steps ")) {
      h.train_iters = *v;
    }
    size_t per_step = text.find(" tokens per train step");
    if (per_step != std::string_view::npos) {
      size_t start = text.rfind(' ', per_step - 1);
      start = start == std::string_view::npos ? 0 : start + 1;
      if (std::optional<int64_t> v = AsInt(ParseLogNumber(text.substr(start, per_step - start)))) {
        h.tokens_per_step = *v;
      }
    }
    if (h.tokens_per_step == 0) {
      h.tokens_per_step = CheckedProduct(h.global_batch, h.seq_len);
    }
    if (h.global_batch == 0 && h.tokens_per_step > 0 && h.seq_len > 0 && h.tokens_per_step % h.seq_len == 0) {
      h.global_batch = h.tokens_per_step / h.seq_len;
    }
  }

  bool ConsumeEvent(const LoggerPrefix& t, const CleanLine& line, TimelineBuilder& out) {
    std::string_view text = t.message;
    LogEvent e;
    e.line = line.line;
    e.time_s = t.time_s;
    e.detail = Detail(text);
    if (text.starts_with("Training starts at step ") || text.starts_with("Starting job: ")) {
      bool starts = text.starts_with("Training starts");
      if (steps_since_start_ > 0) {
        out.NewAttempt(line.line);  // a restart: the job printed its start again after steps
      }
      steps_since_start_ = 0;
      e.kind = LogEventKind::kJobStart;
      e.attempt = out.attempt();
      if (starts) {
        std::optional<int64_t> n = IntAfter(text, "Training starts at step ");
        e.step = n ? *n : -1;
        size_t a = static_cast<size_t>(out.attempt());
        if (start_time_s_.size() <= a) {
          start_time_s_.resize(a + 1, kLogNaN);
        }
        start_time_s_[a] = t.time_s;
      }
      out.AddEvent(std::move(e));
      return true;
    }
    if (text.starts_with("Saving the checkpoint") || text.starts_with("Saving a full checkpoint") ||
        text.starts_with("Saving a model")) {
      pending_save_line_ = line.line;
      pending_save_step_ = CheckpointStep(text, last_step_);
      pending_save_time_s_ = t.time_s;
      return true;
    }
    bool save_done = text.starts_with("Finished saving the checkpoint") ||
                     text.find("checkpoint completed in") != std::string_view::npos;
    bool load_done = text.starts_with("Finished loading the checkpoint");
    if (save_done || load_done) {
      std::optional<std::string_view> rest = After(text, " in ");
      if (!rest) {
        rest = After(text, ")in ");  // "(or staging if async is enabled)in 5.53 seconds."
      }
      if (rest) {
        std::string_view tok = Token(*rest);
        if (!tok.empty() && tok.back() == 's') {
          tok.remove_suffix(1);  // "0.12s"
        }
        if (std::optional<double> d = ParseLogNumber(tok)) {
          e.duration_s = *d;
        }
      }
      e.kind = save_done ? LogEventKind::kCheckpointSave : LogEventKind::kCheckpointLoad;
      e.attempt = out.attempt();
      e.step = save_done ? (pending_save_line_ != 0 ? pending_save_step_ : last_step_) : pending_load_step_;
      pending_save_line_ = 0;
      out.AddEvent(std::move(e));
      return true;
    }
    if (text.starts_with("Loading the checkpoint")) {
      pending_load_step_ = CheckpointStep(text, -1);
      return true;
    }
    return false;
  }

  int64_t last_step_ = -1;
  int64_t pending_save_line_ = 0;
  int64_t pending_save_step_ = -1;
  double pending_save_time_s_ = kLogNaN;
  int64_t pending_load_step_ = -1;
  int64_t steps_since_start_ = 0;
  bool have_rank_ = false;
  std::string first_rank_;
  int64_t first_rank_last_step_ = -1;
  double first_rank_last_time_s_ = kLogNaN;
  std::vector<double> start_time_s_;
};

}  // namespace

std::unique_ptr<FormatParser> MakeTorchtitanParser() {
  return std::make_unique<TorchtitanParser>();
}

}  // namespace mfu::log_internal
