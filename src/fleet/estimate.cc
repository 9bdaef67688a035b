// The per-GPU estimate: each interval's hardware FLOP/s from tensor-pipe
// activity and the SM clock (or, on AMD, from the op counters' rate), then
// time-weighted means, MFU bands and the decoded throttle reasons.
//
// FLOP/s = tensor_active x SMs x (dense peak / (SMs x boost clock)) x SM
// clock = tensor_active x dense peak x SM clock / boost clock: at the boost
// clock the estimated MFU is the tensor activity itself.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "fleet/fleet_internal.h"
#include "mfu/fleet.h"
#include "mfu/result.h"

namespace mfu::fleet {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A time-weighted mean of one field: NaN when no point had it.
struct WeightedMean {
  double sum = 0, weight = 0;
  void Add(double value, double seconds) {
    if (std::isnan(value))
      return;
    sum += value * seconds;
    weight += seconds;
  }
  double Get() const { return weight > 0 ? sum / weight : kNaN; }
};

MfuBand BandOf(double mfu) {
  if (mfu < 0.30)
    return MfuBand::kBelow30;
  return mfu <= 0.60 ? MfuBand::k30To60 : MfuBand::kAbove60;
}

bool HasOpCounters(const TelemetryPoint& p) {
  return p.Has(TelemetryField::kAmdTotal16Ops) || p.Has(TelemetryField::kAmdTotal32Ops) ||
         p.Has(TelemetryField::kAmdTotal64Ops);
}

double TotalOps(const TelemetryPoint& p) {
  double total = 0;
  for (TelemetryField f :
       {TelemetryField::kAmdTotal16Ops, TelemetryField::kAmdTotal32Ops, TelemetryField::kAmdTotal64Ops}) {
    if (p.Has(f))
      total += p.Get(f);
  }
  return total;
}

// FLOP/s of AMD's op counters between points `a` and `b`; NaN when either
// lacks them, the time does not advance or a counter was reset.
double OpRate(const TelemetryPoint& a, const TelemetryPoint& b) {
  if (!HasOpCounters(a) || !HasOpCounters(b) || b.time_ms <= a.time_ms)
    return kNaN;
  const double delta = TotalOps(b) - TotalOps(a);
  return delta < 0 ? kNaN : delta / (static_cast<double>(b.time_ms - a.time_ms) / 1000.0);
}

}  // namespace

double Median(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }), values.end());
  if (values.empty())
    return kNaN;
  // A regular scrape's steps are all alike: no selection needed. Otherwise
  // nth_element picks the same middle values a full sort would.
  if (std::adjacent_find(values.begin(), values.end(), std::not_equal_to<double>()) == values.end())
    return values[0];
  const size_t n = values.size();
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(values.begin(), mid, values.end());
  if (n % 2 == 1)
    return *mid;
  return (*std::max_element(values.begin(), mid) + *mid) / 2;
}

std::vector<double> PointDurations(std::span<const TelemetryPoint> points, double snapshot_interval_s) {
  std::vector<double> out(points.size(), snapshot_interval_s);
  const bool timed = std::all_of(points.begin(), points.end(), [](const TelemetryPoint& p) { return p.time_ms > 0; });
  if (points.size() < 2 || !timed)
    return out;
  std::vector<double> steps;
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    out[i] = static_cast<double>(points[i + 1].time_ms - points[i].time_ms) / 1000.0;
    steps.push_back(out[i]);
  }
  out.back() = Median(steps);
  return out;
}

double MigShare(std::string_view mig_profile, const Accelerator* accelerator) {
  size_t g = mig_profile.find('g');
  if (mig_profile.empty() || g == 0 || g == std::string_view::npos || g + 1 >= mig_profile.size() ||
      mig_profile[g + 1] != '.')
    return 1;
  int slices = 0;
  for (size_t i = 0; i < g; ++i) {
    if (mig_profile[i] < '0' || mig_profile[i] > '9')
      return 1;
    slices = slices * 10 + (mig_profile[i] - '0');
  }
  // A100/H100/H200/B200 split into 7 compute slices; A30 into 4.
  const int total = accelerator != nullptr && accelerator->name == "A30" ? 4 : 7;
  return slices >= 1 && slices <= total ? static_cast<double>(slices) / total : 1;
}

