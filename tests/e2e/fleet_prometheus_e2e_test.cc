// End to end with real components, all started here (issue #13 "Must
// show"): a fixture upstream on loopback serving dcgm-exporter text (8 GPUs x
// 60 fields, two Slurm jobs; fleet_fixture.h), `mfu fleet serve` as a child
// process in front of it, and Debian's prometheus (2.42) scraping it every
// second with `mfu fleet rules` loaded. Then every recording rule and every
// dashboard query, evaluated through Prometheus' HTTP API, returns data with
// the values computed by hand below; `promtool check metrics` passes on mfu's
// /metrics, `promtool check rules` and `promtool test rules`
// (tests/data/fleet/rules_test.yml) on the rules. Processes are stopped by PID
// (SIGTERM, SIGKILL after 5 s) when the test leaves, passing or not.
//
// prometheus and promtool are required (scripts/install-deps installs them):
// without them this test fails, it never skips.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fleet_fixture.h"

namespace {

using mfu_fleet_test::ChildProcess;
using mfu_fleet_test::RunTool;
using mfu_fleet_test::TempDir;
using mfu_fleet_test::ToolResult;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

const std::string kMfu = MFU_BINARY;
const std::string kPrometheus = MFU_PROMETHEUS;
const std::string kPromtool = MFU_PROMTOOL;

void RequireTool(const std::string& path, const char* name) {
  ASSERT_EQ(access(path.c_str(), X_OK), 0)
      << name << " not found (" << path << "): scripts/install-deps installs Debian's prometheus package";
}

// One instant query through the HTTP API: the result vector (empty on error).
json Query(httplib::Client& client, const std::string& expr) {
  auto res = client.Post("/api/v1/query", httplib::Params{{"query", expr}});
  if (!res || res->status != 200)
    return json::array();
  json body = json::parse(res->body, nullptr, false);
  if (body.is_discarded() || body["status"] != "success")
    return json::array();
  return body["data"]["result"];
}

double ValueOf(const json& sample) {
  return std::stod(sample["value"][1].get<std::string>());
}

// The value of each series of `result` keyed by `label` ("" for one series).
std::map<std::string, double> ByLabel(const json& result, const std::string& label) {
  std::map<std::string, double> out;
  for (const json& sample : result)
    out[label.empty() ? "" : sample["metric"].value(label, "")] = ValueOf(sample);
  return out;
}

void ExpectValues(httplib::Client& client, const std::string& expr, const std::string& label,
                  const std::map<std::string, double>& expected, double tolerance) {
  const std::map<std::string, double> got = ByLabel(Query(client, expr), label);
  ASSERT_EQ(got.size(), expected.size()) << expr << ": " << Query(client, expr).dump();
  for (const auto& [key, value] : expected) {
    ASSERT_TRUE(got.contains(key)) << expr << ": no " << label << "=" << key;
    EXPECT_NEAR(got.at(key), value, tolerance * std::max(1.0, std::abs(value))) << expr << " " << key;
  }
}

TEST(FleetPrometheus, EndToEnd) {
  const auto deadline = Clock::now() + std::chrono::seconds(50);
  RequireTool(kPrometheus, "prometheus");
  RequireTool(kPromtool, "promtool");
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());

  mfu_fleet_test::UpstreamFixture upstream;
  upstream.SetBody(mfu_fleet_test::E2eExposition());
  // A goodput events file for job 1000, so the lint covers the goodput
  // counters too.
  const std::string events =
      dir.Write("job1000.jsonl",
                "{\"job_name\": \"1000\", \"job_start_time\": 1000}\n"
                "{\"job_name\": \"1000\", \"step_count\": 1, \"step_start_time\": 1010, \"step_end_time\": 1020}\n"
                "{\"job_name\": \"1000\", \"step_count\": 2, \"step_start_time\": 1020, \"step_end_time\": 1030}\n");
  ChildProcess serve({kMfu, "fleet", "serve", "--upstream", upstream.url(), "--listen", "127.0.0.1:0",
                      "--goodput-events", "1000=" + events},
                     dir.path() + "/serve.out", dir.path() + "/serve.err");
  const std::string listening = serve.WaitForStderr("mfu fleet serve: listening on http://127.0.0.1:", 10);
  ASSERT_FALSE(listening.empty()) << serve.Stderr();
  const int mfu_port = std::stoi(listening.substr(listening.rfind(':') + 1));

