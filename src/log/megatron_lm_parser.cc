// Megatron-LM console log (training-logs.md sec. 2): the iteration line of
// megatron/training/training.py training_log (L3567-3653 @d98e8a64) in
// every version of sec. 2.4, the header lines of arguments.py (L567-576,
// _print_args L1990-2001), the parameter count (training.py L2447-2455) and
// the checkpoint lines of checkpointing.py.

#include <algorithm>
#include <cmath>

#include "log/format_common.h"
#include "log/log_line.h"
#include "log/megatron_parser.h"

namespace mfu::log_internal {
namespace {

// "13372.8/13364.7" (the AMD fork's current/average): the current value.
std::optional<double> FirstOfPair(std::string_view value) {
  size_t slash = value.find('/');
  if (slash != std::string_view::npos && slash > 0)
    value = value.substr(0, slash);
  return ParseLogNumber(value);
}

void SetField(std::string_view key, std::string_view value, LogStep& step, bool& have_lm_loss) {
  std::optional<double> v = FirstOfPair(value);
  if (!v)
    return;
  if (key == "elapsed time per iteration (ms)") {
    step.step_time_s = *v / 1000.0;
  } else if (key == "throughput per GPU (TFLOP/s/GPU)" || key == "TFLOPs") {
    step.logged_tflops_per_gpu = *v;
  } else if (key == "consumed samples") {
    step.consumed_samples = AsInt(v).value_or(-1);
  } else if (key == "learning rate") {
    step.learning_rate = *v;
  } else if (key == "global batch size") {
    step.global_batch = AsInt(v).value_or(0);
  } else if (key == "lm loss") {
    step.loss = *v;
    have_lm_loss = true;
  } else if (key == "loss scale") {
    step.loss_scale = *v;
  } else if (key == "grad norm") {
    step.grad_norm = *v;
  } else if (key == "number of skipped iterations") {
    step.skipped_iterations = static_cast<int32_t>(std::min<int64_t>(AsInt(v).value_or(0), 1 << 30));
  } else if (key == "number of nan iterations") {
    step.nan_iterations = static_cast<int32_t>(std::min<int64_t>(AsInt(v).value_or(0), 1 << 30));
  } else if (key == "energy per GPU (J/iter/GPU)") {
    step.energy_j = *v;
  } else if (key == "power per GPU (W/GPU)") {
    step.power_w = *v;
  } else if (key == "samples per second") {
    step.samples_per_s = *v;
  } else if (key == "tokens per gpu per second (tgs)" || key == "tokens per GPU (tokens/s/GPU)") {
    step.tokens_per_s_per_gpu = *v;
  } else if (!have_lm_loss && std::isnan(step.loss) && key.size() >= 4 && key.substr(key.size() - 4) == "loss") {
    step.loss = *v;  // the first loss key when there is no "lm loss"
  }
}

// The text before "iteration": an optional "(" and a logger prefix
// carrying the timestamp. Returns the text from "iteration" on, "" when
// the line is not one.
std::string_view IterationText(std::string_view text, double& time_s) {
  if (!text.empty() && text[0] == '(') {
    text = TrimLog(text.substr(1));
    if (!text.empty() && text.back() == ')')
      text = TrimLog(text.substr(0, text.size() - 1));
  }
  if (!text.empty() && text[0] == '[') {
    LoggerPrefix prefix = StripLoggerPrefix(text);
    time_s = prefix.time_s;
    text = prefix.message;
  }
  return StartsWith(text, "iteration ") ? text : std::string_view();
}

}  // namespace

bool ParseMegatronIteration(std::string_view text, LogStep& step, int64_t& train_iters, bool& partial) {
  double time_s = kLogNaN;
  std::string_view rest = IterationText(text, time_s);
  if (rest.empty())
    return false;
  rest.remove_prefix(10);  // "iteration "
  int64_t iteration = 0;
  int64_t total = 0;
  const size_t slash = rest.find('/');
  std::string_view before = rest.substr(0, slash);
  if (slash == std::string_view::npos || !ConsumeInt(before, iteration) || !TrimLog(before).empty()) {
    partial = true;
    return false;
  }
  rest.remove_prefix(slash + 1);
  if (!ConsumeInt(rest, total)) {
    partial = true;
    return false;
  }
  rest = TrimLog(rest);
  // Every version ends each field with " |": a line that does not was cut.
  if (rest.empty() || rest[0] != '|' || rest.back() != '|') {
    partial = true;
    return false;
  }
  step.step = iteration;
  step.time_s = time_s;
  train_iters = total;
  bool have_lm_loss = false;
  ForEachLogField(rest.substr(1), '|', [&](std::string_view key, std::string_view value) {
    if (!key.empty())
      SetField(key, value, step, have_lm_loss);
  });
  return true;
}

int MegatronLmParser::Signature(std::string_view text) const {
  double time_s = kLogNaN;
  std::string_view rest = IterationText(text, time_s);
  if (!rest.empty()) {
    rest.remove_prefix(10);
    int64_t n = 0;
    if (ConsumeInt(rest, n) && !rest.empty() && rest[0] == '/')
      return 2;
  }
  if (StartsWith(text, "using world size:") || FindLog(text, "---- arguments ----") != std::string_view::npos ||
      StartsWith(text, "> number of parameters on (tensor"))
    return 1;
  return 0;
}

void MegatronLmParser::AddIteration(LogStep step, const CleanLine& line, TimelineBuilder& out) {
  step.line = line.line;
  const std::vector<LogStep>& kept = out.steps();
  const int64_t interval = out.header().log_interval;
  if (!kept.empty() && kept.back().attempt == out.attempt() && step.step > kept.back().step) {
    int64_t covered = step.step - kept.back().step;
    // Megatron logs iteration 1 and then every log_interval: the line at
    // log_interval averages over the whole interval, iteration 1 included
    // (training.py L3544: the first line does not reset the timers).
    if (interval > 0 && (covered > interval || (kept.back().step == 1 && step.step == interval)))
      covered = interval;
    step.steps_covered = static_cast<int32_t>(std::min<int64_t>(covered, 1 << 30));
  }
  (void)out.AddStep(step, line.rank);
}

bool MegatronLmParser::Consume(const CleanLine& line, TimelineBuilder& out) {
  std::string_view text = line.text;
  const char c = text[0];
  // A pending checkpoint event waits only for its timer block.
  if (pending_event_ && c != 's' && c != 'l' && FindLog(text, "time across ranks (ms):") == std::string_view::npos)
    FlushPendingEvent(out);
  if (c == '[' || c == 'i' || c == '(') {
    LogStep step;
    int64_t train_iters = 0;
    bool partial = false;
    if (ParseMegatronIteration(text, step, train_iters, partial)) {
      if (out.header().train_iters == 0)
        out.header().train_iters = train_iters;
      AddIteration(step, line, out);
      return true;
    }
    if (partial) {
      out.CountPartial();
      return true;
    }
  }
  double time_s = kLogNaN;
  if (c == '[') {
    LoggerPrefix prefix = StripLoggerPrefix(text);
    text = prefix.message;
    time_s = prefix.time_s;
    if (text.empty())
      return false;
  }
  if (in_arguments_)
    return ConsumeArgument(text, out);
  return ConsumeHeaderOrEvent(text, time_s, line, out);
}

}  // namespace mfu::log_internal

namespace mfu::log_internal {

std::unique_ptr<FormatParser> MakeMegatronLmParser() {
  return std::make_unique<MegatronLmParser>();
}

}  // namespace mfu::log_internal
