// Training-log read throughput (MB/s, lines/s) of ReadTrainingLogFile on a
// generated multi-node Megatron-LM log (src/testing/log_gen.h: iteration
// lines on the last node among NCCL INFO, Python logging, memory reports,
// warnings and tqdm bars, all under `srun -l` prefixes), and how much the
// peak RSS grows while reading.
//
// Decision informed: issue #14 asks `mfu log` to read a 10-million-line log
// at >= 200 MB/s on one core with memory bounded. The log is generated
// once per run into --log (default: log_read_benchmark.log in the working
// directory), read back through RealFileSystem in 4 MiB chunks, and
// removed at exit unless --keep. Memory should follow the steps kept
// (one LogStep per iteration line), not the file: rss_growth_mib stays far
// below the input's size.
//
//   log_read_benchmark [--lines=N] [--log=PATH] [--keep] [benchmark flags]
//   build/release/bench/log_read_benchmark --benchmark_repetitions=3
//       --log=build/release/bench/log_read_benchmark.log   (one line; 10 M lines, median of 3)
// CTest's bench_smoke_log_read runs 20,000 lines.
//
// Measured 2026-12-01 on the 2-core shared development machine (load
// average 10-12 from other builds; RelWithDebInfo), median of 3: 10,000,000
// lines, 1,289.5 MB (1,229.8 MiB), 400,000 steps read in 3.32 s wall
// (388 MB/s, 3.01 M lines/s) and 1.28 s of CPU (about 1,010 MB/s per core
// busy); peak RSS grew 114 MiB in the first repetition (the 400,000
// LogSteps kept, about 240 B each, plus vector growth), later repetitions
// reuse that memory.
//
// BM_MfuLog/{text,json,csv} run the whole `mfu log` path the CLI runs on
// the same log: AnalyzeTrainingLogFiles (read, analyse, evidence lines)
// with --model llama-3.1-8b --gpu h100-sxm --gpus 256 --seq-len 4096, then
// the renderer into a sink that counts and discards the bytes (text:
// RenderLogText; json: WriteLogJson; csv: WriteLogStepsCsv and
// WriteLogFindingsCsv). MB_per_s is input bytes over wall time; peak_rss_mib
// is the process's peak RSS after the run (ru_maxrss), so run one mode per
// process for its own peak:
//   build/release/bench/log_read_benchmark --log=build/release/bench/log10m.log --keep
//       --benchmark_filter='BM_MfuLog/json' --benchmark_repetitions=3
// Figures (median of 3, before and after streaming the JSON/CSV) are in
// docs/logs.md "Speed and memory".
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/hwdb.h"
#include "mfu/log_analysis.h"
#include "mfu/model.h"
#include "mfu/report_log.h"
#include "mfu/training_log.h"
#include "testing/log_gen.h"

namespace {

struct Config {
  int64_t lines = 10'000'000;
  std::string path = "log_read_benchmark.log";
  bool keep = false;
};

Config& GetConfig() {
  static Config config;
  return config;
}

mfu::testing::LogGenSummary& Summary() {
  static mfu::testing::LogGenSummary summary;
  return summary;
}

double PeakRssMib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

bool WriteLog(const Config& config) {
  std::FILE* f = std::fopen(config.path.c_str(), "wb");
  if (f == nullptr)
    return false;
  mfu::testing::LogGenOptions options;
  options.lines = config.lines;
  bool ok = true;
  Summary() = mfu::testing::GenerateMixedLog(options, [&](std::string_view piece) {
    ok = ok && std::fwrite(piece.data(), 1, piece.size(), f) == piece.size();
  });
  return std::fclose(f) == 0 && ok;
}

void BM_ReadTrainingLogFile(benchmark::State& state) {
  const Config& config = GetConfig();
  mfu::RealFileSystem fs;
  const double rss_before = PeakRssMib();
  int64_t steps = 0;
  for (auto _ : state) {
    mfu::StatusOr<mfu::LogTimeline> t = mfu::ReadTrainingLogFile(fs, config.path);
    if (!t.ok()) {
      state.SkipWithError(t.status().message().c_str());
      return;
    }
    steps = static_cast<int64_t>(t->steps.size());
    if (steps != Summary().steps) {
      state.SkipWithError("wrong number of steps read");
      return;
    }
    benchmark::DoNotOptimize(t->steps.back().logged_tflops_per_gpu);
  }
  const auto iterations = static_cast<int64_t>(state.iterations());
  state.SetBytesProcessed(Summary().bytes * iterations);
  state.counters["MB_per_s"] = benchmark::Counter(
      static_cast<double>(Summary().bytes) * 1e-6 * static_cast<double>(iterations), benchmark::Counter::kIsRate);
  state.counters["lines_per_s"] =
      benchmark::Counter(static_cast<double>(Summary().lines * iterations), benchmark::Counter::kIsRate);
  state.counters["input_mib"] = static_cast<double>(Summary().bytes) / (1 << 20);
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["rss_growth_mib"] = PeakRssMib() - rss_before;
}
BENCHMARK(BM_ReadTrainingLogFile)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// Counts what is written and keeps none of it (stdout redirected to
// /dev/null, without the syscalls).
class DiscardingBuf final : public std::streambuf {
 public:
  int64_t bytes = 0;

 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += n;
    return n;
  }
  int_type overflow(int_type c) override {
    bytes += traits_type::eq_int_type(c, traits_type::eof()) ? 0 : 1;
    return traits_type::not_eof(c);
  }
};

