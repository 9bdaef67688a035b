#pragma once

// Training logs as the frameworks print them: Megatron-LM, Megatron-Bridge
// (its step line and progress.txt), NeMo 2.0, torchtitan, DeepSpeed, the HF
// Trainer (console dicts and trainer_state.json), MaxText, nanoGPT,
// Composer/llm-foundry and picotron, read into one per-step timeline.
// Launcher prefixes (`srun -l`, torchrun --tee, nemo-run, Ray, pdsh), ANSI
// colour codes, tqdm redraws and interleaved ranks are removed before a
// line is matched; the format is detected by content unless forced.
//
// Field meanings, units and scopes per framework: docs/logs.md (from
// ../shared/reference/training-logs.md). Every value is kept in the unit
// the timeline states (seconds, tokens/s, TFLOP/s, MFU as a fraction 0..1)
// whatever the log printed (ms, %, "6,785", "2.05K", "4454709GF").

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/status.h"

namespace mfu {

enum class LogFormat : uint8_t {
  kAuto = 0,
  kMegatronLm,        // " iteration N/ M | ..." (Megatron-LM, Megatron-DeepSpeed)
  kMegatronBridge,    // "Step Time : Xs GPU utilization: Y MODEL_TFLOP/s/GPU" + the iteration line
  kMegatronProgress,  // progress.txt: "<ts>\tJob ID: ..\t# GPUs: ..\t<event>"
  kNemo2,             // "Training epoch E, iteration i/T | ..."
  kTorchtitan,        // "step: N  loss: ...  tps: ...  mfu: x%"
  kDeepSpeed,         // ThroughputTimer lines, the flops-profiler summary
  kHfTrainer,         // "{'loss': ...}" dicts and the final train metrics
  kHfTrainerState,    // trainer_state.json (log_history)
  kMaxText,           // "completed step: N, seconds: s, TFLOP/s/device: ..."
  kNanoGpt,           // "iter N: loss L, time T ms, mfu M%"
  kComposer,          // "[batch=N/M]:" records (Composer, llm-foundry)
  kPicotron,          // "[rank r] Step: N | ... | MFU: x%"
  kCount,
};

// Stable id: "megatron-lm", "megatron-bridge", "megatron-progress", "nemo2",
// "torchtitan", "deepspeed", "hf-trainer", "hf-trainer-state", "maxtext",
// "nanogpt", "composer", "picotron" ("auto" for kAuto).
const char* LogFormatId(LogFormat format);
// The format an id or common alias names ("megatron", "bridge", "hf",
// "titan", ...); nullopt when none.
std::optional<LogFormat> ParseLogFormat(std::string_view id);

inline constexpr double kLogNaN = std::numeric_limits<double>::quiet_NaN();

// What a log's own header lines say about the job. 0, NaN or "" where the
// log did not print it. `*_line` fields give the 1-based line of the
// evidence.
struct LogHeader {
  int64_t world_size = 0;  // GPUs of the job (all of TP x PP x CP x DP)
  int64_t tensor_parallel = 0;
  int64_t pipeline_parallel = 0;
  int64_t context_parallel = 0;
  int64_t data_parallel = 0;
  int64_t global_batch = 0;  // sequences per optimizer step
  int64_t micro_batch = 0;   // per device
  int64_t grad_accum = 0;
  int64_t seq_len = 0;
  int64_t train_iters = 0;           // the run's planned optimizer steps
  int64_t log_interval = 0;          // steps between step lines, where printed or evident
  double parameters = kLogNaN;       // total parameters as printed (may be a shard under FSDP/ZeRO-3)
  std::string model_name;            // "llama3 8B", "gpt3-175b": as printed
  std::string device_name;           // "NVIDIA H100 80GB HBM3", "Intel(R) Data Center GPU Max 1550"
  double peak_flops_used = kLogNaN;  // the framework's MFU denominator (torchtitan, OLMo-core), FLOP/s
  int64_t peak_flops_line = 0;
  // The framework's own model FLOPs per optimizer step per device (MaxText
  // "Per train step: Total TFLOPs: 764.67"), FLOPs; NaN when not printed.
  double logged_flops_per_step_per_gpu = kLogNaN;
  int64_t logged_flops_line = 0;
  std::string precision;  // "bf16", "fp16", "fp8", "fp32" where the header says
  std::string recompute;  // Megatron recompute_granularity: "full", "selective", ""
  // The architecture where the log dumps it (Megatron's argument dump,
  // nanoGPT's args): enough for a generic ModelSpec.
  int64_t num_layers = 0;
  int64_t hidden_size = 0;
  int64_t num_attention_heads = 0;
  int64_t num_query_groups = 0;
  int64_t ffn_hidden_size = 0;
  int64_t vocab_size = 0;  // padded where the log gives the padded size
  bool swiglu = false;
  int64_t num_experts = 0;
  int64_t moe_router_topk = 0;
  int64_t moe_ffn_hidden_size = 0;
  // Tokens per optimizer step as the log states it (nanoGPT "tokens per
  // iteration will be", torchtitan "tokens per train step").
  int64_t tokens_per_step = 0;
  std::string job_id;  // Slurm job id where printed (progress.txt)
};

// One step line (or one interval: most frameworks print every N steps the
// mean over the interval). NaN where the line did not give the value; the
// reader converts units but never invents a value the log does not imply.
struct LogStep {
  int64_t step = 0;     // the framework's own optimizer step id (Megatron 1-based, NeMo global_step, MaxText 0-based)
  int64_t line = 0;     // 1-based physical line of the evidence
  int32_t attempt = 0;  // run segment: increments at each restart (new header, step going back)
  int32_t steps_covered = 1;     // optimizer steps the values average over (Megatron/NeMo log interval)
  double time_s = kLogNaN;       // wall-clock timestamp, seconds since the Unix epoch (UTC as printed)
  double step_time_s = kLogNaN;  // seconds per optimizer step (interval mean where the framework prints one)
  double tokens_per_s_per_gpu = kLogNaN;
  double tokens_per_s = kLogNaN;   // whole job
  double samples_per_s = kLogNaN;  // whole job, sequences
  double loss = kLogNaN;
  double grad_norm = kLogNaN;
  double learning_rate = kLogNaN;
  double loss_scale = kLogNaN;
  int64_t global_batch = 0;          // sequences, where the line prints it
  int64_t consumed_samples = -1;     // cumulative sequences, -1 when not printed
  double consumed_tokens = kLogNaN;  // cumulative tokens of the job (HF num_input_tokens_seen, picotron Tokens)
  int32_t skipped_iterations = 0;    // fp16 overflow steps within the interval
  int32_t nan_iterations = 0;
  double logged_tflops_per_gpu = kLogNaN;  // the framework's own TFLOP/s per device
  double logged_mfu = kLogNaN;             // the framework's own MFU, fraction (39.73% -> 0.3973)
  double logged_total_flos = kLogNaN;      // HF cumulative total_flos, FLOPs
  double power_w = kLogNaN;                // Megatron --log-energy, per GPU
  double energy_j = kLogNaN;               // per GPU per iteration
  double memory_gib = kLogNaN;             // reserved/allocated as printed, per device
  bool validation = false;                 // an eval/validation line, not a training step
  // Filled by AnalyzeTrainingLog (log_analysis.h); NaN from the reader.
  double mfu = kLogNaN;             // model FLOPs MFU under the source's convention, dense peak
  double hfu = kLogNaN;             // hardware FLOPs (recompute included)
  double mfu_megatron = kLogNaN;    // under the megatron convention
  double tflops_per_gpu = kLogNaN;  // recomputed model TFLOP/s per GPU, source convention
};

enum class LogEventKind : uint8_t {
  kJobStart = 0,         // a header / "Starting job" / "Training starts at step N"
  kCheckpointSave,       // a blocking save ended (or started, see `begin`)
  kCheckpointSaveAsync,  // an async save scheduled or persisted
  kCheckpointLoad,       // a checkpoint loaded at startup
  kEvaluation,           // an eval/validation pass
  kDataLoading,
  kJobEnd,   // "Training completed", final metrics, exit code
  kFailure,  // a traceback, NCCL timeout, "Killed", non-zero exit
  kCount,
};
const char* LogEventKindId(LogEventKind kind);  // "job_start", "checkpoint_save", ...

// A non-step record of the log that goodput needs: when the job started,
// saved, loaded, failed. Durations where the log prints them.
struct LogEvent {
  LogEventKind kind = LogEventKind::kJobStart;
  int64_t line = 0;
  int32_t attempt = 0;
  int64_t step = -1;        // the step it refers to, -1 when none
  double time_s = kLogNaN;  // timestamp, seconds since the epoch
  double duration_s = kLogNaN;
  std::string detail;  // the matched text, trimmed (<= 200 chars)
};

// What the reader saw.
struct LogReadStats {
  int64_t bytes = 0;
  int64_t lines = 0;
  int64_t step_lines = 0;       // lines read as steps (duplicates included)
  int64_t duplicate_lines = 0;  // the same step printed by another rank: dropped
  int64_t partial_lines = 0;    // a step line cut short or garbled: skipped, counted
  int64_t header_lines = 0;
  int64_t ranks_seen = 0;                 // distinct launcher prefixes on step lines
  std::string chosen_rank;                // the prefix whose lines were kept ("1:", "[default0]:", "")
  std::vector<std::string> formats_seen;  // LogFormatId of every format with step lines
};

struct LogTimeline {
  std::string origin;  // the file name
  LogFormat format = LogFormat::kAuto;
  LogHeader header;
  std::vector<LogStep> steps;  // in log order, duplicates from other ranks removed
  std::vector<LogEvent> events;
  int32_t attempts = 1;  // segments: 1 + restarts seen
  LogReadStats stats;
};

struct LogReadOptions {
  LogFormat format = LogFormat::kAuto;  // force one format; kAuto detects by content
  // Refuse a log with more step lines than this (bounded memory on hostile
  // input): kOutOfRange naming the origin.
  int64_t max_steps = 50'000'000;
};

// Reads a whole log held in memory. Errors: kInvalidArgument "<origin>: no
// training step lines found (formats tried: ...)" when nothing matches (with
// the closest format's signature), kOutOfRange for max_steps. Never fails on
// a malformed line: it is counted in stats.partial_lines.
StatusOr<LogTimeline> ReadTrainingLog(std::string_view text, std::string_view origin,
                                      const LogReadOptions& options = {});

// Reads `path` through `fs` (kNotFound naming the file); a file is read in
// bounded chunks, so memory follows steps, not bytes.
StatusOr<LogTimeline> ReadTrainingLogFile(const FileSystem& fs, const std::string& path,
                                          const LogReadOptions& options = {});

// Incremental reading for huge files and streams: feed chunks of any size
// (lines may straddle chunks), then Finish.
class TrainingLogReader {
 public:
  TrainingLogReader(std::string_view origin, const LogReadOptions& options);
  ~TrainingLogReader();
  TrainingLogReader(const TrainingLogReader&) = delete;
  TrainingLogReader& operator=(const TrainingLogReader&) = delete;
  Status Feed(std::string_view chunk);
  StatusOr<LogTimeline> Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mfu
