// Memory formulas against Korthikanti et al. 2022 (arXiv:2205.05198) section 4 and
// hand computations.

#include "mfu/memory.h"

#include <gtest/gtest.h>

namespace mfu {
namespace {

// The stored dtypes of three frameworks, stated by hand from their docs
// (data/frameworks/frameworks.csv holds the same as data; framework_test.cc
// checks the table against these byte counts).
// Megatron-Core: bf16 weights, fp32 main grads, fp32 master, 2 fp32 moments.
TrainingStateDtypes MegatronState() {
  return {};
}
// DeepSpeed (ZeRO paper): 16-bit weights and gradients, fp32 master and moments.
TrainingStateDtypes DeepSpeedState() {
  TrainingStateDtypes d;
  d.main_grads = DType::kBf16;
  d.fp32_grad_copy = false;
  return d;
}
// torchtitan FSDP2: fp32 shards (the master), fp32 grads, bf16 compute.
TrainingStateDtypes TorchtitanState() {
  TrainingStateDtypes d;
  d.weights = DType::kFp32;
  d.fp32_master = false;
  d.fp32_grad_copy = false;
  return d;
}

StatusOr<ModelSpec> Gpt(int64_t layers, int64_t hidden, int64_t heads) {
  GenericModelOptions o;
  o.layers = layers;
  o.hidden = hidden;
  o.heads = heads;
  o.vocab = 51200;
  o.gated_mlp = false;
  o.dropout = 0.1;  // Korthikanti's GPT models train with dropout (its masks are in the 34)
  return BuildGenericModel(o);
}

// Korthikanti eq. 1: per layer s*b*h*(34 + 5*a*s/h) bytes with no
// parallelism; eq. 2 (tensor parallel t): s*b*h*(10 + 24/t + 5*a*s/(h*t));
// eq. 4 (TP + sequence parallel): s*b*h/t*(34 + 5*a*s/h); selective
// recompute: s*b*h/t*34; full recompute: 2*s*b*h.
TEST(Memory, KorthikantiActivationFormulas) {
  auto spec = Gpt(96, 12288, 96);  // GPT-3 175B
  ASSERT_TRUE(spec.ok());
  const double s = 2048, b = 1, h = 12288, a = 96;
  TrainingMemoryOptions o;
  o.seq_len = 2048;
  o.flash_attention = false;
  auto none = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(none.ok());
  EXPECT_DOUBLE_EQ(none->activations_per_layer_bytes, s * b * h * (34 + 5 * a * s / h));
  EXPECT_DOUBLE_EQ(none->activations_per_layer_bytes, KorthikantiActivationBytesPerLayer(s, b, h, a));

  o.tensor_parallel = 8;
  auto tp = EstimateTrainingMemory(*spec, o);
  EXPECT_DOUBLE_EQ(tp->activations_per_layer_bytes, s * b * h * (10 + 24.0 / 8 + 5 * a * s / (h * 8)));

  o.sequence_parallel = true;
  auto sp = EstimateTrainingMemory(*spec, o);
  EXPECT_DOUBLE_EQ(sp->activations_per_layer_bytes, s * b * h / 8 * (34 + 5 * a * s / h));

  o.recompute = Recompute::kSelective;
  auto sel = EstimateTrainingMemory(*spec, o);
  EXPECT_DOUBLE_EQ(sel->activations_per_layer_bytes, s * b * h / 8 * 34);

  o.recompute = Recompute::kNone;
  o.flash_attention = true;  // flash keeps no a*s^2 terms, only its fp32 log-sum-exp per head
  auto flash = EstimateTrainingMemory(*spec, o);
  EXPECT_DOUBLE_EQ(flash->activations_per_layer_bytes, sel->activations_per_layer_bytes + s * b * 4 * a / 8);

  o.recompute = Recompute::kFull;
  o.sequence_parallel = false;
  o.tensor_parallel = 1;
  auto full = EstimateTrainingMemory(*spec, o);
  EXPECT_DOUBLE_EQ(full->activations_per_layer_bytes, 2 * s * b * h);
  EXPECT_DOUBLE_EQ(full->activations_bytes, 96 * 2 * s * b * h);
}

// Without dropout the two 1-byte masks and the softmax's mask and dropout
// output go: 32 s*b*h + 2*a*s^2*b (the softmax output alone).
TEST(Memory, NoDropoutNoMasks) {
  auto spec = Gpt(96, 12288, 96);
  ASSERT_TRUE(spec.ok());
  spec->dropout = 0;
  const double s = 2048, b = 1, h = 12288, a = 96;
  TrainingMemoryOptions o;
  o.seq_len = 2048;
  o.flash_attention = false;
  auto none = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(none.ok());
  EXPECT_DOUBLE_EQ(none->activations_per_layer_bytes, s * b * h * 32 + 2 * a * s * s * b);
}

// A Llama-3.1-8B layer (h 4096, 32 heads and 8 KV heads of 128, ffn 14336,
// no dropout), bytes per token in bf16: the two norms' inputs and outputs
// (QKV and fc1 inputs) 4 x 2h; q, k, v 2 x (4096 + 1024 + 1024); the core's
// output 2 x 4096 and its fp32 log-sum-exp 32 x 4; fc1's gate and up
// outputs 2 x 2 x 14336 and the SwiGLU output 2 x 14336. Under FP8 with
// Transformer Engine (1 byte per saved linear input) the QKV and fc1 inputs
// and fc2's input are FP8 copies, and the projection keeps an FP8 copy of
// the core's output beside the 16-bit one.
TEST(Memory, LlamaLayerAsMegatronCoreKeepsIt) {
  auto spec = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->dropout, 0);
  TrainingMemoryOptions o;
  o.seq_len = 4096;
  auto m = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(m.ok());
  const double bf16 = 4 * 2.0 * 4096 + 2.0 * (4096 + 1024 + 1024) + 2.0 * 4096 + 32 * 4 + 2.0 * 2 * 14336 + 2.0 * 14336;
  EXPECT_DOUBLE_EQ(bf16, 139392);
  EXPECT_DOUBLE_EQ(m->activations_per_layer_bytes, 4096 * bf16);
  o.linear_input_bytes = 1;
  auto fp8 = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(fp8.ok());
  const double te_fp8 = bf16 - 2 * 4096 - 14336 + 4096;
  EXPECT_DOUBLE_EQ(fp8->activations_per_layer_bytes, 4096 * te_fp8);
}

// A Qwen3-30B-A3B layer (h 2048, 32 heads and 4 KV heads of 128, 128
// experts of 768, top 8, no shared experts), bytes per token in bf16: the
// two norms' inputs, the QKV input and the router's input 4 x 2h; q 2 x
// 4096, k and v 2 x 2 x 512, the core's output 2 x 4096, log-sum-exp 32 x 4;
// per routed copy (8) the grouped fc1's input and fc2's output 2 x 2h, the
// gate and up outputs 2 x 2 x 768 and the SwiGLU output 2 x 768.
TEST(Memory, MoeLayerKeepsEveryRoutedCopy) {
  auto spec = LoadModel(mfu::RealFileSystem(), "qwen3-30b-a3b");
  ASSERT_TRUE(spec.ok());
  TrainingMemoryOptions o;
  o.seq_len = 4096;
  auto m = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(m.ok());
  const double per_token = 4 * 2.0 * 2048 + 2.0 * 4096 + 2 * 2.0 * 512 + 2.0 * 4096 + 32 * 4 +
                           8 * (2 * 2.0 * 2048 + 2 * 2.0 * 768 + 2.0 * 768);
  EXPECT_DOUBLE_EQ(per_token, 137344);
  EXPECT_DOUBLE_EQ(m->activations_per_layer_bytes, 4096 * per_token);
}

// Megatron's --recompute-modules drop what they recompute from the
// Qwen3-30B-A3B layer above (137,344 bytes per token): layernorm the router's
// input (the pre-MLP norm's output, 2 x 2048) and moe_act the 8 SwiGLU
// outputs (8 x 2 x 768), keeping the core's log-sum-exp (core_attn is not
// listed); core_attn and moe keep the two norm inputs, the QKV input, q, k,
// v and the core's output, nothing of the MoE block.
TEST(Memory, RecomputeModulesDropWhatTheyRecompute) {
  auto spec = LoadModel(mfu::RealFileSystem(), "qwen3-30b-a3b");
  ASSERT_TRUE(spec.ok());
  TrainingMemoryOptions o;
  o.seq_len = 4096;
  o.recompute = Recompute::kSelective;
  o.recompute_modules = kRecomputeLayernorm | kRecomputeMoeAct;
  auto act = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(act.ok());
  EXPECT_DOUBLE_EQ(act->activations_per_layer_bytes, 4096 * (137344.0 - 2 * 2048 - 8 * 2 * 768));
  o.recompute_modules = kRecomputeCoreAttn | kRecomputeMoe;
  auto moe = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(moe.ok());
  EXPECT_DOUBLE_EQ(moe->activations_per_layer_bytes, 4096 * (3 * 2.0 * 2048 + 2.0 * (4096 + 2 * 512 + 4096)));
  // The default (core_attn) is Korthikanti's selective: the list without the log-sum-exp.
  o.recompute_modules = kDefaultRecomputeModules;
  auto sel = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(sel.ok());
  EXPECT_DOUBLE_EQ(sel->activations_per_layer_bytes, 4096 * (137344.0 - 32 * 4));
}

// DeepSeek-V3's mla_up_proj discards the core's Q, K (128 heads x 192) and
// V (128 x 128) after its forward, 2 x (2 x 24,576 + 16,384) = 131,072
// bytes per token in each of its 61 MLA layers; the latents it recomputes
// them from stay: q 1536 and kv 512 (norm input and output each) and the
// 64-wide rope key, (2 + 2) x 2048 + 2 x 64 = 8,320 bytes.
TEST(Memory, MlaUpProjDropsTheCoresInputs) {
  auto spec = LoadModel(mfu::RealFileSystem(), "deepseek-v3");
  ASSERT_TRUE(spec.ok());
  TrainingMemoryOptions o;
  o.seq_len = 4096;
  o.recompute = Recompute::kSelective;
  o.recompute_modules = kRecomputeCoreAttn;
  auto kept = EstimateTrainingMemory(*spec, o);
  o.recompute_modules = kRecomputeCoreAttn | kRecomputeMlaUpProj;
  auto dropped = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(kept.ok() && dropped.ok());
  EXPECT_DOUBLE_EQ(kept->activations_per_layer_bytes - dropped->activations_per_layer_bytes, 4096 * 131072.0);
  // Everything else of a MoE layer recomputed, the attention's inputs, the
  // core's output and the latents are what is left.
  o.recompute_modules = kRecomputeCoreAttn | kRecomputeMlaUpProj | kRecomputeMoe;
  ModelSpec moe_only = *spec;
  for (LayerSpec& l : moe_only.layers)
    l.moe = true;
  auto rest = EstimateTrainingMemory(moe_only, o);
  ASSERT_TRUE(rest.ok());
  const double h = 7168;
  EXPECT_DOUBLE_EQ(rest->activations_per_layer_bytes, 4096 * (2 * 2.0 * h + 2.0 * h + 2.0 * 128 * 128 + 8320));
}

TEST(Memory, DropoutOfTheRunOverridesTheModels) {
  auto spec = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(ApplyDropout(std::nullopt, *spec).ok());
  EXPECT_EQ(spec->dropout, 0);
  EXPECT_TRUE(ApplyDropout(0.1, *spec).ok());
  EXPECT_EQ(spec->dropout, 0.1);
  Status bad = ApplyDropout(1.0, *spec);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("parameter 'dropout' must be in [0, 1)"), std::string::npos) << bad.message();
  // With dropout the layer keeps a 1-byte mask after attention and after the MLP.
  TrainingMemoryOptions o;
  o.seq_len = 4096;
  auto with = EstimateTrainingMemory(*spec, o);
  spec->dropout = 0;
  auto without = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_DOUBLE_EQ(with->activations_per_layer_bytes - without->activations_per_layer_bytes, 4096 * 2 * 4096);
}

