#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/fleet_exporter.h"
#include "mfu/hwdb.h"

namespace mfu {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

bool HasLine(const std::string& text, const std::string& line) {
  for (const std::string& l : Lines(text))
    if (l == line)
      return true;
  return false;
}

// H100 SXM5 (data/hardware/accelerators.csv: 989.4 dense BF16 TFLOP/s, boost
// 1980 MHz) at tensor activity 0.5 and SM clock 1980 MHz: 0.5 x 989.4e12 =
// 494.7e12 FLOP/s, MFU 0.5.
GpuEstimate BusyH100() {
  GpuEstimate g;
  g.device.vendor = "nvidia";
  g.device.uuid = "GPU-aaaa";
  g.device.hostname = "node-0";
  g.device.gpu = "0";
  g.device.model_name = "NVIDIA H100 80GB HBM3";
  g.device.k8s_namespace = "team-0";
  g.device.pod = "train-0-0";
  g.accelerator = "h100-sxm5-80gb";
  g.job_id = "team-0/train-0";
  g.gpu_util = 0.98;
  g.tensor_active = 0.5;
  g.dram_active = 0.3;
  g.sm_clock_mhz = 1980;
  g.boost_clock_mhz = 1980;
  g.power_watts = 620;
  g.estimated_flops = 494.7e12;
  g.estimated_mfu = 0.5;
  g.estimated_mbu = 0.3;
  g.peak_flops = 989.4e12;
  g.gpu_hours_by_band[static_cast<size_t>(MfuBand::k30To60)] = 30.0 / 3600;
  g.throttle_reasons = {"sw_power_cap"};
  g.findings = {{"throttled", "clock held by sw_power_cap"}, {"throttled", "again"}};
  return g;
}

// A GPU whose every field was a sentinel: no value at all.
GpuEstimate BlankGpu() {
  GpuEstimate g;
  g.device.uuid = "GPU-bbbb";
  g.device.hostname = "node-0";
  g.device.gpu = "1";
  g.accelerator = "h100-sxm5-80gb";
  for (double* v : {&g.gpu_util, &g.tensor_active, &g.dram_active, &g.sm_clock_mhz, &g.power_watts, &g.estimated_flops,
                    &g.estimated_mfu, &g.estimated_mbu})
    *v = NAN;
  g.boost_clock_mhz = 1980;
  g.peak_flops = 989.4e12;
  return g;
}

const char kLabels[] =
    "uuid=\"GPU-aaaa\",hostname=\"node-0\",gpu=\"0\",gpu_model=\"NVIDIA H100 80GB HBM3\","
    "accelerator=\"h100-sxm5-80gb\",precision=\"bf16\",namespace=\"team-0\",pod=\"train-0-0\","
    "job_id=\"team-0/train-0\"";

FleetMetricsView UpView(const FleetReport& report) {
  FleetMetricsView view;
  view.report = &report;
  view.extras = {{true, 0}, {false, NAN}};
  view.upstream.up = true;
  view.upstream.scrape_duration_s = 0.25;
  view.upstream.last_success_unix_s = 1700000000.5;
  view.upstream.devices = 2;
  view.upstream.scrapes_total = 3;
  view.upstream.errors_total = {{"timeout", 1}};
  view.upstream.sentinels_total = 7;
  view.version = "1.2.3";
  return view;
}

TEST(FleetMetrics, PerGpuSeriesInBaseUnits) {
  FleetReport report;
  report.gpus = {BusyH100(), BlankGpu()};
  FleetMetricsView view = UpView(report);
  view.band_seconds = {{0, 0, 30, 0}, {0, 0, 0, 0}};
  const std::string text = RenderFleetMetrics(view);
  const std::string l = kLabels;
  EXPECT_TRUE(HasLine(text, "mfu_gpu_estimated_mfu_ratio{" + l + "} 0.5")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_gpu_estimated_flops_per_second{" + l + "} 494700000000000")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_gpu_peak_flops_per_second{" + l + "} 989400000000000")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_gpu_utilization_ratio{" + l + "} 0.98")) << text;
  // 1980 MHz = 1.98e9 Hz.
  EXPECT_TRUE(HasLine(text, "mfu_gpu_sm_clock_hertz{" + l + "} 1980000000")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_gpu_power_watts{" + l + "} 620")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_gpu_last_xid{" + l + "} 0")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_gpu_finding{" + l + ",code=\"throttled\"} 1")) << text;
  // The clock-event mask was exported: each named reason 0 or 1.
  EXPECT_TRUE(HasLine(text, "mfu_gpu_throttled{" + l + ",reason=\"sw_power_cap\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_gpu_throttled{" + l + ",reason=\"hw_slowdown\"} 0")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_build_info{version=\"1.2.3\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_upstream_up 1")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_upstream_scrape_duration_seconds 0.25")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_upstream_last_success_timestamp_seconds 1700000000.5")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_upstream_scrapes_total 3")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_upstream_scrape_errors_total{reason=\"timeout\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_upstream_scrape_errors_total{reason=\"parse\"} 0")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_telemetry_sentinels_total 7")) << text;
  // The blank GPU has no value, so no series: never a 0 meaning "unknown".
  EXPECT_EQ(text.find("GPU-bbbb"), std::string::npos) << text;
  // One finding line per code, not per finding.
  size_t findings = 0;
  for (const std::string& line : Lines(text))
    findings += line.rfind("mfu_gpu_finding{", 0) == 0;
  EXPECT_EQ(findings, 1u);
}

