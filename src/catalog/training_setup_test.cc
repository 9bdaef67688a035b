// ResolveTrainingSetup, ResolveTrainingConfig, PredictTraining and
// RunPlanStudy (training_setup.h) over the built-in catalog.

#include "mfu/training_setup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace mfu {
namespace {

const Catalog& Builtin() {
  static const Catalog catalog = *Catalog::LoadBuiltin();
  return catalog;
}

TrainingRequest Llama8bOn(const std::string& gpu, int64_t gpus) {
  TrainingRequest r;
  r.model = *LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  r.hardware.gpu = gpu;
  r.hardware.gpus = gpus;
  r.seq_len = 8192;
  return r;
}

// The memory question of the same run: `tr`'s model, its sequence and GPUs.
MemoryRequest MemoryOf(const TrainingRequest& tr, const std::string& framework) {
  MemoryRequest r;
  r.model = tr.model;
  r.seq_len = tr.seq_len;
  r.gpus = tr.hardware.gpus;
  r.framework = framework;
  return r;
}

TEST(ResolveTrainingSetup, ResolvesAndNamesParameters) {
  StatusOr<std::unique_ptr<ResolvedTraining>> s = ResolveTrainingSetup(Builtin(), Llama8bOn("h100", 8));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->perf->setup().gpus, 8);
  EXPECT_EQ((*s)->framework->name, "megatron-core");
  EXPECT_EQ((*s)->precision, DType::kBf16);

  TrainingRequest bad = Llama8bOn("h100", 8);
  bad.precision = "fp4";
  EXPECT_EQ(ResolveTrainingSetup(Builtin(), bad).status().message(),
            "parameter 'precision': training is modelled in bf16, fp16 or fp8");
  bad = Llama8bOn("h100", 8);
  bad.moe_imbalance = 0.5;
  EXPECT_EQ(ResolveTrainingSetup(Builtin(), bad).status().message().rfind("parameter 'moe_imbalance'", 0), 0u);
  bad = Llama8bOn("h100", 8);
  bad.ep_dispatch = "nvshmem";
  EXPECT_EQ(ResolveTrainingSetup(Builtin(), bad).status().message(),
            "parameter 'ep_dispatch': 'nvshmem' is not alltoall or deepep");
  bad = Llama8bOn("h100", 8);
  bad.ep_dispatch = "HybridEP";  // an alias, any case
  ASSERT_TRUE(ResolveTrainingSetup(Builtin(), bad).ok());
  EXPECT_EQ((*ResolveTrainingSetup(Builtin(), bad))->perf->setup().framework.ep_dispatch, EpDispatch::kDeepEp);
  bad = Llama8bOn("h100", 8);
  bad.recompute_modules = "moe_act,mla_up_proj";
  EXPECT_EQ(
      ResolveTrainingSetup(Builtin(), bad).status().message(),
      "parameter 'recompute_modules': mla_up_proj needs multi-latent attention (" + bad.model.name + " has none)");
  bad.recompute_modules = "moe_act,mla";
  EXPECT_EQ(ResolveTrainingSetup(Builtin(), bad).status().message(),
            "parameter 'recompute_modules': recompute module 'mla' is not one of core_attn, layernorm, "
            "moe_act, mlp, moe, shared_experts, mla_up_proj");
  bad.recompute_modules = "moe_act";
  bad.framework = "torchtitan";
  EXPECT_EQ(ResolveTrainingSetup(Builtin(), bad).status().message(),
            "parameter 'recompute_modules' lists Megatron's selective recompute; torchtitan's selective is its "
            "op-level policy");
  bad.framework = "megatron-core";
  {
    auto modules = ResolveTrainingSetup(Builtin(), bad);
    ASSERT_TRUE(modules.ok());
    TrainingConfigRequest q;  // recompute none
    EXPECT_EQ(ResolveTrainingConfig(**modules, q).status().message(),
              "parameter 'recompute_modules' applies to parameter 'recompute' selective, not none");
    q.recompute = "selective";
    EXPECT_TRUE(ResolveTrainingConfig(**modules, q).ok());
  }
  bad = Llama8bOn("h100", 8);
  bad.dropout = 1.0;
  EXPECT_EQ(ResolveTrainingSetup(Builtin(), bad).status().message(), "parameter 'dropout' must be in [0, 1), got 1");
  bad = Llama8bOn("h20", 16);  // two nodes need a cluster (h20 has no reference cluster)
  EXPECT_EQ(ResolveTrainingSetup(Builtin(), bad).status().code(), StatusCode::kInvalidArgument);
}

