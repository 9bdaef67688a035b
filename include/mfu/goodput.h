#pragma once

// Goodput: where a run's wall time went beyond the steps themselves.
// Productive (preserved) step time, badput by category (initialization,
// data loading, checkpoint save, checkpoint restore, progress wasted since
// the last checkpoint before each failure, idle between attempts, other),
// ETTR, observed MTBF and recovery time, effective MFU; the checkpoint
// interval by Young, Daly (higher order) and the availability-optimal form
// of arXiv:2410.18124, with the expected goodput at each. Events come from
// training-log timelines, Megatron/Bridge progress.txt, Google
// ml-goodput-measurement JSONL records and Slurm accounting (sacct
// --parsable2, job-completion logs). Definitions and sources:
// docs/goodput.md (from ../shared/reference/telemetry-goodput-inference.md section 2).

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/note.h"
#include "mfu/status.h"
#include "mfu/training_log.h"

namespace mfu {

// Badput buckets, mirroring Google ml-goodput-measurement's BadputType where
// one exists (its name in the comment) so dashboards compare.
enum class BadputCategory : uint8_t {
  kInitialization = 0,   // TPU_INITIALIZATION + TRAINING_PREP (device/mesh/model setup) + PROGRAM_STARTUP
  kDataLoading,          // DATA_LOADING_SYNC (async loading is recorded, never badput)
  kCheckpointSave,       // UNPRODUCTIVE_CHECKPOINT_SAVE_TIME: the blocking part only
  kCheckpointRestore,    // UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME
  kWastedProgress,       // WASTED_PROGRESS_FROM_DISRUPTION: steps after the last checkpoint before a failure
  kIdleBetweenAttempts,  // INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION: end of one attempt to the next's start
  kEvaluation,           // CUSTOM_BADPUT_EVENTS: eval and other custom events
  kOther,                // OTHER: the remainder, so the buckets sum to the wall time exactly
  kCount,
};
inline constexpr size_t kNumBadputCategories = static_cast<size_t>(BadputCategory::kCount);
// "initialization", "data_loading", "checkpoint_save", "checkpoint_restore",
// "wasted_progress", "idle_between_attempts", "evaluation", "other": the
// `category` label of mfu_job_badput_seconds_total and the JSON keys.
const char* BadputCategoryId(BadputCategory category);
std::optional<BadputCategory> ParseBadputCategory(std::string_view id);

enum class GoodputEventKind : uint8_t {
  kJobStart = 0,         // an attempt (job, requeue, restart) began
  kJobEnd,               // an attempt ended normally (completed, cancelled by the user)
  kJobFailed,            // an attempt ended by a failure (node fail, timeout, crash, preemption)
  kStep,                 // an optimizer step ended (step id; duration if known)
  kCheckpointSaveBegin,  // blocking save begins
  kCheckpointSaveEnd,    // blocking save ends (the step it preserves in `step`)
  kCheckpointSaveAsync,  // async save: blocking part in duration_s; persisted at time_s
  kCheckpointRestoreBegin,
  kCheckpointRestoreEnd,  // restored from `step`
  kInitBegin,             // initialization, training prep or program startup begins
  kInitEnd,
  kDataLoadingBegin,
  kDataLoadingEnd,
  kCustomBegin,  // evaluation / custom badput
  kCustomEnd,
  kQueued,  // the attempt was submitted/queued (Slurm Submit)
  kCount,
};
// "job_start", "job_end", "job_failed", "step", "checkpoint_save_begin", ...
const char* GoodputEventKindId(GoodputEventKind kind);

struct GoodputEvent {
  GoodputEventKind kind = GoodputEventKind::kStep;
  double time_s = 0;            // seconds since the Unix epoch
  int64_t step = -1;            // for kStep, checkpoint and restore events
  double duration_s = kLogNaN;  // where the source gives it (a step's time, an async save's blocking part)
  std::string attempt;          // attempt / job id as the source names it ("" when one attempt)
  std::string source;           // file name
  int64_t line = 0;             // 1-based line in `source`
  std::string detail;           // e.g. the Slurm state "NODE_FAIL", the failure text
};

// Event sources. kAuto detects by content.
enum class GoodputSourceFormat : uint8_t {
  kAuto = 0,
  kMegatronProgress,  // progress.txt (Megatron-LM, Megatron-Bridge)
  kGoodputJsonl,      // ml-goodput-measurement's records, one JSON object per line
  kSacct,             // sacct --parsable2 (pipe-separated, header line)
  kSlurmJobComp,      // jobcomp/filetxt lines: "JobId=.. UserId=.. JobState=.. StartTime=.. EndTime=.."
  kTrainingLog,       // any training log (training_log.h): steps, checkpoints, restarts
  kCount,
};
const char* GoodputSourceFormatId(GoodputSourceFormat format);  // "megatron-progress", "goodput-jsonl", ...
std::optional<GoodputSourceFormat> ParseGoodputSourceFormat(std::string_view id);

// Events of one source text. kParse naming origin, line and field for a
// malformed record of a structured source (JSONL, sacct); kInvalidArgument
// when nothing in the text is an event of any format.
StatusOr<std::vector<GoodputEvent>> ReadGoodputEvents(std::string_view text, std::string_view origin,
                                                      GoodputSourceFormat format = GoodputSourceFormat::kAuto);
StatusOr<std::vector<GoodputEvent>> ReadGoodputEventsFile(const FileSystem& fs, const std::string& path,
                                                          GoodputSourceFormat format = GoodputSourceFormat::kAuto);
// The events a training log's timeline implies: a start per attempt, a step
// per entry (time from timestamps or accumulated step times), checkpoint
// saves/loads and failures it printed.
std::vector<GoodputEvent> GoodputEventsFromTimeline(const LogTimeline& timeline);

// Writes events as ml-goodput-measurement JSONL records (the keys its
// GoodputRecorder writes), so records move both ways.
std::string WriteGoodputJsonl(std::span<const GoodputEvent> events);

struct GoodputOptions {
  // Effective MFU = steady_state_mfu x goodput fraction; NaN: not reported.
  double steady_state_mfu = kLogNaN;
  // Time the query is made for a still-running job (0: the last event).
  double now_s = 0;
  // Inputs of the checkpoint-interval formulas in place of what the events
  // show (NaN: observed). A log without save durations or a run without a
  // failure has no observed checkpoint time or MTBF; the fleet's MTBF is a
  // better figure than one job's few failures. kInvalidArgument naming the
  // parameter for a value that is not positive and finite (restart: >= 0).
  double checkpoint_time_s = kLogNaN;
  double mtbf_s = kLogNaN;
  double restart_time_s = kLogNaN;
};

// kInvalidArgument naming the parameter ("parameter 'mtbf'") for an option
// out of its range; ComputeGoodput checks it first.
Status ValidateGoodputOptions(const GoodputOptions& options);

// What the checkpoint-interval formulas of a GoodputReport were given, and
// where each value came from.
struct IntervalInputs {
  double checkpoint_time_s = kLogNaN;
  double mtbf_s = kLogNaN;
  double restart_time_s = kLogNaN;
  bool checkpoint_time_given = false;  // from GoodputOptions, not the events
  bool mtbf_given = false;
  bool restart_time_given = false;
};

// Checkpoint interval formulas (all seconds). delta: blocking checkpoint
// time; mtbf: the job's mean time between failures; restart: recovery time
// (detect + reschedule + init + restore). Sources in docs/goodput.md.
double YoungInterval(double delta_s, double mtbf_s);  // sqrt(2 delta M)
double DalyInterval(double delta_s, double mtbf_s);   // Daly 2006 higher order (M when delta >= 2M)
double AvailabilityOptimalInterval(double delta_s, double mtbf_s, double restart_s);  // arXiv:2410.18124
// Expected goodput (fraction of wall time spent on preserved progress) with
// compute tau between checkpoints, Daly's exponential-failure model.
double ExpectedGoodput(double tau_s, double delta_s, double mtbf_s, double restart_s);

struct CheckpointIntervals {
  double observed_s = kLogNaN;  // median compute time between checkpoints seen
  double young_s = kLogNaN;
  double daly_s = kLogNaN;
  double availability_optimal_s = kLogNaN;
  // Expected goodput at each interval (NaN where the interval is).
  double goodput_observed = kLogNaN;
  double goodput_young = kLogNaN;
  double goodput_daly = kLogNaN;
  double goodput_availability_optimal = kLogNaN;
};
// Young's, Daly's and the availability-optimal intervals with the expected
// goodput at each, and at `observed_s` where finite (NaN where an input is
// missing: a formula needs delta and M).
CheckpointIntervals IntervalsFor(double delta_s, double mtbf_s, double restart_s, double observed_s = kLogNaN);

struct GoodputReport {
  double start_s = 0;  // first event
  double end_s = 0;    // last event (or now_s)
  double wall_s = 0;
  double productive_s = 0;
  std::array<double, kNumBadputCategories> badput_s{};  // sums with productive_s to wall_s exactly
  double ettr = kLogNaN;                                // productive / wall
  int64_t attempts = 0;
  int64_t interruptions = 0;           // attempts that ended by a failure (or a step regression)
  double mtbf_s = kLogNaN;             // observed: productive-running time / failures
  double recovery_s = kLogNaN;         // mean: failure -> first step of the next attempt
  double checkpoint_time_s = kLogNaN;  // mean blocking save time
  int64_t checkpoints = 0;
  int64_t steps = 0;         // preserved steps
  int64_t wasted_steps = 0;  // recomputed after failures
  CheckpointIntervals checkpoint_interval;
  IntervalInputs interval_inputs;
  double steady_state_mfu = kLogNaN;
  double effective_mfu = kLogNaN;  // steady_state_mfu x ettr
  std::vector<Note> notes;
};

// The accounting of `events` (any order; sorted by time). kInvalidArgument
// when there are no events or no step; never leaves time unaccounted.
StatusOr<GoodputReport> ComputeGoodput(std::span<const GoodputEvent> events, const GoodputOptions& options = {});

// Planning without events: `mfu goodput --what-if`.
struct GoodputWhatIfRequest {
  double mtbf_s = 0;             // > 0
  double checkpoint_time_s = 0;  // > 0, blocking
  double restart_time_s = 0;     // >= 0
  double interval_s = 0;         // an interval to evaluate besides the optimal ones (0: none)
};
struct GoodputWhatIf {
  GoodputWhatIfRequest request;
  CheckpointIntervals intervals;  // observed_* = request.interval_s
  std::vector<Note> notes;        // validity of the approximations (delta << M, ...)
};
// kInvalidArgument naming the parameter ("parameter 'mtbf'") for a
// non-positive, NaN or infinite value.
StatusOr<GoodputWhatIf> GoodputWhatIfStudy(const GoodputWhatIfRequest& request);

// "24h", "5m", "90s", "1h30m", "2d", "1500ms", a bare number = seconds.
// kInvalidArgument "'<text>' is not a duration (examples: 24h, 5m, 90s)".
StatusOr<double> ParseDuration(std::string_view text);

}  // namespace mfu
