// The exporter in front of a fixture upstream on loopback (issue #13 "Faults"):
// upstream down, slow beyond the time-out, garbage, HTTP errors and sentinels
// only. In every case the exporter keeps serving, says the upstream is down
// and why, and serves no per-GPU value that was not in a fresh snapshot. Then
// the HTTP surface (/metrics, /healthz, 404) and a load test: 1,000 requests
// at 100 concurrent, zero errors, p50/p99 latency printed.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fleet_fixture.h"
#include "mfu/file_system.h"
#include "mfu/fleet.h"
#include "mfu/fleet_exporter.h"
#include "mfu/http_fetch.h"
#include "mfu/hwdb.h"
#include "mfu/telemetry.h"
#include "testing/telemetry_gen.h"

namespace {

using mfu_fleet_test::Find;
using mfu_fleet_test::ParseSamples;
using mfu_fleet_test::Sample;
using mfu_fleet_test::UpstreamFixture;
using mfu_fleet_test::UpstreamMode;

const mfu::HardwareDb& Hardware() {
  static const mfu::HardwareDb& db = *new mfu::HardwareDb(mfu::HardwareDb::LoadBuiltin().value());
  return db;
}

std::unique_ptr<mfu::FleetExporter> MakeExporter(const std::string& upstream, double max_age_s = 0,
                                                 std::vector<std::string>* log = nullptr, double cache_s = 0) {
  mfu::FleetExporterOptions options;
  options.upstream = upstream;
  options.analysis.hardware = &Hardware();
  options.upstream_timeout_s = 0.5;
  options.max_age_s = max_age_s;
  options.cache_s = cache_s;  // 0: every /metrics refreshes, the faults show at once
  options.version = "test";
  if (log != nullptr)
    options.log = [log](std::string_view line) { log->emplace_back(line); };
  auto exporter = mfu::FleetExporter::Create(std::move(options));
  EXPECT_TRUE(exporter.ok()) << exporter.status().message();
  return std::move(exporter).value();
}

double Value(const std::vector<Sample>& samples, const std::string& name, const std::string& label = "",
             const std::string& value = "") {
  std::vector<Sample> found = Find(samples, name, label, value);
  EXPECT_EQ(found.size(), 1u) << name << " " << label << "=" << value;
  return found.empty() ? NAN : found[0].value;
}

size_t GpuSeries(const std::vector<Sample>& samples) {
  size_t n = 0;
  for (const Sample& s : samples)
    n += s.name.rfind("mfu_gpu_", 0) == 0;
  return n;
}

// The healthy snapshot: the hand-computed MFU of every GPU (fleet_fixture.h).
void ExpectHealthy(const std::vector<Sample>& samples) {
  const auto gpus = mfu_fleet_test::E2eGpus();
  const double mfu[] = {0.5, 0.5, 0.7, 0.7, 0.2, 0.2, 0.2, 0.1};
  EXPECT_EQ(Value(samples, "mfu_upstream_up"), 1);
  for (size_t i = 0; i < gpus.size(); ++i) {
    EXPECT_NEAR(Value(samples, "mfu_gpu_estimated_mfu_ratio", "uuid", gpus[i].uuid), mfu[i], 1e-9) << i;
    // 989.4 TFLOP/s dense BF16 peak x MFU.
    EXPECT_NEAR(Value(samples, "mfu_gpu_estimated_flops_per_second", "uuid", gpus[i].uuid), mfu[i] * 989.4e12, 1e3);
  }
}

void ExpectDown(const std::vector<Sample>& samples, const std::string& reason, double count = 1) {
  EXPECT_EQ(Value(samples, "mfu_upstream_up"), 0);
  EXPECT_EQ(Value(samples, "mfu_upstream_scrape_errors_total", "reason", reason), count) << reason;
  EXPECT_EQ(GpuSeries(samples), 0u) << "a per-GPU value served from no fresh snapshot";
  EXPECT_EQ(Find(samples, "mfu_build_info").size(), 1u);
}

TEST(FleetExporterFaults, HealthyThenGarbageThenHealthy) {
  UpstreamFixture upstream;
  upstream.SetBody(mfu_fleet_test::E2eExposition());
  std::vector<std::string> log;
  auto exporter = MakeExporter(upstream.url(), 0, &log);
  ExpectHealthy(ParseSamples(exporter->Metrics()));
  upstream.SetMode(UpstreamMode::kGarbage);
  ExpectDown(ParseSamples(exporter->Metrics()), "parse");
  upstream.SetMode(UpstreamMode::kBody);
  std::vector<Sample> back = ParseSamples(exporter->Metrics());
  ExpectHealthy(back);
  EXPECT_EQ(Value(back, "mfu_upstream_scrapes_total"), 3);
  EXPECT_EQ(Value(back, "mfu_upstream_scrape_errors_total", "reason", "parse"), 1);
  ASSERT_EQ(log.size(), 3u);  // one line per change of state
  EXPECT_EQ(log[0].rfind("upstream up", 0), 0u) << log[0];
  EXPECT_EQ(log[1].rfind("upstream down (parse)", 0), 0u) << log[1];
}

// --job-log 1000=FILE (issue #14): the torchtitan excerpt's steady-state
// MFU served as job 1000's reported MFU. tests/data/logs/torchtitan_aws-
// llama3-8b-slurm-ansi.log (aws-samples/awsome-distributed-training
// @7217859f): tps 6,785 per GPU; Llama-3.1-8B at 8192 under torchtitan's
// count, 6 x (N - embedding) + 12 x L x H x T = 57,914,449,920 FLOPs per
// token: 57,914,449,920 x 6,785 / 989.4e12 = 0.39716 on the H100s the
// telemetry shows (the log names no device).
TEST(FleetExporterJobLog, ReportedMfuFromTheLog) {
  UpstreamFixture upstream;
  upstream.SetBody(mfu_fleet_test::E2eExposition());
  const mfu::RealFileSystem fs;
  const std::string log = std::string(MFU_SOURCE_DIR) + "/tests/data/logs/torchtitan_aws-llama3-8b-slurm-ansi.log";
  mfu::FleetExporterOptions options;
  options.upstream = upstream.url();
  options.fs = &fs;
  options.analysis.hardware = &Hardware();
  options.upstream_timeout_s = 0.5;
  options.cache_s = 0;
  auto jobs = mfu::ParseFleetJobs(R"({"jobs": [{"id": "1000", "model": "llama-3.1-8b", "seq_len": 8192}]})",
                                  "jobs.json", {"1000=" + log});
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  options.analysis.job_reports = *jobs;
  auto missing = options;
  missing.analysis.job_reports[0].log = {{"/nonexistent/train.log", "--job-log 1000=/nonexistent/train.log"}};
  auto refused = mfu::FleetExporter::Create(std::move(missing));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message().rfind("--job-log 1000=/nonexistent/train.log: /nonexistent/train.log", 0), 0u)
      << refused.status().message();
  auto exporter = mfu::FleetExporter::Create(std::move(options));
  ASSERT_TRUE(exporter.ok()) << exporter.status().message();
  for (int scrape = 0; scrape < 2; ++scrape) {  // the second from the cache
    std::vector<Sample> samples = ParseSamples((*exporter)->Metrics());
    EXPECT_NEAR(Value(samples, "mfu_job_reported_mfu_ratio", "job_id", "1000"), 57914449920.0 * 6785 / 989.4e12, 1e-9);
    EXPECT_TRUE(Find(samples, "mfu_job_reported_mfu_ratio", "job_id", "1001").empty());
  }
}

