// Performance-model speed (issue #4 goals): configurations evaluated per
// second (>= 1e6 on 2 cores), and the wall time of a whole `mfu plan` search
// for Llama-3.1-405B on 16,384 H100s (< 1 s). Compare with Calculon's ~124
// evaluations/s per core (../shared/reference/planner-anchors.md).
#include <benchmark/benchmark.h>

#include <memory>

#include "mfu/cluster.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/perf_model.h"
#include "mfu/planner.h"

namespace {

struct Fixture {
  mfu::ModelSpec model;
  mfu::HardwareDb hw;
  mfu::ClusterDb clusters;
  mfu::EfficiencyDb efficiency;
  std::unique_ptr<mfu::PerfModel> perf;
};

// Built once; nullptr (and the benchmark skipped) if a database is broken.
Fixture* Llama405bOnDgxH100(int64_t gpus) {
  static Fixture* f = [] {
    auto* x = new Fixture;
    auto model = mfu::LoadModel(mfu::RealFileSystem(), "llama-3.1-405b");
    auto hw = mfu::HardwareDb::LoadBuiltin();
    auto clusters = mfu::ClusterDb::LoadBuiltin();
    auto eff = mfu::EfficiencyDb::LoadBuiltin();
    if (!model.ok() || !hw.ok() || !clusters.ok() || !eff.ok())
      return static_cast<Fixture*>(nullptr);
    x->model = std::move(model).value();
    x->hw = std::move(hw).value();
    x->clusters = std::move(clusters).value();
    x->efficiency = std::move(eff).value();
    return x;
  }();
  if (f == nullptr)
    return nullptr;
  auto cluster = f->clusters.Find("dgx-h100");
  if (!cluster.ok())
    return nullptr;
  auto gpu = f->hw.Find((*cluster)->accelerator);
  if (!gpu.ok())
    return nullptr;
  mfu::TrainingSetup setup;
  setup.model = &f->model;
  setup.seq_len = 8192;
  setup.gpu = *gpu;
  setup.cluster = *cluster;
  setup.gpus = gpus;
  setup.efficiency = f->efficiency.For((*gpu)->id);
  auto perf = mfu::PerfModel::Create(setup);
  if (!perf.ok())
    return nullptr;
  f->perf = std::make_unique<mfu::PerfModel>(std::move(perf).value());
  return f;
}

// One configuration evaluated: EvaluateStep is what the planner's inner
// loop costs; Evaluate adds the waterfall and utilization (FinishPrediction,
// what predict and the planner's kept configurations get).
void EvaluateLoop(benchmark::State& state, bool with_waterfall) {
  Fixture* f = Llama405bOnDgxH100(16384);
  if (f == nullptr) {
    state.SkipWithError("fixture");
    return;
  }
  mfu::TrainingConfig c;
  c.tp = 8;
  c.pp = 16;
  c.vpp = 2;
  c.global_batch = 2048;
  c.recompute = mfu::Recompute::kSelective;
  mfu::Prediction p;
  for (auto _ : state) {
    c.micro_batch = 1 + (state.iterations() & 1);
    if (with_waterfall)
      f->perf->Evaluate(c, p);
    else
      f->perf->EvaluateStep(c, p);
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations());
}
void BM_EvaluateConfig(benchmark::State& state) {
  EvaluateLoop(state, false);
}
BENCHMARK(BM_EvaluateConfig);
void BM_EvaluateConfigWithWaterfall(benchmark::State& state) {
  EvaluateLoop(state, true);
}
BENCHMARK(BM_EvaluateConfigWithWaterfall);

// The whole search, as `mfu plan --model llama-3.1-405b --cluster dgx-h100
// --gpus 16384 --seq-len 8192 --gbs 2048` runs it (model built once).
void BM_PlanLlama405bOn16kH100(benchmark::State& state) {
  Fixture* f = Llama405bOnDgxH100(16384);
  if (f == nullptr) {
    state.SkipWithError("fixture");
    return;
  }
  mfu::PlanOptions o;
  o.global_batch = 2048;
  uint64_t evaluated = 0;
  for (auto _ : state) {
    auto plan = mfu::PlanTraining(*f->perf, o);
    if (!plan.ok()) {
      state.SkipWithError(plan.status().message().c_str());
      return;
    }
    evaluated += plan->evaluated;
    benchmark::DoNotOptimize(plan);
  }
  state.SetItemsProcessed(static_cast<int64_t>(evaluated));
  state.counters["configs"] = static_cast<double>(evaluated) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_PlanLlama405bOn16kH100)->Unit(benchmark::kMillisecond);

// Building the model for a setup (per-layer work, activation tables).
void BM_CreatePerfModel(benchmark::State& state) {
  for (auto _ : state) {
    Fixture* f = Llama405bOnDgxH100(16384);
    benchmark::DoNotOptimize(f);
  }
}
BENCHMARK(BM_CreatePerfModel)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