TEST(FleetMetrics, EveryFamilyHasHelpAndTypeOnce) {
  FleetReport report;
  report.gpus = {BusyH100()};
  FleetMetricsView view = UpView(report);
  view.extras.resize(1);
  view.band_seconds = {{0, 0, 30, 0}};
  const std::string text = RenderFleetMetrics(view);
  std::set<std::string> help, type, sampled;
  for (const std::string& line : Lines(text)) {
    std::istringstream words(line);
    std::string a, b, c;
    words >> a >> b >> c;
    if (a == "#" && b == "HELP")
      EXPECT_TRUE(help.insert(c).second) << c;
    else if (a == "#" && b == "TYPE")
      EXPECT_TRUE(type.insert(c).second) << c;
    else
      sampled.insert(a.substr(0, a.find('{')));
  }
  EXPECT_EQ(help, type);
  EXPECT_EQ(help, sampled);
  for (const FleetMetricSpec& spec : FleetMetrics()) {
    const std::string name = spec.name;
    EXPECT_EQ(name.rfind("mfu_", 0), 0u) << name;
    EXPECT_EQ(spec.type == FleetMetricType::kCounter, name.size() > 6 && name.substr(name.size() - 6) == "_total")
        << name;
  }
  EXPECT_TRUE(HasLine(text, "# TYPE mfu_gpu_band_seconds_total counter")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_gpu_band_seconds_total{" + std::string(kLabels) + ",band=\"30_to_60\"} 30")) << text;
}

TEST(FleetMetrics, NoReportNoGpuSeries) {
  FleetMetricsView view;
  view.upstream.up = false;
  view.upstream.scrape_duration_s = -1;  // never scraped
  view.upstream.errors_total = {{"unreachable", 2}};
  const std::string text = RenderFleetMetrics(view);
  EXPECT_TRUE(HasLine(text, "mfu_upstream_up 0")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_upstream_scrape_errors_total{reason=\"unreachable\"} 2")) << text;
  EXPECT_EQ(text.find("mfu_gpu_"), std::string::npos) << text;
  // Never succeeded: no last-success timestamp (not a 0 meaning "never").
  EXPECT_EQ(text.find("mfu_upstream_last_success_timestamp_seconds"), std::string::npos) << text;
  EXPECT_EQ(text.find("mfu_upstream_scrape_duration_seconds"), std::string::npos) << text;
}