TEST(FleetExporterFaults, UpstreamDown) {
  const int port = mfu_fleet_test::FreePort();
  auto exporter = MakeExporter("http://127.0.0.1:" + std::to_string(port) + "/metrics");
  ExpectDown(ParseSamples(exporter->Metrics()), "unreachable");
  std::vector<Sample> again = ParseSamples(exporter->Metrics());
  ExpectDown(again, "unreachable", 2);
  // Never succeeded: no last-success time at all.
  EXPECT_TRUE(Find(again, "mfu_upstream_last_success_timestamp_seconds").empty());
}

TEST(FleetExporterFaults, SlowBeyondTheTimeOut) {
  UpstreamFixture upstream;
  upstream.SetSlowMs(1500);
  upstream.SetMode(UpstreamMode::kSlow);
  auto exporter = MakeExporter(upstream.url());
  const auto start = std::chrono::steady_clock::now();
  std::vector<Sample> samples = ParseSamples(exporter->Metrics());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ExpectDown(samples, "timeout");
  EXPECT_LT(seconds, 2.0) << "the 0.5 s time-out did not bound the scrape";
  EXPECT_GE(Value(samples, "mfu_upstream_scrape_duration_seconds"), 0.45);
}

TEST(FleetExporterFaults, HttpError) {
  UpstreamFixture upstream;
  upstream.SetMode(UpstreamMode::kError500);
  auto exporter = MakeExporter(upstream.url());
  ExpectDown(ParseSamples(exporter->Metrics()), "http_status");
}

