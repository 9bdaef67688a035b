#pragma once

// Measured training runs (the columns of
// ../shared/reference/training-runs-calibration.csv, documented in
// docs/plan.md): what `mfu calibrate` fits the performance model's
// efficiency parameters to, and what the accuracy table is computed on.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/flops.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/status.h"

namespace mfu {

// Which throughput figure a row was measured as. Every row is turned into
// tokens per second per GPU; the error of a predicted TFLOP/s in the
// source's own FLOP convention equals the error of the predicted tokens/s
// (same FLOPs per token on both sides).
enum class MeasuredAs {
  kTokensPerSecond,     // tokens_per_s_per_gpu (or tokens_per_s_total / gpus)
  kStepTime,            // step_time_s: global_batch * seq_len / step / gpus
  kTflopsMegatron2021,  // tflops_per_gpu under Narayanan's 96*B*s*l*h^2*(...) per iteration
};

struct TrainingRun {
  int row_id = 0;
  std::string source;  // short key: "narayanan2021", "korthikanti2022", "nemo-24.07",
                       // "llm-foundry", "torchtitan", "vtrain", or the CSV's first words
  std::string source_ref;
  std::string framework;          // as published
  std::string framework_profile;  // data/frameworks name (column framework_profile; default megatron-core)
  std::string attention;          // column attention: a kernel overriding the framework's ("" = its default)
  std::string compile;            // column compile: torch.compile "yes" / "no" ("" = the framework's elementwise)
  std::string model_name;
  ModelSpec model;  // built with BuildGenericModel from the row's dims
  int64_t seq_len = 0;
  int64_t global_batch = 0;  // sequences (first value when it ramps)
  int64_t micro_batch = 0;   // 0 when not published
  std::string gpu_type;      // as published
  std::string accelerator;   // hardware database id
  std::string cluster;       // cluster id (data/clusters) whose fabric the run used
  int64_t gpus = 0;
  int64_t tp = 1, pp = 1, dp = 0, cp = 1, ep = 1, vpp = 1;
  bool sequence_parallel = false;
  // Column tp_comm_overlap: TP communication overlapped with the GEMMs
  // (Megatron's --tp-comm-overlap, torchtitan's AsyncTP); unset (an empty
  // cell): the framework profile's tp_overlap_default.
  std::optional<bool> tp_comm_overlap;
  // 0 none, 1 distributed optimizer / ZeRO-1, 2, 3 = FSDP full shard; unset
  // (an empty cell): the framework profile's zero_stage.
  std::optional<int> zero_stage;
  bool fsdp = false;
  Recompute recompute = Recompute::kNone;
  DType precision = DType::kBf16;  // kFp8 for FP8 rows (Float8, FP8 CS/MX)
  MeasuredAs measured_as = MeasuredAs::kTokensPerSecond;
  double measured_tokens_per_s_per_gpu = 0;
  double published_tflops_per_gpu = 0;  // in the source's convention; 0 when absent
  double published_mfu_pct = 0;
  double published_step_time_s = 0;
  std::string flops_convention;  // the row's text
  std::string notes;
};

// A row that could not be used, and why (e.g. "row 12: no throughput column").
struct SkippedRun {
  int row_id = 0;
  std::string reason;
};

struct TrainingRunSet {
  std::vector<TrainingRun> runs;
  std::vector<SkippedRun> skipped;

  // The distinct `source` values of the runs, in order of first appearance.
  std::vector<std::string> Sources() const;
};

// Parses the CSV text. kParse (naming `origin`, the line and the column) when
// the header lacks a required column or the CSV is malformed; a row whose
// values cannot describe a run (no dims, no throughput, an unknown GPU) is
// skipped with its reason, never guessed.
StatusOr<TrainingRunSet> ParseTrainingRuns(std::string_view csv_text, std::string_view origin);
StatusOr<TrainingRunSet> ReadTrainingRuns(const FileSystem& fs, const std::string& path);

}  // namespace mfu
