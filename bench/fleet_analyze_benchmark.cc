// `mfu fleet analyze` over a Prometheus query_range answer (issue #13 goal:
// 1,000 GPUs x 24 h at 30 s, ~2.9 M samples per field, at >= 10 M samples/s
// with memory proportional to GPUs, not samples). The answer is generated
// by src/testing/telemetry_gen (the exporter's label shapes, two jobs) for
// the fields the estimate reads; the benchmark times reading + estimating
// and reports samples/s, the input size and the peak RSS growth over the
// input itself (the analysis' own memory).
//
//   fleet_analyze_benchmark [--gpus=N] [--hours=H] [benchmark flags]

#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "mfu/fleet.h"
#include "mfu/hwdb.h"
#include "mfu/telemetry.h"
#include "testing/telemetry_gen.h"

namespace {

struct Input {
  int gpus = 1000;
  double hours = 24;
  std::string text;
  double rss_before_mb = 0;
};

Input& TheInput() {
  static Input input;
  return input;
}

double PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // kB on Linux
}

void BM_AnalyzeQueryRange(benchmark::State& state) {
  Input& input = TheInput();
  auto hw = mfu::HardwareDb::LoadBuiltin();
  if (!hw.ok()) {
    state.SkipWithError(hw.status().message().c_str());
    return;
  }
  mfu::FleetOptions options;
  options.hardware = &*hw;
  int64_t samples = 0;
  for (auto _ : state) {
    mfu::StatusOr<mfu::FleetReport> report = mfu::AnalyzeFleet(input.text, "bench", options);
    if (!report.ok()) {
      state.SkipWithError(report.status().message().c_str());
      return;
    }
    samples = report->read.samples;
    benchmark::DoNotOptimize(report->fleet.estimated_mfu);
  }
  state.SetItemsProcessed(state.iterations() * samples);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(input.text.size()));
  state.counters["gpus"] = input.gpus;
  state.counters["samples"] = static_cast<double>(samples);
  state.counters["input_MB"] = static_cast<double>(input.text.size()) / 1e6;
  state.counters["rss_over_input_MB"] = PeakRssMb() - input.rss_before_mb;
}

// The reader alone with a visitor that keeps nothing: what the analysis
// adds is BM_AnalyzeQueryRange's time minus this one.
struct NullVisitor final : mfu::TelemetryVisitor {
  mfu::Status OnDevice(const mfu::TelemetryDevice&, std::span<const mfu::TelemetryPoint> points) override {
    benchmark::DoNotOptimize(points.data());
    return mfu::Status::Ok();
  }
};

void BM_ReadQueryRangeOnly(benchmark::State& state) {
  Input& input = TheInput();
  int64_t samples = 0;
  for (auto _ : state) {
    NullVisitor visitor;
    mfu::TelemetryReadStats stats;
    mfu::Status s = mfu::ReadTelemetry(input.text, "bench", {}, visitor, &stats);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    samples = stats.samples;
  }
  state.SetItemsProcessed(state.iterations() * samples);
}

BENCHMARK(BM_AnalyzeQueryRange)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadQueryRangeOnly)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  Input& input = TheInput();
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--gpus=", 7) == 0)
      input.gpus = std::atoi(argv[i] + 7);
    else if (std::strncmp(argv[i], "--hours=", 8) == 0)
      input.hours = std::atof(argv[i] + 8);
    else
      args.push_back(argv[i]);
  }
  mfu::testing::QueryRangeGenOptions gen;
  gen.gpus = mfu::testing::MakeTelemetryGpus(input.gpus, 8, 2, mfu::testing::TelemetryGenJobLabels::kPod);
  gen.fields = {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_UTIL"};
  gen.duration_s = input.hours * 3600;
  gen.step_s = 30;
  // Values that move with time, so no two samples of a series are alike.
  gen.value = [](size_t gpu, int64_t step, std::string_view metric) {
    const double phase = static_cast<double>((gpu * 7 + static_cast<size_t>(step)) % 100) / 100.0;
    if (metric == "DCGM_FI_DEV_SM_CLOCK")
      return 1700 + 280 * phase;
    if (metric == "DCGM_FI_DEV_GPU_UTIL")
      return 60 + 40 * phase;
    return 0.2 + 0.6 * phase;
  };
  input.text = mfu::testing::GenerateQueryRange(gen);
  input.rss_before_mb = PeakRssMb();
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data()))
    return 1;
  benchmark::AddCustomContext(
      "input", std::to_string(input.gpus) + " GPUs x " + std::to_string(input.hours) + " h at 30 s, 3 fields");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