TEST(FleetExporterFaults, SentinelsOnly) {
  auto gpus = mfu_fleet_test::E2eGpus();
  for (auto& gpu : gpus)
    for (const auto& field : mfu::testing::TelemetryGenFields())
      gpu.overrides[field.name] = 9223372036854775794.0;  // DCGM_INT64_NOT_SUPPORTED
  mfu::testing::ExpositionGenOptions options;
  options.gpus = gpus;
  UpstreamFixture upstream;
  upstream.SetBody(mfu::testing::GenerateExposition(options));
  auto exporter = MakeExporter(upstream.url());
  std::vector<Sample> samples = ParseSamples(exporter->Metrics());
  ExpectDown(samples, "no_data");
  // At least the 8 GPUs' SM clocks were sentinels.
  EXPECT_GE(Value(samples, "mfu_telemetry_sentinels_total"), 8);
}

// An upstream that answers but whose samples are stamped 10 minutes ago
// (beyond the 120 s staleness limit): up, but every GPU is "stale" and no
// value of it is served.
TEST(FleetExporterFaults, StampedLongAgo) {
  mfu::testing::ExpositionGenOptions options;
  options.gpus = mfu_fleet_test::E2eGpus();
  options.timestamp_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count() -
      600'000;
  UpstreamFixture upstream;
  upstream.SetBody(mfu::testing::GenerateExposition(options));
  auto exporter = MakeExporter(upstream.url());
  std::vector<Sample> samples = ParseSamples(exporter->Metrics());
  EXPECT_EQ(Value(samples, "mfu_upstream_up"), 1);
  EXPECT_EQ(Find(samples, "mfu_gpu_finding", "code", "stale").size(), 8u);
  EXPECT_TRUE(Find(samples, "mfu_gpu_estimated_mfu_ratio").empty());
  EXPECT_TRUE(Find(samples, "mfu_gpu_tensor_active_ratio").empty());
  EXPECT_EQ(Find(samples, "mfu_gpu_sample_timestamp_seconds").size(), 8u);
}

// Two pods time-sharing GPU 0 (dcgm-exporter copies the GPU's values to each,
// #587): each pod keeps the GPU's MFU 0.5 but carries half its FLOP/s and
// half its peak, so sums over pods count the GPU once:
// 0.5 x 989.4e12 / 2 = 247.35e12 FLOP/s and 989.4e12 / 2 peak per pod.
TEST(FleetExporterShares, TimeSlicedPodsShareTheGpu) {
  auto gpu = mfu_fleet_test::E2eGpus()[0];
  gpu.k8s_namespace = "team";
  gpu.pod = "a-0";
  auto other = gpu;
  other.pod = "b-0";
  mfu::testing::ExpositionGenOptions options;
  options.gpus = {gpu, other};
  UpstreamFixture upstream;
  upstream.SetBody(mfu::testing::GenerateExposition(options));
  auto exporter = MakeExporter(upstream.url());
  std::vector<Sample> samples = ParseSamples(exporter->Metrics());
  for (const char* pod : {"a-0", "b-0"}) {
    EXPECT_NEAR(Value(samples, "mfu_gpu_estimated_mfu_ratio", "pod", pod), 0.5, 1e-9) << pod;
    EXPECT_NEAR(Value(samples, "mfu_gpu_estimated_flops_per_second", "pod", pod), 247.35e12, 1e3) << pod;
    EXPECT_NEAR(Value(samples, "mfu_gpu_peak_flops_per_second", "pod", pod), 494.7e12, 1e3) << pod;
  }
}