  // promtool check metrics on mfu's own /metrics.
  httplib::Client mfu_client("127.0.0.1", mfu_port);
  auto metrics = mfu_client.Get("/metrics");
  ASSERT_TRUE(metrics);
  ASSERT_EQ(metrics->status, 200);
  ASSERT_NE(metrics->body.find("mfu_gpu_estimated_mfu_ratio{"), std::string::npos) << metrics->body;
  ASSERT_NE(metrics->body.find("mfu_job_productive_seconds_total{job_id=\"1000\"} 20\n"), std::string::npos)
      << metrics->body;
  ASSERT_NE(metrics->body.find("mfu_job_badput_seconds_total{job_id=\"1000\",category=\"initialization\"} 10\n"),
            std::string::npos)
      << metrics->body;
  ToolResult lint = RunTool({kPromtool, "check", "metrics"}, dir.Write("metrics.txt", metrics->body));
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  EXPECT_EQ(lint.output, "") << lint.output;

  // The rules: promtool check rules, promtool test rules.
  ToolResult rules = RunTool({kMfu, "fleet", "rules"});
  ASSERT_EQ(rules.exit_code, 0) << rules.output;
  const std::string rules_file = dir.Write("mfu_fleet_rules.yml", rules.output);
  ToolResult check = RunTool({kPromtool, "check", "rules", rules_file});
  EXPECT_EQ(check.exit_code, 0) << check.output;
  const std::string rule_tests = dir.Write(
      "rules_test.yml", mfu_fleet_test::ReadWhole(std::string(MFU_SOURCE_DIR) + "/tests/data/fleet/rules_test.yml"));
  ToolResult unit = RunTool({kPromtool, "test", "rules", rule_tests});
  EXPECT_EQ(unit.exit_code, 0) << unit.output;
  EXPECT_NE(unit.output.find("SUCCESS"), std::string::npos) << unit.output;
  ToolResult dashboard_run = RunTool({kMfu, "fleet", "dashboard"});
  ASSERT_EQ(dashboard_run.exit_code, 0);
  const json dashboard = json::parse(dashboard_run.output);

