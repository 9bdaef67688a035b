#pragma once

// The MFU waterfall of one rank over one step window: starting from 100% of
// the dense peak over the step time T, where the time went, as time-
// equivalent buckets in int64 nanoseconds that sum exactly to T:
//
//   idle                    no GPU activity at all
//   exposed communication   communication kernels not under compute
//   exposed memcpy/memset   copies not under compute or communication
//   [unattributed]          busy only with kernels no classifier rule names
//   non-matrix kernels      compute time not covered by matrix kernels
//   matrix, FLOPs unknown   matrix-kernel time whose op recorded no shapes
//                           (or whose dtype has no peak on this device)
//   matrix below peak       matrix time with known FLOPs - FLOPs / peak
//   matrix at peak          executed matrix FLOPs / dense peak: the useful part
//
// "Compute" is the union of GEMM, attention, convolution, elementwise and
// reduction kernels over all streams; every other layer is a union too, so
// overlap across streams is never counted twice. The identity
//
//   MFU_hw = at_peak / T = (compute / T) x (matrix / compute) x (at_peak / matrix)
//          = compute-time share x matrix-op share x matrix-op efficiency
//
// holds exactly and each factor is reported. "At peak" uses the peak of each
// op's own dtype (trace_flops.h), so a step mixing BF16 and FP8 GEMMs is
// measured against the right peaks.
//
// With a model, the model-FLOPs MFU follows the paper definition:
// ComputeTrainingFlops(...).model_per_token x tokens / (T x peak), and the
// gap between those model FLOPs and the FLOPs the kernels executed
// (recompute, padding, work the model count leaves out, or ops without
// shapes) is reported.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mfu/flops.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/result.h"
#include "mfu/status.h"
#include "mfu/trace.h"
#include "mfu/trace_breakdown.h"
#include "mfu/trace_classify.h"
#include "mfu/trace_flops.h"

namespace mfu {

// How many FLOPs the model needs per step.
struct ModelStepInput {
  const ModelSpec* model = nullptr;  // required
  Convention convention = Convention::kMegatron;
  Recompute recompute = Recompute::kNone;
  int64_t seq_len = 0;         // tokens per sequence (attention length)
  double tokens_per_step = 0;  // tokens this rank processed in one step (batch x seq_len)
  // true: forward + backward (3x forward per token, the MFU numerator);
  // false: one forward per token (inference prefill, evaluation).
  bool training = true;
  // The peak the model MFU divides by; unset: the dtype carrying most
  // executed matrix FLOPs in the window (BF16 when none). A stated precision
  // the accelerator lists no peak of takes the fallback predict takes
  // (bf16 <-> fp16; PeakFallbacks::StatedTracePrecision), marked in
  // ModelStepMfu::peak_precision; an inferred one only the kernel math rule.
  std::optional<DType> precision;
};

struct ModelStepMfu {
  DType precision = DType::kBf16;
  // The precision whose listed peak is peak_flops_per_s: `precision`, or the
  // fallback DensePeakFlops took where the accelerator lists no peak of it
  // (fp16 for a stated bf16 on a V100, the rule predict uses).
  DType peak_precision = DType::kBf16;
  bool peak_fallback() const { return peak_precision != precision; }
  double peak_flops_per_s = 0;
  double model_flops = 0;     // per step, the MFU numerator
  double hardware_flops = 0;  // model + recompute, the HFU numerator
  double executed_flops = 0;  // matrix FLOPs the kernels ran in the window (from shapes)
  double mfu = 0;             // model_flops / (T x peak), a fraction
  double hfu = 0;             // hardware_flops / (T x peak)
  // executed / model: > 1 means work the model count does not include
  // (recompute, padding, masked attention computed in full); < 1 means
  // model work the trace did not show (ops without shapes, an LM head the
  // profiled code skips).
  double executed_over_model = 0;
  // The same as FLOP/s per GPU over the step, with the convention.
  Utilization utilization;
};

// The shared Waterfall (mfu/result.h: step_ns, the eight buckets in integer
// ns, the four factors, computed here from exact times) plus what only a
// measurement has: the window, the layers and the FLOPs behind the buckets.
struct StepWaterfall : Waterfall {
  std::string label;  // "ProfilerStep#6", or "trace" for the whole span
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // step_ns == end_ns - start_ns

