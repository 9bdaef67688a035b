// NeMo 2.0 (training-logs.md sec. 4): the ProgressPrinter line of
// nemo/lightning/pytorch/callbacks/progress_printer.py (format_string
// L55-63, on_train_batch_end L124-151 @8cfedd72):
//   prefix = self.train_description + f" epoch {trainer.current_epoch}, iteration {n-1}/{self.total-1}"
//   log_string += f' | {metric}: {val}'  (integral floats)  or  f' | {metric}: {val:.4}'
// with TFLOPS_per_GPU from flops_callback.py (L146-214) and
// "train_step_timing in s" / tokens_per_sec_per_gpu from TimingCallback
// (nemo/utils/exp_manager.py L297-386); the header lines of sec. 4.3 and the
// async checkpoint lines of nemo/lightning/pytorch/callbacks/model_checkpoint.py.

#include <cmath>

#include "log/format_common.h"
#include "log/log_line.h"
#include "log/log_parser.h"

namespace mfu::log_internal {
namespace {

// "Training epoch 0, iteration 1/19 | ...": true with the rest after the
// prefix ("| lr: ..."), epoch and iteration filled.
bool ParsePrefix(std::string_view text, std::string_view description, int64_t& epoch, int64_t& iteration,
                 int64_t& total, std::string_view& rest) {
  if (!ConsumePrefix(text, description) || !ConsumePrefix(text, " epoch "))
    return false;
  if (!ConsumeInt(text, epoch) || !ConsumePrefix(text, ", iteration ") || !ConsumeInt(text, iteration) ||
      !ConsumePrefix(text, "/") || !ConsumeInt(text, total))
    return false;
  rest = text;
  return true;
}

void SetMetric(std::string_view key, std::string_view value, LogStep& step, bool& have_global_step) {
  std::optional<double> v = ParseLogNumber(value);
  if (!v)
    return;
  if (key == "global_step") {
    std::optional<int64_t> n = AsInt(v);
    if (!n)
      return;
    step.step = *n;
    have_global_step = true;
  } else if (key == "train_step_timing in s") {
    step.step_time_s = *v;
  } else if (key == "TFLOPS_per_GPU") {
    step.logged_tflops_per_gpu = *v;
  } else if (key == "tokens_per_sec_per_gpu") {
    step.tokens_per_s_per_gpu = *v;
  } else if (key == "reduced_train_loss" || key == "train_loss" || key == "loss") {
    step.loss = *v;
  } else if (key == "lr") {
    step.learning_rate = *v;
  } else if (key == "global_batch_size") {
    step.global_batch = AsInt(v).value_or(0);
  } else if (key == "consumed_samples") {
    step.consumed_samples = AsInt(v).value_or(-1);
  } else if (key == "grad_norm") {
    step.grad_norm = *v;
  }
}

// The step in "...-step=18-consumed_samples=..." (a checkpoint path).
int64_t StepInPath(std::string_view text) {
  size_t at = FindLog(text, "-step=");
  if (at == std::string_view::npos)
    return -1;
  std::string_view rest = text.substr(at + 6);
  int64_t n = -1;
  return ConsumeInt(rest, n) ? n : -1;
}

class Nemo2Parser final : public FormatParser {
 public:
  LogFormat format() const override { return LogFormat::kNemo2; }

  int Signature(std::string_view text) const override {
    int64_t epoch = 0;
    int64_t iteration = 0;
    int64_t total = 0;
    std::string_view rest;
    if (ParsePrefix(text, "Training", epoch, iteration, total, rest) && StartsWith(TrimLog(rest), "|"))
      return 2;
    if (StartsWith(text, "[NeMo I ") || StartsWith(text, "Initializing distributed: GLOBAL_RANK:"))
      return 1;
    return 0;
  }

  bool Consume(const CleanLine& line, TimelineBuilder& out) override {
    std::string_view text = line.text;
    switch (text[0]) {
      case 'T':
        return ConsumeProgress(line, out);
      case 'V':
        return ConsumeValidation(line, out);
      case 'I':
        if (StartsWith(text, "Initializing distributed: GLOBAL_RANK:")) {
          // "MEMBER: 4/8": the world size after the slash.
          size_t slash = text.rfind('/');
          int64_t n = 0;
          std::string_view rest = slash == std::string_view::npos ? std::string_view() : text.substr(slash + 1);
          if (ConsumeInt(rest, n) && n > 0)
            out.header().world_size = n;
          out.CountHeader();
          return true;
        }
        return false;
      case 'A':
        if (std::string_view rest = text; ConsumePrefix(rest, "All distributed processes registered. Starting with ")) {
          int64_t n = 0;
          if (ConsumeInt(rest, n) && n > 0)
            out.header().world_size = n;
          out.NewAttempt(line.line);
          out.CountHeader();
          return true;
        }
        return false;
      case '[':
        return ConsumeLogger(line, out);
      case '`':
        // Lightning: "`Trainer.fit` stopped: `max_steps=20` reached."
        if (StartsWith(text, "`Trainer.fit` stopped")) {
          LogEvent event;
          event.kind = LogEventKind::kJobEnd;
          event.line = line.line;
          event.step = out.steps().empty() ? -1 : out.steps().back().step;
          event.detail = EventDetail(text);
          out.AddEvent(std::move(event));
          return true;
        }
        return false;
      default:
        return false;
    }
  }

