// The one table of mfu's Prometheus metrics (mfu/fleet_exporter.h): the
// exporter renders it, the rules and the dashboard query it. Units are
// Prometheus' base units (ratios 0-1, hertz, watts, seconds, FLOP per
// second); counters end in _total.

#include <cmath>

#include "mfu/fleet_exporter.h"

namespace mfu {
namespace {

namespace m = fleet_metric;
using T = FleetMetricType;
using S = FleetMetricScope;

double Mhz(double mhz) {
  return mhz * 1e6;
}

const FleetMetricSpec kMetrics[] = {
    {m::kEstimatedMfu, T::kGauge, S::kGpu, "",
     "Estimated MFU: hardware FLOP/s from tensor-pipe activity x SM clock over the dense peak at the precision (0-1)",
     [](const GpuEstimate& g) { return g.estimated_mfu; }},
    {m::kEstimatedFlops, T::kGauge, S::kGpu, "",
     "Estimated hardware FLOP/s: tensor activity x SMs x dense FLOP per clock per SM x SM clock",
     [](const GpuEstimate& g) { return g.estimated_flops; }},
    {m::kPeakFlops, T::kGauge, S::kGpu, "",
     "Dense peak FLOP/s at the precision (the MFU denominator), present exactly when the estimate is",
     [](const GpuEstimate& g) { return std::isfinite(g.estimated_flops) && g.peak_flops > 0 ? g.peak_flops : NAN; }},
    {m::kEstimatedMbu, T::kGauge, S::kGpu, "", "Estimated memory-bandwidth utilization from DRAM_ACTIVE (0-1)",
     [](const GpuEstimate& g) { return g.estimated_mbu; }},
    {m::kTensorActive, T::kGauge, S::kGpu, "", "Tensor-pipe activity (DCGM PIPE_TENSOR_ACTIVE, AMD MFMA) (0-1)",
     [](const GpuEstimate& g) { return g.tensor_active; }},
    {m::kDramActive, T::kGauge, S::kGpu, "", "DRAM activity (DCGM DRAM_ACTIVE) (0-1)",
     [](const GpuEstimate& g) { return g.dram_active; }},
    {m::kUtilization, T::kGauge, S::kGpu, "", "GPU utilization: the fraction of time a kernel ran (GPU_UTIL) (0-1)",
     [](const GpuEstimate& g) { return g.gpu_util; }},
    {m::kSmClock, T::kGauge, S::kGpu, "", "SM clock (Hz)", [](const GpuEstimate& g) { return Mhz(g.sm_clock_mhz); }},
    {m::kBoostClock, T::kGauge, S::kGpu, "", "Boost clock from the accelerator database (Hz), beside the SM clock",
     [](const GpuEstimate& g) {
       return g.boost_clock_mhz > 0 && std::isfinite(g.sm_clock_mhz) ? Mhz(g.boost_clock_mhz) : NAN;
     }},
    {m::kPower, T::kGauge, S::kGpu, "", "Board power (W)", [](const GpuEstimate& g) { return g.power_watts; }},
    {m::kSampleTimestamp, T::kGauge, S::kGpu, "", "Time of the GPU's newest sample, when the upstream stamped it",
     [](const GpuEstimate& g) { return g.last_sample_ms > 0 ? static_cast<double>(g.last_sample_ms) / 1e3 : NAN; }},
    {m::kLastXid, T::kGauge, S::kGpu, "", "Last XID error the driver reported (DCGM XID_ERRORS)"},
    {m::kThrottled, T::kGauge, S::kGpu, "reason", "1 while the clock-event reason holds (DCGM CLOCKS_EVENT_REASONS)"},
    {m::kFinding, T::kGauge, S::kGpu, "code", "1 for each health finding on the GPU (docs/fleet.md)"},
    {m::kBandSeconds, T::kCounter, S::kGpu, "band",
     "Seconds this exporter saw the GPU in each estimated-MFU band (idle, below_30, 30_to_60, above_60)"},
    {m::kJobReportedMfu, T::kGauge, S::kJob, "", "Model-FLOPs MFU from the job's own throughput (--jobs) (0-1)"},
    {m::kJobProductiveSeconds, T::kCounter, S::kJob, "",
     "Productive (preserved step) seconds of the job's run (--goodput-events; mfu goodput)"},
    {m::kJobBadputSeconds, T::kCounter, S::kJob, "category",
     "Badput seconds of the job's run by category (--goodput-events; mfu goodput)"},
    {m::kBuildInfo, T::kGauge, S::kExporter, "version", "mfu's version"},
    {m::kUpstreamUp, T::kGauge, S::kExporter, "", "1 when the latest upstream scrape gave usable telemetry"},
    {m::kUpstreamDuration, T::kGauge, S::kExporter, "", "Duration of the latest upstream scrape (s)"},
    {m::kUpstreamLastSuccess, T::kGauge, S::kExporter, "", "Unix time of the latest usable upstream scrape (s)"},
    {m::kUpstreamDevices, T::kGauge, S::kExporter, "", "Devices in the latest usable upstream snapshot"},
    {m::kUpstreamScrapes, T::kCounter, S::kExporter, "", "Upstream scrapes"},
    {m::kUpstreamErrors, T::kCounter, S::kExporter, "reason", "Failed upstream scrapes by reason"},
    {m::kSentinels, T::kCounter, S::kExporter, "", "Sentinel values (DCGM blanks) dropped as no value"},
};

const char* const kGpuLabels[] = {"uuid",      "hostname",    "gpu",         "gpu_model", "accelerator",
                                  "precision", "namespace",   "pod",         "container", "hpc_job",
                                  "job_id",    "mig_profile", "mig_instance"};

const char* const kErrorReasons[] = {"unreachable", "timeout", "http_status", "too_large",
                                     "parse",       "no_data", "analysis"};

}  // namespace

std::span<const FleetMetricSpec> FleetMetrics() {
  return kMetrics;
}

std::span<const char* const> FleetGpuLabelNames() {
  return kGpuLabels;
}

std::span<const char* const> FleetUpstreamErrorReasons() {
  return kErrorReasons;
}

}  // namespace mfu
