#pragma once

// A training log's timeline checked from first principles: MFU and HFU
// recomputed per step under the source framework's FLOPs convention and
// under megatron, against the device's dense peak; the logged TFLOP/s and
// MFU compared with them and the likely cause named where the numbers allow
// (A100 fallback peak, sparse or TF32 peak, per-job vs per-device, attention
// factor, padding counted, world size); warm-up and steady state; throughput
// regressions and spikes; restarts. The library behind `mfu log`.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/flops.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/note.h"
#include "mfu/status.h"
#include "mfu/training_log.h"

namespace mfu {

// What the user adds to what the log says. Empty / 0 fields are taken from
// the log's header; what neither gives leaves MFU unrecomputed (a note says
// which parameter is missing), never guessed silently.
struct LogAnalysisRequest {
  std::optional<ModelSpec> model;  // resolved by the caller (preset, config.json); else built from the header's dims
  std::string gpu;                 // accelerator name, alias or id; "" -> the header's device name
  int64_t gpus = 0;                // world size; 0 -> header
  int64_t seq_len = 0;             // 0 -> header
  int64_t global_batch = 0;        // sequences per step; 0 -> header / the step lines
  std::string convention;          // "" -> the source framework's convention (frameworks' table in docs/logs.md)
  std::string precision;           // "" -> header, else bf16 (stated in a note)
  std::string recompute;           // "" -> header, else none
  double tolerance = 0.10;         // relative disagreement beyond which a logged figure is a finding
  // Steady-state detection: steps whose throughput is within `steady_band`
  // of the run's median after warm-up.
  double steady_band = 0.10;
  // Used only where neither the fields above nor the header give a usable
  // value (the fleet view passes what the telemetry shows for the job's
  // GPUs); the analysis states `fallback_source` as the value's source.
  std::string fallback_gpu;
  int64_t fallback_gpus = 0;
  std::string fallback_source = "fallback";
};

// Finding kinds, stable ids for scripts (docs/logs.md lists each with its
// cause and remedy).
//   logged_mfu_mismatch, logged_tflops_mismatch   logged figure vs recomputed, cause unknown
//   peak_a100_fallback   logged MFU uses the A100's 312 TFLOP/s on another device
//   peak_sparse          the denominator is the 2:4-sparse datasheet figure
//   peak_tf32            the denominator is a TF32 figure
//   peak_other           the printed peak is not the device's dense peak for the precision
//   quantized_vs_bf16_peak  FP8/MX matmuls measured against the BF16 peak
//   per_job_vs_per_device   a global quantity divided by one device (or the reverse)
//   attention_factor     the framework counts attention differently (full vs causal T^2)
//   padding_counted      FLOPs include padding tokens (HF total_flos, MaxText tokens)
//   world_size           the logged figure is off by a factor matching a parallel size
//   sharded_parameters   parameters counted per shard (FSDP / ZeRO-3) in FLOPs or the header
//   mfu_above_100        any MFU (logged or recomputed) above 100% of the dense peak
//   tflops_above_peak    logged TFLOP/s per device above the dense peak (async-dispatch timing)
//   warmup               the first steps (compile, init) excluded from the steady state
//   regression           throughput dropped and stayed down (>= 3 log lines)
//   spike                a single slow (or impossibly fast) step line
//   restart              the step count went backwards or a new header began
//   skipped_iterations   fp16 overflow: time spent, no update made
//   missing_input        a parameter needed to recompute MFU is not known
struct LogFinding {
  std::string kind;
  int64_t step = -1;
  int64_t line = 0;      // 1-based line of the evidence in the log
  int32_t attempt = -1;  // the run segment the evidence belongs to, -1 for the header
  std::string origin;    // the file the line is in (several files: attempts of one job)
  std::string message;   // one sentence with the figures and the remedy
  std::string evidence;  // the evidence line as printed (trimmed, <= 240 chars)
};

struct LogSteadyState {
  int64_t first_step = -1;
  int64_t last_step = -1;
  int64_t step_lines = 0;  // timeline entries inside the window
  double mfu = kLogNaN;    // median of the recomputed MFU (source convention)
  double mfu_megatron = kLogNaN;
  double hfu = kLogNaN;
  double logged_mfu = kLogNaN;  // median of the framework's own figure
  double tokens_per_s_per_gpu = kLogNaN;
  double step_time_s = kLogNaN;
  double tflops_per_gpu = kLogNaN;  // recomputed
  double logged_tflops_per_gpu = kLogNaN;
};

struct LogAnalysis {
  LogTimeline timeline;  // steps with mfu/hfu/mfu_megatron filled
  // What was used, and where it came from ("flag", "header", "default").
  std::string model_name;
  std::string model_source;
  std::optional<ModelSpec> model;    // the model the FLOPs were counted for; nullopt when unknown
  const Accelerator* gpu = nullptr;  // points into the hardware database; null when unknown
  std::string gpu_source;
  int64_t gpus = 0;
  std::string gpus_source;
  int64_t seq_len = 0;
  std::string seq_len_source;
  int64_t global_batch = 0;
  std::string global_batch_source;
  Convention convention = Convention::kMegatron;  // the source's (or the flag's)
  std::string convention_source;
  std::string precision_source;
  std::string recompute_source;
  // Which figure of the step lines the per-GPU token rate came from:
  // "tokens_per_s_per_gpu", "tokens_per_s / gpus", "samples_per_s x seq_len /
  // gpus", "global_batch x seq_len / step_time_s / gpus", "mixed" or "none".
  std::string throughput_source;
  DType precision = DType::kBf16;
  Recompute recompute = Recompute::kNone;
  double peak_flops = 0;             // the dense peak used, FLOP/s per device
  double model_flops_per_token = 0;  // source convention
  double megatron_flops_per_token = 0;
  double hardware_flops_per_token = 0;  // with recompute
  LogSteadyState steady_state;
  std::vector<LogFinding> findings;
  std::vector<Note> notes;
};

// The timeline checked. kInvalidArgument naming the parameter (`parameter
// 'gpu'`, `parameter 'convention'`) for an unknown accelerator, convention,
// precision or recompute named by the request, a precision the accelerator
// has no dense peak for, or an out-of-range value (an unknown name is a
// usage error, exit 2, as everywhere in docs/cli.md).
// Missing inputs are not errors: MFU stays NaN and a missing_input finding
// says what to pass.
StatusOr<LogAnalysis> AnalyzeTrainingLog(LogTimeline timeline, const HardwareDb& hardware,
                                         const LogAnalysisRequest& request);

// Several logs of one job, in the order given (a restart per file), merged
// into one timeline: attempt numbers continue across files, the header is
// the first file's with fields it lacks taken from the later ones, and
// steps keep their file-relative line numbers (LogFinding::origin names the
// file). Errors: the first file's error, prefixed by nothing more (the
// reader names the origin); kInvalidArgument for an empty list.
StatusOr<LogTimeline> MergeTrainingLogs(std::vector<LogTimeline> timelines);

// Reads `paths` through `fs` (ReadTrainingLogFile), merges them and
// analyzes the result; then fills each finding's `origin` and `evidence`
// from the files' text (ANSI codes removed, trimmed to 240 characters).
// Errors: the reader's (kNotFound for a missing file; a file without step
// lines, kInvalidArgument from the reader, becomes kParse: the data is
// wrong, not the request), then AnalyzeTrainingLog's.
StatusOr<LogAnalysis> AnalyzeTrainingLogFiles(const FileSystem& fs, const std::vector<std::string>& paths,
                                              const LogReadOptions& read, const HardwareDb& hardware,
                                              const LogAnalysisRequest& request);

// Sets the `evidence` of every finding of `origin` whose line is in `text`
// (ANSI codes removed, trimmed to 240 characters).
void AttachEvidence(std::string_view text, std::string_view origin, std::vector<LogFinding>& findings);

// The FLOPs convention each framework's own TFLOP/s/MFU uses: megatron for
// Megatron-LM/Bridge/NeMo/DeepSpeed, maxtext for MaxText, palm for
// torchtitan/nanoGPT/picotron, hf for the HF Trainer, llm_foundry for
// Composer.
Convention SourceConvention(LogFormat format);

}  // namespace mfu
