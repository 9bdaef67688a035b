// The training state of each framework profile (FrameworkProfile::state,
// data/frameworks/frameworks.csv): bytes per parameter against each
// framework's documented accounting, the loader's state columns and
// FindTraining.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mfu/framework.h"
#include "mfu/memory.h"

namespace mfu {
namespace {

const FrameworkDb& Db() {
  return **FrameworkDb::Builtin();
}

TrainingState OneParam(const TrainingStateDtypes& d, int zero, double shard) {
  StateSharding s;
  s.dense_params = 1;
  s.dense_shard = shard;
  return TrainingStateBytes(d, zero, s);
}

struct Accounting {
  const char* framework;
  double weights, gradients, optimizer;  // bytes per parameter, unsharded
};

// Megatron-LM docs/api-guide/dist_optimizer.md: "bf16 parameters, fp32
// gradients: 18" (2 + 4 + 4 master + 8 moments) and "fp16 parameters, fp16
// gradients: 20" (2 + 2 + 4 master + 4 fp32 grad copy + 8); NeMo's
// bf16_mixed (grad_reduce_in_fp32=True) is the first. ZeRO (Rajbhandari et
// al. 2020, section 3.1): 2 + 2 + K, K = 12. torchtitan FSDP2 and Composer
// FSDP1: fp32 sharded parameters (the master), fp32 gradients, two fp32
// moments: 4 + 4 + 8.
constexpr Accounting kAccounting[] = {
    {"megatron-core", 2, 4, 12},    {"nemo", 2, 4, 12},
    {"megatron-lm-2021", 2, 2, 16}, {"torchtitan", 4, 4, 8},
    {"composer", 4, 4, 8},          {"deepspeed", 2, 2, 12},
    {"deepspeed-2021", 2, 2, 12},   {"megatron-deepspeed", 2, 2, 12},
};

TEST(FrameworkTrainingState, BytesPerParameterFromTheCitedDocs) {
  for (const Accounting& a : kAccounting) {
    SCOPED_TRACE(a.framework);
    StatusOr<const FrameworkProfile*> p = Db().FindTraining(a.framework);
    ASSERT_TRUE(p.ok()) << p.status().message();
    const TrainingState t = OneParam((*p)->state, 0, 1);
    EXPECT_DOUBLE_EQ(t.weights_bytes, a.weights);
    EXPECT_DOUBLE_EQ(t.gradients_bytes, a.gradients);
    EXPECT_DOUBLE_EQ(t.optimizer_bytes, a.optimizer);
    EXPECT_NE((*p)->source.find("state:"), std::string::npos) << "the state columns are cited";
  }
  // Every training row is in the table above.
  int training = 0;
  for (const FrameworkProfile& p : Db().all())
    training += p.kind == "training";
  EXPECT_EQ(training, static_cast<int>(std::size(kAccounting)));
}

// The distributed optimizer over d ranks: 6 + 12/d (Megatron's table);
// torchtitan's FSDP shards all 16 (plus the gathered layers, not here).
TEST(FrameworkTrainingState, ShardedAccounting) {
  const TrainingStateDtypes& mc = (*Db().FindTraining("megatron-core"))->state;
  const TrainingStateDtypes& tt = (*Db().FindTraining("torchtitan"))->state;
  for (double d : {1.0, 8.0, 64.0}) {
    EXPECT_DOUBLE_EQ(OneParam(mc, 1, d).total_bytes(), 6 + 12 / d);
    EXPECT_DOUBLE_EQ(OneParam(tt, 3, d).total_bytes(), 16 / d);
  }
  EXPECT_EQ(tt.compute, DType::kBf16);  // what FSDP2 gathers (param_dtype)
  // The struct's defaults are Megatron-Core's row (what a bare
  // TrainingMemoryOptions counts).
  EXPECT_EQ(mc, TrainingStateDtypes{});
}

TEST(FrameworkTrainingState, FindTrainingAliasesAndErrors) {
  EXPECT_EQ((*Db().FindTraining("megatron"))->name, "megatron-core");
  EXPECT_EQ((*Db().FindTraining("torchtitan-fsdp"))->name, "torchtitan");
  StatusOr<const FrameworkProfile*> serving = Db().FindTraining("vllm");
  ASSERT_FALSE(serving.ok());
  EXPECT_EQ(serving.status().message(), "vllm is a serving framework; training needs a training one");
  StatusOr<const FrameworkProfile*> typo = Db().FindTraining("torchtitn");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("did you mean 'torchtitan'"), std::string::npos) << typo.status().message();
}

// Aliases are data (the aliases column): a user's file adds one, a name or
// alias that names two profiles is refused and leaves the table unchanged.
TEST(FrameworkTrainingState, AliasesComeFromTheTable) {
  FrameworkDb db = Db();
  ASSERT_TRUE(db.AddCsv("name,aliases\nnemo,megatron-bridge;nemo2\n", "t.csv").ok());
  EXPECT_EQ((*db.Find("Megatron-Bridge"))->name, "nemo");
  EXPECT_EQ((*db.FindTraining("NeMo2"))->name, "nemo");
  Status clash = db.AddCsv("name,aliases\ndeepspeed,megatron\n", "clash.csv");
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.message(), "clash.csv:2: 'megatron' names both 'megatron-core' and 'deepspeed'");
  EXPECT_EQ((*db.Find("megatron"))->name, "megatron-core");
  Status spelled = db.AddCsv("name,aliases\nnemo,Mega Tron\n", "bad.csv");
  ASSERT_FALSE(spelled.ok());
  EXPECT_NE(spelled.message().find("bad.csv:2: column 'aliases'"), std::string::npos) << spelled.message();
}

