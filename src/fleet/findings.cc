// Health findings: what makes a GPU's telemetry, or the estimate built on
// it, wrong or incomplete, each with the exporter setting or fix where one
// exists (fleet.h lists the codes).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "fleet/fleet_internal.h"
#include "mfu/fleet.h"
#include "mfu/result.h"

namespace mfu::fleet {
namespace {

// GPU_UTIL at or above this is "busy" for the stuck and low-tensor checks.
constexpr double kBusyUtil = 0.5;
// Tensor activity below this while busy is "nearly idle tensor pipes".
constexpr double kLowTensor = 0.05;

void Add(GpuEstimate& gpu, const char* code, std::string message) {
  gpu.findings.push_back({code, std::move(message)});
}

bool AnyHas(std::span<const TelemetryPoint> points, TelemetryField f) {
  return std::any_of(points.begin(), points.end(), [f](const TelemetryPoint& p) { return p.Has(f); });
}

double MaxOf(std::span<const TelemetryPoint> points, TelemetryField f) {
  double m = -1;
  for (const TelemetryPoint& p : points) {
    if (p.Has(f))
      m = std::max(m, p.Get(f));
  }
  return m;
}

// Exact comparisons of exported values (-Wfloat-equal): a counter stuck at
// 0 is exactly 0, an unchanged XID exactly the same number.
bool Same(double a, double b) {
  return a <= b && a >= b;
}

std::string Pct(double fraction, int decimals) {
  return fmt::format("{:.{}f}%", fraction * 100, decimals);
}

void MissingFields(std::span<const TelemetryPoint> points, GpuEstimate& gpu) {
  const bool amd = gpu.device.vendor == "amd";
  const bool ops = AnyHas(points, TelemetryField::kAmdTotal16Ops) || AnyHas(points, TelemetryField::kAmdTotal32Ops) ||
                   AnyHas(points, TelemetryField::kAmdTotal64Ops);
  if (!AnyHas(points, TelemetryField::kTensorActive) && !ops) {
    Add(gpu, "missing_field",
        amd ? "no GPU_PROF_TENSOR_ACTIVE_PERCENT (or GPU_PROF_TOTAL_*_OPS): the profiler fields are opt-in; "
              "list them in the device-metrics-exporter config's GPUConfig Fields; no MFU estimated"
            : "no DCGM_FI_PROF_PIPE_TENSOR_ACTIVE: enable the DCP profiling counters (add it to dcgm-exporter's "
              "counters CSV, -f / DCGM_EXPORTER_COLLECTORS); no MFU estimated");
  } else if (!AnyHas(points, TelemetryField::kSmClockMhz) && gpu.boost_clock_mhz > 0) {
    Add(gpu, "missing_field",
        fmt::format("no {}: the boost clock from the accelerator database ({:.0f} MHz) is assumed, which "
                    "overstates FLOP/s when clocks drop",
                    amd ? "gpu_clock" : "DCGM_FI_DEV_SM_CLOCK", gpu.boost_clock_mhz));
  }
  if (!AnyHas(points, TelemetryField::kDramActive) && !amd)
    Add(gpu, "missing_field",
        "no DCGM_FI_PROF_DRAM_ACTIVE: no memory-bandwidth utilization (add it to the counters CSV)");
}

void Profiling(std::span<const TelemetryPoint> points, GpuEstimate& gpu) {
  if (!(gpu.gpu_util >= kBusyUtil))
    return;
  for (auto [field, name] : {std::pair{TelemetryField::kGrEngineActive, "DCGM_FI_PROF_GR_ENGINE_ACTIVE"},
                             std::pair{TelemetryField::kSmActive, "DCGM_FI_PROF_SM_ACTIVE"}}) {
    if (Same(MaxOf(points, field), 0)) {
      Add(gpu, "profiling_stuck_zero",
          fmt::format("GPU_UTIL {} while {} stays at 0: the profiling counters are stuck (dcgm-exporter#662; "
                      "restart the exporter and nv-hostengine); the estimate is not trustworthy",
                      Pct(gpu.gpu_util, 0), name));
      return;
    }
  }
  if (Same(MaxOf(points, TelemetryField::kTensorActive), 0) && !AnyHas(points, TelemetryField::kGrEngineActive)) {
    Add(gpu, "profiling_stuck_zero",
        fmt::format("GPU_UTIL {} while DCGM_FI_PROF_PIPE_TENSOR_ACTIVE stays at 0 and GR_ENGINE_ACTIVE is not "
                    "exported to tell idle tensor cores from stuck counters (dcgm-exporter#662)",
                    Pct(gpu.gpu_util, 0)));
    return;
  }
  if (gpu.tensor_active > 0 && gpu.tensor_active < kLowTensor)
    Add(gpu, "low_tensor_while_busy",
        fmt::format("GPU_UTIL {} but tensor pipes {} busy: kernels run, the tensor cores mostly wait "
                    "(GPU_UTIL counts the time any kernel runs)",
                    Pct(gpu.gpu_util, 0), Pct(gpu.tensor_active, 1)));
}

void Xid(std::span<const TelemetryPoint> points, GpuEstimate& gpu) {
  double first = std::nan(""), last = std::nan("");
  bool changed = false;
  for (const TelemetryPoint& p : points) {
    if (!p.Has(TelemetryField::kXidErrors))
      continue;
    const double v = p.Get(TelemetryField::kXidErrors);
    if (std::isnan(first))
      first = v;
    changed = changed || (!std::isnan(last) && !Same(v, last));
    last = v;
  }
  if (changed)
    Add(gpu, "xid",
        fmt::format("XID changed from {:.0f} to {:.0f}: check the driver log (dmesg) for the event", first, last));
  else if (last > 0)
    Add(gpu, "xid", fmt::format("XID {:.0f} reported: check the driver log (dmesg) for the event", last));
}

// Fraction of the covered time a violation counter (microseconds) grew.
double ViolationShare(std::span<const TelemetryPoint> points, TelemetryField f) {
  const TelemetryPoint *a = nullptr, *b = nullptr;
  for (const TelemetryPoint& p : points) {
    if (p.Has(f) && p.time_ms > 0) {
      a = a == nullptr ? &p : a;
      b = &p;
    }
  }
  if (a == nullptr || b->time_ms <= a->time_ms || b->Get(f) < a->Get(f))
    return 0;
  return (b->Get(f) - a->Get(f)) / 1e6 / (static_cast<double>(b->time_ms - a->time_ms) / 1000.0);
}

void Throttle(std::span<const TelemetryPoint> points, std::span<const double> seconds, GpuEstimate& gpu) {
  double busy = 0, throttled = 0;
  uint64_t bits = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!(points[i].Get(TelemetryField::kTensorActive) >= kIdleActivity))
      continue;
    busy += seconds[i];
    const double v = points[i].Get(TelemetryField::kClocksEventReasons);
    const uint64_t held = std::isnan(v) ? 0 : static_cast<uint64_t>(v);
    const uint64_t limiting = held & kThrottleMask;
    if (limiting != 0)
      throttled += seconds[i];
    bits |= limiting;
  }
  if (throttled > 0) {
    std::string clock =
        gpu.sm_clock_mhz > 0 && gpu.boost_clock_mhz > 0
            ? fmt::format(" (mean SM clock {:.0f} of {:.0f} MHz)", gpu.sm_clock_mhz, gpu.boost_clock_mhz)
            : "";
    std::string names;
    for (const std::string& n : DecodeClocksEventReasons(bits))
      names += (names.empty() ? "" : ", ") + n;
    Add(gpu, "throttled",
        fmt::format("clocks held by {} during {} of the tensor-busy time{}", names, Pct(throttled / busy, 0), clock));
  }
  for (auto [field, what] : {std::pair{TelemetryField::kPowerViolationUs, "power"},
                             std::pair{TelemetryField::kThermalViolationUs, "thermal"}}) {
    const double share = ViolationShare(points, field);
    if (share >= 0.01)
      Add(gpu, "throttled", fmt::format("{} violation counter: clocks limited {} of the time", what, Pct(share, 0)));
  }
}