TEST(FleetMetrics, OldSnapshotCarriesItsTimestamp) {
  FleetReport report;
  report.gpus = {BusyH100()};
  FleetMetricsView view = UpView(report);
  view.upstream.up = false;
  view.timestamp_ms = 1700000000123;
  const std::string text = RenderFleetMetrics(view);
  EXPECT_TRUE(HasLine(text, "mfu_gpu_estimated_mfu_ratio{" + std::string(kLabels) + "} 0.5 1700000000123")) << text;
  EXPECT_TRUE(HasLine(text, "mfu_upstream_up 0")) << text;  // exporter series stay untimestamped
}

// Samples stamped long ago (finding "stale"): no value is served as if it
// were this scrape's, only the finding and the samples' time.
TEST(FleetMetrics, StaleGpuServesOnlyItsFindingAndTime) {
  FleetReport report;
  report.gpus = {BusyH100()};
  report.gpus[0].findings = {{"stale", "newest sample 600 s old"}};
  report.gpus[0].last_sample_ms = 1700000000000;
  FleetMetricsView view = UpView(report);
  view.extras.resize(1);
  view.band_seconds = {{0, 0, 30, 0}};
  std::set<std::string> gpu_families;
  const std::string text = RenderFleetMetrics(view);
  for (const std::string& line : Lines(text))
    if (line.rfind("mfu_gpu_", 0) == 0)
      gpu_families.insert(line.substr(0, line.find('{')));
  EXPECT_EQ(gpu_families, (std::set<std::string>{"mfu_gpu_finding", "mfu_gpu_sample_timestamp_seconds"})) << text;
  EXPECT_TRUE(HasLine(text, "mfu_gpu_sample_timestamp_seconds{" + std::string(kLabels) + "} 1700000000")) << text;
}

TEST(FleetMetrics, LabelValuesEscaped) {
  FleetReport report;
  report.gpus = {BusyH100()};
  report.gpus[0].device.pod = "a\"b\\c\nd";
  FleetMetricsView view = UpView(report);
  const std::string text = RenderFleetMetrics(view);
  EXPECT_NE(text.find("pod=\"a\\\"b\\\\c\\nd\""), std::string::npos) << text;
}

TEST(FleetMetrics, PrecisionLabelIsTheGpus) {
  FleetReport report;
  report.gpus = {BusyH100()};
  report.gpus[0].precision = DType::kFp8;  // its job's, from --jobs
  const std::string text = RenderFleetMetrics(UpView(report));
  EXPECT_NE(text.find("precision=\"fp8\""), std::string::npos) << text;
}

TEST(FleetMetrics, NoReservedLabels) {
  for (const char* label : FleetGpuLabelNames()) {
    EXPECT_STRNE(label, "job");
    EXPECT_STRNE(label, "instance");
    for (const char* c = label; *c != '\0'; ++c)
      EXPECT_TRUE((*c >= 'a' && *c <= 'z') || *c == '_') << label;
  }
}

TEST(FleetMetrics, SnapshotBandIsTheBandWithTime) {
  GpuEstimate g = BusyH100();
  EXPECT_EQ(SnapshotBand(g), MfuBand::k30To60);
  g.gpu_hours_by_band = {};
  EXPECT_EQ(SnapshotBand(g), std::nullopt);
}

