#pragma once

// Helpers shared by the torchtitan, HF Trainer, MaxText, nanoGPT, Composer
// and picotron readers (logger prefixes: log_line.h): "key: value" scanning, and the post-passes that derive what a
// log implies but does not print (per-GPU vs whole-job throughput from the
// world size, step time from consecutive timestamps).

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "log/log_line.h"
#include "log/log_parser.h"

namespace mfu::log_internal {

// The text after the first occurrence of `key` in `text`, blanks skipped;
// nullopt when `key` is absent.
std::optional<std::string_view> After(std::string_view text, std::string_view key);
// The leading token of `text`: up to a blank, ':', '|', ')', ']' or a ','
// that is not a thousands separator.
std::string_view Token(std::string_view text);
// ParseLogNumber of the token after `key`.
std::optional<double> NumberAfter(std::string_view text, std::string_view key);
// A "39.73%" token after `key` as a fraction (0.3973); nullopt when absent
// or not a percent ("N/A").
std::optional<double> PercentAfter(std::string_view text, std::string_view key);
// A non-negative integer token after `key` ("1,024" allowed); nullopt when
// absent, fractional or beyond 2^53.
std::optional<int64_t> IntAfter(std::string_view text, std::string_view key);
// Whether `v` is finite and has no fractional part (no ==: -Wfloat-equal).
inline bool IsWhole(double v) {
  return std::isfinite(v) && !(v > std::floor(v));
}
// a x b (x c), 0 when either is not positive or the product overflows
// int64 (hostile headers: "global batch size 9223372036854775807").
int64_t CheckedProduct(int64_t a, int64_t b, int64_t c = 1);
// A number that must be an integer (2^53 at most): nullopt otherwise.
std::optional<int64_t> AsInt(std::optional<double> value);

// An event of `kind` at 1-based `line`, in the builder's current attempt,
// about `step` (-1: none).
LogEvent MakeEvent(LogEventKind kind, int64_t line, const TimelineBuilder& out, int64_t step);
// The step record of a step line whose id and loss were read, at 1-based
// `line`; when either is missing the line is counted partial and nullopt
// returned (the line was still the format's, so Consume returns true).
std::optional<LogStep> StepWithLoss(std::optional<int64_t> step, std::optional<double> loss, int64_t line,
                                    TimelineBuilder& out);
// The last kept non-validation step, nullptr when none.
LogStep* LastTrainStep(TimelineBuilder& out);

// Fills tokens_per_s from tokens_per_s_per_gpu (and back) on every step
// where one is missing, when the header's world size is known.
void FillThroughputScopes(TimelineBuilder& out);
// step_time_s of steps that lack one, from the timestamps of consecutive
// kept steps of one attempt: (t_k - t_{k-1}) / (step_k - step_{k-1}), with
// steps_covered set to the step difference (torchtitan, whose interval is
// the wall time since the previous log line). `attempt_start_time_s[a]`
// (a "training starts" line of attempt a, NaN when none) times the first
// step of attempt a.
void FillStepTimesFromTimestamps(TimelineBuilder& out, const std::vector<double>& attempt_start_time_s);

}  // namespace mfu::log_internal
