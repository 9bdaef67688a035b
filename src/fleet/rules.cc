// Prometheus recording and alerting rules over mfu's per-GPU series
// (mfu/fleet_exporter.h): the aggregation to jobs, nodes and the fleet runs
// in Prometheus (and through federation), never in mfu. Records follow
// Prometheus' level:metric:operation naming.

#include <fmt/format.h>

#include <string>
#include <vector>

#include "mfu/fleet_exporter.h"
#include "mfu/version.h"

namespace mfu {
namespace {

namespace m = fleet_metric;

// The ratio of two sums by `by` ("" for the whole fleet): GPU-weighted, so a
// job's MFU is its delivered FLOP/s over its GPUs' peak.
std::string SumRatio(const char* by, const char* numerator, const char* denominator) {
  const std::string group = by[0] == '\0' ? "" : fmt::format(" by ({})", by);
  return fmt::format("sum{0} ({1}) / sum{0} ({2})", group, numerator, denominator);
}

std::vector<FleetRecordingRule> MakeRecordingRules() {
  return {
      {"job_id:mfu_gpu_estimated_flops_per_second:sum", fmt::format("sum by (job_id) ({})", m::kEstimatedFlops)},
      {"job_id:mfu_gpu_peak_flops_per_second:sum", fmt::format("sum by (job_id) ({})", m::kPeakFlops)},
      {"job_id:mfu_gpu_estimated_mfu:ratio",
       "job_id:mfu_gpu_estimated_flops_per_second:sum / job_id:mfu_gpu_peak_flops_per_second:sum"},
      {"job_id:mfu_gpus:count", fmt::format("count by (job_id) ({})", m::kEstimatedMfu)},
      {"job_id:mfu_gpu_tensor_active:median", fmt::format("quantile by (job_id) (0.5, {})", m::kTensorActive)},
      {"job_id:mfu_gpu_utilization:avg", fmt::format("avg by (job_id) ({})", m::kUtilization)},
      {"hostname:mfu_gpu_estimated_mfu:ratio", SumRatio("hostname", m::kEstimatedFlops, m::kPeakFlops)},
      {"hostname:mfu_gpu_power_watts:sum", fmt::format("sum by (hostname) ({})", m::kPower)},
      {":mfu_gpu_estimated_flops_per_second:sum", fmt::format("sum ({})", m::kEstimatedFlops)},
      {":mfu_gpu_estimated_mfu:ratio", SumRatio("", m::kEstimatedFlops, m::kPeakFlops)},
      {":mfu_gpus:count", fmt::format("count ({})", m::kEstimatedMfu)},
      {"band:mfu_gpu_hours:increase1h", fmt::format("sum by (band) (increase({}[1h])) / 3600", m::kBandSeconds)},
  };
}

std::vector<FleetAlertRule> MakeAlertRules() {
  return {
      {"MfuLowWhileBusy",
       "job_id:mfu_gpu_estimated_mfu:ratio < 0.2 and on (job_id) job_id:mfu_gpu_utilization:avg > 0.8", "30m",
       "warning", "Job {{ $labels.job_id }}: estimated MFU below 20% while its GPUs are busy",
       "GPU_UTIL says busy, the tensor pipes say otherwise: estimated MFU {{ $value | humanizePercentage }}."},
      {"MfuTelemetryStuck", fmt::format("({} == 0) and ({} > 0.5)", m::kTensorActive, m::kUtilization), "15m",
       "warning", "GPU {{ $labels.uuid }} on {{ $labels.hostname }}: tensor activity stuck at 0 while GPU_UTIL is high",
       "Profiling fields read 0 while kernels run (dcgm-exporter#662): restart the DCGM host engine."},
      {"MfuTelemetryStale", fmt::format("{}{{code=\"stale\"}} == 1", m::kFinding), "10m", "warning",
       "GPU {{ $labels.uuid }} on {{ $labels.hostname }}: telemetry samples are stale",
       "The upstream exporter serves samples older than the staleness limit."},
      {"MfuUpstreamDown", fmt::format("{} == 0", m::kUpstreamUp), "5m", "critical",
       "mfu fleet serve at {{ $labels.instance }} gets no usable telemetry from its upstream",
       "See mfu_upstream_scrape_errors_total by reason; no per-GPU series are served meanwhile."},
      {"MfuGpuThrottled",
       fmt::format("{}{{reason=~\"sw_power_cap|hw_slowdown|sw_thermal|hw_thermal|hw_power_brake\"}} == 1",
                   m::kThrottled),
       "10m", "warning", "GPU {{ $labels.uuid }} on {{ $labels.hostname }} throttled ({{ $labels.reason }})",
       "The SM clock is held below its boost clock; estimated FLOP/s follow the clock."},
      {"MfuStragglerGpu",
       fmt::format("{}{{job_id!=\"\"}} < on (job_id) group_left () (0.8 * job_id:mfu_gpu_tensor_active:median)",
                   m::kTensorActive),
       "15m", "warning", "GPU {{ $labels.uuid }} of job {{ $labels.job_id }} is a straggler",
       "Its tensor activity is below 0.8 x its job's median."},
      {"MfuXidChanged", fmt::format("changes({}[10m]) > 0", m::kLastXid), "0m", "critical",
       "GPU {{ $labels.uuid }} on {{ $labels.hostname }} reported a new XID error ({{ $value }} changes)",
       "The driver reported an XID error: check dmesg and the XID catalogue."},
  };
}

// A YAML double-quoted scalar.
std::string Quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

const std::vector<FleetRecordingRule>& FleetRecordingRules() {
  static const std::vector<FleetRecordingRule>& rules = *new std::vector<FleetRecordingRule>(MakeRecordingRules());
  return rules;
}

const std::vector<FleetAlertRule>& FleetAlertRules() {
  static const std::vector<FleetAlertRule>& rules = *new std::vector<FleetAlertRule>(MakeAlertRules());
  return rules;
}

std::string RenderFleetRules() {
  std::string out = fmt::format(
      "# Prometheus rules for mfu fleet serve (mfu {}), from `mfu fleet rules`.\n"
      "# Per-job, per-node and fleet MFU are GPU-weighted: sum of estimated FLOP/s\n"
      "# over sum of dense peak FLOP/s. docs/fleet.md \"Serving to Prometheus\".\n"
      "groups:\n  - name: mfu_fleet_records\n    rules:\n",
      kVersion);
  for (const FleetRecordingRule& rule : FleetRecordingRules())
    out += fmt::format("      - record: {}\n        expr: {}\n", rule.record, Quoted(rule.expr));
  out += "  - name: mfu_fleet_alerts\n    rules:\n";
  for (const FleetAlertRule& rule : FleetAlertRules()) {
    out += fmt::format("      - alert: {}\n        expr: {}\n", rule.alert, Quoted(rule.expr));
    if (std::string_view(rule.for_duration) != "0m")
      out += fmt::format("        for: {}\n", rule.for_duration);
    out += fmt::format(
        "        labels:\n          severity: {}\n        annotations:\n          summary: {}\n"
        "          description: {}\n",
        rule.severity, Quoted(rule.summary), Quoted(rule.description));
  }
  return out;
}

}  // namespace mfu