 private:
  bool ConsumeProgress(const CleanLine& line, TimelineBuilder& out) {
    int64_t epoch = 0;
    int64_t iteration = 0;
    int64_t total = 0;
    std::string_view rest;
    if (!ParsePrefix(line.text, "Training", epoch, iteration, total, rest)) {
      if (StartsWith(line.text, "Training epoch ")) {
        out.CountPartial();
        return true;
      }
      return false;
    }
    rest = TrimLog(rest);
    if (!ConsumePrefix(rest, "|")) {
      out.CountPartial();
      return true;
    }
    LogStep step;
    step.step = iteration;  // replaced by global_step where printed
    step.line = line.line;
    bool have_global_step = false;
    ForEachLogField(rest, '|', [&](std::string_view key, std::string_view value) {
      if (!key.empty())
        SetMetric(key, value, step, have_global_step);
    });
    if (out.header().train_iters == 0 && total > 0)
      out.header().train_iters = total + 1;  // "iteration {n-1}/{total-1}"
    const std::vector<LogStep>& kept = out.steps();
    if (!kept.empty() && kept.back().attempt == out.attempt() && step.step > kept.back().step) {
      const int64_t covered = step.step - kept.back().step;
      step.steps_covered = static_cast<int32_t>(std::min<int64_t>(covered, 1 << 30));
      if (out.header().log_interval == 0 && covered > 1)
        out.header().log_interval = covered;
    }
    (void)out.AddStep(step, line.rank);
    return true;
  }

  // "Validation epoch ..." lines: one evaluation event per pass.
  bool ConsumeValidation(const CleanLine& line, TimelineBuilder& out) {
    if (!StartsWith(line.text, "Validation epoch ") && !StartsWith(line.text, "Validation "))
      return false;
    const size_t steps = out.steps().size();
    if (steps != steps_at_validation_ || !validation_seen_) {
      validation_seen_ = true;
      steps_at_validation_ = steps;
      LogEvent event;
      event.kind = LogEventKind::kEvaluation;
      event.line = line.line;
      event.step = steps > 0 ? out.steps().back().step : -1;
      event.detail = EventDetail(line.text);
      out.AddEvent(std::move(event));
    }
    return true;
  }

  bool ConsumeLogger(const CleanLine& line, TimelineBuilder& out) {
    LoggerPrefix prefix = StripLoggerPrefix(line.text);
    std::string_view text = prefix.message;
    if (text.empty() || text.data() == line.text.data())
      return false;
    LogHeader& h = out.header();
    if (StartsWith(text, "> number of parameters on")) {
      size_t colon = text.rfind(": ");
      std::optional<double> v = colon == std::string_view::npos ? std::nullopt : ParseLogNumber(text.substr(colon + 2));
      if (v && std::isnan(h.parameters))
        h.parameters = *v;
      out.CountHeader();
      return true;
    }
    if (StartsWith(text, "setting number of microbatches to constant")) {
      std::optional<double> v = ParseLogNumber(text.substr(text.rfind(' ') + 1));
      if (std::optional<int64_t> n = AsInt(v); n && *n > 0)
        h.grad_accum = *n;
      out.CountHeader();
      return true;
    }
    LogEvent event;
    event.line = line.line;
    event.time_s = prefix.time_s;
    event.detail = EventDetail(text);
    if (StartsWith(text, "Scheduled async checkpoint save for")) {
      event.kind = LogEventKind::kCheckpointSaveAsync;
      event.step = StepInPath(text);
    } else if (StartsWith(text, "Async checkpoint save for step")) {
      // "... for step 10 (<path>) finalized successfully."
      std::string_view rest = text.substr(std::string_view("Async checkpoint save for step").size());
      int64_t n = -1;
      event.kind = LogEventKind::kCheckpointSaveAsync;
      event.step = ConsumeInt(rest, n) ? n : -1;
    } else if (StartsWith(text, "Restoring states from the checkpoint") ||
               StartsWith(text, "Restored all states from the checkpoint")) {
      event.kind = LogEventKind::kCheckpointLoad;
      event.step = StepInPath(text);
    } else {
      return false;
    }
    out.AddEvent(std::move(event));
    return true;
  }

  size_t steps_at_validation_ = 0;
  bool validation_seen_ = false;
};

}  // namespace

std::unique_ptr<FormatParser> MakeNemo2Parser() {
  return std::make_unique<Nemo2Parser>();
}

}  // namespace mfu::log_internal
