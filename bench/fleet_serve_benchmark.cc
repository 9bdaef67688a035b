// /metrics latency of `mfu fleet serve` at 8 GPUs x 60 fields (issue #13:
// goal p99 < 5 ms). Informs whether the exporter can refresh on every scrape
// (no cache) behind a Prometheus scraping each second, and whether coalescing
// or a cache is what keeps it within the scrape time-out under load.
//   BM_MetricsHttpUpstream: over HTTP, the upstream an in-process
//     dcgm-exporter fixture on loopback (a scrape, parse, analysis, render each)
//   BM_MetricsFileUpstream: over HTTP, the upstream a file (in memory)
//   BM_MetricsLibrary: FleetExporter::Metrics() alone, file upstream
// Each runs 2,000 requests one after another and reports p50/p99 (ms).

#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fleet_fixture.h"
#include "mfu/file_system.h"
#include "mfu/fleet_exporter.h"
#include "mfu/hwdb.h"

namespace {

constexpr int kRequests = 2000;

const mfu::HardwareDb& Hardware() {
  static const mfu::HardwareDb& db = *new mfu::HardwareDb(mfu::HardwareDb::LoadBuiltin().value());
  return db;
}

std::unique_ptr<mfu::FleetExporter> Exporter(const std::string& upstream, const mfu::FileSystem* fs) {
  mfu::FleetExporterOptions options;
  options.upstream = upstream;
  options.fs = fs;
  options.analysis.hardware = &Hardware();
  options.cache_s = 0;  // every request refreshes: the worst case
  return mfu::FleetExporter::Create(std::move(options)).value();
}

void Report(benchmark::State& state, std::vector<double>& latency_s) {
  state.counters["p50_ms"] = mfu_fleet_test::Percentile(latency_s, 0.50) * 1e3;
  state.counters["p99_ms"] = mfu_fleet_test::Percentile(latency_s, 0.99) * 1e3;
}

void ServeAndMeasure(benchmark::State& state, mfu::FleetExporter& exporter) {
  const int port = exporter.Bind("127.0.0.1", 0).value();
  std::thread server([&] { (void)exporter.Serve(); });
  httplib::Client client("127.0.0.1", port);
  client.set_keep_alive(true);
  std::vector<double> latency;
  size_t bytes = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    auto res = client.Get("/metrics");
    latency.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!res || res->status != 200) {
      state.SkipWithError("/metrics failed");
      break;
    }
    bytes += res->body.size();
  }
  client.stop();
  exporter.Stop();
  server.join();
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  Report(state, latency);
}

void BM_MetricsHttpUpstream(benchmark::State& state) {
  mfu_fleet_test::UpstreamFixture upstream;
  upstream.SetBody(mfu_fleet_test::E2eExposition());
  auto exporter = Exporter(upstream.url(), nullptr);
  ServeAndMeasure(state, *exporter);
}
BENCHMARK(BM_MetricsHttpUpstream)->Iterations(kRequests)->Unit(benchmark::kMillisecond);

void BM_MetricsFileUpstream(benchmark::State& state) {
  mfu::InMemoryFileSystem fs;
  fs.AddFile("dcgm.prom", mfu_fleet_test::E2eExposition());
  auto exporter = Exporter("dcgm.prom", &fs);
  ServeAndMeasure(state, *exporter);
}
BENCHMARK(BM_MetricsFileUpstream)->Iterations(kRequests)->Unit(benchmark::kMillisecond);

void BM_MetricsLibrary(benchmark::State& state) {
  mfu::InMemoryFileSystem fs;
  fs.AddFile("dcgm.prom", mfu_fleet_test::E2eExposition());
  auto exporter = Exporter("dcgm.prom", &fs);
  std::vector<double> latency;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(exporter->Metrics());
    latency.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  Report(state, latency);
}
BENCHMARK(BM_MetricsLibrary)->Iterations(kRequests)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