  // Prometheus scraping mfu every second, evaluating the rules every second.
  const int prom_port = mfu_fleet_test::FreePort();
  const std::string config = dir.Write("prometheus.yml",
                                       "global:\n"
                                       "  scrape_interval: 1s\n"
                                       "  scrape_timeout: 1s\n"
                                       "  evaluation_interval: 1s\n"
                                       "rule_files:\n  - " +
                                           rules_file +
                                           "\n"
                                           "scrape_configs:\n"
                                           "  - job_name: mfu\n"
                                           "    static_configs:\n"
                                           "      - targets: ['127.0.0.1:" +
                                           std::to_string(mfu_port) + "']\n");
  ToolResult config_check = RunTool({kPromtool, "check", "config", config});
  ASSERT_EQ(config_check.exit_code, 0) << config_check.output;
  ChildProcess prometheus({kPrometheus, "--config.file=" + config, "--storage.tsdb.path=" + dir.path() + "/tsdb",
                           "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
                          dir.path() + "/prometheus.out", dir.path() + "/prometheus.err");
  httplib::Client prom("127.0.0.1", prom_port);
  prom.set_connection_timeout(1, 0);
  // Ready when the GPU-hours counters have grown over two scrapes.
  bool ready = false;
  while (!ready && Clock::now() < deadline && prometheus.running()) {
    ready = !Query(prom, "band:mfu_gpu_hours:increase1h{band=\"below_30\"} > 0").empty() &&
            !Query(prom, "job_id:mfu_gpu_estimated_mfu:ratio").empty();
    if (!ready)
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_TRUE(ready) << "prometheus never evaluated the rules:\n" << prometheus.Stderr();

  // Hand-computed expectations (fleet_fixture.h E2eGpus; peak 989.4e12):
  //   job 1000: MFU (0.5 + 0.5 + 0.7 + 0.7) / 4 = 0.6, FLOP/s 2.4 x 989.4e12,
  //             median tensor (0.5 + 0.7) / 2 = 0.6
  //   job 1001: MFU (0.2 + 0.2 + 0.2 + 0.1) / 4 = 0.175, FLOP/s 0.7 x 989.4e12,
  //             median tensor of 0.2 0.4 0.4 0.4 = 0.4
  //   node-0 (GPUs 0 1 4 5): (0.5 + 0.5 + 0.2 + 0.2) / 4 = 0.35
  //   node-1 (GPUs 2 3 6 7): (0.7 + 0.7 + 0.2 + 0.1) / 4 = 0.425
  //   fleet: 3.1 / 8 = 0.3875; power 4 x 600 W per node; GPU_UTIL 98%.
  const double peak = 989.4e12;
  ExpectValues(prom, "job_id:mfu_gpu_estimated_mfu:ratio", "job_id", {{"1000", 0.6}, {"1001", 0.175}}, 1e-9);
  ExpectValues(prom, "job_id:mfu_gpu_estimated_flops_per_second:sum", "job_id",
               {{"1000", 2.4 * peak}, {"1001", 0.7 * peak}}, 1e-9);
  ExpectValues(prom, "job_id:mfu_gpu_peak_flops_per_second:sum", "job_id", {{"1000", 4 * peak}, {"1001", 4 * peak}},
               1e-9);
  ExpectValues(prom, "job_id:mfu_gpus:count", "job_id", {{"1000", 4}, {"1001", 4}}, 0);
  ExpectValues(prom, "job_id:mfu_gpu_tensor_active:median", "job_id", {{"1000", 0.6}, {"1001", 0.4}}, 1e-9);
  ExpectValues(prom, "job_id:mfu_gpu_utilization:avg", "job_id", {{"1000", 0.98}, {"1001", 0.98}}, 1e-9);
  ExpectValues(prom, "hostname:mfu_gpu_estimated_mfu:ratio", "hostname", {{"node-0", 0.35}, {"node-1", 0.425}}, 1e-9);
  ExpectValues(prom, "hostname:mfu_gpu_power_watts:sum", "hostname", {{"node-0", 2400}, {"node-1", 2400}}, 1e-9);
  ExpectValues(prom, ":mfu_gpu_estimated_mfu:ratio", "", {{"", 0.3875}}, 1e-9);
  ExpectValues(prom, ":mfu_gpu_estimated_flops_per_second:sum", "", {{"", 3.1 * peak}}, 1e-9);
  ExpectValues(prom, ":mfu_gpus:count", "", {{"", 8}}, 0);
  // GPU-hours by band: time grows, so only which bands have it is fixed:
  // 2 GPUs at 0.5 (30-60%), 2 at 0.7 (> 60%), 4 below 30%, none idle.
  const std::map<std::string, double> bands = ByLabel(Query(prom, "band:mfu_gpu_hours:increase1h"), "band");
  EXPECT_GT(bands.count("30_to_60") ? bands.at("30_to_60") : 0, 0);
  EXPECT_GT(bands.count("above_60") ? bands.at("above_60") : 0, 0);
  EXPECT_GT(bands.count("below_30") ? bands.at("below_30") : 0, 0);
  EXPECT_EQ(bands.count("idle") ? bands.at("idle") : 0, 0);
  // Every recording rule answers.
  std::set<std::string> records;
  for (const std::string& line : std::vector<std::string>{rules.output}) {
    const std::regex record_re("- record: (\\S+)");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), record_re); it != std::sregex_iterator(); ++it)
      records.insert((*it)[1].str());
  }
  EXPECT_GE(records.size(), 12u);
  for (const std::string& record : records)
    EXPECT_FALSE(Query(prom, record).empty()) << record << " returned no data";

  // Every dashboard query answers, with the variables at "All".
  size_t queries = 0;
  for (const json& panel : dashboard["panels"]) {
    for (const json& target : panel["targets"]) {
      std::string expr = target["expr"];
      expr = std::regex_replace(expr, std::regex("\\$job_id|\\$hostname"), ".*");
      ++queries;
      EXPECT_FALSE(Query(prom, expr).empty()) << panel["title"] << ": " << expr << " returned no data";
    }
  }
  EXPECT_GE(queries, 10u);
  for (const char* label : {"job_id", "hostname"}) {
    auto res = prom.Get(std::string("/api/v1/label/") + label + "/values?match[]=mfu_gpu_estimated_mfu_ratio");
    ASSERT_TRUE(res);
    EXPECT_EQ(json::parse(res->body)["data"].size(), 2u) << label << ": " << res->body;
  }
  // The scrape target is healthy and mfu says its upstream is up.
  ExpectValues(prom, "up{job=\"mfu\"}", "", {{"", 1}}, 0);
  ExpectValues(prom, "mfu_upstream_up", "", {{"", 1}}, 0);

  // SIGTERM stops mfu fleet serve cleanly: exit 0, not killed.
  const int status = serve.Stop();
  EXPECT_FALSE(serve.killed());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << " " << serve.Stderr();
  EXPECT_LT(Clock::now(), deadline) << "the test ran past its 50 s bound";
}