TEST(FleetExporterFaults, MaxAgeServesTheOldSnapshotWithItsTimestamp) {
  UpstreamFixture upstream;
  upstream.SetBody(mfu_fleet_test::E2eExposition());
  auto exporter = MakeExporter(upstream.url(), 60);
  std::vector<Sample> fresh = ParseSamples(exporter->Metrics());
  ExpectHealthy(fresh);
  for (const Sample& s : fresh)
    EXPECT_EQ(s.timestamp_ms, 0) << s.name << ": a fresh sample carries no timestamp";
  const int64_t success_ms =
      static_cast<int64_t>(std::llround(Value(fresh, "mfu_upstream_last_success_timestamp_seconds") * 1e3));
  upstream.SetMode(UpstreamMode::kGarbage);
  std::vector<Sample> old = ParseSamples(exporter->Metrics());
  EXPECT_EQ(Value(old, "mfu_upstream_up"), 0);
  ASSERT_GT(GpuSeries(old), 0u);
  for (const Sample& s : old) {
    if (s.name.rfind("mfu_gpu_", 0) == 0) {
      EXPECT_EQ(s.timestamp_ms, success_ms) << s.name;
    }
  }
}

// The upstream is scraped over one kept-alive connection: ten scrapes, one
// TCP connection accepted by the upstream.
TEST(FleetExporterUpstream, OneConnectionOverSeveralScrapes) {
  UpstreamFixture upstream;
  upstream.SetBody(mfu_fleet_test::E2eExposition());
  auto exporter = MakeExporter(upstream.url());
  for (int i = 0; i < 10; ++i)
    ExpectHealthy(ParseSamples(exporter->Metrics()));
  EXPECT_EQ(upstream.requests(), 10);
  EXPECT_EQ(upstream.connections(), 1u);
}

// An upstream restarted on the same port: the closed connection is replaced
// at the next scrape (no scrape fails), and one that stays down while
// scraped is reported down, then reconnected when it is back.
TEST(FleetExporterUpstream, RestartedUpstreamIsReconnected) {
  auto first = std::make_unique<UpstreamFixture>();
  const int port = first->port();
  first->SetBody(mfu_fleet_test::E2eExposition());
  auto exporter = MakeExporter(first->url());
  ExpectHealthy(ParseSamples(exporter->Metrics()));
  first.reset();
  auto second = std::make_unique<UpstreamFixture>(port);
  ASSERT_EQ(second->port(), port);
  second->SetBody(mfu_fleet_test::E2eExposition());
  ExpectHealthy(ParseSamples(exporter->Metrics()));
  ExpectHealthy(ParseSamples(exporter->Metrics()));
  EXPECT_EQ(second->connections(), 1u);
  EXPECT_EQ(second->requests(), 2);

  second.reset();
  ExpectDown(ParseSamples(exporter->Metrics()), "unreachable");
  UpstreamFixture third(port);
  ASSERT_EQ(third.port(), port);
  third.SetBody(mfu_fleet_test::E2eExposition());
  ExpectHealthy(ParseSamples(exporter->Metrics()));
  ExpectHealthy(ParseSamples(exporter->Metrics()));
  EXPECT_EQ(third.connections(), 1u);
}

// HttpKeepAliveClient itself: concurrent Get()s (as many threads as it keeps
// idle connections) all succeed, over at most one connection per thread; its
// errors are HttpGet's, word for word.
TEST(HttpKeepAliveClient, ConcurrentGetsAndHttpGetErrors) {
  UpstreamFixture upstream;
  upstream.SetBody("a 5 \n");
  auto client = mfu::HttpKeepAliveClient::Create(upstream.url(), {1, 1024});
  ASSERT_TRUE(client.ok()) << client.status().message();
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  constexpr int kThreads = mfu::HttpKeepAliveClient::kMaxIdle;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        auto body = (*client)->Get();
        ok += body.ok() && *body == "a 5 \n";
      }
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(ok.load(), kThreads * 20);
  EXPECT_LE(upstream.connections(), static_cast<size_t>(kThreads));
  EXPECT_EQ(upstream.requests(), kThreads * 20);

  upstream.SetBody(std::string(2000, 'x'));
  auto too_large = (*client)->Get();
  ASSERT_FALSE(too_large.ok());
  EXPECT_EQ(too_large.status().code(), mfu::StatusCode::kOutOfRange);
  EXPECT_EQ(too_large.status().message(), mfu::HttpGet(upstream.url(), {1, 1024}).status().message());
  upstream.SetMode(UpstreamMode::kError500);
  EXPECT_EQ((*client)->Get().status().message(), upstream.url() + ": HTTP status 500");

  const std::string refused = "http://127.0.0.1:" + std::to_string(mfu_fleet_test::FreePort()) + "/metrics";
  auto down = mfu::HttpKeepAliveClient::Create(refused, {1, 1024});
  ASSERT_TRUE(down.ok());
  auto error = (*down)->Get();
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.status().code(), mfu::StatusCode::kNotFound);
  EXPECT_EQ(error.status().message(), mfu::HttpGet(refused, {1, 1024}).status().message());
  EXPECT_EQ(mfu::HttpKeepAliveClient::Create("http://", {}).status().message(), "http://: URL has no host");
  EXPECT_EQ(mfu::HttpKeepAliveClient::Create("ftp://h/x", {}).status().code(), mfu::StatusCode::kInvalidArgument);
}