void Precision(const EstimateInputs& inputs, GpuEstimate& gpu) {
  if (inputs.accelerator == nullptr) {
    Add(gpu, "unknown_accelerator",
        gpu.device.model_name.empty()
            ? std::string("no modelName / card_model label names the GPU: no MFU estimated")
            : fmt::format("modelName '{}' is not in the accelerator database: no MFU estimated (add a row with "
                          "parameter 'hardware_file')",
                          gpu.device.model_name));
    return;
  }
  if (DensePeakFlops(*inputs.accelerator, inputs.precision, PeakFallbacks::None()) > 0)
    return;
  std::string has;
  for (DType d : {DType::kFp64Tensor, DType::kTf32, DType::kBf16, DType::kFp16, DType::kFp8, DType::kInt8}) {
    if (inputs.accelerator->peak_flops(d) > 0)
      has += std::string(has.empty() ? "" : ", ") + DTypeName(d);
  }
  Add(gpu, "unsupported_precision",
      fmt::format("{} has no dense {} peak: no MFU estimated; pass the job's precision ({})",
                  inputs.accelerator->display_name(), DTypeName(inputs.precision), has));
}

}  // namespace

void AddGpuFindings(std::span<const TelemetryPoint> points, std::span<const double> seconds,
                    const EstimateInputs& inputs, GpuEstimate& gpu) {
  Precision(inputs, gpu);
  MissingFields(points, gpu);
  Profiling(points, gpu);
  if (!gpu.device.mig_profile.empty() && !AnyHas(points, TelemetryField::kGpuUtil))
    Add(gpu, "no_gpu_util_on_mig",
        fmt::format("DCGM reports no GPU_UTIL for MIG instance {}: dashboards built on GPU_UTIL show nothing "
                    "here; the estimate uses tensor activity",
                    gpu.device.mig_profile));
  Xid(points, gpu);
  Throttle(points, seconds, gpu);
}