  // Layers (unions over streams, clipped to the window).
  int64_t busy_ns = 0;               // any GPU activity
  int64_t compute_ns = 0;            // compute kernels
  int64_t matrix_ns = 0;             // matrix kernels
  int64_t matrix_with_flops_ns = 0;  // matrix kernels carrying shape FLOPs
  double matrix_flops = 0;           // executed FLOPs on matrix kernels (prorated at the edges)
  double non_matrix_flops = 0;       // shape FLOPs that landed on non-matrix kernels
  double at_peak_exact_ns = 0;       // sum(flops / peak(dtype)) before rounding
  // At-peak time beyond the matrix time, clamped off. 0 unless the peak or
  // the shapes are wrong, or cuDNN ran Winograd/FFT convolutions (fewer
  // multiplies than the direct count of trace_flops.h).
  int64_t over_peak_ns = 0;
  double matrix_flops_without_peak = 0;  // FLOPs whose dtype has no peak on this device
  double coverage = 0;                   // matrix_with_flops / matrix

  std::optional<ModelStepMfu> model;
};

// What "the step time" of a ProfilerStep is.
enum class StepTimeKind : uint8_t {
  // The CPU ProfilerStep#N duration: wall-clock time per iteration, as a
  // training log reports it, placed on the GPU timeline from the step's
  // first GPU work (ProfilerStepInfo::gpu_start_ns; the CPU range when it
  // launched nothing). Consecutive steps tile time in steady state, so GPU
  // idle while the host waits (data loading, launch-bound code) is counted.
  kCpuStep = 0,
  // From the first start to the last end of the GPU ops launched in the
  // step (ProfilerStepInfo::gpu_start_ns/gpu_end_ns; Kineto's
  // gpu_user_annotation and TraceLens's gpu_timeline use the same range).
  // GPU idle between steps is left out.
  kGpuSpan,
};

struct WaterfallOptions {
  const Accelerator* gpu = nullptr;       // required: the dense peaks
  std::optional<ModelStepInput> model{};  // adds the model-FLOPs MFU
  StepTimeKind step_time = StepTimeKind::kCpuStep;
  // FindProfilerSteps(trace, launches) when the caller has it already
  // (ComputeStepWaterfalls computes it otherwise).
  const std::vector<ProfilerStepInfo>* steps = nullptr;
};

// The waterfall of [start_ns, end_ns). `classes` and `attribution` come from
// ClassifyEvents and AttributeOpFlops on the same trace. Errors:
// kInvalidArgument when the window is empty, no accelerator is given, or the
// model input lacks a model, tokens or seq_len; ComputeTrainingFlops's errors.
StatusOr<StepWaterfall> ComputeWaterfall(const RankTrace& trace, std::span<const KernelClass> classes,
                                         const FlopsAttribution& attribution, int64_t start_ns, int64_t end_ns,
                                         std::string label, const WaterfallOptions& options);

// One waterfall per profiler step (FindProfilerSteps; `options.step_time`
// picks the window; a step that launched nothing has no GPU span and is
// skipped under kGpuSpan). A step's waterfall counts the GPU ops of that
// step only (StepOfGpuOps: the ops its breakdown and FLOPs coverage count),
// clipped to the window: one window per step label. Without ProfilerStep annotations: one window over
// the whole GPU activity span, labelled "trace". `launches` comes from
// LinkLaunches. Errors as ComputeWaterfall; kNotFound when there is no
// window with GPU activity.
StatusOr<std::vector<StepWaterfall>> ComputeStepWaterfalls(const RankTrace& trace, std::span<const KernelClass> classes,
                                                           std::span<const uint32_t> launches,
                                                           const FlopsAttribution& attribution,
                                                           const WaterfallOptions& options);

// Verifies the invariants: the shared ones (CheckConsistency of the
// Waterfall: every bucket >= 0, buckets sum exactly to the step time, the
// factors multiply to MFU_hw), step_ns == end_ns - start_ns, the layers
// nest (matrix <= compute <= busy <= T) and the buckets follow from them.
// kInternal naming the first violation.
Status CheckConsistency(const StepWaterfall& waterfall);

}  // namespace mfu