enum class Output { kText, kJson, kCsv };

void BM_MfuLog(benchmark::State& state, Output output) {
  const Config& config = GetConfig();
  mfu::RealFileSystem fs;
  mfu::StatusOr<mfu::HardwareDb> db = mfu::HardwareDb::LoadBuiltin();
  mfu::StatusOr<mfu::ModelSpec> model = mfu::LoadModel(fs, "llama-3.1-8b");
  if (!db.ok() || !model.ok()) {
    state.SkipWithError("cannot load the hardware database or the model preset");
    return;
  }
  mfu::LogAnalysisRequest request;
  request.model = *model;
  request.gpu = "h100-sxm";
  request.gpus = 256;
  request.seq_len = 4096;
  const double rss_before = PeakRssMib();
  DiscardingBuf sink;
  std::ostream out(&sink);
  int64_t steps = 0;
  for (auto _ : state) {
    mfu::StatusOr<mfu::LogAnalysis> a = mfu::AnalyzeTrainingLogFiles(fs, {config.path}, {}, *db, request);
    if (!a.ok()) {
      state.SkipWithError(a.status().message().c_str());
      return;
    }
    steps = static_cast<int64_t>(a->timeline.steps.size());
    switch (output) {
      case Output::kText:
        out << mfu::RenderLogText(*a);
        break;
      case Output::kJson:
        mfu::WriteLogJson(*a, out);
        break;
      case Output::kCsv:
        mfu::WriteLogStepsCsv(*a, out);
        mfu::WriteLogFindingsCsv(*a, out);
        break;
    }
  }
  if (steps != Summary().steps) {
    state.SkipWithError("wrong number of steps read");
    return;
  }
  const auto iterations = static_cast<int64_t>(state.iterations());
  state.SetBytesProcessed(Summary().bytes * iterations);
  state.counters["MB_per_s"] = benchmark::Counter(
      static_cast<double>(Summary().bytes) * 1e-6 * static_cast<double>(iterations), benchmark::Counter::kIsRate);
  state.counters["input_mib"] = static_cast<double>(Summary().bytes) / (1 << 20);
  state.counters["output_mib"] = static_cast<double>(sink.bytes) / static_cast<double>(iterations) / (1 << 20);
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["peak_rss_mib"] = PeakRssMib();
  state.counters["rss_growth_mib"] = PeakRssMib() - rss_before;
}
BENCHMARK_CAPTURE(BM_MfuLog, text, Output::kText)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK_CAPTURE(BM_MfuLog, json, Output::kJson)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK_CAPTURE(BM_MfuLog, csv, Output::kCsv)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  Config& config = GetConfig();
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.rfind("--lines=", 0) == 0)
      config.lines = std::stoll(std::string(arg.substr(8)));
    else if (arg.rfind("--log=", 0) == 0)
      config.path = std::string(arg.substr(6));
    else if (arg == "--keep")
      config.keep = true;
    else
      rest.push_back(argv[i]);
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (!WriteLog(config)) {
    std::fprintf(stderr, "log_read_benchmark: cannot write %s\n", config.path.c_str());
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!config.keep)
    std::remove(config.path.c_str());
  return 0;
}