uint64_t SeriesFingerprint(std::span<const TelemetryPoint> points) {
  // One multiply-xorshift round per word over the time and the fields the
  // estimate reads: time-slicing copies every value, so these suffice.
  uint64_t h = 0x9e3779b97f4a7c15ull;
  auto mix = [&h](uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  };
  for (const TelemetryPoint& p : points) {
    mix(static_cast<uint64_t>(p.time_ms));
    for (TelemetryField f : {TelemetryField::kTensorActive, TelemetryField::kGpuUtil, TelemetryField::kSmClockMhz,
                             TelemetryField::kDramActive, TelemetryField::kPowerWatts}) {
      const double v = p.Get(f);
      uint64_t bits = 0;
      if (!std::isnan(v))
        std::memcpy(&bits, &v, sizeof bits);
      mix(bits);
    }
  }
  return h;
}

void AddFleetFindings(int64_t now_ms, double stale_after_s, const std::vector<uint64_t>& fingerprints,
                      std::vector<GpuEstimate>& gpus) {
  int64_t now = now_ms;
  if (now_ms == 0) {
    for (const GpuEstimate& g : gpus)
      now = std::max(now, g.last_sample_ms);
  }
  for (GpuEstimate& g : gpus) {
    const double age_s = static_cast<double>(now - g.last_sample_ms) / 1000.0;
    if (g.last_sample_ms > 0 && age_s > stale_after_s)
      Add(g, "stale",
          fmt::format("newest sample {:.0f} s old (limit {:.0f} s): the exporter or the scrape stopped; the figures "
                      "are not current",
                      age_s, stale_after_s));
  }
  // Pods of one GPU (one uuid and MIG instance on one host).
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<size_t>> by_gpu;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const TelemetryDevice& d = gpus[i].device;
    if (!d.uuid.empty())
      by_gpu[{d.hostname, d.uuid, d.mig_instance}].push_back(i);
  }
  for (const auto& [gpu, members] : by_gpu) {
    if (members.size() < 2)
      continue;
    const auto first = fingerprints[members[0]];  // a copy: clang 14 cannot capture a structured binding
    const bool identical =
        std::all_of(members.begin(), members.end(), [&](size_t i) { return fingerprints[i] == first; });
    std::string pods;
    for (size_t i : members)
      pods += (pods.empty() ? "" : ", ") + gpus[i].device.pod;
    const double n = static_cast<double>(members.size());
    for (size_t i : members) {
      GpuEstimate& g = gpus[i];
      g.gpu_share /= n;
      for (double& h : g.gpu_hours_by_band)
        h /= n;
      if (identical)
        Add(g, "time_sliced_identical",
            fmt::format("pods {} share GPU {} and report identical values (time-slicing copies the GPU's metrics to "
                        "every pod, dcgm-exporter#587): each pod's figures are the whole GPU's, counted 1/{} here",
                        pods, std::get<1>(gpu), members.size()));
    }
  }
}

}  // namespace mfu::fleet
