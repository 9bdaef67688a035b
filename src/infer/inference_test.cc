// The inference model: memory and FLOPs against hand computations (dense
// GQA, MLA, MoE), speculative decoding, bad input, and the predicted
// throughput against TensorRT-LLM's published H100 table
// (tests/data/trtllm_h100_throughput.csv).

#include "mfu/inference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mfu/cluster.h"
#include "mfu/efficiency.h"
#include "mfu/framework.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/result.h"

namespace mfu {
namespace {

struct Env {
  HardwareDb hw;
  ClusterDb clusters;
  EfficiencyDb eff;
};

const Env& E() {
  static const Env* env = [] {
    auto* e = new Env;
    auto hw = HardwareDb::LoadBuiltin();
    auto cl = ClusterDb::LoadBuiltin();
    auto eff = EfficiencyDb::LoadBuiltin();
    EXPECT_TRUE(hw.ok() && cl.ok() && eff.ok());
    e->hw = std::move(hw).value();
    e->clusters = std::move(cl).value();
    e->eff = std::move(eff).value();
    return e;
  }();
  return *env;
}

ModelSpec Load(const char* name) {
  auto m = LoadModel(mfu::RealFileSystem(), name);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(m).value();
}

InferenceSetup OnH100(const ModelSpec& m, int64_t tp, DType w = DType::kBf16, DType kv = DType::kBf16) {
  InferenceSetup s;
  s.model = &m;
  s.cluster = *E().clusters.Find("dgx-h100");
  s.gpu = *E().hw.Find(s.cluster->accelerator);
  s.tp = tp;
  s.weight_dtype = w;
  s.kv_dtype = kv;
  s.efficiency = E().eff.For(s.gpu->id);
  return s;
}

// The serving framework's profile and scheduling defaults on the setup's GPU.
InferenceSetup WithFramework(InferenceSetup s, const char* name = "tensorrt-llm") {
  auto db = FrameworkDb::Builtin();
  EXPECT_TRUE(db.ok());
  auto fw = (*db)->Find(name);
  EXPECT_TRUE(fw.ok()) << fw.status().message();
  s.framework = **fw;
  auto d = ServingDefaultsFor(s.framework, *s.gpu);
  EXPECT_TRUE(d.ok()) << d.status().message();
  s.schedule = d->schedule;
  s.max_batch = d->max_batch;
  return s;
}

InferenceModel Make(const InferenceSetup& s) {
  auto m = InferenceModel::Create(s);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(m).value();
}

TEST(InferenceMemory, DenseGqaByHand) {
  // Llama-3.1-8B: 32 layers, 8 KV heads of 128: K+V = 2*8*128 elements per
  // token per layer; 8,030,261,248 parameters (untied).
  const ModelSpec m = Load("llama-3.1-8b");
  const InferenceMemory bf16 = Make(OnH100(m, 1)).Memory();
  EXPECT_DOUBLE_EQ(bf16.kv_bytes_per_token, 32.0 * 2 * 8 * 128 * 2);
  EXPECT_NEAR(bf16.weights_bytes, 8030261248.0 * 2, 1.0);
  const InferenceMemory fp8 = Make(OnH100(m, 2, DType::kFp8, DType::kFp8)).Memory();
  EXPECT_DOUBLE_EQ(fp8.kv_bytes_per_token, 32.0 * 2 * 8 * 128 * 1 / 2);  // KV heads split over tp
  // Norms are replicated; everything else splits by tp (within 0.1%).
  EXPECT_NEAR(fp8.weights_bytes / (8030261248.0 / 2), 1.0, 1e-3);
  // tp 16 > 8 KV heads: each KV head lives on two GPUs.
  EXPECT_DOUBLE_EQ(Make(OnH100(m, 16)).Memory().kv_bytes_per_token, 32.0 * 2 * 8 * 128 * 2 / 8);
  // Capacity: 90% of what weights and the reserve leave.
  const double free = bf16.capacity_bytes - bf16.weights_bytes - bf16.reserved_bytes;
  EXPECT_NEAR(bf16.kv_capacity_tokens, 0.9 * free / bf16.kv_bytes_per_token, 1e-6);
}

TEST(InferenceMemory, MlaLatentIsNotSplitByTp) {
  // DeepSeek-V3: the cache holds kv_lora_rank 512 + rope dim 64 per layer, 61 layers.
  const ModelSpec m = Load("deepseek-v3");
  InferenceSetup s = OnH100(m, 8, DType::kFp8, DType::kBf16);
  EXPECT_DOUBLE_EQ(Make(s).Memory().kv_bytes_per_token, 61.0 * 576 * 2);
}

TEST(InferenceSteps, DecodeFlopsAndBytesByHand) {
  const ModelSpec m = Load("llama-3.1-8b");
  const InferenceModel model = Make(OnH100(m, 1));
  const ParamCounts p = CountParams(m);
  const double ctx = 1000;
  const StepCost c = model.Decode(1, ctx);
  // 2 FLOPs per weight (all but the input embedding) + 4 per key per
  // attention width: 32 layers x 32 heads x 128 per side.
  const double expected = 2 * (p.total - p.embedding) + 4 * 32 * 4096.0 * ctx;
  EXPECT_NEAR(c.flops / expected, 1.0, 0.01);
  // Weights read once (bf16), the context's KV read once.
  EXPECT_NEAR(c.weight_bytes / (2 * (p.total - p.embedding)), 1.0, 0.01);
  EXPECT_DOUBLE_EQ(c.kv_read_bytes, ctx * 32 * 2 * 8 * 128 * 2);
  EXPECT_FALSE(c.compute_bound);
  // Prefill of 4096 tokens is compute-bound; decode becomes so at a large batch.
  EXPECT_TRUE(model.Prefill(1, 4096).compute_bound);
  EXPECT_GT(model.ComputeBoundBatch(128), 16);
  // The step's Waterfall: buckets summing to the step in integer ns, the
  // factor identity, and MFU_hw = the FLOPs counted above / (step x dense
  // peak), H100 SXM's dense bf16 peak from NVIDIA's datasheet (989.4 TFLOP/s).
  const Waterfall& w = c.waterfall;
  ASSERT_TRUE(CheckConsistency(w).ok()) << CheckConsistency(w).message();
  int64_t sum = 0;
  for (int64_t ns : w.bucket_ns)
    sum += ns;
  EXPECT_EQ(sum, w.step_ns);
  EXPECT_NEAR(static_cast<double>(w.step_ns), c.time_s * 1e9, 1.0);
  EXPECT_NEAR(w.mfu_hw / (expected / (c.time_s * 989.4e12)), 1.0, 0.01);
  EXPECT_NEAR(w.compute_share * w.matrix_share * w.matrix_efficiency, w.mfu_hw, 1e-9);
  // One GPU, one stage: nothing idle; no tensor parallelism: no communication.
  EXPECT_EQ(w[WaterfallBucket::kIdle], 0);
  EXPECT_EQ(w[WaterfallBucket::kExposedCommunication], 0);
  EXPECT_GT(w[WaterfallBucket::kNonMatrixKernels], 0);
  // Utilization: the convention's FLOPs and the executed ones per second.
  EXPECT_NEAR(c.utilization.mfu, c.model_flops / (c.time_s * 989.4e12), 1e-3 * c.utilization.mfu);
  EXPECT_NEAR(c.utilization.hfu, w.mfu_hw, 1e-3 * w.mfu_hw);
}

TEST(InferenceSteps, SlidingWindowLayersReadAtMostTheirWindow) {
  // Gemma-2-9B alternates 4096-token sliding-window layers with global ones:
  // at a 8192-token context half the layers read 4096 keys.
  const ModelSpec m = Load("gemma-2-9b");
  const InferenceModel model = Make(OnH100(m, 1));
  double keys = 0;
  for (const LayerSpec& l : m.layers)
    keys += l.window > 0 ? std::min<double>(8192, static_cast<double>(l.window)) : 8192;
  ASSERT_LT(keys, 8192.0 * static_cast<double>(m.layers.size()));  // the preset has windowed layers
  const double kv_per_key_layer = static_cast<double>(m.kv_heads) * 2 * static_cast<double>(m.qk_head_dim()) * 2;
  EXPECT_NEAR(model.Decode(1, 8192).kv_read_bytes, keys * kv_per_key_layer, 1e-6 * keys * kv_per_key_layer);
}

TEST(InferenceSteps, MoeTouchesExpertsByBatch) {
  // Mixtral-8x7B: top-2 of 8. One token reads 2 experts per layer; a large
  // batch reads all 8: E (1 - (1 - k/E)^T).
  const ModelSpec m = Load("mixtral-8x7b");
  const InferenceModel model = Make(OnH100(m, 2));
  const ParamCounts p = CountParams(m);
  const double expert = p.routed_experts / 8;  // all layers, one expert
  const double dense = p.total - p.embedding - p.routed_experts;
  const double one = model.Decode(1, 100).weight_bytes;
  const double many = model.Decode(512, 100).weight_bytes;
  EXPECT_NEAR(one, (dense + 2 * expert) * 2 / 2, 0.01 * one);
  EXPECT_NEAR(many, (dense + 8 * expert) * 2 / 2, 0.01 * many);
  const double four = model.Decode(4, 100).weight_bytes;
  const double touched = 8 * (1 - std::pow(1 - 2.0 / 8, 4));
  EXPECT_NEAR(four, (dense + touched * expert) * 2 / 2, 0.01 * four);
}

TEST(InferenceWorkload, PipelineStagesShareTheBatch) {
  // Llama-3.1-70B on 4 GPUs: tp 4 versus tp 2 x pp 2. With pp the requests
  // form two micro-batches in flight; the KV capacity is the same per GPU
  // layer set, so throughput must stay within a factor of two of tp 4's
  // (not double-counted by the micro-batches).
  const ModelSpec m = Load("llama-3.1-70b");
  InferenceSetup tp4 = OnH100(m, 4, DType::kFp8, DType::kFp8);
  InferenceSetup tp2pp2 = OnH100(m, 2, DType::kFp8, DType::kFp8);
  tp2pp2.pp = 2;
  auto a = Make(tp4).Workload(1000, 1000);
  auto b = Make(tp2pp2).Workload(1000, 1000);
  ASSERT_TRUE(a.ok() && b.ok());
  const double ratio = b->output_tokens_per_s / a->output_tokens_per_s;
  EXPECT_GT(ratio, 0.5);
  EXPECT_LT(ratio, 2.0);
  // The decode latency crosses both stages: TPOT is at least tp 4's.
  EXPECT_GT(b->tpot_s, 0.5 * a->tpot_s);
}

// The mix: serving 3 requests of 128/2048 and 1 of 2048/128 takes, at each
// shape's own throughput T, 3 x 2048 / T1 + 128 / T2 seconds for 3 x 2048 +
// 128 output tokens; MFU and MBU are the time-weighted means. A mix of one
// shape is that shape.
TEST(InferenceWorkload, MixIsTheTimeWeightedSumOfItsShapes) {
  const ModelSpec m = Load("llama-3.1-8b");
  const InferenceModel model = Make(OnH100(m, 1));
  auto a = model.Workload(128, 2048), b = model.Workload(2048, 128);
  ASSERT_TRUE(a.ok() && b.ok());
  auto mix = model.Mix({{128, 2048, 3}, {2048, 128, 1}});
  ASSERT_TRUE(mix.ok()) << mix.status().message();
  const double ta = 3 * 2048 / a->output_tokens_per_s, tb = 128 / b->output_tokens_per_s;
  EXPECT_NEAR(mix->seconds, ta + tb, 1e-12 * (ta + tb));
  EXPECT_NEAR(mix->output_tokens_per_s, (3 * 2048 + 128) / (ta + tb), 1e-9 * mix->output_tokens_per_s);
  EXPECT_NEAR(mix->mfu, (a->mfu * ta + b->mfu * tb) / (ta + tb), 1e-12);
  EXPECT_NEAR(mix->mbu, (a->mbu * ta + b->mbu * tb) / (ta + tb), 1e-12);
  ASSERT_EQ(mix->pairs.size(), 2u);
  EXPECT_DOUBLE_EQ(mix->pairs[1].output_tokens_per_s, b->output_tokens_per_s);

  auto one = model.Mix({{2048, 128, 5}});
  ASSERT_TRUE(one.ok());
  EXPECT_NEAR(one->output_tokens_per_s, b->output_tokens_per_s, 1e-9 * b->output_tokens_per_s);
  EXPECT_DOUBLE_EQ(one->mfu, b->mfu);

  EXPECT_EQ(model.Mix({}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(model.Mix({{128, 128, 0}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(model.Mix({{128, 128, 1}, {200000, 128, 1}}).status().code(), StatusCode::kOutOfRange);
}

TEST(InferenceSpeculative, ExpectedTokensAndSpeedup) {
  const ModelSpec target = Load("llama-3.1-70b");
  const ModelSpec draft = Load("llama-3.2-1b");
  const InferenceModel t = Make(OnH100(target, 4));
  const InferenceModel d = Make(OnH100(draft, 1));
  auto r = t.Speculative(8, 1000, 4, 0.8, &d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->tokens_per_step, (1 - std::pow(0.8, 5)) / (1 - 0.8), 1e-12);
  EXPECT_GT(r->speedup, 1.5);  // memory-bound decode: verifying 5 positions costs about one step
  EXPECT_GT(r->hfu, r->mfu);
  auto zero = t.Speculative(8, 1000, 4, 0.0, nullptr);
  ASSERT_TRUE(zero.ok());
  EXPECT_DOUBLE_EQ(zero->tokens_per_step, 1.0);
  EXPECT_LT(zero->speedup, 1.0);
  EXPECT_EQ(t.Speculative(8, 1000, 4, 1.0, nullptr).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.Speculative(8, 1000, 4, -0.1, nullptr).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.Speculative(8, 1000, 0, 0.5, nullptr).status().code(), StatusCode::kInvalidArgument);
}

// With two pipeline stages one GPU works on its stage's half of the pass
// and waits for the other half; tensor parallelism exposes its all-reduces.
TEST(InferenceWaterfall, PipelineIdleAndTensorParallelCommunication) {
  const ModelSpec m = Load("llama-3.1-70b");
  InferenceSetup s = OnH100(m, 4);
  s.pp = 2;
  const InferenceModel model = Make(s);
  for (const StepCost& c : {model.Decode(32, 2000), model.Prefill(1, 4096)}) {
    const Waterfall& w = c.waterfall;
    ASSERT_TRUE(CheckConsistency(w).ok()) << CheckConsistency(w).message();
    const double idle = static_cast<double>(w[WaterfallBucket::kIdle]) / static_cast<double>(w.step_ns);
    EXPECT_GT(idle, 0.45);  // (pp - 1) / pp of the step, less the stage-to-stage sends
    EXPECT_LE(idle, 0.5);
    EXPECT_GT(w[WaterfallBucket::kExposedCommunication], 0);
  }
}

// Mixtral-8x7B (32 layers, hidden 4096, 32 heads, 8 KV heads of 128, 8
// experts of ffn 14336, vocab 32000, untied) on 4 H100s at FP8 weights,
// counted by hand: per layer attention 2 x 4096^2 + 2 x 4096 x 1024, router
// 4096 x 8, two norms; an expert 3 x 4096 x 14336; the embedding and the LM
// head 32000 x 4096 each (the final norm, 4096, is below the tolerance).
TEST(InferenceParallel, AttentionDataParallelReplicatesAttentionAndPartitionsTheCache) {
  const ModelSpec m = Load("mixtral-8x7b");
  const double attention = 2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 4096.0 * 8 + 2 * 4096.0;
  const double experts = 8 * 3 * 4096.0 * 14336;
  const double embed_head = 2 * 32000.0 * 4096;
  InferenceSetup tp = OnH100(m, 4, DType::kFp8, DType::kFp8);
  InferenceSetup dp = tp;
  dp.attention_dp = true;
  const InferenceMemory a = Make(tp).Memory(), b = Make(dp).Memory();
  EXPECT_NEAR(a.weights_bytes, 32 * (attention / 4 + experts / 4) + embed_head / 4, 1e-4 * a.weights_bytes);
  EXPECT_NEAR(b.weights_bytes, 32 * (attention + experts / 4) + embed_head, 1e-4 * b.weights_bytes);
  // K+V of 8 heads of 128 in 32 layers, one byte: split over the 4 GPUs
  // under tensor parallelism, whole on the rank that serves the request
  // under attention data parallelism, whose 4 ranks each hold their own.
  const double kv = 32 * 2 * 8 * 128.0;
  EXPECT_DOUBLE_EQ(a.kv_bytes_per_token, kv / 4);
  EXPECT_DOUBLE_EQ(b.kv_bytes_per_token, kv);
  EXPECT_NEAR(a.kv_capacity_tokens, 0.9 * (a.capacity_bytes - a.weights_bytes - a.reserved_bytes) / (kv / 4),
              1e-6 * a.kv_capacity_tokens);
  EXPECT_NEAR(b.kv_capacity_tokens, 4 * 0.9 * (b.capacity_bytes - b.weights_bytes - b.reserved_bytes) / kv,
              1e-6 * b.kv_capacity_tokens);
}

// Experts spread over the tp group (TensorRT-LLM: moe_tp x moe_ep = tp) see
// every token already: no dispatch, the same two all-reduces per layer and
// the same 1/tp of the expert weights as experts split by tp.
TEST(InferenceParallel, ExpertParallelInsideTheTensorParallelGroupNeedsNoDispatch) {
  const ModelSpec m = Load("mixtral-8x7b");
  InferenceSetup split = OnH100(m, 4, DType::kFp8, DType::kFp8);
  InferenceSetup spread = split;
  spread.ep = 4;
  const InferenceModel a = Make(split), b = Make(spread);
  EXPECT_DOUBLE_EQ(a.Memory().weights_bytes, b.Memory().weights_bytes);
  for (double batch : {1.0, 64.0, 1024.0}) {
    EXPECT_DOUBLE_EQ(a.Decode(batch, 2000).comm_s, b.Decode(batch, 2000).comm_s) << batch;
    EXPECT_GT(b.Decode(batch, 2000).comm_s, 0);
  }
}

// Under attention data parallelism a MoE layer gathers its tokens (FP8
// checkpoints: one byte per element, plus top-k int32 ids and fp32 weights)
// and reduce-scatters a 16-bit output, (n-1)/n of each over the link; tensor
// parallelism all-reduces twice, 2(n-1)/n of 16-bit each. At a batch large
// enough for the link latency (6 steps against 12) to fade, the ratio is
// (h + 16 + 2h) / (4 x 2h).
TEST(InferenceParallel, AttentionDataParallelGathersInsteadOfAllReducing) {
  const ModelSpec m = Load("mixtral-8x7b");
  InferenceSetup tp = OnH100(m, 4, DType::kFp8, DType::kFp8);
  InferenceSetup dp = tp;
  dp.attention_dp = true;
  const double h = 4096;
  const double ratio = Make(dp).Decode(16384, 1000).comm_s / Make(tp).Decode(16384, 1000).comm_s;
  EXPECT_NEAR(ratio, (3 * h + 2 * 8) / (8 * h), 0.01);
}

// Qwen3-30B-A3B has 4 KV heads: on tp 8 each is cached on two GPUs (every
// GPU reads a quarter of every request's cache); attention data
// parallelism reads each request's cache once, on its rank.
TEST(InferenceParallel, AttentionDataParallelReadsEachCacheOnce) {
  const ModelSpec m = Load("qwen3-30b-a3b");
  InferenceSetup tp = OnH100(m, 8, DType::kFp8, DType::kFp8);
  InferenceSetup dp = tp;
  dp.attention_dp = true;
  const double per_token = 48 * 2 * 4 * 128.0;  // 48 layers, K+V of 4 heads of 128, one byte
  const StepCost a = Make(tp).Decode(256, 3000), b = Make(dp).Decode(256, 3000);
  EXPECT_NEAR(a.kv_read_bytes, 256 * 3000 * per_token / 4, 1e-9 * a.kv_read_bytes);
  EXPECT_NEAR(b.kv_read_bytes, 256.0 / 8 * 3000 * per_token, 1e-9 * b.kv_read_bytes);
}

// One prompt lands on one attention rank, which runs the whole attention and
// dense weights on it while the others wait: a lone prompt's pass is slower
// than tensor parallelism's, which splits it over the group; eight prompts
// (one per rank) take one prompt's attention time per rank.
TEST(InferenceParallel, AttentionDataParallelWaitsForTheBusiestRank) {
  const ModelSpec m = Load("qwen3-30b-a3b");
  InferenceSetup tp = OnH100(m, 8, DType::kFp8, DType::kFp8);
  InferenceSetup dp = tp;
  dp.attention_dp = true;
  const InferenceModel a = Make(tp), b = Make(dp);
  EXPECT_GT(b.Prefill(1, 8192).time_s, a.Prefill(1, 8192).time_s);
  EXPECT_LT(b.Prefill(8, 8192).time_s, 8 * b.Prefill(1, 8192).time_s);
  // Each rank schedules up to the engine's cap: 8 ranks of 16.
  dp.max_batch = 16;
  auto w = Make(dp).Workload(128, 128);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_DOUBLE_EQ(w->batch, 8 * 16);
  EXPECT_DOUBLE_EQ(Make(dp).BatchCap(), 8 * 16);
}

TEST(InferenceErrors, BadLayoutsContextsAndFit) {
  const ModelSpec m = Load("llama-3.1-8b");
  InferenceSetup s = OnH100(m, 3);
  EXPECT_EQ(InferenceModel::Create(s).status().code(), StatusCode::kInvalidArgument);  // 32 heads
  s = OnH100(m, 1);
  s.ep = 2;
  EXPECT_EQ(InferenceModel::Create(s).status().code(), StatusCode::kInvalidArgument);  // dense
  s = OnH100(m, 1);
  s.pp = 64;
  EXPECT_EQ(InferenceModel::Create(s).status().code(), StatusCode::kInvalidArgument);  // > 32 layers
  s = OnH100(m, 2);
  s.attention_dp = true;
  EXPECT_EQ(InferenceModel::Create(s).status().code(), StatusCode::kInvalidArgument);  // dense
  const ModelSpec moe = Load("mixtral-8x7b");
  s = OnH100(moe, 1);
  s.attention_dp = true;
  EXPECT_EQ(InferenceModel::Create(s).status().code(), StatusCode::kInvalidArgument);  // one rank
  s = OnH100(moe, 2);
  s.ep = 4;
  EXPECT_EQ(InferenceModel::Create(s).status().code(), StatusCode::kInvalidArgument);  // ep does not divide tp
  const InferenceModel model = Make(OnH100(m, 1));
  // Llama-3.1 allows 131,072 positions.
  EXPECT_EQ(model.Workload(130000, 2000).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(model.Workload(0, 10).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(model.Workload(1000, 1000, 1e6).status().code(), StatusCode::kNotFound);  // that batch does not fit
  EXPECT_EQ(model.FromMeasurement(1000, 1000, -5).status().code(), StatusCode::kInvalidArgument);
  const ModelSpec big = Load("llama-3.1-405b");
  EXPECT_FALSE(Make(OnH100(big, 1)).Memory().fits());
}

TEST(InferenceMeasured, UtilizationScalesWithThroughput) {
  const ModelSpec m = Load("llama-3.1-8b");
  const InferenceModel model = Make(OnH100(m, 1, DType::kFp8, DType::kFp8));
  auto w = model.Workload(1000, 1000);
  ASSERT_TRUE(w.ok());
  auto half = model.FromMeasurement(1000, 1000, w->output_tokens_per_s / 2);
  ASSERT_TRUE(half.ok());
  EXPECT_NEAR(half->mfu, w->mfu / 2, 1e-12);
  EXPECT_NEAR(half->mbu, w->mbu / 2, 1e-12);
  EXPECT_DOUBLE_EQ(half->batch, w->batch);
  // A measured step time: the step's model FLOPs and bytes over that time.
  const StepCost step = model.Decode(64, 1500);
  auto u = model.Utilization(step, 0.01);
  ASSERT_TRUE(u.ok());
  EXPECT_DOUBLE_EQ(u->mfu, step.model_flops / (0.01 * model.peak_flops()));
  EXPECT_DOUBLE_EQ(u->mbu, step.total_bytes() / (0.01 * 3.35e12));  // H100 SXM: 3.35 TB/s
  EXPECT_DOUBLE_EQ(u->predicted_s, step.time_s);
  EXPECT_EQ(model.Utilization(step, 0).status().code(), StatusCode::kInvalidArgument);
}

// A long prompt's prefill runs its attention at the flash kernel's rate for
// its length (keys per query = the prompt), not at the rate of one key: a
// 32k-token prompt of Llama-3.1-8B is about half attention and must keep
// the prefill near the kernels' rates.
TEST(InferenceSteps, LongPromptPrefillAttentionAtFlashRates) {
  const ModelSpec m = Load("llama-3.1-8b");
  const InferenceModel model = Make(OnH100(m, 1));
  const StepCost c = model.Prefill(1, 32768);
  EXPECT_GT(c.model_flops / (c.time_s * model.peak_flops()), 0.45);
  EXPECT_TRUE(c.compute_bound);
}

// Chunked prefill (vLLM's schedule): a 2048-token budget per pass; 64
// requests of 1000 + 1001 tokens decode at the mean context 1500; they
// finish, and new prompts arrive, at 64 / 1000 per round, each taken whole
// in the next round (1000 tokens fit in 2048 - 64), so 6.4% of the rounds
// carry one 1000-token prompt beside the 64 decode tokens.
TEST(InferenceSchedule, ChunkedPrefillRoundByHand) {
  const ModelSpec m = Load("llama-3.1-8b");
  InferenceSetup s = OnH100(m, 1, DType::kFp8, DType::kFp8);
  s.schedule = {2048, true, true};
  const InferenceModel model = Make(s);
  auto w = model.Workload(1000, 1001, 64);
  ASSERT_TRUE(w.ok()) << w.status().message();
  const double share = 0.064;
  const StepCost mixed = model.Mixed(64, 1500, 1, 1000);
  const StepCost decode = model.Decode(64, 1500);
  const double round = share * mixed.time_s + (1 - share) * decode.time_s;
  EXPECT_DOUBLE_EQ(w->decode_batch, 64);
  EXPECT_DOUBLE_EQ(w->prefill_tokens, 1000);
  EXPECT_NEAR(w->prefill_round_share, share, 1e-12);
  EXPECT_NEAR(w->output_tokens_per_s, 64 * 1001.0 / 1000 / round, 1e-9 * w->output_tokens_per_s);
  EXPECT_DOUBLE_EQ(w->ttft_s, mixed.time_s);
  EXPECT_NEAR(w->tpot_s, round, 1e-15);
  // Mixing reads the weights once: a mixed pass is faster than the decode
  // pass and the prompt's pass apart.
  EXPECT_LT(mixed.time_s, decode.time_s + model.Prefill(1, 1000).time_s);

  // A 512-token budget binds: D decode tokens and 512 - D prompt tokens per
  // round with D x 1000 / 100 = 512 - D (output 101: 100 decode steps), so
  // D = 512 x 100 / 1100; each round carries a 465-token chunk of one
  // prompt whose cached prefix averages (1000 - 465.45) / 2; a prompt takes
  // 3 rounds.
  s.schedule = {512, true, true};
  const InferenceModel tight = Make(s);
  auto t = tight.Workload(1000, 101, 64);
  ASSERT_TRUE(t.ok());
  const double d = 512.0 * 100 / 1100;
  EXPECT_NEAR(t->decode_batch, d, 1e-9);
  EXPECT_DOUBLE_EQ(t->prefill_round_share, 1);
  const StepCost r = tight.Mixed(d, 1000 + 101.0 / 2, 1, 512 - d, (1000 - (512 - d)) / 2);
  EXPECT_NEAR(t->output_tokens_per_s, d * 101 / 100 / r.time_s, 1e-9 * t->output_tokens_per_s);
  EXPECT_DOUBLE_EQ(t->ttft_s, 3 * r.time_s);

  // SGLang's schedule: each prompt in a prefill pass of its own, 0.064 of
  // them per decode pass.
  s.schedule = {2048, true, false};
  const InferenceModel apart = Make(s);
  auto a = apart.Workload(1000, 1001, 64);
  ASSERT_TRUE(a.ok());
  const StepCost pass = apart.Prefill(1, 1000);
  EXPECT_NEAR(a->tpot_s, decode.time_s + share * pass.time_s, 1e-15);
  EXPECT_DOUBLE_EQ(a->ttft_s, pass.time_s);
  EXPECT_EQ(model.Workload(1000, 1000).status().code(), StatusCode::kOk);
  s.schedule.token_budget = 0;
  EXPECT_EQ(Make(s).Workload(1000, 1000).status().code(), StatusCode::kInvalidArgument);
}

TEST(InferenceSchedule, FrameworkDefaults) {
  auto db = FrameworkDb::Builtin();
  ASSERT_TRUE(db.ok());
  const Accelerator& h100 = **E().hw.Find("h100");
  const Accelerator& a100 = **E().hw.Find("a100");
  const Accelerator& b200 = **E().hw.Find("b200");
  auto defaults = [&](const char* fw, const Accelerator& gpu) {
    auto d = ServingDefaultsFor(**(*db)->Find(fw), gpu);
    EXPECT_TRUE(d.ok()) << d.status().message();
    return d.ok() ? *d : ServingDefaults{};
  };
  const ServingDefaults trt = defaults("tensorrt-llm", h100);
  EXPECT_FALSE(trt.schedule.chunked_prefill);
  EXPECT_TRUE(trt.schedule.mixed);
  EXPECT_EQ(trt.schedule.token_budget, 8192);
  EXPECT_EQ(trt.max_batch, 2048);
  const ServingDefaults vllm = defaults("vllm", h100), vllm_a100 = defaults("vllm", a100);
  EXPECT_TRUE(vllm.schedule.chunked_prefill && vllm.schedule.mixed);
  EXPECT_EQ(vllm.schedule.token_budget, 8192);
  EXPECT_EQ(vllm.max_batch, 1024);
  EXPECT_EQ(vllm_a100.schedule.token_budget, 2048);
  EXPECT_EQ(vllm_a100.max_batch, 256);
  const ServingDefaults sglang = defaults("sglang", h100);
  EXPECT_TRUE(sglang.schedule.chunked_prefill);
  EXPECT_FALSE(sglang.schedule.mixed);
  EXPECT_EQ(sglang.schedule.token_budget, 8192);
  EXPECT_EQ(defaults("sglang", b200).schedule.token_budget, 16384);
  auto training = ServingDefaultsFor(**(*db)->Find("megatron-core"), h100);
  EXPECT_EQ(training.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(training.status().message().find("training"), std::string::npos);
}

TEST(InferenceSchedule, ValidationNote) {
  EXPECT_TRUE(InferenceValidation("h100-sxm5-80gb", "tensorrt-llm").validated);
  EXPECT_TRUE(InferenceValidation("h100-sxm5-80gb", "tensorrt-llm").note.empty());
  for (const char* gpu : {"b200-sxm-180gb", "gb200-186gb", "h200-sxm-141gb", "mi300x-oam-192gb"}) {
    const InferenceValidity v = InferenceValidation(gpu, "tensorrt-llm");
    EXPECT_FALSE(v.validated) << gpu;
    EXPECT_EQ(v.note.rfind("unvalidated", 0), 0u) << v.note;
    EXPECT_NE(v.note.find(gpu), std::string::npos) << v.note;
  }
  const InferenceValidity vllm = InferenceValidation("h100-sxm5-80gb", "vllm");
  EXPECT_FALSE(vllm.validated);
  EXPECT_NE(vllm.note.find("vllm"), std::string::npos);
}

// TensorRT-LLM's published max-throughput table on H100 (FP8 weights and KV
// cache, PP 1). The engine picks its batch; the prediction uses the largest
// batch whose input + output tokens fit the KV cache, capped at 2048.
TEST(InferenceValidation, TensorRtLlmH100Throughput) {
  std::ifstream f(std::string(MFU_SOURCE_DIR) + "/tests/data/trtllm_h100_throughput.csv");
  ASSERT_TRUE(f.good());
  std::string line;
  std::vector<double> errors;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("model,", 0) == 0)
      continue;
    std::vector<std::string> cols;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');)
      cols.push_back(c);
    ASSERT_EQ(cols.size(), 7u) << line;
    const char* preset = cols[0].find("8B") != std::string::npos    ? "llama-3.1-8b"
                         : cols[0].find("70B") != std::string::npos ? "llama-3.1-70b"  // 3.3-70B: same architecture
                                                                    : "llama-3.1-405b";
    const ModelSpec m = Load(preset);
    const InferenceModel model = Make(WithFramework(OnH100(m, std::stoll(cols[2]), DType::kFp8, DType::kFp8)));
    auto w = model.Workload(std::stod(cols[4]), std::stod(cols[5]));
    ASSERT_TRUE(w.ok()) << line << ": " << w.status().message();
    const double published = std::stod(cols[6]);
    errors.push_back(std::fabs(w->output_tokens_per_s / published - 1));
    // The long prompts (5000/500, 20000/2000) each within 15%.
    if (std::stod(cols[4]) >= 5000) {
      EXPECT_LE(errors.back(), 0.15) << line;
    }
    std::printf("%-16s tp%-2s %6s/%-5s published %6.0f predicted %6.0f (%+5.1f%%) batch %5.0f decoding %5.0f\n", preset,
                cols[2].c_str(), cols[4].c_str(), cols[5].c_str(), published, w->output_tokens_per_s,
                100 * (w->output_tokens_per_s / published - 1), w->batch, w->decode_batch);
  }
  ASSERT_EQ(errors.size(), 30u);
  double sum = 0;
  for (double e : errors)
    sum += e;
  const double mape = sum / static_cast<double>(errors.size());
  std::printf("TensorRT-LLM H100: %zu rows, MAPE %.1f%%\n", errors.size(), 100 * mape);
  EXPECT_LE(mape, 0.10);  // issue 10's goal, with nothing fitted to this table
  // The figure every "unvalidated family" note quotes (and docs/infer.md
  // states) is this measurement, rounded as printed above.
  char figure[32];
  std::snprintf(figure, sizeof(figure), "%.1f%% MAPE", 100 * mape);
  EXPECT_EQ(std::string(ValidatedInferenceError()).rfind(figure, 0), 0u) << ValidatedInferenceError();
}

}  // namespace
}  // namespace mfu