// A MoE model's predictions carry the moe_unvalidated warning (no measured
// calibration run is MoE); a dense model's do not.
TEST(ResolveTrainingSetup, MoeModelsSayTheyAreCheckedAtKernelLevelOnly) {
  auto has_moe_note = [](const ResolvedTraining& s) {
    return std::any_of(s.notes.begin(), s.notes.end(),
                       [](const Note& n) { return n.code == "moe_unvalidated" && n.kind == NoteKind::kWarning; });
  };
  TrainingRequest moe = Llama8bOn("h100", 8);
  moe.model = *LoadModel(mfu::RealFileSystem(), "qwen3-30b-a3b");
  auto m = ResolveTrainingSetup(Builtin(), moe);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(has_moe_note(**m));
  auto dense = ResolveTrainingSetup(Builtin(), Llama8bOn("h100", 8));
  ASSERT_TRUE(dense.ok());
  EXPECT_FALSE(has_moe_note(**dense));
}

// dp and the global batch are derived: 8 GPUs / tp 2 = 4, 4 x mbs 2 = 8.
TEST(PredictTraining, DerivesAndMatchesTheModel) {
  auto s = std::move(ResolveTrainingSetup(Builtin(), Llama8bOn("h100", 8))).value();
  TrainingConfigRequest q;
  q.tp = 2;
  q.mbs = 2;
  StatusOr<TrainingConfig> c = ResolveTrainingConfig(*s, q);
  ASSERT_TRUE(c.ok()) << c.status().message();
  StatusOr<PredictResult> r = PredictTraining(*s, *c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->prediction.config.dp, 4);
  EXPECT_EQ(r->prediction.config.global_batch, 8);
  ASSERT_EQ(r->derived.size(), 2u);
  EXPECT_EQ(r->derived[0], "dp = gpus / (tp x pp x cp) = 4");
  EXPECT_EQ(r->prediction.step_s, s->perf->Evaluate(*c).step_s);

  q.tp = 3;
  EXPECT_EQ(ResolveTrainingConfig(*s, q).status().message(), "tp x pp x cp = 3 does not divide 8 GPUs");
  q.tp = 2;
  q.fsdp = true;
  q.zero = 2;
  EXPECT_EQ(ResolveTrainingConfig(*s, q).status().message(),
            "parameter 'fsdp' is ZeRO-3; it contradicts parameter 'zero' 2");
}

// The study's search is PlanTraining's; the budget's time is tokens /
// tokens/s; the runner-up's difference is stated.
TEST(RunPlanStudy, SearchBudgetAndDifference) {
  auto s = std::move(ResolveTrainingSetup(Builtin(), Llama8bOn("h100", 8))).value();
  PlanRequest q;
  q.options.global_batch = 64;
  q.options.top_k = 3;
  q.tokens = "1T";
  q.price_per_gpu_hour = 2;
  StatusOr<PlanStudy> study = RunPlanStudy(*s, q);
  ASSERT_TRUE(study.ok()) << study.status().message();
  ASSERT_EQ(study->plan.top.size(), 3u);
  ASSERT_EQ(study->time_to_train.size(), 3u);
  const double hours = 1e12 / study->plan.top[0].tokens_per_s / 3600;
  EXPECT_NEAR(study->time_to_train[0].gpu_hours, hours * 8, 1e-9 * hours * 8);
  EXPECT_NEAR(study->time_to_train[0].cost_usd, hours * 16, 1e-9 * hours * 16);
  EXPECT_TRUE(study->has_runner_up);
  EXPECT_EQ(study->difference.components.size(), 12u);
  q.tokens = "-5";
  EXPECT_FALSE(RunPlanStudy(*s, q).ok());
  q.tokens = "";
  q.options.top_k = 0;
  EXPECT_EQ(RunPlanStudy(*s, q).status().message(), "parameter 'top' must be in [1, 1000]");
}