// The command line: usage errors exit 2, a taken port exits 1, each one line.
TEST(FleetServeCli, ErrorsAreOneLine) {
  const auto one_line = [](const ToolResult& r, int code, const std::string& fragment) {
    EXPECT_EQ(r.exit_code, code) << r.output;
    EXPECT_EQ(r.output.rfind("mfu: ", 0), 0u) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    EXPECT_NE(r.output.find(fragment), std::string::npos) << fragment << " not in " << r.output;
  };
  one_line(RunTool({kMfu, "fleet", "serve"}), 2, "--upstream");
  one_line(RunTool({kMfu, "fleet", "serve", "--upstream", "x.prom", "--listen", "nowhere"}), 2, "--listen");
  one_line(RunTool({kMfu, "fleet", "serve", "--upstream", "x.prom", "--upstream-timeout", "0"}), 2,
           "--upstream-timeout");
  one_line(RunTool({kMfu, "fleet", "serve", "--upstream", "x.prom", "--precision", "fp7"}), 2, "fp7");
  mfu_fleet_test::UpstreamFixture taken;
  const std::string address = "127.0.0.1:" + std::to_string(taken.port());
  one_line(RunTool({kMfu, "fleet", "serve", "--upstream", "x.prom", "--listen", address}), 1, address);
}

// SIGINT stops it as SIGTERM does: exit 0. A file upstream that does not
// exist is an upstream down, not a reason to stop serving.
TEST(FleetServeCli, FileUpstreamAndSigint) {
  TempDir dir;
  ChildProcess serve({kMfu, "fleet", "serve", "--upstream", dir.path() + "/missing.prom", "--listen", "127.0.0.1:0"},
                     dir.path() + "/out", dir.path() + "/err");
  const std::string listening = serve.WaitForStderr("listening on http://127.0.0.1:", 10);
  ASSERT_FALSE(listening.empty()) << serve.Stderr();
  httplib::Client client("127.0.0.1", std::stoi(listening.substr(listening.rfind(':') + 1)));
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("mfu_upstream_up 0"), std::string::npos) << res->body;
  EXPECT_NE(res->body.find("mfu_upstream_scrape_errors_total{reason=\"unreachable\"} 1"), std::string::npos);
  EXPECT_NE(serve.WaitForStderr("upstream down (unreachable)", 5), "") << serve.Stderr();
  kill(serve.pid(), SIGINT);
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (serve.running() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const int status = serve.Stop();
  EXPECT_FALSE(serve.killed());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