TEST(FrameworkTrainingState, OverrideFileSetsAndChecksTheColumns) {
  FrameworkDb db = Db();
  ASSERT_TRUE(db.AddCsv("name,main_grads_dtype,fp32_grad_copy\nmegatron-core,bf16,0\n", "t.csv").ok());
  EXPECT_DOUBLE_EQ(OneParam((*db.Find("megatron-core"))->state, 0, 1).total_bytes(), 16);
  Status bad = db.AddCsv("name,weights_dtype\nmegatron-core,fp7\n", "t.csv");
  EXPECT_EQ(bad.code(), StatusCode::kParse);
  EXPECT_NE(bad.message().find("'fp7' is not fp32, bf16, fp16 or fp8"), std::string::npos) << bad.message();
  EXPECT_FALSE(db.AddCsv("name,moments\nmegatron-core,3\n", "t.csv").ok());
  // The table written back reads back equal, serving rows included.
  FrameworkDb again;
  ASSERT_TRUE(again.AddCsv(Db().ToCsv(), "round-trip").ok());
  EXPECT_EQ(again.ToCsv(), Db().ToCsv());
}

// elementwise and the eager_* columns: torchtitan's modules run eager unless
// compiled (its train configs' compile = false), Megatron-Core's are
// Transformer Engine kernels; a compile setting turns eager and compiled
// into each other and is refused where it does not apply.
TEST(FrameworkElementwise, CompileSettingAndColumns) {
  const FrameworkProfile& titan = **Db().Find("torchtitan");
  const FrameworkProfile& mcore = **Db().Find("megatron-core");
  EXPECT_EQ(titan.elementwise, Elementwise::kEager);
  EXPECT_GT(titan.eager.norm_fwd, 0);
  EXPECT_EQ(mcore.elementwise, Elementwise::kFused);
  EXPECT_EQ(*ApplyCompile(titan, "", "x"), Elementwise::kEager);
  EXPECT_EQ(*ApplyCompile(titan, "on", "x"), Elementwise::kCompiled);
  EXPECT_EQ(*ApplyCompile(titan, " Yes ", "x"), Elementwise::kCompiled);
  EXPECT_EQ(*ApplyCompile(titan, "off", "x"), Elementwise::kEager);
  EXPECT_EQ(*ApplyCompile(mcore, "", "x"), Elementwise::kFused);
  StatusOr<Elementwise> fused = ApplyCompile(mcore, "on", "parameter 'compile'");
  ASSERT_FALSE(fused.ok());
  EXPECT_EQ(fused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fused.status().message(),
            "parameter 'compile' on: framework megatron-core runs its own fused elementwise kernels (elementwise "
            "fused, data/frameworks/frameworks.csv); torch.compile does not apply");
  StatusOr<Elementwise> word = ApplyCompile(titan, "maybe", "column 'compile'");
  ASSERT_FALSE(word.ok());
  EXPECT_EQ(word.status().message(), "column 'compile': 'maybe' is not on or off");

  FrameworkDb db = Db();
  ASSERT_TRUE(db.AddCsv("name,elementwise,eager_norm_fwd_bytes\nmegatron-core,compiled,12\n", "t.csv").ok());
  EXPECT_EQ((*db.Find("megatron-core"))->elementwise, Elementwise::kCompiled);
  EXPECT_EQ((*db.Find("megatron-core"))->eager.norm_fwd, 12);
  Status bad = db.AddCsv("name,elementwise\nmegatron-core,jit\n", "t.csv");
  EXPECT_NE(bad.message().find("'jit' is not fused, eager or compiled"), std::string::npos) << bad.message();
  bad = db.AddCsv("name,eager_rope_bwd_bytes\nmegatron-core,-1\n", "t.csv");
  EXPECT_EQ(bad.code(), StatusCode::kOutOfRange) << bad.message();
  EXPECT_NE(bad.message().find("eager_rope_bwd_bytes"), std::string::npos) << bad.message();
}

