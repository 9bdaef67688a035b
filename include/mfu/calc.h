#pragma once

// MFU and HFU from what a training log shows: throughput or step time.

#include <cstdint>
#include <string>
#include <vector>

#include "mfu/flops.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/result.h"
#include "mfu/status.h"

namespace mfu {

// Exactly one throughput source must be set: `tokens_per_s` (whole job),
// `tokens_per_s_per_gpu`, or `step_time_s` with `global_batch` sequences.
struct TrainingThroughput {
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double step_time_s = 0;
  int64_t global_batch = 0;  // sequences per step
  int64_t gpus = 0;
  int64_t seq_len = 0;
};

struct MfuOptions {
  Convention convention = Convention::kMegatron;
  Recompute recompute = Recompute::kNone;
  DType precision = DType::kBf16;  // selects the dense peak
};

struct MfuResult {
  TrainingFlops flops;
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;     // achieved model TFLOP/s per GPU
  double hardware_tflops_per_gpu = 0;  // including recompute
  double peak_tflops = 0;              // dense peak for the precision
  double mfu = 0;                      // fraction, not percent
  double hfu = 0;
  std::string band;  // where the job stands against industry bands
};

// Errors (kInvalidArgument): no or several throughput sources, negative, NaN,
// infinite or absurd values (0 is "not given"), a precision the accelerator
// has no peak for. kOutOfRange (a data error) for inputs implying more than
// 100% of the dense peak (CheckUtilizationPlausible's rule and message).
StatusOr<MfuResult> ComputeMfu(const ModelSpec& spec, const Accelerator& gpu, const TrainingThroughput& input,
                               const MfuOptions& options);

// "below the typical 30-60% band", "within the typical 30-60% band",
// "leading: the best published runs reach ~70%", or "above any published
// run: check the inputs".
// (Not MfuBand: that is fleet.h's enum of GPU-hour bands.)
std::string DescribeMfuBand(double mfu);
// The band of DescribeMfuBand as a code, for JSON: "below_typical" (< 30%),
// "typical" (30-60%), "leading" (60-75%), "above_published" (> 75%).
const char* MfuBandCode(double mfu);

// ---------------------------------------------------------- the calc job

// What `mfu calc` is asked. The whole-job and per-GPU throughputs are text
// with k/M/G/B/T suffixes ("46k"); exactly one of them or the step time.
struct CalcRequest {
  ModelSpec model;
  std::string gpu;                     // accelerator name, alias or id
  TrainingThroughput throughput;       // gpus, seq_len, step_time_s, global_batch
  std::string tokens_per_sec;          // "" : not given
  std::string tokens_per_sec_per_gpu;  // "" : not given
  std::string convention = "megatron";
  std::string recompute = "none";
  std::string precision = "bf16";
};

struct CalcReport {
  ModelSpec model;
  const Accelerator* gpu = nullptr;  // points into the hardware database
  TrainingThroughput throughput;     // as resolved (suffixes parsed)
  MfuOptions options;
  MfuResult result;
  Utilization utilization;  // per GPU, against the dense peak of the precision
  std::vector<Note> notes;  // the convention and precision taken by default ("default_convention", ...)
};

// The MFU of `request` on `hardware`. kNotFound for an unknown accelerator;
// kInvalidArgument naming the parameter (as `parameter 'gpus'`) for what
// ComputeMfu rejects, an unparsable or non-positive throughput, a global
// batch without a step time, an unknown convention, recompute or precision.
StatusOr<CalcReport> RunCalc(const HardwareDb& hardware, const CalcRequest& request);

}  // namespace mfu
