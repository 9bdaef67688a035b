#include "mfu/calc.h"

#include <cmath>
#include <string>

#include "base/strings.h"

namespace mfu {
namespace {

Status CheckPositive(double value, const char* what) {
  if (!std::isfinite(value) || value <= 0) {
    return InvalidArgumentError(std::string(what) + " must be a positive number");
  }
  return Status::Ok();
}

}  // namespace

std::string MfuBand(double mfu) {
  if (mfu < 0.30)
    return "below the typical 30-60% band";
  if (mfu <= 0.60)
    return "within the typical 30-60% band";
  if (mfu <= 0.75)
    return "leading: the best published runs reach ~70%";
  return "above any published run: check the inputs";
}

StatusOr<MfuResult> ComputeMfu(const ModelSpec& spec, const Accelerator& gpu, const TrainingThroughput& in,
                               const MfuOptions& options) {
  int sources = (in.tokens_per_s > 0) + (in.tokens_per_s_per_gpu > 0) + (in.step_time_s > 0);
  if (sources == 0) {
    return InvalidArgumentError("give one of --tokens-per-sec, --tokens-per-sec-per-gpu or --step-time");
  }
  if (sources > 1) {
    return InvalidArgumentError(
        "--tokens-per-sec, --tokens-per-sec-per-gpu and --step-time are alternatives; give only one");
  }
  if (in.gpus < 1 || in.gpus > 10'000'000) {
    return InvalidArgumentError("--gpus must be between 1 and 10,000,000, got " + std::to_string(in.gpus));
  }
  MfuResult r;
  MFU_ASSIGN_OR_RETURN(r.flops, ComputeTrainingFlops(spec, options.convention, in.seq_len, options.recompute));
  const auto gpus = static_cast<double>(in.gpus);
  if (in.tokens_per_s > 0) {
    MFU_RETURN_IF_ERROR(CheckPositive(in.tokens_per_s, "--tokens-per-sec"));
    r.tokens_per_s_per_gpu = in.tokens_per_s / gpus;
  } else if (in.tokens_per_s_per_gpu > 0) {
    MFU_RETURN_IF_ERROR(CheckPositive(in.tokens_per_s_per_gpu, "--tokens-per-sec-per-gpu"));
    r.tokens_per_s_per_gpu = in.tokens_per_s_per_gpu;
  } else {
    MFU_RETURN_IF_ERROR(CheckPositive(in.step_time_s, "--step-time"));
    if (in.global_batch < 1)
      return InvalidArgumentError("--step-time needs --global-batch (sequences per step)");
    r.tokens_per_s_per_gpu =
        static_cast<double>(in.global_batch) * static_cast<double>(in.seq_len) / in.step_time_s / gpus;
  }
  r.peak_tflops = gpu.peak_tflops[static_cast<size_t>(options.precision)];
  if (!(r.peak_tflops > 0)) {
    return InvalidArgumentError("--precision: " + gpu.id + " has no dense " + DTypeName(options.precision) +
                                " peak in the hardware database");
  }
  r.model_tflops_per_gpu = r.flops.model_per_token * r.tokens_per_s_per_gpu / 1e12;
  r.hardware_tflops_per_gpu = r.flops.hardware_per_token * r.tokens_per_s_per_gpu / 1e12;
  r.mfu = r.model_tflops_per_gpu / r.peak_tflops;
  r.hfu = r.hardware_tflops_per_gpu / r.peak_tflops;
  if (r.hfu > 1.0) {
    return InvalidArgumentError("the throughput implies " + base::FormatSi(r.hardware_tflops_per_gpu * 1e12) +
                                " FLOP/s per GPU, " + std::to_string(static_cast<int>(std::lround(r.hfu * 100))) +
                                "% of the dense " + DTypeName(options.precision) + " peak of " + gpu.id +
                                ": check the throughput, --gpus, --seq-len and --precision");
  }
  r.band = MfuBand(r.mfu);
  return r;
}

}  // namespace mfu
