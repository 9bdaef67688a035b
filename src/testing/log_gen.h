#pragma once

// Training-log fixtures (test and benchmark only): a realistic mixed log of
// any length, as a multi-node Megatron-LM job prints it under `srun -l`:
// the current iteration line (training.py L3567-3653 @d98e8a64, with
// timestamp, throughput and energy fields) on the last node, surrounded by
// what real logs hold between steps: NCCL INFO lines from every rank,
// torchtitan-style Python logging lines, DeepSpeed-style "[ts] [INFO]"
// lines, memory reports, warnings and tqdm bars. Deterministic: the same
// options give the same bytes.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace mfu::testing {

struct LogGenOptions {
  int64_t lines = 10'000'000;   // physical lines in all
  int64_t lines_per_step = 25;  // one iteration line per this many lines
  int32_t nodes = 4;            // srun task ids 0..nodes-1 (the last prints steps)
  int32_t ranks_per_node = 8;   // the [N] of NCCL lines
  uint64_t seed = 1;
};

// What a generated log holds, for tests to check a reader against.
struct LogGenSummary {
  int64_t lines = 0;
  int64_t bytes = 0;
  int64_t steps = 0;       // iteration lines (steps 1..steps, log interval 1)
  double step_time_s = 0;  // every step's "elapsed time per iteration (ms)" / 1000
  double tflops_per_gpu = 0;
};

// Streams the log to `sink` in pieces of about 1 MiB and returns its summary.
LogGenSummary GenerateMixedLog(const LogGenOptions& options, const std::function<void(std::string_view)>& sink);

// The same log as one string (small `lines` only).
std::string GenerateMixedLogText(const LogGenOptions& options, LogGenSummary* summary = nullptr);

}  // namespace mfu::testing