// `mfu memory --framework F` and `mfu predict --framework F --zero 0` count
// the same state from the same framework row. Llama-3.1-8B has
// 8,030,261,248 parameters (Hugging Face); on 8 H100s with no sharding
// every GPU holds all of them. By hand, bytes per parameter (weights,
// gradients, optimizer): megatron-core 2, 4, 12 (Megatron-LM
// dist_optimizer.md's 18: gradients 4 x 8,030,261,248 = 32,121,044,992 B =
// 29.92 GiB, where the bf16 count gave 14.96 GiB); torchtitan 4, 4, 8;
// deepspeed 2, 2, 12 (ZeRO's 16).
TEST(EstimateMemory, AgreesWithPredictForEachFramework) {
  constexpr double kParams = 8'030'261'248;
  struct Case {
    const char* framework;
    double weights, gradients, optimizer;
  };
  for (const Case& k : {Case{"megatron-core", 2, 4, 12}, Case{"torchtitan", 4, 4, 8}, Case{"deepspeed", 2, 2, 12}}) {
    SCOPED_TRACE(k.framework);
    TrainingRequest tr = Llama8bOn("h100", 8);
    tr.framework = k.framework;
    auto s = ResolveTrainingSetup(Builtin(), tr);
    ASSERT_TRUE(s.ok()) << s.status().message();
    TrainingConfigRequest q;
    q.zero = 0;
    StatusOr<TrainingConfig> c = ResolveTrainingConfig(**s, q);
    ASSERT_TRUE(c.ok()) << c.status().message();
    StatusOr<PredictResult> p = PredictTraining(**s, *c);
    ASSERT_TRUE(p.ok()) << p.status().message();
    const MemoryPerGpu& pm = p->prediction.memory;

    MemoryRequest mr = MemoryOf(tr, k.framework);
    mr.zero = 0;
    StatusOr<MemoryReport> m = EstimateMemory(Builtin(), mr);
    ASSERT_TRUE(m.ok()) << m.status().message();
    const TrainingMemoryPerGpu& g = m->per_gpu;

    EXPECT_DOUBLE_EQ(g.state.weights_bytes, k.weights * kParams);
    EXPECT_DOUBLE_EQ(g.state.gradients_bytes, k.gradients * kParams);
    EXPECT_DOUBLE_EQ(g.state.optimizer_bytes, k.optimizer * kParams);
    EXPECT_DOUBLE_EQ(pm.weights, g.state.weights_bytes);
    EXPECT_DOUBLE_EQ(pm.gradients, g.state.gradients_bytes);
    EXPECT_DOUBLE_EQ(pm.optimizer, g.state.optimizer_bytes);
    EXPECT_DOUBLE_EQ(pm.activations, g.activations_bytes);
    EXPECT_EQ(m->state, k.framework);
  }
}

// `selective` is the framework's: Megatron's attention-core recompute for
// megatron-core, the op-level policy for torchtitan (frameworks.csv
// selective_ac), in predict, plan and memory alike, and their activations
// agree.
TEST(EstimateMemory, SelectiveIsTheFrameworksPolicy) {
  for (auto [framework, mode] :
       {std::pair{"megatron-core", Recompute::kSelective}, std::pair{"torchtitan", Recompute::kSelectiveOp}}) {
    SCOPED_TRACE(framework);
    TrainingRequest tr = Llama8bOn("h100", 8);
    tr.framework = framework;
    auto s = ResolveTrainingSetup(Builtin(), tr);
    ASSERT_TRUE(s.ok()) << s.status().message();
    TrainingConfigRequest q;
    q.zero = 0;
    q.recompute = "selective";
    StatusOr<TrainingConfig> c = ResolveTrainingConfig(**s, q);
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(c->recompute, mode);
    StatusOr<PredictResult> p = PredictTraining(**s, *c);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->prediction.config.recompute, mode);
    MemoryRequest mr = MemoryOf(tr, framework);
    mr.zero = 0;
    mr.recompute = "selective";
    StatusOr<MemoryReport> m = EstimateMemory(Builtin(), mr);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(m->options.recompute, mode);
    EXPECT_DOUBLE_EQ(p->prediction.memory.activations, m->per_gpu.activations_bytes);
  }
}