GpuEstimate EstimateGpu(const TelemetryDevice& device, std::span<const TelemetryPoint> points,
                        const EstimateInputs& inputs) {
  GpuEstimate gpu;
  gpu.device = device;
  gpu.precision = inputs.precision;
  const Accelerator* accel = inputs.accelerator;
  gpu.accelerator = accel != nullptr ? accel->id : "";
  gpu.accelerator_name = accel != nullptr ? accel->display_name() : "";
  gpu.gpu_share = MigShare(device.mig_profile, accel);
  gpu.boost_clock_mhz = accel != nullptr ? accel->boost_clock_mhz : kNaN;
  gpu.peak_flops =
      accel != nullptr ? DensePeakFlops(*accel, inputs.precision, PeakFallbacks::None()) * gpu.gpu_share : 0;
  const bool can_estimate = gpu.peak_flops > 0 && gpu.boost_clock_mhz > 0;

  const std::vector<double> seconds = PointDurations(points, inputs.snapshot_interval_s);
  WeightedMean util, tensor, dram, clock, power, flops;
  uint64_t reason_bits = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const TelemetryPoint& p = points[i];
    const double d = seconds[i];
    gpu.seconds += d;
    util.Add(p.Get(TelemetryField::kGpuUtil), d);
    tensor.Add(p.Get(TelemetryField::kTensorActive), d);
    dram.Add(p.Get(TelemetryField::kDramActive), d);
    clock.Add(p.Get(TelemetryField::kSmClockMhz), d);
    power.Add(p.Get(TelemetryField::kPowerWatts), d);
    if (p.Has(TelemetryField::kClocksEventReasons))
      reason_bits |= static_cast<uint64_t>(p.Get(TelemetryField::kClocksEventReasons));
    double interval_flops = kNaN;
    if (can_estimate) {
      interval_flops = i + 1 < points.size() ? OpRate(p, points[i + 1]) : kNaN;
      if (std::isnan(interval_flops) && i > 0 && i + 1 == points.size())
        interval_flops = OpRate(points[i - 1], p);
      if (std::isnan(interval_flops) && p.Has(TelemetryField::kTensorActive)) {
        const double mhz =
            p.Has(TelemetryField::kSmClockMhz) ? p.Get(TelemetryField::kSmClockMhz) : gpu.boost_clock_mhz;
        interval_flops = p.Get(TelemetryField::kTensorActive) * gpu.peak_flops * mhz / gpu.boost_clock_mhz;
      }
      flops.Add(interval_flops, d);
    }
    const double ta = p.Get(TelemetryField::kTensorActive), gu = p.Get(TelemetryField::kGpuUtil);
    const bool idle = !(ta >= kIdleActivity) && !(gu >= kIdleActivity) &&
                      (p.Has(TelemetryField::kTensorActive) || p.Has(TelemetryField::kGpuUtil));
    const double hours = d * gpu.gpu_share / 3600.0;
    if (idle)
      gpu.gpu_hours_by_band[static_cast<size_t>(MfuBand::kIdle)] += hours;
    else if (!std::isnan(interval_flops))
      gpu.gpu_hours_by_band[static_cast<size_t>(BandOf(interval_flops / gpu.peak_flops))] += hours;
  }
  gpu.last_sample_ms = points.empty() ? 0 : points.back().time_ms;
  gpu.gpu_util = util.Get();
  gpu.tensor_active = tensor.Get();
  gpu.dram_active = dram.Get();
  gpu.sm_clock_mhz = clock.Get();
  gpu.power_watts = power.Get();
  gpu.estimated_flops = can_estimate ? flops.Get() : kNaN;
  gpu.estimated_mfu = can_estimate ? gpu.estimated_flops / gpu.peak_flops : kNaN;
  gpu.estimated_mbu = gpu.dram_active;
  gpu.throttle_reasons = DecodeClocksEventReasons(reason_bits);
  AddGpuFindings(points, seconds, inputs, gpu);
  return gpu;
}

}  // namespace mfu::fleet