constexpr double kLlama8bParams = 8'030'261'248.0;

// torchtitan's op-level policy keeps, per token of a Llama-3.1-8B layer (h
// 4096, 32 heads and 8 KV heads of 128, ffn 14336), in bf16: the layer
// input (4096), wq's output (4096), wv's (1024), SDPA's output (4096) and
// its fp32 log-sum-exp (32 x 4 bytes), w1's output (14336) and w2's (4096).
// At TP 2 with sequence parallelism every part halves.
TEST(Memory, SelectiveOpKeepsEveryOtherMatmulOutput) {
  auto spec = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  ASSERT_TRUE(spec.ok());
  TrainingMemoryOptions o;
  o.seq_len = 8192;
  o.micro_batch = 2;
  o.recompute = Recompute::kSelectiveOp;
  auto m = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(m.ok());
  const double per_token = 2.0 * (4096 + 4096 + 1024 + 4096 + 14336 + 4096) + 32 * 4;
  EXPECT_DOUBLE_EQ(m->activations_per_layer_bytes, 2 * 8192 * per_token);
  EXPECT_DOUBLE_EQ(m->activations_bytes, 32 * 2 * 8192 * per_token);
  o.tensor_parallel = 2;
  o.sequence_parallel = true;
  auto tp = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(tp.ok());
  EXPECT_DOUBLE_EQ(tp->activations_per_layer_bytes, 2 * 8192 * per_token / 2);
}