TEST(FleetExporterHttp, MetricsHealthzAndNotFound) {
  UpstreamFixture upstream;
  upstream.SetBody(mfu_fleet_test::E2eExposition());
  auto exporter = MakeExporter(upstream.url());
  auto port = exporter->Bind("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status().message();
  std::thread server([&] { EXPECT_TRUE(exporter->Serve().ok()); });
  httplib::Client client("127.0.0.1", *port);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  ExpectHealthy(ParseSamples(metrics->body));
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");
  auto other = client.Get("/metrics/extra");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
  // A second exporter cannot take the same port: an error naming it.
  auto second = MakeExporter(upstream.url());
  auto taken = second->Bind("127.0.0.1", *port);
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.status().message().find("127.0.0.1:" + std::to_string(*port)), std::string::npos);
  exporter->Stop();
  server.join();
}

// 1,000 requests at 100 concurrent: zero errors. Once with the CLI's 1 s
// cache, once refreshing on every request (cache_s 0; concurrent requests
// still share one upstream scrape).
void LoadTest(double cache_s) {
  UpstreamFixture upstream;
  upstream.SetBody(mfu_fleet_test::E2eExposition());
  auto exporter = MakeExporter(upstream.url(), 0, nullptr, cache_s);
  auto port = exporter->Bind("127.0.0.1", 0);
  ASSERT_TRUE(port.ok());
  std::thread server([&] { (void)exporter->Serve(); });
  constexpr int kClients = 100, kPerClient = 10;
  std::vector<std::vector<double>> latency(kClients);
  std::atomic<int> errors{0};
  std::vector<std::thread> clients;
  const auto start = std::chrono::steady_clock::now();
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", *port);
      client.set_connection_timeout(10, 0);
      client.set_read_timeout(10, 0);
      for (int i = 0; i < kPerClient; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        auto res = client.Get("/metrics");
        latency[static_cast<size_t>(c)].push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (!res || res->status != 200 || res->body.find("mfu_gpu_estimated_mfu_ratio{") == std::string::npos)
          ++errors;
      }
    });
  }
  for (auto& t : clients)
    t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  exporter->Stop();
  server.join();
  std::vector<double> all;
  for (const auto& l : latency)
    all.insert(all.end(), l.begin(), l.end());
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(all.size(), 1000u);
  const double p50 = mfu_fleet_test::Percentile(all, 0.50) * 1e3, p99 = mfu_fleet_test::Percentile(all, 0.99) * 1e3;
  std::printf(
      "load (cache %g s): 1000 requests, 100 concurrent, %d errors, %.2f s, p50 %.2f ms, p99 %.2f ms, %d upstream "
      "scrapes\n",
      cache_s, errors.load(), wall, p50, p99, upstream.requests());
  ::testing::Test::RecordProperty("p50_ms", std::to_string(p50));
  ::testing::Test::RecordProperty("p99_ms", std::to_string(p99));
  EXPECT_LT(upstream.requests(), 1000) << "concurrent scrapes were not coalesced";
}

TEST(FleetExporterHttp, LoadThousandRequestsHundredConcurrent) {
  LoadTest(1);
}

TEST(FleetExporterHttp, LoadThousandRequestsHundredConcurrentNoCache) {
  LoadTest(0);
}

}  // namespace