// Under FP8, Transformer Engine frameworks keep FP8 copies of the linear
// layers' inputs (frameworks.csv fp8_saved_input_bytes 1), torchtitan's
// torchao the 16-bit inputs (2): predict and memory agree, and a run's
// dropout adds its masks to both.
TEST(EstimateMemory, Fp8InputsAndDropoutAsTheFrameworkKeepsThem) {
  for (auto [framework, fp8_smaller] : {std::pair{"megatron-core", true}, std::pair{"torchtitan", false}}) {
    SCOPED_TRACE(framework);
    double activations[2][2] = {};
    for (int fp8 = 0; fp8 < 2; ++fp8) {
      for (int dropout = 0; dropout < 2; ++dropout) {
        TrainingRequest tr = Llama8bOn("h100", 8);
        tr.framework = framework;
        tr.precision = fp8 ? "fp8" : "bf16";
        if (dropout)
          tr.dropout = 0.1;
        auto s = ResolveTrainingSetup(Builtin(), tr);
        ASSERT_TRUE(s.ok()) << s.status().message();
        TrainingConfigRequest q;
        q.zero = 0;
        StatusOr<TrainingConfig> c = ResolveTrainingConfig(**s, q);
        ASSERT_TRUE(c.ok()) << c.status().message();
        StatusOr<PredictResult> p = PredictTraining(**s, *c);
        ASSERT_TRUE(p.ok()) << p.status().message();
        MemoryRequest mr = MemoryOf(tr, framework);
        mr.zero = 0;
        mr.precision = tr.precision;
        mr.dropout = tr.dropout;
        StatusOr<MemoryReport> m = EstimateMemory(Builtin(), mr);
        ASSERT_TRUE(m.ok()) << m.status().message();
        EXPECT_DOUBLE_EQ(p->prediction.memory.activations, m->per_gpu.activations_bytes);
        activations[fp8][dropout] = m->per_gpu.activations_bytes;
      }
    }
    // Llama-3.1-8B, 8192 tokens, 32 layers: FP8 saves (2h + ffn - h) bytes
    // per token and layer (docs/memory.md); dropout adds 2h one-byte masks.
    const double per_layer_token = 2 * 4096 + 14336 - 4096;
    EXPECT_DOUBLE_EQ(activations[0][0] - activations[1][0], fp8_smaller ? 32 * 8192 * per_layer_token : 0);
    EXPECT_DOUBLE_EQ(activations[0][1] - activations[0][0], 32 * 8192 * 2 * 4096.0);
  }
  MemoryRequest bad = MemoryOf(Llama8bOn("h100", 8), "megatron-core");
  bad.precision = "fp7";
  StatusOr<MemoryReport> m = EstimateMemory(Builtin(), bad);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("parameter 'precision'"), std::string::npos) << m.status().message();
}

