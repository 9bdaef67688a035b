// Telemetry read throughput (samples/s) from memory, and how much the peak
// RSS grows while reading (the reader's own memory: input excluded).
//
// Decisions informed:
//  1. `mfu fleet analyze` over a range query of 1,000 GPUs x 24 h at 30 s
//     (2,881 steps x 4 fields = 11.5 M samples): the goal is >= 10 M
//     samples/s and memory proportional to GPUs, not samples. Compare
//     BM_ReadQueryRange/1000 with /100 (10x the GPUs, 10x the samples): the
//     rate should hold and rss_growth_mib stay near one device's points
//     (2,881 x 264 B = 0.76 MB) plus the series index.
//  2. Whether the exporter can re-read an 8 GPU x 60 field scrape on every
//     /metrics request (goal p99 < 5 ms): BM_ReadExposition's time per read.
//
//   telemetry_benchmark [benchmark flags]
// CTest's bench_smoke_telemetry runs the small cases only.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "mfu/telemetry.h"
#include "testing/telemetry_gen.h"

namespace {

class SumVisitor : public mfu::TelemetryVisitor {
 public:
  mfu::Status OnDevice(const mfu::TelemetryDevice&, std::span<const mfu::TelemetryPoint> points) override {
    for (const mfu::TelemetryPoint& p : points) {
      if (p.Has(mfu::TelemetryField::kTensorActive))
        sum += p.Get(mfu::TelemetryField::kTensorActive);
    }
    ++devices;
    return mfu::Status::Ok();
  }
  double sum = 0;
  int64_t devices = 0;
};

double PeakRssMib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

void Read(benchmark::State& state, const std::string& text) {
  const double rss_before = PeakRssMib();
  int64_t samples = 0;
  for (auto _ : state) {
    SumVisitor visitor;
    mfu::TelemetryReadStats stats;
    mfu::Status s = mfu::ReadTelemetry(text, "bench", {}, visitor, &stats);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(visitor.sum);
    samples = stats.samples;
  }
  state.SetItemsProcessed(samples * state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(text.size()) * state.iterations());
  state.counters["samples"] = static_cast<double>(samples);
  state.counters["input_mib"] = static_cast<double>(text.size()) / (1024.0 * 1024.0);
  state.counters["rss_growth_mib"] = PeakRssMib() - rss_before;
}

void BM_ReadExposition(benchmark::State& state) {
  static const std::string text = [] {
    mfu::testing::ExpositionGenOptions gen;
    gen.gpus = mfu::testing::MakeTelemetryGpus(8, 8, 2);
    return mfu::testing::GenerateExposition(gen);
  }();
  Read(state, text);
}
BENCHMARK(BM_ReadExposition)->Unit(benchmark::kMicrosecond);

// range(0) GPUs x range(1) s at 30 s steps x 4 fields.
void BM_ReadQueryRange(benchmark::State& state) {
  static std::map<std::pair<int64_t, int64_t>, std::string> inputs;
  const auto key = std::make_pair(state.range(0), state.range(1));
  if (!inputs.count(key)) {
    inputs.clear();  // one input held at a time
    mfu::testing::QueryRangeGenOptions gen;
    gen.gpus = mfu::testing::MakeTelemetryGpus(static_cast<int>(state.range(0)), 8, 4);
    gen.fields = {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_UTIL",
                  "DCGM_FI_PROF_DRAM_ACTIVE"};
    gen.duration_s = static_cast<double>(state.range(1));
    gen.step_s = 30;
    gen.value = [](size_t g, int64_t s, std::string_view metric) -> double {
      const int64_t k = (static_cast<int64_t>(g) * 7 + s) % 100;
      if (metric == "DCGM_FI_DEV_SM_CLOCK")
        return static_cast<double>(1980 - k % 10 * 15);
      if (metric == "DCGM_FI_DEV_GPU_UTIL")
        return static_cast<double>(90 + k % 10);
      return std::round((0.3 + 0.004 * static_cast<double>(k)) * 1e6) / 1e6;  // the exporter's %f
    };
    inputs[key] = mfu::testing::GenerateQueryRange(gen);
  }
  Read(state, inputs[key]);
}
BENCHMARK(BM_ReadQueryRange)->Args({16, 3600})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadQueryRange)->Args({100, 86400})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadQueryRange)->Args({1000, 86400})->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
