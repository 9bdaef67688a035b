#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "mfu/fleet_exporter.h"

namespace mfu {
namespace {

// The series names a PromQL expression reads: identifiers that are neither
// functions (followed by "("), keywords, label names (inside {...} or the
// (...) of by/on/group_left) nor inside strings or range selectors.
std::set<std::string> SeriesNames(std::string expr) {
  expr = std::regex_replace(expr, std::regex("\"([^\"\\\\]|\\\\.)*\""), " ");
  expr = std::regex_replace(expr, std::regex("\\{[^}]*\\}"), " ");
  expr = std::regex_replace(expr, std::regex("\\[[^\\]]*\\]"), " ");
  expr = std::regex_replace(expr, std::regex("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)"), " ");
  static const std::set<std::string> kKeywords = {"and", "or", "unless", "bool", "offset", "by", "on", "ignoring"};
  std::set<std::string> out;
  const std::regex ident("[a-zA-Z_:][a-zA-Z0-9_:]*(\\s*\\()?");
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), ident); it != std::sregex_iterator(); ++it) {
    const std::string token = it->str();
    if (token.back() == '(')
      continue;  // a function or aggregation
    const size_t at = static_cast<size_t>(it->position());
    if (at > 0 && (std::isdigit(static_cast<unsigned char>(expr[at - 1])) || expr[at - 1] == '.'))
      continue;  // an exponent or suffix of a number (1e9)
    if (!kKeywords.contains(token))
      out.insert(token);
  }
  return out;
}

std::set<std::string> KnownSeries() {
  std::set<std::string> known;
  for (const FleetMetricSpec& spec : FleetMetrics())
    known.insert(spec.name);
  for (const FleetRecordingRule& rule : FleetRecordingRules())
    known.insert(rule.record);
  return known;
}

TEST(FleetRules, ExtractorFindsSeries) {
  EXPECT_EQ(SeriesNames("sum by (job_id) (rate(a_total{x=\"y z\"}[5m])) / on (job_id) b:c:d > 1e9"),
            (std::set<std::string>{"a_total", "b:c:d"}));
}

TEST(FleetRules, EveryExpressionNamesKnownSeries) {
  std::set<std::string> defined;
  for (const FleetMetricSpec& spec : FleetMetrics())
    defined.insert(spec.name);
  for (const FleetRecordingRule& rule : FleetRecordingRules()) {
    for (const std::string& name : SeriesNames(rule.expr))
      EXPECT_TRUE(defined.contains(name)) << rule.record << ": " << name << " is not defined before it";
    EXPECT_TRUE(defined.insert(rule.record).second) << rule.record << " twice";
  }
  for (const FleetAlertRule& rule : FleetAlertRules())
    for (const std::string& name : SeriesNames(rule.expr))
      EXPECT_TRUE(defined.contains(name)) << rule.alert << ": " << name;
}

// The issue's rule list: per-job MFU GPU-weighted from the per-GPU series,
// per node, fleet-wide, GPU-hours by band; the six alerts.
TEST(FleetRules, TheRulesTheIssueAsksFor) {
  std::map<std::string, std::string> records;
  for (const FleetRecordingRule& rule : FleetRecordingRules())
    records[rule.record] = rule.expr;
  EXPECT_EQ(records["job_id:mfu_gpu_estimated_flops_per_second:sum"],
            "sum by (job_id) (mfu_gpu_estimated_flops_per_second)");
  EXPECT_EQ(records["job_id:mfu_gpu_peak_flops_per_second:sum"], "sum by (job_id) (mfu_gpu_peak_flops_per_second)");
  EXPECT_EQ(records["job_id:mfu_gpu_estimated_mfu:ratio"],
            "job_id:mfu_gpu_estimated_flops_per_second:sum / job_id:mfu_gpu_peak_flops_per_second:sum");
  EXPECT_EQ(records[":mfu_gpu_estimated_mfu:ratio"],
            "sum (mfu_gpu_estimated_flops_per_second) / sum (mfu_gpu_peak_flops_per_second)");
  EXPECT_TRUE(records.contains("hostname:mfu_gpu_estimated_mfu:ratio"));
  EXPECT_NE(records["band:mfu_gpu_hours:increase1h"].find("increase(mfu_gpu_band_seconds_total[1h])"),
            std::string::npos);
  std::set<std::string> alerts;
  for (const FleetAlertRule& rule : FleetAlertRules())
    alerts.insert(rule.alert);
  EXPECT_EQ(alerts, (std::set<std::string>{"MfuLowWhileBusy", "MfuTelemetryStuck", "MfuTelemetryStale",
                                           "MfuUpstreamDown", "MfuGpuThrottled", "MfuStragglerGpu", "MfuXidChanged"}));
}