// The default state is Megatron-Core's: 2 (bf16) + 4 (fp32 main grads) + 4
// (fp32 master) + 8 (two fp32 Adam moments) = 18 bytes per parameter.
TEST(Memory, DefaultStateIsMegatrons18BytesPerParam) {
  auto spec = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  ASSERT_TRUE(spec.ok());
  TrainingMemoryOptions o;
  o.seq_len = 8192;
  auto m = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(m.ok());
  const double n = kLlama8bParams;
  EXPECT_DOUBLE_EQ(m->weights_bytes, 2 * n);
  EXPECT_DOUBLE_EQ(m->gradients_bytes, 4 * n);
  EXPECT_DOUBLE_EQ(m->optimizer_bytes, 12 * n);
  EXPECT_DOUBLE_EQ(m->weights_bytes + m->gradients_bytes + m->optimizer_bytes, 144'544'702'464.0);
  // DeepSpeed (ZeRO paper, K = 12): 2 + 2 + 12 = 16.
  o.state = DeepSpeedState();
  m = EstimateTrainingMemory(*spec, o);
  EXPECT_DOUBLE_EQ(m->gradients_bytes, 2 * n);
  EXPECT_DOUBLE_EQ(m->optimizer_bytes, 12 * n);
}

// Bytes per parameter with `d`-way sharding of one parameter.
double PerParam(const TrainingStateDtypes& dtypes, int zero, double d) {
  StateSharding s;
  s.dense_params = 1;
  s.dense_shard = d;
  return TrainingStateBytes(dtypes, zero, s).total_bytes();
}

// Megatron-LM docs/api-guide/dist_optimizer.md: bytes per parameter
// without / with the distributed optimizer over d data-parallel ranks.
TEST(Memory, MegatronDistributedOptimizerTable) {
  TrainingStateDtypes bf16_fp32 = MegatronState();
  TrainingStateDtypes fp16_fp16 = bf16_fp32;
  fp16_fp16.weights = DType::kFp16;
  fp16_fp16.main_grads = DType::kFp16;
  TrainingStateDtypes fp32_fp32 = bf16_fp32;
  fp32_fp32.weights = DType::kFp32;
  for (double d : {1.0, 2.0, 8.0, 64.0}) {
    EXPECT_DOUBLE_EQ(PerParam(fp16_fp16, 0, d), 20);
    EXPECT_DOUBLE_EQ(PerParam(bf16_fp32, 0, d), 18);
    EXPECT_DOUBLE_EQ(PerParam(fp32_fp32, 0, d), 16);
    EXPECT_DOUBLE_EQ(PerParam(fp16_fp16, 1, d), 4 + 16 / d);
    EXPECT_DOUBLE_EQ(PerParam(bf16_fp32, 1, d), 6 + 12 / d);
    EXPECT_DOUBLE_EQ(PerParam(fp32_fp32, 1, d), 8 + 8 / d);
  }
}

// ZeRO (Rajbhandari et al. 2020, K = 12): 2 + 2 + K; stage 1 shards K,
// stage 2 also the gradients, stage 3 everything. torchtitan's FSDP2 keeps
// 4 + 4 + 8 per parameter, all sharded.
TEST(Memory, ZeroStagesShardStateInTurn) {
  const TrainingStateDtypes ds = DeepSpeedState();
  EXPECT_DOUBLE_EQ(PerParam(ds, 0, 64), 16);
  EXPECT_DOUBLE_EQ(PerParam(ds, 1, 64), 4 + 12.0 / 64);
  EXPECT_DOUBLE_EQ(PerParam(ds, 2, 64), 2 + 14.0 / 64);
  EXPECT_DOUBLE_EQ(PerParam(ds, 3, 64), 16.0 / 64);
  const TrainingStateDtypes tt = TorchtitanState();
  EXPECT_DOUBLE_EQ(PerParam(tt, 0, 8), 16);
  EXPECT_DOUBLE_EQ(PerParam(tt, 3, 8), 2);

  // Dense parameters shard over their group, experts over theirs; ZeRO-3
  // adds the gathered working copy in the compute dtype (bf16).
  const StateSharding s{
      .dense_params = 1000, .expert_params = 600, .dense_shard = 4, .expert_shard = 2, .gathered_params = 10};
  const TrainingStateDtypes mg = MegatronState();
  TrainingState z0 = TrainingStateBytes(mg, 0, s);
  EXPECT_DOUBLE_EQ(z0.weights_bytes, 2 * 1600);
  EXPECT_DOUBLE_EQ(z0.gradients_bytes, 4 * 1600);
  EXPECT_DOUBLE_EQ(z0.optimizer_bytes, 12 * 1600);
  TrainingState z3 = TrainingStateBytes(tt, 3, s);
  EXPECT_DOUBLE_EQ(z3.weights_bytes, 4 * (250 + 300) + 2 * 10);
  EXPECT_DOUBLE_EQ(z3.gradients_bytes, 4 * (250 + 300));
  EXPECT_DOUBLE_EQ(z3.optimizer_bytes, 8 * (250 + 300));
}

// Llama-3.1-8B on 8 GPUs (dp 8): Megatron's distributed optimizer keeps
// 6 + 12/8 = 7.5 bytes per parameter; torchtitan's FSDP 16/8 = 2 plus two
// gathered bf16 layers.
TEST(Memory, PerGpuStateOfLlama8bOnEightGpus) {
  auto spec = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  ASSERT_TRUE(spec.ok());
  TrainingMemoryOptions o;
  o.seq_len = 8192;
  ParallelLayout l;
  l.gpus = 8;
  l.zero_stage = 1;
  auto g = EstimateTrainingMemoryPerGpu(*spec, o, l);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->dp, 8);
  EXPECT_DOUBLE_EQ(g->dense_params + g->expert_params, kLlama8bParams);
  EXPECT_DOUBLE_EQ(g->state.total_bytes(), 7.5 * kLlama8bParams);
  // One micro-batch, all 32 layers, plus the output layer (pp = 1).
  auto whole = EstimateTrainingMemory(*spec, o);
  EXPECT_DOUBLE_EQ(g->activations_bytes, whole->activations_bytes + whole->output_layer_activations_bytes);

  o.state = TorchtitanState();
  l.zero_stage = 3;
  g = EstimateTrainingMemoryPerGpu(*spec, o, l);
  ASSERT_TRUE(g.ok());
  // Two average layers gathered in bf16 (2 bytes each).
  const ParamCounts p = CountParams(*spec);
  const double layer = (p.attention + p.dense_mlp + p.norms) / 32;
  EXPECT_DOUBLE_EQ(g->state.weights_bytes, 4 * kLlama8bParams / 8 + 2 * 2 * layer);
  EXPECT_DOUBLE_EQ(g->state.gradients_bytes, 4 * kLlama8bParams / 8);
  EXPECT_DOUBLE_EQ(g->state.optimizer_bytes, 8 * kLlama8bParams / 8);
}

