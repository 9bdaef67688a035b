// The Grafana dashboard of `mfu fleet dashboard` (mfu/fleet_exporter.h): it
// queries only the records of the rules (FleetRecordingRules) and mfu's own
// series (FleetMetrics), so it stays cheap at fleet scale.

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mfu/fleet_exporter.h"
#include "mfu/version.h"

namespace mfu {
namespace {

namespace m = fleet_metric;
using nlohmann::json;

// The selector every per-GPU query carries.
const char kGpuSelector[] = "{job_id=~\"$job_id\",hostname=~\"$hostname\"}";

json Datasource() {
  return {{"type", "prometheus"}, {"uid", "${DS_PROMETHEUS}"}};
}

struct PanelSpec {
  const char* type;  // timeseries, stat, table, heatmap
  const char* title;
  std::string expr;
  const char* legend;
  const char* unit;  // Grafana unit id
  int w, h;
};

json Panel(const PanelSpec& spec, int id, int x, int y) {
  json target = {{"datasource", Datasource()}, {"expr", spec.expr}, {"refId", "A"}};
  if (spec.legend[0] != '\0')
    target["legendFormat"] = spec.legend;
  if (std::string_view(spec.type) == "table") {
    target["format"] = "table";
    target["instant"] = true;
  }
  json panel = {{"id", id},
                {"type", spec.type},
                {"title", spec.title},
                {"datasource", Datasource()},
                {"gridPos", {{"x", x}, {"y", y}, {"w", spec.w}, {"h", spec.h}}},
                {"targets", json::array({target})},
                {"fieldConfig", {{"defaults", {{"unit", spec.unit}}}, {"overrides", json::array()}}}};
  if (std::string_view(spec.type) == "heatmap")
    panel["options"] = {{"calculate", false}, {"yAxis", {{"unit", spec.unit}}}};
  return panel;
}

std::vector<PanelSpec> Panels() {
  const std::string gpu = kGpuSelector;
  return {
      {"stat", "Fleet estimated MFU", ":mfu_gpu_estimated_mfu:ratio", "", "percentunit", 6, 4},
      {"stat", "GPUs with an estimate", ":mfu_gpus:count", "", "none", 6, 4},
      {"stat", "Fleet estimated FLOP/s", ":mfu_gpu_estimated_flops_per_second:sum", "", "flops", 6, 4},
      {"stat", "Upstreams up", fmt::format("sum({}) / count({})", m::kUpstreamUp, m::kUpstreamUp), "", "percentunit", 6,
       4},
      {"timeseries", "Estimated MFU per job", "job_id:mfu_gpu_estimated_mfu:ratio{job_id=~\"$job_id\"}", "{{job_id}}",
       "percentunit", 12, 8},
      {"timeseries", "Estimated MFU per node", "hostname:mfu_gpu_estimated_mfu:ratio{hostname=~\"$hostname\"}",
       "{{hostname}}", "percentunit", 12, 8},
      {"timeseries", "GPUs per job", "job_id:mfu_gpus:count{job_id=~\"$job_id\"}", "{{job_id}}", "none", 8, 8},
      {"timeseries", "Median tensor activity per job", "job_id:mfu_gpu_tensor_active:median{job_id=~\"$job_id\"}",
       "{{job_id}}", "percentunit", 8, 8},
      {"timeseries", "GPU-hours by MFU band (last hour)", "band:mfu_gpu_hours:increase1h", "{{band}}", "h", 8, 8},
      {"heatmap", "Tensor activity per GPU", fmt::format("{}{}", m::kTensorActive, gpu), "{{hostname}}/{{gpu}}",
       "percentunit", 12, 8},
      {"timeseries", "Power per node", "hostname:mfu_gpu_power_watts:sum{hostname=~\"$hostname\"}", "{{hostname}}",
       "watt", 12, 8},
      {"table", "GPUs: estimated MFU", fmt::format("{}{}", m::kEstimatedMfu, gpu), "", "percentunit", 24, 8},
      {"table", "Throttled GPUs", fmt::format("{}{} == 1", m::kThrottled, gpu), "", "none", 12, 8},
      {"table", "Health findings", fmt::format("{}{} == 1", m::kFinding, gpu), "", "none", 12, 8},
      {"timeseries", "Upstream scrape errors", fmt::format("sum by (reason) (rate({}[5m]))", m::kUpstreamErrors),
       "{{reason}}", "reqps", 24, 6},
  };
}

json Variable(const char* name, const char* label) {
  const std::string query = fmt::format("label_values({}, {})", m::kEstimatedMfu, name);
  return {{"name", name},        {"label", label},
          {"type", "query"},     {"datasource", Datasource()},
          {"definition", query}, {"query", {{"query", query}, {"refId", std::string("var_") + name}}},
          {"includeAll", true},  {"allValue", ".*"},
          {"multi", true},       {"refresh", 2},
          {"sort", 1},           {"current", {{"text", "All"}, {"value", "$__all"}}}};
}

}  // namespace

std::string RenderFleetDashboard() {
  json panels = json::array();
  int x = 0, y = 0, row_h = 0, id = 1;
  for (const PanelSpec& spec : Panels()) {
    if (x + spec.w > 24) {
      x = 0;
      y += row_h;
      row_h = 0;
    }
    panels.push_back(Panel(spec, id++, x, y));
    x += spec.w;
    row_h = std::max(row_h, spec.h);
  }
  json dashboard = {
      {"__inputs",
       json::array({{{"name", "DS_PROMETHEUS"},
                     {"label", "Prometheus"},
                     {"description", "The Prometheus that scrapes mfu fleet serve and evaluates `mfu fleet rules`"},
                     {"type", "datasource"},
                     {"pluginId", "prometheus"},
                     {"pluginName", "Prometheus"}}})},
      {"__requires", json::array({{{"type", "datasource"}, {"id", "prometheus"}, {"name", "Prometheus"}}})},
      {"title", "mfu fleet: estimated MFU"},
      {"uid", "mfu-fleet"},
      {"description", fmt::format("Estimated hardware-FLOPs MFU from GPU telemetry (mfu {}); docs/fleet.md", kVersion)},
      {"tags", json::array({"mfu", "gpu", "mfu-fleet"})},
      {"schemaVersion", 38},
      {"version", 1},
      {"editable", true},
      {"refresh", "30s"},
      {"time", {{"from", "now-6h"}, {"to", "now"}}},
      {"templating", {{"list", json::array({Variable("job_id", "Job"), Variable("hostname", "Node")})}}},
      {"panels", panels},
  };
  return dashboard.dump(2) + "\n";
}

}  // namespace mfu
