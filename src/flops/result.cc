#include "mfu/result.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <numeric>
#include <string>

namespace mfu {

const char* WaterfallBucketName(WaterfallBucket bucket) {
  static constexpr const char* kNames[] = {"idle",
                                           "exposed_communication",
                                           "exposed_memcpy",
                                           "[unattributed]",
                                           "non_matrix_kernels",
                                           "matrix_unknown_flops",
                                           "matrix_below_peak",
                                           "matrix_at_peak"};
  static_assert(std::size(kNames) == kNumWaterfallBuckets);
  size_t i = static_cast<size_t>(bucket);
  return i < kNumWaterfallBuckets ? kNames[i] : "?";
}

namespace {

double Ratio(double a, double b) {
  return b > 0 ? a / b : 0;
}

}  // namespace

void Waterfall::SetFactorsFromBuckets() {
  int64_t compute = 0;
  for (size_t b = static_cast<size_t>(WaterfallBucket::kNonMatrixKernels); b < kNumWaterfallBuckets; ++b)
    compute += bucket_ns[b];
  const int64_t matrix = (*this)[WaterfallBucket::kMatrixUnknownFlops] + (*this)[WaterfallBucket::kMatrixBelowPeak] +
                         (*this)[WaterfallBucket::kMatrixAtPeak];
  const double at_peak = static_cast<double>((*this)[WaterfallBucket::kMatrixAtPeak]);
  compute_share = Ratio(static_cast<double>(compute), static_cast<double>(step_ns));
  matrix_share = Ratio(static_cast<double>(matrix), static_cast<double>(compute));
  matrix_efficiency = Ratio(at_peak, static_cast<double>(matrix));
  mfu_hw = compute_share * matrix_share * matrix_efficiency;
}

Waterfall WaterfallFromSeconds(const std::array<double, kNumWaterfallBuckets>& seconds) {
  Waterfall w;
  std::array<double, kNumWaterfallBuckets> ns{};
  double total = 0;
  for (size_t b = 0; b < kNumWaterfallBuckets; ++b) {
    ns[b] = std::isfinite(seconds[b]) ? std::max(0.0, seconds[b]) * 1e9 : 0;
    total += ns[b];
  }
  w.step_ns = std::llround(total);
  int64_t assigned = 0;
  std::array<size_t, kNumWaterfallBuckets> order{};
  for (size_t b = 0; b < kNumWaterfallBuckets; ++b) {
    w.bucket_ns[b] = static_cast<int64_t>(std::floor(ns[b]));
    assigned += w.bucket_ns[b];
    order[b] = b;
  }
  // Largest remainder: the buckets closest to rounding up take the rest.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ns[a] - std::floor(ns[a]) > ns[b] - std::floor(ns[b]); });
  for (size_t i = 0; assigned < w.step_ns && i < kNumWaterfallBuckets; ++i, ++assigned)
    ++w.bucket_ns[order[i]];
  w.SetFactorsFromBuckets();
  return w;
}

Status CheckConsistency(const Waterfall& w) {
  auto fail = [](const std::string& what) { return InternalError("waterfall: " + what); };
  int64_t sum = 0;
  for (size_t b = 0; b < kNumWaterfallBuckets; ++b) {
    if (w.bucket_ns[b] < 0) {
      return fail(std::string("bucket ") + WaterfallBucketName(static_cast<WaterfallBucket>(b)) + " is negative (" +
                  std::to_string(w.bucket_ns[b]) + " ns)");
    }
    sum += w.bucket_ns[b];
  }
  if (sum != w.step_ns)
    return fail("buckets sum to " + std::to_string(sum) + " ns, the step is " + std::to_string(w.step_ns) + " ns");
  const double factors[] = {w.compute_share, w.matrix_share, w.matrix_efficiency, w.mfu_hw};
  for (double f : factors) {
    if (!(f >= 0) || f > 1 + 1e-9)
      return fail("a factor is outside [0, 1]: " + std::to_string(f));
  }
  const double product = w.compute_share * w.matrix_share * w.matrix_efficiency;
  if (std::fabs(product - w.mfu_hw) > 1e-9) {
    return fail("compute share x matrix share x matrix efficiency = " + std::to_string(product) + ", mfu_hw " +
                std::to_string(w.mfu_hw));
  }
  return Status::Ok();
}

Utilization MakeUtilization(Convention convention, DType precision, double model_flops_per_s,
                            double hardware_flops_per_s, double peak_flops_per_s) {
  Utilization u;
  u.convention = convention;
  u.precision = precision;
  u.model_flops_per_s = model_flops_per_s;
  u.hardware_flops_per_s = hardware_flops_per_s;
  u.peak_flops_per_s = peak_flops_per_s;
  u.mfu = Ratio(model_flops_per_s, peak_flops_per_s);
  u.hfu = Ratio(hardware_flops_per_s, peak_flops_per_s);
  return u;
}

const char* NoteKindName(NoteKind kind) {
  return kind == NoteKind::kAssumption ? "assumption" : "warning";
}

std::optional<Note> CheckUtilizationPlausible(const Utilization& u, std::string_view likely_causes) {
  if (!(u.peak_flops_per_s > 0))
    return std::nullopt;
  const bool mfu_high = u.mfu > 1.0 || !std::isfinite(u.mfu);
  const bool hfu_high = u.hfu > 1.0 || !std::isfinite(u.hfu);
  if (!mfu_high && !hfu_high)
    return std::nullopt;
  char figure[96];
  std::snprintf(figure, sizeof figure, "%s %.1f%%", mfu_high ? "MFU" : "HFU", 100.0 * (mfu_high ? u.mfu : u.hfu));
  Note note;
  note.kind = NoteKind::kWarning;
  note.code = "mfu_above_peak";
  note.message =
      std::string(figure) + " is above 100% of the dense " + DTypeName(u.precision) + " peak, which no job reaches";
  if (!likely_causes.empty())
    note.message += ": likely " + std::string(likely_causes);
  return note;
}

std::optional<Note> CheckBandwidthPlausible(double mbu, std::string_view what, std::string_view likely_causes) {
  if (mbu <= 1.0)
    return std::nullopt;
  char figure[64];
  std::snprintf(figure, sizeof figure, " %.1f%%", 100.0 * mbu);
  Note note;
  note.kind = NoteKind::kWarning;
  note.code = "mbu_above_peak";
  note.message = std::string(what) + figure + " is above 100% of the HBM bandwidth, which no job reaches";
  if (!likely_causes.empty())
    note.message += ": likely " + std::string(likely_causes);
  return note;
}

DType DensePeakPrecision(const Accelerator& gpu, DType precision, PeakFallbacks fallbacks) {
  if (gpu.peak_flops(precision) > 0)
    return precision;
  DType fallback = precision;
  if (fallbacks.half_pair && precision == DType::kBf16)
    fallback = DType::kFp16;
  else if (fallbacks.half_pair && precision == DType::kFp16)
    fallback = DType::kBf16;
  else if (fallbacks.kernel_math && precision == DType::kTf32)
    fallback = DType::kFp32;
  else if (fallbacks.kernel_math && precision == DType::kFp64Tensor)
    fallback = DType::kFp64;
  return gpu.peak_flops(fallback) > 0 ? fallback : precision;
}

double DensePeakFlops(const Accelerator& gpu, DType precision, PeakFallbacks fallbacks) {
  return std::max(0.0, gpu.peak_flops(DensePeakPrecision(gpu, precision, fallbacks)));
}

const char* CollectiveKindName(CollectiveKind kind) {
  static constexpr const char* kNames[] = {"allreduce", "allgather", "reducescatter", "alltoall", "broadcast",
                                           "reduce",    "gather",    "scatter",       "send",     "recv",
                                           "sendrecv",  "barrier",   "unknown"};
  static_assert(std::size(kNames) == kNumCollectiveKinds);
  size_t i = static_cast<size_t>(kind);
  return i < kNumCollectiveKinds ? kNames[i] : "unknown";
}

}  // namespace mfu