// Llama-3.1-70B, tp 8 pp 4 vpp 5, 64 micro-batches: 20 layers on a stage,
// 4 x (1 + 3/20) = 4.6 micro-batches in flight on the first; no output layer.
TEST(Memory, PerGpuActivationsOfAnInterleavedPipeline) {
  auto spec = LoadModel(mfu::RealFileSystem(), "llama-3.1-70b");
  ASSERT_TRUE(spec.ok());
  TrainingMemoryOptions o;
  o.seq_len = 8192;
  o.sequence_parallel = true;
  const ParallelLayout l{.gpus = 64, .tp = 8, .pp = 4, .vpp = 5, .micro_batches = 64};
  auto g = EstimateTrainingMemoryPerGpu(*spec, o, l);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->dp, 2);
  EXPECT_DOUBLE_EQ(g->layers_per_stage, 20);
  EXPECT_DOUBLE_EQ(g->micro_batches_in_flight, 4.6);
  o.tensor_parallel = 8;
  auto rank = EstimateTrainingMemory(*spec, o);
  EXPECT_DOUBLE_EQ(g->activations_per_layer_bytes, rank->activations_per_layer_bytes);
  EXPECT_DOUBLE_EQ(g->activations_bytes, rank->activations_per_layer_bytes * 20 * 4.6);
  EXPECT_DOUBLE_EQ(g->output_layer_activations_bytes, 0);
}