// --state borrows another framework's stored dtypes; bad names name the parameter.
TEST(EstimateMemory, StateOverrideAndErrors) {
  MemoryRequest mr;
  mr.model = *LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  mr.seq_len = 8192;
  mr.framework = "megatron-core";
  mr.state = "torchtitan-fsdp";  // the former preset's name
  StatusOr<MemoryReport> m = EstimateMemory(Builtin(), mr);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->state, "torchtitan");
  EXPECT_DOUBLE_EQ(m->state_bytes_per_param, 16);
  mr.state = "vllm";
  EXPECT_EQ(EstimateMemory(Builtin(), mr).status().message(),
            "parameter 'state': vllm is a serving framework; training needs a training one");
  mr.state.clear();
  mr.framework = "megatorn";
  EXPECT_EQ(EstimateMemory(Builtin(), mr).status().message().rfind("parameter 'framework': unknown framework", 0), 0u);

  TrainingRequest tr = Llama8bOn("h100", 8);
  tr.state = "deepspeed";
  auto s = ResolveTrainingSetup(Builtin(), tr);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->state.main_grads, DType::kBf16);
  EXPECT_EQ((*s)->framework->name, "megatron-core");

  // --grad-precision bf16 on Megatron-Core: 2 + 2 + 12 = 16 bytes per
  // parameter in predict and memory alike (the optimizer then adds the
  // fp32 copy of the 16-bit grads: Megatron's fp32_grad_copy, 4 more).
  tr.state.clear();
  tr.grad_dtype = "bf16";
  s = ResolveTrainingSetup(Builtin(), tr);
  ASSERT_TRUE(s.ok()) << s.status().message();
  TrainingConfigRequest q;
  q.zero = 0;
  StatusOr<PredictResult> p = PredictTraining(**s, *ResolveTrainingConfig(**s, q));
  ASSERT_TRUE(p.ok()) << p.status().message();
  MemoryRequest same = MemoryOf(tr, tr.framework);
  same.zero = 0;
  same.grad_dtype = "bf16";
  StatusOr<MemoryReport> g = EstimateMemory(Builtin(), same);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_DOUBLE_EQ(p->prediction.memory.gradients, 2 * 8'030'261'248.0);
  EXPECT_DOUBLE_EQ(p->prediction.memory.gradients, g->per_gpu.state.gradients_bytes);
  EXPECT_DOUBLE_EQ(p->prediction.memory.optimizer, 16 * 8'030'261'248.0);
  EXPECT_DOUBLE_EQ(p->prediction.memory.optimizer, g->per_gpu.state.optimizer_bytes);
  tr.grad_dtype = "fp7";
  EXPECT_EQ(ResolveTrainingSetup(Builtin(), tr).status().message().rfind("parameter 'grad_dtype'", 0), 0u);
}

// Without a stage, predict, memory and plan take the framework's zero_stage
// (frameworks.csv: torchtitan's FSDP2 is 3, Megatron-Core's distributed
// optimizer 1); a stage the framework does not implement is refused,
// naming the parameter, and plan does not try it.
TEST(ResolveTrainingConfig, ZeroStageIsTheFrameworksUnlessAsked) {
  TrainingRequest tr = Llama8bOn("h100", 8);
  tr.framework = "torchtitan";
  auto titan = std::move(ResolveTrainingSetup(Builtin(), tr)).value();
  auto megatron = std::move(ResolveTrainingSetup(Builtin(), Llama8bOn("h100", 8))).value();
  TrainingConfigRequest q;
  EXPECT_EQ(ResolveTrainingConfig(*titan, q)->zero_stage, 3);
  EXPECT_EQ(ResolveTrainingConfig(*megatron, q)->zero_stage, 1);
  q.zero = 2;
  EXPECT_EQ(ResolveTrainingConfig(*titan, q)->zero_stage, 2);
  q.zero = 1;
  EXPECT_EQ(ResolveTrainingConfig(*titan, q).status().message(),
            "parameter 'zero' 1: framework torchtitan does not implement ZeRO stage 1 (it runs 0, 2, 3; "
            "data/frameworks/frameworks.csv)");

  MemoryRequest mr = MemoryOf(tr, "torchtitan");
  StatusOr<MemoryReport> m = EstimateMemory(Builtin(), mr);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->layout.zero_stage, 3);
  mr.zero = 1;
  EXPECT_EQ(EstimateMemory(Builtin(), mr).status().message().rfind("parameter 'zero' 1: framework torchtitan", 0), 0u);

  PlanRequest plan;
  plan.options.global_batch = 64;
  plan.options.top_k = 1000;
  // By default plan tries every stage torchtitan implements (0, 2, 3),
  // and a stage asked for that it lacks is an error, not skipped.
  StatusOr<PlanStudy> study = RunPlanStudy(*titan, plan);
  ASSERT_TRUE(study.ok()) << study.status().message();
  ASSERT_FALSE(study->plan.top.empty());
  std::set<int> tried;
  for (const Prediction& p : study->plan.top)
    tried.insert(p.config.zero_stage);
  EXPECT_EQ(tried, (std::set<int>{0, 2, 3}));
  plan.options.zero_stages = {0, 1, 3};
  EXPECT_EQ(RunPlanStudy(*titan, plan).status().message().rfind("parameter 'zero' 1: framework torchtitan", 0), 0u);
  plan.options.zero_stages = {1};
  EXPECT_EQ(RunPlanStudy(*titan, plan).status().message().rfind("parameter 'zero' 1: framework torchtitan", 0), 0u);
}