// --goodput-events: the counters from a hand-built JSONL events file
// (ml-goodput-measurement keys, mfu's step_end_time): a start at 1000 s,
// steps [1010,1020], [1020,1030], [1030,1040], an end at 1050. By hand
// (docs/goodput.md): wall 50 s; productive 30 s (the first step is charged
// the mean of the others, 10 s); initialization 1000 -> 1010 = 10 s; the
// rest, 1040 -> 1050, other = 10 s. Served although the upstream is down.
// Then a fourth step [1040,1048] is appended: re-read at the next refresh.
// The first step is now charged (10 + 10 + 8) / 3 = 28/3 s: productive
// 28/3 + 28 = 112/3 = 37.333333333 s, initialization 1000 -> 1020 - 28/3 =
// 32/3 = 10.666666667 s, other 1048 -> 1050 = 2 s.
TEST(FleetGoodputCounters, ValuesFromAnEventsFileAndItsChange) {
  const HardwareDb hardware = HardwareDb::LoadBuiltin().value();
  InMemoryFileSystem fs;
  fs.AddFile("up.prom", "not exposition {{{\n");
  std::string events =
      "{\"job_name\": \"a\", \"job_start_time\": 1000}\n"
      "{\"job_name\": \"a\", \"step_count\": 1, \"step_start_time\": 1010, \"step_end_time\": 1020}\n"
      "{\"job_name\": \"a\", \"step_count\": 2, \"step_start_time\": 1020, \"step_end_time\": 1030}\n"
      "{\"job_name\": \"a\", \"step_count\": 3, \"step_start_time\": 1030, \"step_end_time\": 1040}\n";
  const std::string end = "{\"job_name\": \"a\", \"job_end_time\": 1050}\n";
  fs.AddFile("run.jsonl", events + end);
  FleetExporterOptions options;
  options.upstream = "up.prom";
  options.fs = &fs;
  options.analysis.hardware = &hardware;
  options.cache_s = 0;
  options.goodput_events["train-7"] = {"run.jsonl"};
  auto exporter = FleetExporter::Create(std::move(options));
  ASSERT_TRUE(exporter.ok()) << exporter.status().message();
  std::string text = (*exporter)->Metrics();
  EXPECT_NE(text.find("mfu_upstream_up 0\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE mfu_job_productive_seconds_total counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("mfu_job_productive_seconds_total{job_id=\"train-7\"} 30\n"), std::string::npos) << text;
  EXPECT_NE(text.find("mfu_job_badput_seconds_total{job_id=\"train-7\",category=\"initialization\"} 10\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("mfu_job_badput_seconds_total{job_id=\"train-7\",category=\"other\"} 10\n"), std::string::npos);
  EXPECT_NE(text.find("mfu_job_badput_seconds_total{job_id=\"train-7\",category=\"wasted_progress\"} 0\n"),
            std::string::npos);
  fs.AddFile(
      "run.jsonl",
      events + "{\"job_name\": \"a\", \"step_count\": 4, \"step_start_time\": 1040, \"step_end_time\": 1048}\n" + end);
  text = (*exporter)->Metrics();
  EXPECT_NE(text.find("mfu_job_productive_seconds_total{job_id=\"train-7\"} 37.333333333\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("mfu_job_badput_seconds_total{job_id=\"train-7\",category=\"initialization\"} 10.666666667\n"),
            std::string::npos);
  EXPECT_NE(text.find("mfu_job_badput_seconds_total{job_id=\"train-7\",category=\"other\"} 2\n"), std::string::npos);
}

TEST(FleetGoodputCounters, BadEventFileIsACreateError) {
  const HardwareDb hardware = HardwareDb::LoadBuiltin().value();
  InMemoryFileSystem fs;
  fs.AddFile("up.prom", "");
  fs.AddFile("bad.jsonl", "{\"job_name\": \"a\", \"step_count\": -1, \"step_start_time\": 1}\n");
  FleetExporterOptions options;
  options.upstream = "up.prom";
  options.fs = &fs;
  options.analysis.hardware = &hardware;
  options.goodput_events["j"] = {"missing.jsonl"};
  auto missing = FleetExporter::Create(options);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message().rfind("parameter 'goodput_events' j=missing.jsonl: ", 0), 0u)
      << missing.status().message();
  options.goodput_events["j"] = {"bad.jsonl"};
  auto bad = FleetExporter::Create(options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("parameter 'goodput_events' j=bad.jsonl: ", 0), 0u) << bad.status().message();
}

}  // namespace
}  // namespace mfu
