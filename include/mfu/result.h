#pragma once

// The result vocabulary every job shares (measured by `mfu trace`, predicted
// by `mfu predict`/`plan` and by the inference model), so that measured and
// predicted results read side by side, bucket for bucket:
//
//   Waterfall    where one step's time went: named buckets in integer
//                nanoseconds that sum exactly to the step, and the identity
//                MFU_hw = compute-time share x matrix-op share x matrix-op
//                efficiency (each factor reported).
//   Utilization  model and hardware FLOP/s per GPU against the dense peak of
//                the precision, with the FLOPs convention that counted them.
//   CollectiveKind and its nccl-tests bus-bandwidth factor.
//
// Units are in the names: _ns, _s, _bytes, _flops, _per_s; fractions are
// 0..1.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mfu/flops.h"
#include "mfu/hwdb.h"
#include "mfu/note.h"
#include "mfu/status.h"

namespace mfu {

// ---------------------------------------------------------------- Waterfall

enum class WaterfallBucket : uint8_t {
  kIdle = 0,              // no GPU activity (predicted: pipeline bubble, kernel gaps)
  kExposedCommunication,  // communication not under compute
  kExposedMemcpy,         // copies not under compute or communication
  kUnattributed,          // busy only with kernels no classifier rule names
  kNonMatrixKernels,      // compute time not covered by matrix kernels
  kMatrixUnknownFlops,    // matrix-kernel time whose FLOPs are unknown
  kMatrixBelowPeak,       // matrix time - FLOPs / peak
  kMatrixAtPeak,          // executed matrix FLOPs / dense peak: the useful part
};
inline constexpr size_t kNumWaterfallBuckets = 8;
// "idle", "exposed_communication", "exposed_memcpy", "[unattributed]",
// "non_matrix_kernels", "matrix_unknown_flops", "matrix_below_peak",
// "matrix_at_peak".
const char* WaterfallBucketName(WaterfallBucket bucket);

// One step's time, measured or predicted.
struct Waterfall {
  int64_t step_ns = 0;
  std::array<int64_t, kNumWaterfallBuckets> bucket_ns{};
  int64_t operator[](WaterfallBucket b) const { return bucket_ns[static_cast<size_t>(b)]; }
  int64_t& operator[](WaterfallBucket b) { return bucket_ns[static_cast<size_t>(b)]; }

  // MFU_hw = compute_share x matrix_share x matrix_efficiency (fractions).
  double compute_share = 0;      // compute / step
  double matrix_share = 0;       // matrix / compute
  double matrix_efficiency = 0;  // at peak / matrix
  double mfu_hw = 0;             // at peak / step

  // Fills the four factors from the buckets: compute = every bucket from
  // non_matrix_kernels on, matrix = the three matrix buckets, at peak =
  // matrix_at_peak. (A measured waterfall computes them from exact, unrounded
  // times and sets them itself.)
  void SetFactorsFromBuckets();
};

// Buckets given in seconds (negative values are clamped to 0), rounded to
// integer nanoseconds with the largest-remainder rule so that they sum
// exactly to round(sum of seconds x 1e9); the factors from the buckets.
Waterfall WaterfallFromSeconds(const std::array<double, kNumWaterfallBuckets>& seconds);

// kInternal naming the violation: a negative bucket, buckets that do not sum
// to the step, a factor outside [0, 1] (matrix efficiency may exceed 1 only
// by rounding), or a product of factors that differs from mfu_hw by > 1e-9.
Status CheckConsistency(const Waterfall& w);

// -------------------------------------------------------------- Utilization

// Model FLOPs (the convention's count, the MFU numerator) and hardware FLOPs
// (with recomputation: HFU) per GPU per second against the dense peak.
struct Utilization {
  Convention convention = Convention::kMegatron;
  DType precision = DType::kBf16;   // whose dense peak
  double model_flops_per_s = 0;     // per GPU
  double hardware_flops_per_s = 0;  // per GPU
  double peak_flops_per_s = 0;      // dense, per GPU
  double mfu = 0;                   // model / peak
  double hfu = 0;                   // hardware / peak
};

// Fills mfu and hfu (0 when the peak is 0).
Utilization MakeUtilization(Convention convention, DType precision, double model_flops_per_s,
                            double hardware_flops_per_s, double peak_flops_per_s);

// Which fallbacks DensePeakFlops takes when `gpu` lists no peak for the
// precision asked.
struct PeakFallbacks {
  // bf16 -> fp16 and fp16 -> bf16 when the device lists only one of them
  // (their tensor-core rates are equal on every accelerator that lists both):
  // a job's precision, which the framework maps to the half type the device
  // has.
  bool half_pair = true;
  // TF32 -> FP32 on devices without TF32 and FP64 tensor -> FP64: the rate a
  // traced kernel of that math type runs at where the device lacks the
  // tensor-core path.
  bool kernel_math = false;