TEST(FleetRules, YamlHasEveryRule) {
  const std::string yaml = RenderFleetRules();
  for (const FleetRecordingRule& rule : FleetRecordingRules())
    EXPECT_NE(yaml.find(std::string("- record: ") + rule.record + "\n"), std::string::npos) << rule.record;
  for (const FleetAlertRule& rule : FleetAlertRules())
    EXPECT_NE(yaml.find(std::string("- alert: ") + rule.alert + "\n"), std::string::npos) << rule.alert;
  EXPECT_EQ(yaml.find('\t'), std::string::npos);
}

TEST(FleetDashboard, EveryQueryNamesOnlyMfuSeries) {
  const nlohmann::json dashboard = nlohmann::json::parse(RenderFleetDashboard());
  const std::set<std::string> known = KnownSeries();
  std::set<std::string> types;
  size_t queries = 0;
  for (const auto& panel : dashboard["panels"]) {
    types.insert(panel["type"].get<std::string>());
    EXPECT_EQ(panel["datasource"]["uid"], "${DS_PROMETHEUS}");
    for (const auto& target : panel["targets"]) {
      const std::string expr = target["expr"];
      ++queries;
      const std::set<std::string> names = SeriesNames(expr);
      EXPECT_FALSE(names.empty()) << expr;
      for (const std::string& name : names)
        EXPECT_TRUE(known.contains(name)) << panel["title"] << ": " << name << " in " << expr;
    }
  }
  EXPECT_GE(queries, 10u);
  EXPECT_EQ(types, (std::set<std::string>{"timeseries", "stat", "table", "heatmap"}));
  std::set<std::string> variables;
  for (const auto& variable : dashboard["templating"]["list"]) {
    variables.insert(variable["name"].get<std::string>());
    std::smatch m;
    const std::string query = variable["query"]["query"];
    ASSERT_TRUE(std::regex_match(query, m, std::regex("label_values\\((\\w+), (\\w+)\\)"))) << query;
    EXPECT_TRUE(known.contains(m[1].str())) << query;
    EXPECT_EQ(m[2].str(), variable["name"]);
  }
  EXPECT_EQ(variables, (std::set<std::string>{"job_id", "hostname"}));
  EXPECT_EQ(dashboard["__inputs"][0]["name"], "DS_PROMETHEUS");
  EXPECT_TRUE(dashboard["schemaVersion"].is_number_integer());
}

// docs/fleet.md names every metric and every alert.
TEST(FleetDocs, EveryMetricAndAlertDocumented) {
  std::ifstream in(std::string(MFU_SOURCE_DIR) + "/docs/fleet.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(doc.empty());
  for (const FleetMetricSpec& spec : FleetMetrics())
    EXPECT_NE(doc.find(std::string("`") + spec.name), std::string::npos) << spec.name;
  for (const FleetAlertRule& rule : FleetAlertRules())
    EXPECT_NE(doc.find(std::string("`") + rule.alert + "`"), std::string::npos) << rule.alert;
  for (const char* label : FleetGpuLabelNames())
    EXPECT_NE(doc.find(std::string("`") + label + "`"), std::string::npos) << label;
}

}  // namespace
}  // namespace mfu
