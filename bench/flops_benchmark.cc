// FLOPs-model timings. Decision informed: whether the planner (issue #4) can
// call ComputeTrainingFlops in its inner loop (goal: >= 1e6 configurations/s
// on 2 cores) or needs a precomputed per-layer cache.
#include <benchmark/benchmark.h>

#include "mfu/flops.h"
#include "mfu/model.h"

namespace {

void BM_TrainingFlops(benchmark::State& state, const char* preset) {
  auto spec = mfu::LoadModel(mfu::RealFileSystem(), preset);
  if (!spec.ok()) {
    state.SkipWithError(spec.status().message().c_str());
    return;
  }
  int64_t seq = 4096;
  for (auto _ : state) {
    auto t = mfu::ComputeTrainingFlops(*spec, mfu::Convention::kMegatron, seq, mfu::Recompute::kSelective);
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_TrainingFlops, llama_405b, "llama-3.1-405b");
BENCHMARK_CAPTURE(BM_TrainingFlops, deepseek_v3, "deepseek-v3");

void BM_LoadPreset(benchmark::State& state) {
  for (auto _ : state) {
    auto spec = mfu::LoadModel(mfu::RealFileSystem(), "deepseek-v3");
    benchmark::DoNotOptimize(spec);
  }
}
BENCHMARK(BM_LoadPreset);

}  // namespace

BENCHMARK_MAIN();