  // What a job's precision takes (predict, plan, infer, calc, log): half_pair.
  static constexpr PeakFallbacks Job() { return {}; }
  // What a traced kernel's dtype takes (mfu trace): kernel_math only, since
  // a bf16 kernel cannot run on a device without bf16 at its fp16 rate.
  static constexpr PeakFallbacks Kernel() { return {false, true}; }
  // What a traced job's stated precision takes (mfu trace --precision): a
  // job's rule, as predict applies it to the same precision, and the kernel
  // math rule for tf32 and fp64 tensor.
  static constexpr PeakFallbacks StatedTracePrecision() { return {true, true}; }
  // The listed peak only (mfu log, fleet telemetry): a precision the device
  // does not list is reported as such ("no dense bf16 peak") rather than
  // measured against another type's peak.
  static constexpr PeakFallbacks None() { return {false, false}; }
};

// The dense peak of `precision` on `gpu`, in FLOP/s, the listed peak or the
// one fallback rule every job uses (`fallbacks`, by default a job's:
// bf16 <-> fp16). 0 when neither is listed (FP8 on an A100).
double DensePeakFlops(const Accelerator& gpu, DType precision, PeakFallbacks fallbacks = PeakFallbacks::Job());
// The precision whose listed peak DensePeakFlops returns: `precision` when
// `gpu` lists it (or lists neither it nor its fallback), else the fallback
// taken (kFp16 for a bf16 job on a V100), for a result to mark.
DType DensePeakPrecision(const Accelerator& gpu, DType precision, PeakFallbacks fallbacks = PeakFallbacks::Job());

// ------------------------------------------------------------------- Notes

// Note, NoteKind: mfu/note.h (every job result carries std::vector<Note>).

// A warning when MFU or HFU of `u` exceeds 100% of the dense peak (nullopt
// when both are at most 1 or the peak is unknown). `likely_causes` completes
// the sentence "... above 100% of the dense peak: likely ...", e.g. "the
// throughput is for the whole job, not per GPU, or the model is not the one
// that ran".
std::optional<Note> CheckUtilizationPlausible(const Utilization& u, std::string_view likely_causes);

// The same rule for memory bandwidth: a warning "mbu_above_peak" when `mbu`
// (bytes moved / (time x HBM bandwidth)) exceeds 1 or is not finite;
// nullopt otherwise. `what` names the figure ("the measured TPOT's MBU").
std::optional<Note> CheckBandwidthPlausible(double mbu, std::string_view what, std::string_view likely_causes);

// The likely causes of a measured figure above the peak, for
// CheckUtilizationPlausible's `likely_causes`: a whole-job throughput given
// per GPU, or a model that is not the one that ran.
inline constexpr std::string_view kMeasuredAbovePeakCauses =
    "the measured throughput is for the whole job, not per GPU, or the model is not the one that ran";

// ------------------------------------------------------------- Collectives

enum class CollectiveKind : uint8_t {
  kAllReduce = 0,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce,
  kGather,
  kScatter,
  kSend,      // point-to-point: never matched across ranks
  kRecv,      // point-to-point
  kSendRecv,  // an NCCL SendRecv kernel with nothing else known (all_to_all or batched p2p)
  kBarrier,
  kUnknown,  // a communication kernel whose collective is unknown (ncclDevKernel_Generic, DeepEP, NVSHMEM)
};
inline constexpr size_t kNumCollectiveKinds = 13;

// "allreduce", "allgather", "reducescatter", "alltoall", "broadcast",
// "reduce", "gather", "scatter", "send", "recv", "sendrecv", "barrier",
// "unknown".
const char* CollectiveKindName(CollectiveKind kind);

inline bool IsPointToPoint(CollectiveKind kind) {
  return kind == CollectiveKind::kSend || kind == CollectiveKind::kRecv;
}

// nccl-tests' bus-bandwidth factor for a group of `group_size` ranks:
// allreduce 2(n-1)/n; allgather, reducescatter, alltoall, gather, scatter
// (n-1)/n; broadcast, reduce, send, recv, sendrecv 1; barrier and unknown 0
// (no payload). 0 when `group_size` < 1.
// Inline: the performance models call it for every collective they time.
inline double BusBandwidthFactor(CollectiveKind kind, int64_t group_size) {
  if (group_size < 1)
    return 0;
  double n = static_cast<double>(group_size);
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2 * (n - 1) / n;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter:
      return (n - 1) / n;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
    case CollectiveKind::kSend:
    case CollectiveKind::kRecv:
    case CollectiveKind::kSendRecv:
      return 1;
    case CollectiveKind::kBarrier:
    case CollectiveKind::kUnknown:
      return 0;
  }
  return 0;
}

}  // namespace mfu
