#include "mfu/calc.h"

#include <cmath>
#include <optional>
#include <span>
#include <string>

#include "base/param.h"
#include "base/strings.h"
#include "mfu/result.h"

namespace mfu {
namespace {

Status CheckPositive(double value, const char* what) {
  if (!std::isfinite(value) || value <= 0) {
    return InvalidArgumentError(std::string(what) + " must be a positive number");
  }
  return Status::Ok();
}

// A throughput field is 0 when not given; anything else must be a positive,
// finite number (NaN, infinities and negatives are never "not given").
Status CheckGivenPositive(double value, const char* param) {
  if (std::isfinite(value) && value >= 0)
    return Status::Ok();
  return InvalidArgumentError(base::Param(param) + " must be a positive finite number, got " +
                              base::FormatNumber(value));
}

}  // namespace

namespace {

// The bands of published MFU, each with its JSON code and its sentence:
// one table, so the two can never disagree on a threshold.
struct BandRow {
  double upto;  // inclusive upper bound (the first band excludes it)
  const char* code;
  const char* sentence;
};
constexpr BandRow kBands[] = {
    {0.30, "below_typical", "below the typical 30-60% band"},
    {0.60, "typical", "within the typical 30-60% band"},
    {0.75, "leading", "leading: the best published runs reach ~70%"},
};
constexpr BandRow kAbovePublished = {0, "above_published", "above any published run: check the inputs"};

const BandRow& BandOf(double mfu) {
  if (mfu < kBands[0].upto)
    return kBands[0];
  for (const BandRow& b : std::span(kBands).subspan(1)) {
    if (mfu <= b.upto)
      return b;
  }
  return kAbovePublished;
}

}  // namespace

std::string DescribeMfuBand(double mfu) {
  return BandOf(mfu).sentence;
}

const char* MfuBandCode(double mfu) {
  return BandOf(mfu).code;
}

StatusOr<MfuResult> ComputeMfu(const ModelSpec& spec, const Accelerator& gpu, const TrainingThroughput& in,
                               const MfuOptions& options) {
  MFU_RETURN_IF_ERROR(CheckGivenPositive(in.tokens_per_s, "tokens_per_sec"));
  MFU_RETURN_IF_ERROR(CheckGivenPositive(in.tokens_per_s_per_gpu, "tokens_per_sec_per_gpu"));
  MFU_RETURN_IF_ERROR(CheckGivenPositive(in.step_time_s, "step_time"));
  if (in.global_batch < 0)
    return InvalidArgumentError("parameter 'global_batch' must be >= 1 (sequences per step), got " +
                                std::to_string(in.global_batch));
  int sources = (in.tokens_per_s > 0) + (in.tokens_per_s_per_gpu > 0) + (in.step_time_s > 0);
  if (sources == 0) {
    return InvalidArgumentError(
        "give one of parameter 'tokens_per_sec', parameter 'tokens_per_sec_per_gpu' or parameter 'step_time'");
  }
  if (sources > 1) {
    return InvalidArgumentError(
        "parameter 'tokens_per_sec', parameter 'tokens_per_sec_per_gpu' and parameter 'step_time' are alternatives; "
        "give only one");
  }
  if (in.gpus < 1 || in.gpus > 10'000'000) {
    return InvalidArgumentError("parameter 'gpus' must be between 1 and 10,000,000, got " + std::to_string(in.gpus));
  }
  MfuResult r;
  MFU_ASSIGN_OR_RETURN(r.flops, ComputeTrainingFlops(spec, options.convention, in.seq_len, options.recompute));
  const auto gpus = static_cast<double>(in.gpus);
  if (in.tokens_per_s > 0) {
    MFU_RETURN_IF_ERROR(CheckPositive(in.tokens_per_s, "parameter 'tokens_per_sec'"));
    r.tokens_per_s_per_gpu = in.tokens_per_s / gpus;
  } else if (in.tokens_per_s_per_gpu > 0) {
    MFU_RETURN_IF_ERROR(CheckPositive(in.tokens_per_s_per_gpu, "parameter 'tokens_per_sec_per_gpu'"));
    r.tokens_per_s_per_gpu = in.tokens_per_s_per_gpu;
  } else {
    MFU_RETURN_IF_ERROR(CheckPositive(in.step_time_s, "parameter 'step_time'"));
    if (in.global_batch < 1)
      return InvalidArgumentError("parameter 'step_time' needs parameter 'global_batch' (sequences per step)");
    r.tokens_per_s_per_gpu =
        static_cast<double>(in.global_batch) * static_cast<double>(in.seq_len) / in.step_time_s / gpus;
  }
  r.peak_tflops = gpu.peak_tflops[static_cast<size_t>(options.precision)];
  if (!(r.peak_tflops > 0)) {
    return InvalidArgumentError("parameter 'precision': " + gpu.id + " has no dense " + DTypeName(options.precision) +
                                " peak in the hardware database");
  }
  r.model_tflops_per_gpu = r.flops.model_per_token * r.tokens_per_s_per_gpu / 1e12;
  r.hardware_tflops_per_gpu = r.flops.hardware_per_token * r.tokens_per_s_per_gpu / 1e12;
  r.mfu = r.model_tflops_per_gpu / r.peak_tflops;
  r.hfu = r.hardware_tflops_per_gpu / r.peak_tflops;
  // The rule every job applies (CheckUtilizationPlausible); a measured
  // figure above the peak is a data error (kOutOfRange, exit 1).
  const Utilization u = MakeUtilization(options.convention, options.precision, r.model_tflops_per_gpu * 1e12,
                                        r.hardware_tflops_per_gpu * 1e12, r.peak_tflops * 1e12);
  if (std::optional<Note> above = CheckUtilizationPlausible(u, kMeasuredAbovePeakCauses)) {
    return OutOfRangeError("the throughput implies " + base::FormatSi(r.hardware_tflops_per_gpu * 1e12) +
                           " FLOP/s per GPU on " + gpu.id + ": " + above->message +
                           " (check parameter 'gpus', parameter 'seq_len' and parameter 'precision')");
  }
  r.band = DescribeMfuBand(r.mfu);
  return r;
}

StatusOr<CalcReport> RunCalc(const HardwareDb& hardware, const CalcRequest& request) {
  CalcReport out;
  out.model = request.model;
  MFU_ASSIGN_OR_RETURN(out.gpu, hardware.Find(request.gpu));
  MFU_ASSIGN_OR_RETURN(out.options.convention, ParseConvention(request.convention));
  MFU_ASSIGN_OR_RETURN(out.options.recompute, ParseRecompute(request.recompute));
  MFU_ASSIGN_OR_RETURN(out.options.precision, ParseDType(request.precision));
  TrainingThroughput& t = out.throughput;
  t = request.throughput;
  if (!request.tokens_per_sec.empty()) {
    MFU_ASSIGN_OR_RETURN(t.tokens_per_s, base::ParseScaledNumber(request.tokens_per_sec, "parameter 'tokens_per_sec'"));
    if (!(t.tokens_per_s > 0))
      return InvalidArgumentError("parameter 'tokens_per_sec' must be positive");
  }
  if (!request.tokens_per_sec_per_gpu.empty()) {
    MFU_ASSIGN_OR_RETURN(t.tokens_per_s_per_gpu,
                         base::ParseScaledNumber(request.tokens_per_sec_per_gpu, "parameter 'tokens_per_sec_per_gpu'"));
    if (!(t.tokens_per_s_per_gpu > 0))
      return InvalidArgumentError("parameter 'tokens_per_sec_per_gpu' must be positive");
  }
  if (t.global_batch > 0 && !(t.step_time_s > 0))
    return InvalidArgumentError("parameter 'global_batch' goes with parameter 'step_time'");
  MFU_ASSIGN_OR_RETURN(out.result, ComputeMfu(out.model, *out.gpu, t, out.options));
  const double tokens_per_s = out.result.tokens_per_s_per_gpu;
  out.utilization =
      MakeUtilization(out.options.convention, out.options.precision, out.result.flops.model_per_token * tokens_per_s,
                      out.result.flops.hardware_per_token * tokens_per_s, out.result.peak_tflops * 1e12);
  return out;
}

}  // namespace mfu