// selective_ac: what `selective` means in each framework (torchtitan's
// train configs: selective_ac_option = "op"; Megatron's
// --recompute-granularity selective: the attention core); the other modes
// are the same everywhere.
TEST(FrameworkSelectiveAc, SelectiveIsTheFrameworksPolicy) {
  const FrameworkProfile& titan = **Db().Find("torchtitan");
  const FrameworkProfile& mcore = **Db().Find("megatron-core");
  EXPECT_EQ(titan.selective_ac, SelectiveAc::kOp);
  EXPECT_EQ(mcore.selective_ac, SelectiveAc::kAttention);
  EXPECT_EQ(titan.RecomputeOf(Recompute::kSelective), Recompute::kSelectiveOp);
  EXPECT_EQ(mcore.RecomputeOf(Recompute::kSelective), Recompute::kSelective);
  for (Recompute r : {Recompute::kNone, Recompute::kFull, Recompute::kSelectiveLiteral, Recompute::kSelectiveOp})
    EXPECT_EQ(titan.RecomputeOf(r), r);
  FrameworkDb db = Db();
  ASSERT_TRUE(db.AddCsv("name,selective_ac\nmegatron-core,op\n", "t.csv").ok());
  EXPECT_EQ((*db.Find("megatron-core"))->RecomputeOf(Recompute::kSelective), Recompute::kSelectiveOp);
  Status bad = db.AddCsv("name,selective_ac\nmegatron-core,layer\n", "t.csv");
  EXPECT_NE(bad.message().find("'layer' is not attention or op"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("selective_ac"), std::string::npos) << bad.message();
}

// ep_dispatch and fp8_saved_input_bytes: nemo's MoE recipes run the flex
// dispatcher (DeepEP/HybridEP), Megatron-Core's flag default and torchtitan
// all-to-all every routed copy; Transformer Engine keeps FP8 copies of
// linear inputs (1 byte), torchao the 16-bit input (2).
TEST(FrameworkMoeDispatchAndFp8Inputs, FromTheTableAndChecked) {
  EXPECT_EQ((*Db().Find("nemo"))->ep_dispatch, EpDispatch::kDeepEp);
  EXPECT_EQ((*Db().Find("megatron-core"))->ep_dispatch, EpDispatch::kAllToAll);
  EXPECT_EQ((*Db().Find("torchtitan"))->ep_dispatch, EpDispatch::kAllToAll);
  EXPECT_EQ((*Db().Find("megatron-core"))->fp8_saved_input_bytes, 1);
  EXPECT_EQ((*Db().Find("torchtitan"))->fp8_saved_input_bytes, 2);
  FrameworkDb db = Db();
  ASSERT_TRUE(db.AddCsv("name,ep_dispatch,fp8_saved_input_bytes\nmegatron-core,hybridep,2\n", "t.csv").ok());
  EXPECT_EQ((*db.Find("megatron-core"))->ep_dispatch, EpDispatch::kDeepEp);
  EXPECT_EQ((*db.Find("megatron-core"))->fp8_saved_input_bytes, 2);
  Status bad = db.AddCsv("name,ep_dispatch\nmegatron-core,nvshmem\n", "t.csv");
  EXPECT_EQ(bad.code(), StatusCode::kParse);
  EXPECT_NE(bad.message().find("'nvshmem' is not alltoall or deepep"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("ep_dispatch"), std::string::npos) << bad.message();
  EXPECT_FALSE(db.AddCsv("name,fp8_saved_input_bytes\nmegatron-core,0.5\n", "t.csv").ok());
}

// zero_stage / zero_stages: the stage each framework's recipes run and the
// ones it implements, from the cited rows (NeMo's optimizer recipe sets
// use_distributed_optimizer=True; torchtitan's default
// data_parallel_shard_degree -1 is FSDP2 over every data-parallel rank;
// DeepSpeed's zero_optimization.stage defaults to 0; Megatron-LM v2 had no
// distributed optimizer).
TEST(FrameworkZeroStages, DefaultsAndImplementedStagesFromTheTable) {
  struct Expected {
    const char* framework;
    int zero_stage;
    std::vector<int> zero_stages;
  };
  const Expected kExpected[] = {
      {"megatron-core", 1, {0, 1, 3}}, {"nemo", 1, {0, 1, 3}},         {"torchtitan", 3, {0, 2, 3}},
      {"composer", 3, {0, 2, 3}},      {"deepspeed", 0, {0, 1, 2, 3}}, {"deepspeed-2021", 3, {0, 1, 2, 3}},
      {"megatron-lm-2021", 0, {0}},
  };
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.framework);
    const FrameworkProfile& f = **Db().Find(e.framework);
    EXPECT_EQ(f.zero_stage, e.zero_stage);
    EXPECT_EQ(f.zero_stages, e.zero_stages);
  }
  EXPECT_TRUE(CheckZeroStage(**Db().Find("torchtitan"), 3).ok());
  EXPECT_TRUE(CheckZeroStage(**Db().Find("torchtitan"), 9).ok());  // out of range: the layout checks say so
  Status no_zero1 = CheckZeroStage(**Db().Find("torchtitan"), 1);
  EXPECT_EQ(no_zero1.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(no_zero1.message(),
            "parameter 'zero' 1: framework torchtitan does not implement ZeRO stage 1 (it runs 0, 2, 3; "
            "data/frameworks/frameworks.csv)");
}

// Under pipeline parallelism: DeepSpeed's PipelineEngine asserts
// zero_optimization_stage() < ZeroStageEnum.gradients (runtime/pipe/
// engine.py), so 0 and 1 only, and deepspeed-2021's ZeRO-3 default falls
// to 1; torchtitan's FSDP2 keeps weights gathered across micro-batches
// (reshard_after_forward = not pp_enabled), ZeRO-2; the rest are unchanged.
TEST(FrameworkZeroStages, UnderPipelineParallelism) {
  const FrameworkProfile& ds = **Db().Find("deepspeed-2021");
  EXPECT_TRUE(ds.Implements(3, 1));
  EXPECT_FALSE(ds.Implements(3, 4));
  EXPECT_FALSE(ds.Implements(2, 4));
  EXPECT_TRUE(ds.Implements(1, 4));
  EXPECT_EQ(ds.DefaultZeroStage(1), 3);
  EXPECT_EQ(ds.DefaultZeroStage(4), 1);
  EXPECT_EQ(CheckZeroStage(ds, 3, 4).message(),
            "parameter 'zero' 3: framework deepspeed-2021 does not implement ZeRO stage 3 with pipeline "
            "parallelism (pp 4) (it runs 0, 1 there; data/frameworks/frameworks.csv)");
  EXPECT_TRUE(CheckZeroStage(ds, 3, 1).ok());
  const FrameworkProfile& titan = **Db().Find("torchtitan");
  EXPECT_EQ(titan.DefaultZeroStage(1), 3);
  EXPECT_EQ(titan.DefaultZeroStage(8), 2);
  EXPECT_EQ(titan.FsdpStage(1), 3);
  EXPECT_EQ(titan.FsdpStage(8), 2);
  EXPECT_TRUE(titan.Implements(3, 8));  // reshard_after_forward_policy "always"
  const FrameworkProfile& megatron = **Db().Find("megatron-core");
  EXPECT_EQ(megatron.DefaultZeroStage(8), 1);
  EXPECT_EQ(megatron.FsdpStage(8), 3);
  EXPECT_TRUE(megatron.Implements(3, 8));
  EXPECT_EQ((**Db().Find("composer")).DefaultZeroStage(2), 3);

  // An override: stages under PP must be stages of the row.
  FrameworkDb db = Db();
  Status outside = db.AddCsv("name,zero_stages_pp\nmegatron-core,0;2\n", "t.csv");
  EXPECT_EQ(outside.message(), "t.csv:2: column 'zero_stages_pp': 2 is not one of its zero_stages");
  Status fsdp = db.AddCsv("name,fsdp_stage_pp\ntorchtitan,1\n", "t.csv");
  EXPECT_EQ(fsdp.code(), StatusCode::kOutOfRange) << fsdp.message();
  ASSERT_TRUE(db.AddCsv("name,zero_stages_pp\nmegatron-core,0\n", "t.csv").ok());
  EXPECT_EQ((**db.Find("megatron-core")).DefaultZeroStage(4), 0);  // highest there not above 1
}

TEST(FrameworkZeroStages, OverrideFileIsReadSortedAndChecked) {
  FrameworkDb db = Db();
  ASSERT_TRUE(db.AddCsv("name,zero_stages,zero_stage\ntorchtitan,3;0;3,0\n", "t.csv").ok());
  EXPECT_EQ((*db.Find("torchtitan"))->zero_stages, (std::vector<int>{0, 3}));
  EXPECT_EQ((*db.Find("torchtitan"))->zero_stage, 0);
  Status five = db.AddCsv("name,zero_stages\ntorchtitan,0;5\n", "t.csv");
  EXPECT_EQ(five.code(), StatusCode::kOutOfRange) << five.message();
  EXPECT_EQ(five.message(), "t.csv:2: column 'zero_stages': '5' is not a ZeRO stage (0, 1, 2 or 3)");
  Status none = db.AddCsv("name,zero_stages\ntorchtitan,\n", "t.csv");
  EXPECT_EQ(none.message(), "t.csv:2: column 'zero_stages': needs at least one ZeRO stage (e.g. 0;1;3)");
  // The default must be a stage the row implements; all or nothing.
  Status outside = db.AddCsv("name,zero_stages\ntorchtitan,1;2\n", "t.csv");
  EXPECT_EQ(outside.message(), "t.csv:2: column 'zero_stage': 0 is not one of its zero_stages");
  EXPECT_EQ((*db.Find("torchtitan"))->zero_stages, (std::vector<int>{0, 3}));
}

}  // namespace
}  // namespace mfu