// Llama-3.1-405B's 126 layers over pp 16 x vpp 7 = 112 virtual stages:
// 14 virtual stages hold 2 layers and 98 hold 1, spread so that no GPU
// holds more than ceil(126 / 16) = 8 (Megatron's uneven split), not
// vpp x ceil(126 / 112) = 14.
TEST(Memory, UnevenInterleavedStagesHoldCeilLayersOverPp) {
  auto spec = LoadModel(mfu::RealFileSystem(), "llama-3.1-405b");
  ASSERT_TRUE(spec.ok());
  TrainingMemoryOptions o;
  o.seq_len = 8192;
  o.sequence_parallel = true;
  const ParallelLayout l{.gpus = 1024, .tp = 8, .pp = 16, .vpp = 7, .micro_batches = 64};
  auto g = EstimateTrainingMemoryPerGpu(*spec, o, l);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_DOUBLE_EQ(g->layers_per_stage, 8);
}

// Each error names the offending field first (the flag of mfu memory).
TEST(Memory, BadLayoutsNameTheField) {
  auto spec = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  ASSERT_TRUE(spec.ok());
  auto first_word = [&](const ParallelLayout& l, int64_t seq = 8192) {
    Status s = ValidateParallelLayout(*spec, seq, l);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    return s.message().substr(0, s.message().find(' '));
  };
  // Each layout breaks one rule; the message names its field first.
  struct Case {
    ParallelLayout layout;
    const char* field;
  };
  const Case cases[] = {
      {{.gpus = 3, .tp = 3}, "tp"},
      {{.gpus = 12, .tp = 8}, "gpus"},
      {{.zero_stage = 4}, "zero"},
      {{.gpus = 2, .ep = 2}, "ep"},
      {{.gpus = 64, .pp = 64}, "pp"},
      {{.vpp = 2}, "vpp"},
      {{.gpus = 3, .cp = 3}, "cp"},  // 8192 is not a multiple of 6
      {{.tp = 0}, "tp"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(first_word(c.layout), c.field);
  EXPECT_TRUE(ValidateParallelLayout(*spec, 8192, ParallelLayout{}).ok());
}

TEST(Memory, KvCacheGqaMlaAndWindows) {
  // Llama-3.1-8B: 32 layers x 8 kv heads x (128 + 128) x 2 bytes = 131072 B/token.
  auto llama = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  ASSERT_TRUE(llama.ok());
  auto kv = ComputeKvCache(*llama, DType::kBf16, 8192);
  ASSERT_TRUE(kv.ok());
  EXPECT_DOUBLE_EQ(kv->bytes_per_token, 32.0 * 8 * 256 * 2);
  EXPECT_DOUBLE_EQ(kv->bytes_per_sequence, 8192 * 32.0 * 8 * 256 * 2);
  // DeepSeek-V3 MLA: 61 layers x (512 + 64) latent x 2 bytes = 70,272 B/token.
  auto v3 = LoadModel(mfu::RealFileSystem(), "deepseek-v3");
  ASSERT_TRUE(v3.ok());
  EXPECT_DOUBLE_EQ(ComputeKvCache(*v3, DType::kBf16, 100)->bytes_per_token, 61.0 * 576 * 2);
  // gpt-oss-120b: 18 sliding layers (window 128) + 18 full, 8 kv heads x 128.
  auto oss = LoadModel(mfu::RealFileSystem(), "gpt-oss-120b");
  ASSERT_TRUE(oss.ok());
  auto okv = ComputeKvCache(*oss, DType::kFp8, 4096);
  ASSERT_TRUE(okv.ok());
  const double per_layer_token = 8.0 * 128 * 1;
  EXPECT_DOUBLE_EQ(okv->bytes_per_sequence, per_layer_token * (18 * 128 + 18 * 4096));
  EXPECT_FALSE(ComputeKvCache(*oss, DType::kBf16, 0).ok());
}

}  // namespace
}  // namespace mfu
