#pragma once

// Megatron-LM's console log (training-logs.md sec. 2), shared by the
// Megatron-LM reader and the Megatron-Bridge reader, which prints the same
// iteration line and header plus its own "Step Time" line (sec. 3).

#include <cstdint>
#include <optional>
#include <string_view>

#include "log/log_parser.h"

namespace mfu::log_internal {

// The fields of one iteration line, every version (sec. 2.4): with or without
// the " [timestamp]" (with or without microseconds), wrapped in parentheses
// or not, the Megatron-DeepSpeed extras (sec. 6.3) and the AMD fork's
// "current/average" pairs (the current value is kept). False when `text` is
// not an iteration line; `partial` is set when it starts like one but is
// cut short or garbled.
bool ParseMegatronIteration(std::string_view text, LogStep& step, int64_t& train_iters, bool& partial);

// Megatron-LM: iteration lines, the header (world size line, argument dump,
// parameter count, micro-batches), checkpoint/eval/exit lines.
class MegatronLmParser : public FormatParser {
 public:
  LogFormat format() const override { return LogFormat::kMegatronLm; }
  int Signature(std::string_view text) const override;
  bool Consume(const CleanLine& line, TimelineBuilder& out) override;
  void Finish(TimelineBuilder& out) override { FlushPendingEvent(out); }

 protected:
  // Adds an iteration step, with steps_covered from the previous kept step
  // and the log interval. (A step refused for max_steps shows in the
  // builder's counts; the reader turns it into kOutOfRange.)
  void AddIteration(LogStep step, const CleanLine& line, TimelineBuilder& out);
  // The argument dump, header lines and events; false when none matched.
  bool ConsumeHeaderOrEvent(std::string_view text, double time_s, const CleanLine& line, TimelineBuilder& out);

  // A checkpoint save/load waits for the "save-checkpoint" /
  // "load-checkpoint" timer line Megatron prints right after it
  // (training.py save_checkpoint_and_time: timers.log(['save-checkpoint'])),
  // which gives its duration.
  void FlushPendingEvent(TimelineBuilder& out);

 private:
  bool ConsumeArgument(std::string_view text, TimelineBuilder& out);
  bool ConsumeTimer(std::string_view text, TimelineBuilder& out);
  std::optional<LogEvent> pending_event_;
  bool in_arguments_ = false;
  bool saw_fp8_ = false;
};

}  // namespace mfu::log_internal
