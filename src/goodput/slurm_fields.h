#pragma once

// Fields the two Slurm accounting readers share (sacct_reader.cc,
// jobcomp_reader.cc): time stamps, elapsed times, job states and the events
// one attempt of a job implies.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/goodput.h"
#include "mfu/status.h"

namespace mfu::goodput_internal {

// `line` without a trailing '\r' (files written on Windows).
inline std::string_view StripCr(std::string_view line) {
  return !line.empty() && line.back() == '\r' ? line.substr(0, line.size() - 1) : line;
}

// A Slurm time stamp as sacct and jobcomp/filetxt print it,
// "2026-12-01T10:00:00" (strftime "%FT%T" of the controller's local time:
// converted with this process's time zone, so run mfu with the cluster's
// TZ), optionally with a "Z" or "+hh:mm" suffix. Seconds since the Unix
// epoch; nullopt for "Unknown", "None", "unknown" and "" (not yet, or never);
// kParse "'<text>' is not a time" otherwise.
StatusOr<std::optional<double>> ParseSlurmTime(std::string_view text);

// sacct's Elapsed, "[DD-[HH:]]MM:SS" (sacct(1)), in seconds; kParse
// "'<text>' is not an elapsed time" otherwise.
StatusOr<double> ParseSlurmElapsed(std::string_view text);

// How a job state ends an attempt.
enum class SlurmStateEnd {
  kNotEnded,  // PENDING, RUNNING, SUSPENDED, REQUEUE_HOLD, ...: no end yet
  kNormal,    // COMPLETED, CANCELLED (by a user): kJobEnd
  kFailure,   // FAILED, NODE_FAIL, TIMEOUT, PREEMPTED, REQUEUED, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE: kJobFailed
};
// The state's first word, upper-cased ("CANCELLED by 1000" -> "CANCELLED",
// "CANCELLED+" -> "CANCELLED"); nullopt for a word that is no Slurm job
// state (sacct(1) "JOB STATE CODES", long or short form).
std::optional<std::string> SlurmStateName(std::string_view state);
SlurmStateEnd SlurmStateEndKind(std::string_view state_name);

// One attempt of a job, as an accounting record gives it.
struct SlurmAttempt {
  std::string job_id;  // "123", "123_4" (array task)
  std::optional<double> submit_s, start_s, end_s;
  std::string state;         // as printed: "CANCELLED by 0", "NODE_FAIL"
  std::string state_name;    // SlurmStateName(state)
  std::string start_detail;  // "nodes=2 node[01-02]", "" when unknown
  int64_t line = 0;
  // The start of the same job's next attempt, where one is listed.
  std::optional<double> next_start_s;
};

// Sets each attempt's next_start_s from the next attempt of the same job
// id in `attempts` (in order).
void LinkAttempts(std::vector<SlurmAttempt>& attempts);

// kQueued (Submit), kJobStart (Start) and kJobEnd or kJobFailed (End, detail
// the state) for each attempt that has the time, appended to `out`.
// Slurm's times are whole seconds, truncated: the end is taken when the
// second it was logged in is over (End + 1 s; at the next attempt's start
// when that is in the same second), so that the job's own records from
// that second (its last steps) fall inside the attempt they belong to.
void AppendAttemptEvents(const SlurmAttempt& attempt, std::string_view origin, std::vector<GoodputEvent>& out);

}  // namespace mfu::goodput_internal