// With pp > 1 the default follows the framework's pipeline (torchtitan's
// FSDP keeps weights across micro-batches: 2; --fsdp likewise), DeepSpeed
// refuses ZeRO-2/3 with a pipeline (runtime/pipe/engine.py) in predict and
// memory, and plan does not try them there.
TEST(ResolveTrainingConfig, ZeroStageUnderPipelineParallelism) {
  TrainingRequest tr = Llama8bOn("h100", 8);
  tr.framework = "torchtitan";
  auto titan = std::move(ResolveTrainingSetup(Builtin(), tr)).value();
  TrainingConfigRequest q;
  q.pp = 2;
  EXPECT_EQ(ResolveTrainingConfig(*titan, q)->zero_stage, 2);
  q.fsdp = true;
  EXPECT_EQ(ResolveTrainingConfig(*titan, q)->zero_stage, 2);
  q.fsdp = false;
  q.zero = 3;
  EXPECT_EQ(ResolveTrainingConfig(*titan, q)->zero_stage, 3);

  tr.framework = "deepspeed";
  auto ds = std::move(ResolveTrainingSetup(Builtin(), tr)).value();
  Status refused = ResolveTrainingConfig(*ds, q).status();
  EXPECT_EQ(refused.message().rfind("parameter 'zero' 3: framework deepspeed does not implement ZeRO stage 3 "
                                    "with pipeline parallelism (pp 2)",
                                    0),
            0u)
      << refused.message();
  q.pp = 1;
  StatusOr<TrainingConfig> three = ResolveTrainingConfig(*ds, q);
  ASSERT_TRUE(three.ok()) << three.status().message();
  EXPECT_EQ(ds->perf->Evaluate(*three).issue, ConfigIssue::kOk);
  three->pp = 2;  // past Validate: Evaluate refuses it too
  EXPECT_EQ(ds->perf->Evaluate(*three).issue, ConfigIssue::kBadValue);

  MemoryRequest mr = MemoryOf(tr, "torchtitan");
  mr.pp = 2;
  StatusOr<MemoryReport> m = EstimateMemory(Builtin(), mr);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->layout.zero_stage, 2);
  mr.framework = "deepspeed";
  mr.zero = 2;
  EXPECT_EQ(EstimateMemory(Builtin(), mr).status().message().rfind("parameter 'zero' 2: framework deepspeed", 0), 0u);

  PlanRequest plan;
  plan.options.global_batch = 64;
  plan.options.top_k = 1000;
  plan.options.zero_stages = {0, 1, 2, 3};
  StatusOr<PlanStudy> study = RunPlanStudy(*ds, plan);
  ASSERT_TRUE(study.ok()) << study.status().message();
  bool pipelined = false;
  for (const Prediction& p : study->plan.top) {
    pipelined = pipelined || p.config.pp > 1;
    if (p.config.pp > 1) {
      EXPECT_LE(p.config.zero_stage, 1);
    }
  }
  EXPECT_TRUE(pipelined);
}

}  // namespace
}  // namespace mfu
