// The mechanisms of issue 10 in the training model: attention in 16-bit
// under FP8, FP8 quantization traffic, framework overlaps, context
// parallelism, MoE costs and expert-data-parallel placement, uneven stages.
// Expected values are hand-computed from the formulas perf_model.h states,
// or published ranges (cited where used).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "mfu/framework.h"
#include "mfu/model.h"
#include "mfu/perf_model.h"
#include "testing/plan_test_util.h"

namespace mfu {
namespace {

using namespace plan_test;  // NOLINT: test fixtures

// The framework's profile as shipped (with `flag` on) and with `flag` off,
// on `gpus` GPUs of `cluster` at the test efficiency.
struct FlagPair {
  PerfModel on, off;
};
FlagPair WithAndWithout(const ModelSpec& m, int64_t seq, int64_t gpus, const char* cluster, const char* framework,
                        bool FrameworkProfile::*flag) {
  FrameworkProfile fw = Framework(framework);
  EXPECT_TRUE(fw.*flag) << framework;
  PerfModel on = MakeWith(m, seq, gpus, cluster, TestEfficiency(), fw);
  fw.*flag = false;
  return {std::move(on), MakeWith(m, seq, gpus, cluster, TestEfficiency(), fw)};
}

const EfficiencyDb& Shipped() {
  static const EfficiencyDb db = *EfficiencyDb::LoadBuiltin();
  return db;
}

TEST(Mechanisms, AttentionRunsInSixteenBitUnderFp8) {
  const ModelSpec m = Generic(4, 2048, 16, 8192, 32000);
  const PerfModel pm = MakeWith(m, 4096, 1, nullptr, TestEfficiency(), Framework("megatron-core"));
  TrainingConfig c = Layout(1, 1, 1, 1);
  const Prediction bf16 = pm.Evaluate(c);
  c.precision = DType::kFp8;
  const Prediction fp8 = pm.Evaluate(c);
  ASSERT_EQ(fp8.issue, ConfigIssue::kOk);
  // The attention core does not speed up with FP8 GEMMs; the GEMMs do.
  EXPECT_DOUBLE_EQ(fp8.breakdown.attention_s, bf16.breakdown.attention_s);
  EXPECT_LT(fp8.breakdown.matrix_s, bf16.breakdown.matrix_s);
  // MFU of an FP8 run is against the FP8 dense peak (twice the 16-bit one).
  EXPECT_DOUBLE_EQ(fp8.peak_flops, Gpu("h100-sxm5-80gb")->peak_flops(DType::kFp8));
  EXPECT_DOUBLE_EQ(bf16.peak_flops, Gpu("h100-sxm5-80gb")->peak_flops(DType::kBf16));
}

// The FP8 quantization traffic of `m` on one H100 at 2048 tokens: the
// vector time with 4 cast bytes per quantized element minus that with none.
double Fp8CastSeconds(const ModelSpec& m) {
  FrameworkProfile fw = Framework("megatron-core");
  fw.fp8_cast_bytes = 0;
  const PerfModel none = MakeWith(m, 2048, 1, nullptr, TestEfficiency(), fw);
  fw.fp8_cast_bytes = 4;
  const PerfModel four = MakeWith(m, 2048, 1, nullptr, TestEfficiency(), fw);
  TrainingConfig c = Layout(1, 1, 1, 1);
  c.precision = DType::kFp8;
  return four.Evaluate(c).breakdown.vector_s - none.Evaluate(c).breakdown.vector_s;
}

// Quantized elements of a GEMM group of `flops` (rows x cols, inner dim):
// inputs, weights, output gradients.
double QuantizedElements(double flops, double rows, double cols, double inner) {
  return flops / (2 * cols) + flops / (2 * rows) + flops / (2 * inner);
}

// 4 bytes per element at the test efficiency's quantization-kernel rate
// (quant_bw_fraction of HBM, not the streaming vector_bw_fraction).
double CastSeconds(double elements) {
  return 4 * elements / (Gpu("h100-sxm5-80gb")->memory_bw_tbps * 1e12 * TestEfficiency().quant_bw_fraction);
}

TEST(Mechanisms, Fp8QuantizationTrafficByHand) {
  // Per layer, T = 2048 tokens: Q/K/V/O as one h x 4h group (inner h), the
  // gated MLP as one 3 x ffn group (width ffn, inner h); 2 layers.
  const double T = 2048, h = 1024, ffn = 4096;
  const double proj_flops = T * 4 * 2 * h * h, mlp_flops = T * 3 * 2 * h * ffn;
  const double per_layer = QuantizedElements(proj_flops, T, h, h) + QuantizedElements(mlp_flops, T, ffn, h);
  EXPECT_NEAR(Fp8CastSeconds(Generic(2, 1024, 8, 4096, 32000)), 2 * CastSeconds(per_layer), 1e-12);
}

// Transformer Engine's and torchao's measured end-to-end FP8 speed-ups on
// 8x H100 are 1.1-1.25x (torchao float8 README: Llama3-8B torchtitan FSDP2,
// seq 8192, 6150 -> 7689.5 tok/s tensorwise = 1.25x, rowwise 1.10x). The
// shipped model must land inside that range (it predicted 1.6-1.95x with
// attention at the FP8 peak and no casts).
TEST(Mechanisms, Fp8SpeedupWithinPublishedRange) {
  StatusOr<ModelSpec> m = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  ASSERT_TRUE(m.ok());
  const PerfModel pm = MakeWith(*m, 8192, 8, nullptr, Shipped().For("h100-sxm5-80gb"), Framework("torchtitan"));
  TrainingConfig c = Layout(1, 1, 1, 8);
  c.fsdp = true;
  c.recompute = Recompute::kSelective;
  const Prediction bf16 = pm.Evaluate(c);
  c.precision = DType::kFp8;
  const Prediction fp8 = pm.Evaluate(c);
  const double speedup = fp8.tokens_per_s / bf16.tokens_per_s;
  EXPECT_GE(speedup, 1.10) << speedup;  // 1.20 with the shipped parameters
  EXPECT_LE(speedup, 1.25) << speedup;
}

// Context parallelism on a long sequence: throughput per GPU changes
// smoothly with cp (no cliff), attention dominates, and a framework that
// overlaps the ring (megatron-core) hides most of the exchange.
TEST(Mechanisms, ContextParallelIsSmoothAndMostlyHidden) {
  StatusOr<ModelSpec> m = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  ASSERT_TRUE(m.ok());
  const PerfModel pm =
      MakeWith(*m, 131072, 16, "dgx-h100", Shipped().For("h100-sxm5-80gb"), Framework("megatron-core"));
  double previous = 0;
  for (int64_t cp : {1, 2, 4, 8, 16}) {
    TrainingConfig c = Layout(1, 1, cp, 16);
    c.recompute = Recompute::kFull;
    const Prediction p = pm.Evaluate(c);
    ASSERT_TRUE(p.issue == ConfigIssue::kOk || p.issue == ConfigIssue::kOutOfMemory) << cp;
    const double per_gpu = p.tokens_per_s / 16;
    if (previous > 0) {
      EXPECT_LT(std::fabs(per_gpu / previous - 1), 0.1) << "cp " << cp;
    }
    previous = per_gpu;
    EXPECT_GT(p.breakdown.attention_s, 0.4 * p.step_s) << cp;
    EXPECT_LT(p.breakdown.cp_comm_s, 0.05 * p.step_s) << cp;
  }
}

TEST(Mechanisms, RingOverlapHidesWhatAllGatherExposes) {
  StatusOr<ModelSpec> m = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  ASSERT_TRUE(m.ok());
  FrameworkProfile ring = Framework("megatron-core");
  FrameworkProfile gather = ring;
  gather.cp_mode = CpMode::kAllGather;
  FrameworkProfile exposed = ring;
  exposed.cp_overlap = 0;
  const EfficiencyParams& e = Shipped().For("h100-sxm5-80gb");
  TrainingConfig c = Layout(1, 1, 8, 16);
  c.recompute = Recompute::kFull;
  const double hidden = MakeWith(*m, 65536, 16, "dgx-h100", e, ring).Evaluate(c).breakdown.cp_comm_s;
  const double not_hidden = MakeWith(*m, 65536, 16, "dgx-h100", e, exposed).Evaluate(c).breakdown.cp_comm_s;
  const double gathered = MakeWith(*m, 65536, 16, "dgx-h100", e, gather).Evaluate(c).breakdown.cp_comm_s;
  EXPECT_LT(hidden, 0.5 * not_hidden);
  EXPECT_GT(gathered, hidden);
}

// Ulysses (DeepSpeed's sequence parallelism, cp_mode alltoall): q and the
// attention output (h wide) and k, v (kv_heads x head_dim each) re-sharded
// heads <-> sequence by one all-to-all per layer and pass, never hidden.
// By hand on one DGX H100 node: cp 4, 8192 tokens (2048 per rank), h 1024,
// 8 KV heads of 128; the all-to-all moves 3/4 of each rank's buffer over
// NVLink at the test's scaleup_bw_fraction 0.75, plus 3 hops of latency.
TEST(Mechanisms, UlyssesContextParallelIsOneAllToAllPerLayerAndPass) {
  const ModelSpec m = Generic(2, 1024, 8, 4096, 32000);
  FrameworkProfile fw = Framework("megatron-core");
  fw.cp_mode = CpMode::kAllToAll;
  const PerfModel pm = MakeWith(m, 8192, 4, "dgx-h100", TestEfficiency(), fw);
  const Prediction p = pm.Evaluate(Layout(1, 1, 4, 1));
  ASSERT_EQ(p.issue, ConfigIssue::kOk);
  const Cluster& cl = *FindCluster("dgx-h100");
  const double tokens = 8192.0 / 4;
  const double bytes = 2 * tokens * 1024 * 2 + tokens * 2 * 8 * 128 * 2;  // q + output, k + v; 16-bit
  const double a2a = 3.0 / 4 * bytes / (cl.scaleup_bw_bytes_per_s * 0.75) + 3 * cl.scaleup_latency_s;
  // 2 layers x (forward + backward).
  EXPECT_NEAR(p.breakdown.cp_comm_s, 2 * 2 * a2a, 1e-9 * p.breakdown.cp_comm_s);
  // The ring sends each K/V block cp - 1 times and hides most of it behind
  // attention: less exposed than Ulysses here.
  fw.cp_mode = CpMode::kRing;
  EXPECT_LT(MakeWith(m, 8192, 4, "dgx-h100", TestEfficiency(), fw).Evaluate(Layout(1, 1, 4, 1)).breakdown.cp_comm_s,
            p.breakdown.cp_comm_s);
}

TEST(Mechanisms, FrameworkThatCannotOverlapTpRejectsIt) {
  const ModelSpec m = Generic(4, 2048, 16, 8192, 32000);
  const PerfModel pm = MakeWith(m, 4096, 8, nullptr, TestEfficiency(), Framework("composer"));
  TrainingConfig c = Layout(8, 1, 1, 1);
  c.zero_stage = 3;  // composer's (it has no ZeRO-1)
  c.tp_comm_overlap = true;
  EXPECT_EQ(pm.Evaluate(c).issue, ConfigIssue::kBadValue);
  c.tp_comm_overlap = false;
  EXPECT_EQ(pm.Evaluate(c).issue, ConfigIssue::kOk);
}

TEST(Mechanisms, DpOverlapExposesOneLayerChunk) {
  // One chunk of the per-layer buckets stays exposed: with L layers on the
  // stage and overlap_efficiency 1, at most (L-1)/L of the reduction hides.
  const ModelSpec m = Generic(8, 2048, 16, 8192, 32000);
  EfficiencyParams e = TestEfficiency();
  e.overlap_efficiency = 1;
  const PerfModel on = MakeWith(m, 2048, 64, "dgx-h100", e, Framework("megatron-core"));
  TrainingConfig c = Layout(1, 1, 1, 64);
  c.zero_stage = 0;
  const Prediction overlapped = on.Evaluate(c);
  c.dp_overlap = false;
  const Prediction alone = on.Evaluate(c);
  ASSERT_GT(alone.breakdown.dp_comm_s, 0);
  EXPECT_NEAR(overlapped.breakdown.dp_comm_s, alone.breakdown.dp_comm_s / 8, 1e-12);
}

TEST(Mechanisms, DeepSpeedZero3GathersAgainForRecompute) {
  // DeepSpeed's per-module ZeRO-3 hooks fetch a layer's parameters for the
  // recomputed forward and again for its backward: with nothing overlapped
  // (deepspeed-2021) and 16-bit weights and gradients (perf_model_internal.h),
  // a micro-batch's ZeRO-3 traffic is 3 gathers + 1 reduce-scatter of the
  // same bytes against 2 + 1 without the re-gather: exactly 4/3 of it.
  const ModelSpec m = Generic(8, 2048, 16, 8192, 32000);
  const auto [regather, once] =
      WithAndWithout(m, 2048, 64, "dgx-h100", "deepspeed-2021", &FrameworkProfile::zero3_recompute_gather);
  TrainingConfig c = Layout(1, 1, 1, 64);
  c.zero_stage = 3;
  c.recompute = Recompute::kFull;
  const Prediction three = regather.Evaluate(c), two = once.Evaluate(c);
  ASSERT_EQ(three.issue, ConfigIssue::kOk);
  ASSERT_GT(two.breakdown.dp_comm_s, 0);
  EXPECT_NEAR(three.breakdown.dp_comm_s, two.breakdown.dp_comm_s * 4 / 3, 1e-12 * two.breakdown.dp_comm_s);
  // Without full recompute there is nothing to gather again.
  c.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(regather.Evaluate(c).breakdown.dp_comm_s, once.Evaluate(c).breakdown.dp_comm_s);
  // FSDP gathers once before backward and recomputes inside the unit.
  EXPECT_FALSE(Framework("torchtitan").zero3_recompute_gather);
}

TEST(Mechanisms, DeepSpeed2021CopiesOneTensorPerRankAndCollective) {
  // DeepSpeed 2021 hands torch.distributed a list of world_size tensors per
  // parameter's all-gather and gradient's reduce-scatter; ProcessGroupNCCL
  // copies each through its flat buffer. By hand: 8 layers x 6 tensors
  // (no biases) = 48 collectives per pass; under full recompute a
  // micro-batch runs 3 gather passes and 1 reduce-scatter pass, nothing
  // overlapped (deepspeed-2021): 4 x 48 x 64 ranks copy kernels of
  // kernel_overhead_us each, per micro-batch (gbs 128 / dp 64 = 2).
  const ModelSpec m = Generic(8, 2048, 16, 8192, 32000);
  ASSERT_FALSE(m.qkv_bias);
  FrameworkProfile fw = Framework("deepspeed-2021");
  ASSERT_TRUE(fw.zero3_list_collectives);
  ASSERT_EQ(fw.fsdp_prefetch, 0);
  EfficiencyParams e = TestEfficiency();
  e.kernel_overhead_us = 5;
  const PerfModel lists = MakeWith(m, 2048, 64, "dgx-h100", e, fw);
  fw.zero3_list_collectives = false;
  const PerfModel flat = MakeWith(m, 2048, 64, "dgx-h100", e, fw);
  TrainingConfig c = Layout(1, 1, 1, 128);
  c.zero_stage = 3;
  c.recompute = Recompute::kFull;
  const Prediction with = lists.Evaluate(c), without = flat.Evaluate(c);
  ASSERT_EQ(with.issue, ConfigIssue::kOk);
  ASSERT_EQ(with.micro_batches, 2);
  const double expected = 2 * 4 * (8 * 6) * 64 * 5e-6;  // 0.12288 s
  EXPECT_NEAR(with.breakdown.dp_comm_s - without.breakdown.dp_comm_s, expected, 1e-9);
  EXPECT_NEAR(with.step_s - without.step_s, expected, 1e-9);
  // Without ZeRO-3 the data-parallel gradient reduction is one flat
  // collective: no per-rank copies.
  c.zero_stage = 1;
  EXPECT_DOUBLE_EQ(lists.Evaluate(c).step_s, flat.Evaluate(c).step_s);
  // Current DeepSpeed and FSDP pass flat tensors (all_gather_into_tensor).
  EXPECT_FALSE(Framework("deepspeed").zero3_list_collectives);
  EXPECT_FALSE(Framework("torchtitan").zero3_list_collectives);
}

TEST(Mechanisms, DeepSpeedPipelineSendsScatterOverTensorParallel) {
  // DeepSpeed's PipelineEngine partitions each stage-boundary tensor over the
  // TP group: every rank sends 1/tp of it and the receiver all-gathers the
  // slices. By hand on vTrain's cluster (data/clusters: NVLink 300 GB/s
  // per GPU, 3 us per step; 100 Gb/s NIC per GPU, 6 us) at the test
  // fractions (0.75 each): tp 8 x pp 2 over two nodes, so each stage pair
  // sits on one NIC per GPU. T x h x 2 bytes per transfer, 2 (m + pp - 1)
  // transfers on the critical path for m = 4 micro-batches.
  const ModelSpec m = Generic(8, 4096, 32, 16384, 32000, 0, false);
  const auto [scatter, whole] =
      WithAndWithout(m, 2048, 16, "vtrain-a100", "megatron-deepspeed", &FrameworkProfile::pp_scatter_gather);
  TrainingConfig c = Layout(8, 2, 1, 4);
  c.sequence_parallel = false;
  const Prediction sliced = scatter.Evaluate(c), full = whole.Evaluate(c);
  ASSERT_EQ(sliced.issue, ConfigIssue::kOk);
  ASSERT_EQ(sliced.micro_batches, 4);
  const double bytes = 2048.0 * 4096 * 2, transfers = 2 * (4 + 2 - 1);
  const double nic = 100e9 / 8 * 0.75, nvlink = 300e9 * 0.75;
  const double full_p2p = bytes / nic + 6e-6;
  const double sliced_p2p = bytes / 8 / nic + 6e-6 + 7.0 / 8 * bytes / nvlink + 7 * 3e-6;
  EXPECT_NEAR(full.breakdown.pp_comm_s, transfers * full_p2p, 1e-12);
  EXPECT_NEAR(sliced.breakdown.pp_comm_s, transfers * sliced_p2p, 1e-12);
  // Under sequence parallelism the sent tensor already is the rank's shard.
  c.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(scatter.Evaluate(c).breakdown.pp_comm_s, whole.Evaluate(c).breakdown.pp_comm_s);
  // Megatron-Core sends the whole activation without sequence parallelism.
  EXPECT_FALSE(Framework("megatron-core").pp_scatter_gather);
}

TEST(Mechanisms, MoeImbalanceSlowsTheBusiestRank) {
  const ModelSpec m = GenericMoe(4, 2048, 16, 64, 8, 1024, 32000);
  const PerfModel pm = MakeWith(m, 4096, 8, nullptr, TestEfficiency(), Framework("megatron-core"));
  TrainingConfig c = Layout(1, 1, 1, 8);
  c.ep = 8;
  const Prediction balanced = pm.Evaluate(c);
  c.moe_imbalance = 1.5;
  const Prediction skewed = pm.Evaluate(c);
  ASSERT_EQ(skewed.issue, ConfigIssue::kOk);
  EXPECT_GT(skewed.breakdown.ep_comm_s, balanced.breakdown.ep_comm_s);
  EXPECT_GT(skewed.breakdown.matrix_s, balanced.breakdown.matrix_s);  // the busiest rank's expert GEMMs
  EXPECT_GT(skewed.step_s, balanced.step_s);
  c.moe_imbalance = 0.5;  // below the mean is impossible for the busiest rank
  EXPECT_EQ(pm.Evaluate(c).issue, ConfigIssue::kBadValue);
}

TEST(Mechanisms, MoeSyncCostsPerLayerAndPass) {
  const ModelSpec m = GenericMoe(4, 2048, 16, 64, 8, 1024, 32000);
  FrameworkProfile fw = Framework("megatron-core");
  fw.moe_sync_us = 0;
  const PerfModel no_sync = MakeWith(m, 4096, 8, nullptr, TestEfficiency(), fw);
  fw.moe_sync_us = 100;
  const PerfModel sync = MakeWith(m, 4096, 8, nullptr, TestEfficiency(), fw);
  TrainingConfig c = Layout(1, 1, 1, 8);
  c.ep = 8;
  // 4 MoE layers x (forward + 2 x backward vector passes) x 100 us.
  EXPECT_NEAR(sync.Evaluate(c).step_s - no_sync.Evaluate(c).step_s, 4 * 3 * 100e-6, 1e-9);
}

// MoE token permutation and unpermutation move 2 x (1 + top_k) rows of h
// 16-bit elements per token and MoE layer (read one row, write top_k, and
// back) at permute_bw_fraction of HBM: 3 vector passes per layer (forward,
// backward twice), 4 MoE layers, T = 4096 tokens. Halving the fraction
// adds that traffic's time once more.
TEST(Mechanisms, MoePermutationRunsAtThePermuteFraction) {
  const ModelSpec m = GenericMoe(4, 2048, 16, 64, 8, 1024, 32000);
  EfficiencyParams e = TestEfficiency();
  e.permute_bw_fraction = 0.4;
  const PerfModel fast = MakeWith(m, 4096, 8, nullptr, e, Framework("megatron-core"));
  e.permute_bw_fraction = 0.2;
  const PerfModel slow = MakeWith(m, 4096, 8, nullptr, e, Framework("megatron-core"));
  TrainingConfig c = Layout(1, 1, 1, 8);
  c.ep = 8;
  const double T = 4096, h = 2048, top_k = 8;
  const double bytes = 2 * (1 + top_k) * T * h * 2;
  const double hbm = Gpu("h100-sxm5-80gb")->memory_bw_tbps * 1e12;
  const double expected = 4 * 3 * (bytes / (0.2 * hbm) - bytes / (0.4 * hbm));
  EXPECT_NEAR(slow.Evaluate(c).breakdown.vector_s - fast.Evaluate(c).breakdown.vector_s, expected, 1e-9);
  // Without expert parallelism nothing is permuted.
  const TrainingConfig no_ep = Layout(1, 1, 1, 8);
  EXPECT_EQ(slow.Evaluate(no_ep).breakdown.vector_s, fast.Evaluate(no_ep).breakdown.vector_s);
}

// The router's gate is a 16-bit GEMM of its own (T x h by h x E), outside
// the FP8 autocast: under FP8 only the attention projections and the
// experts are quantized. Before, it was timed inside the shared experts'
// GEMM at their width (one column for a model without shared experts) and
// quantized: T x h x E extra elements per layer.
TEST(Mechanisms, RouterIsASixteenBitGemmOutsideFp8) {
  const double T = 2048, h = 1024, E = 8, top_k = 2, ffn = 1024;
  // Q/K/V/O as one group (width h, inner h); the experts as the grouped
  // GEMM: T x top_k / E rows each, width ffn, gated (3 matrices); 2 layers.
  const double proj_flops = T * 4 * 2 * h * h, expert_flops = T * top_k * 3 * 2 * h * ffn;
  const double per_layer =
      QuantizedElements(proj_flops, T, h, h) + QuantizedElements(expert_flops, T * top_k / E, ffn, h);
  EXPECT_NEAR(Fp8CastSeconds(GenericMoe(2, 1024, 8, 8, 2, 1024, 32000)), 2 * CastSeconds(per_layer), 1e-12);
}

// Eager PyTorch modules (torchtitan without torch.compile) stream each
// element again per aten op. Hand count from torchtitan@9dec370's modules
// (frameworks.csv source): RMSNorm 36 bytes per element forward against 4
// fused, 88 backward against 8; SwiGLU 10 against 6, 18 against 12; complex
// rope 20 against 4 per query and key element each way. Per layer, T =
// 4096 tokens of h 2048, ffn 5632, 16 query and 4 KV heads of 128 on one
// GPU: the difference is 4 layers of those bytes at vector_bw_fraction of
// HBM, in the breakdown's vector time. Compiled, it is the fused model.
TEST(Mechanisms, EagerModulesStreamTheirOpsAgain) {
  const double T = 4096, h = 2048, ffn = 5632, q = 16 * 128, k = 4 * 128;
  const ModelSpec m = Generic(4, 2048, 16, 5632, 32000, 4);
  FrameworkProfile fw = Framework("torchtitan");
  ASSERT_EQ(fw.elementwise, Elementwise::kEager);
  const PerfModel eager = MakeWith(m, 4096, 1, nullptr, TestEfficiency(), fw);
  fw.elementwise = Elementwise::kCompiled;
  const PerfModel compiled = MakeWith(m, 4096, 1, nullptr, TestEfficiency(), fw);
  TrainingConfig c = Layout(1, 1, 1, 1);
  c.zero_stage = 0;
  const double bytes =
      2 * T * h * ((36 - 4) + (88 - 8)) + T * ffn * ((10 - 6) + (18 - 12)) + T * (q + k) * ((20 - 4) + (20 - 4));
  const double hbm = Gpu("h100-sxm5-80gb")->memory_bw_tbps * 1e12 * TestEfficiency().vector_bw_fraction;
  const Prediction pe = eager.Evaluate(c), pc = compiled.Evaluate(c);
  ASSERT_EQ(pe.issue, ConfigIssue::kOk);
  EXPECT_NEAR(pe.breakdown.vector_s - pc.breakdown.vector_s, 4 * bytes / hbm, 1e-12);
  EXPECT_NEAR(pe.step_s - pc.step_s, 4 * bytes / hbm, 1e-12);
  // Full recompute runs the eager forward once more.
  c.recompute = Recompute::kFull;
  const double forward = 2 * T * h * 32 + T * ffn * 4 + T * (q + k) * 16;
  EXPECT_NEAR(eager.Evaluate(c).step_s - compiled.Evaluate(c).step_s, 4 * (bytes + forward) / hbm, 1e-12);
  // A framework with its own fused kernels never pays them.
  EXPECT_EQ(Framework("megatron-core").elementwise, Elementwise::kFused);
}

// torchtitan's `selective` is its op-level policy: the layer's forward runs
// again except the saved kernels (SDPA and every other linear). With q, k,
// v, o and an MLP of the same shape (MHA, ffn = h: every linear is h x h,
// so each runs at one rate and GEMM time is proportional to FLOPs), the
// saved linears are q, v (2 of the projections' 8 h^2) and gate, down (4 of
// the MLP's 6 h^2): 8/14 of the layer's GEMM time. So op = full - 8/14 x
// GEMM - attention, where Megatron's selective recomputes exactly the
// attention (flash); the layer's GEMM time is a layer's matrix time / 3
// (the difference of a 4- and a 2-layer model cancels the LM head).
TEST(Mechanisms, SelectiveOpRecomputesAllButTheSavedKernels) {
  FrameworkProfile fw = Framework("torchtitan");
  ASSERT_EQ(fw.selective_ac, SelectiveAc::kOp);
  fw.elementwise = Elementwise::kCompiled;
  FrameworkProfile megatron_ac = fw;
  megatron_ac.selective_ac = SelectiveAc::kAttention;
  const ModelSpec m4 = Generic(4, 2048, 16, 2048, 32000), m2 = Generic(2, 2048, 16, 2048, 32000);
  const PerfModel op = MakeWith(m4, 4096, 1, nullptr, TestEfficiency(), fw);
  const PerfModel attention = MakeWith(m4, 4096, 1, nullptr, TestEfficiency(), megatron_ac);
  const PerfModel two = MakeWith(m2, 4096, 1, nullptr, TestEfficiency(), fw);
  TrainingConfig c = Layout(1, 1, 1, 1);
  c.zero_stage = 0;
  c.recompute = Recompute::kSelective;
  const Prediction p_op = op.Evaluate(c), p_attn = attention.Evaluate(c), p_two = two.Evaluate(c);
  c.recompute = Recompute::kFull;
  const Prediction p_full = op.Evaluate(c);
  ASSERT_EQ(p_op.issue, ConfigIssue::kOk);
  EXPECT_EQ(p_op.config.recompute, Recompute::kSelectiveOp);
  EXPECT_EQ(p_attn.config.recompute, Recompute::kSelective);
  const double layer_gemm = (p_op.breakdown.matrix_s - p_two.breakdown.matrix_s) / (2 * 3);
  EXPECT_NEAR(p_op.breakdown.recompute_s,
              p_full.breakdown.recompute_s - 4 * 8.0 / 14 * layer_gemm - p_attn.breakdown.recompute_s, 1e-12);
  EXPECT_GT(p_op.breakdown.recompute_s, p_attn.breakdown.recompute_s);
  // It keeps less than Megatron's selective: 2(3h + h + h) + 4a bytes per
  // token and layer (input, q, v, attention output, gate, down; the LSE)
  // against 34h; plus the output layer (LM-head input, fp32 logits).
  const double output_layer = 4 * 4096 * 2048.0 + 4 * 4096 * 32000.0;
  EXPECT_NEAR(p_op.memory.activations, 4 * 4096 * (2 * 6 * 2048.0 + 4 * 16) + output_layer, 1e-3);
  EXPECT_LT(p_op.memory.activations, p_attn.memory.activations);
}

TEST(Mechanisms, UnevenStagesCountTheBusiestStageExactly) {
  // 126 layers on 16 stages: the busiest holds ceil(126 / 16) = 8 whatever
  // the interleave (the old vpp x ceil(L / (pp x vpp)) gave 14 at vpp 7).
  const ModelSpec m = Generic(126, 1024, 16, 4096, 32000);
  const PerfModel pm = MakeWith(m, 2048, 16, "dgx-h100", TestEfficiency(), Framework("megatron-core"));
  TrainingConfig c = Layout(1, 16, 1, 64);
  const Prediction plain = pm.Evaluate(c);
  c.vpp = 7;
  const Prediction interleaved = pm.Evaluate(c);
  ASSERT_EQ(interleaved.issue, ConfigIssue::kOk);
  EXPECT_NEAR(interleaved.breakdown.matrix_s / plain.breakdown.matrix_s, 1, 1e-12);
  const Prediction one =
      MakeWith(m, 2048, 16, "dgx-h100", TestEfficiency(), Framework("megatron-core")).Evaluate(Layout(1, 16, 1, 64));
  // 4 us x 12 kernels x 3 passes x 8 layers x 64 micro-batches (dp = 1).
  EXPECT_NEAR(one.breakdown.overhead_s, 4e-6 * 12 * 3 * 8 * 64, 1e-9);
}

TEST(Mechanisms, ExpertDataParallelGroupUsesOneNicPerNode) {
  // EP 8 fills the node: each expert's gradients are reduced over one GPU
  // per node (8 nodes here), on that GPU's own NIC, not 8 NICs.
  const ModelSpec m = GenericMoe(2, 2048, 16, 8, 2, 4096, 32000);
  EfficiencyParams e = TestEfficiency();
  const PerfModel pm = MakeWith(m, 2048, 64, "dgx-h100", e, Framework("megatron-core"));
  TrainingConfig c = Layout(1, 1, 1, 64);
  c.ep = 8;
  c.zero_stage = 1;
  c.dp_overlap = false;
  const Prediction p = pm.Evaluate(c);
  ASSERT_EQ(p.issue, ConfigIssue::kOk);
  const Cluster& cl = *FindCluster("dgx-h100");
  // Expert parameters of one GPU: 2 layers x 8 experts / 8 x 3 x h x ffn;
  // reduce-scatter + all-gather of 2 bytes each over 8 ranks.
  const double expert_params = 2 * 3.0 * 2048 * 4096;
  const double one_nic = cl.scaleout_bw_bytes_per_s * e.scaleout_bw_fraction;
  const double expert_time = 2 * (7.0 / 8 * expert_params * 2 / one_nic + 7 * cl.scaleout_latency_s);
  // Dense parameters: 64-way over 8 NICs per node.
  const double dense_params = 2 * (4.0 * 2048 * 2048 + 2 * 2048 + 2048 * 8) + 2.0 * 32000 * 2048 + 2048;
  const double eight_nics = std::min(8 * one_nic, cl.scaleup_bw_bytes_per_s * e.scaleup_bw_fraction);
  const double dense_time = 2 * (63.0 / 64 * dense_params * 2 / eight_nics + 63 * cl.scaleout_latency_s);
  EXPECT_NEAR(p.breakdown.dp_comm_s, expert_time + dense_time, 0.02 * (expert_time + dense_time));
}

// Grouped-GEMM efficiency (grouped_gemm_fraction, grouped_wgrad_fraction):
// the expert FFN's forward and data gradient run at the first fraction of
// the dense curve, its weight gradient at the second. With compute-bound
// expert GEMMs (4096 rows per expert) the expert share E of the three
// passes' matrix time scales as 1/fraction each: halving both adds 3E,
// halving only the weight gradient adds E, one third of that.
TEST(Mechanisms, GroupedWeightGradientSlowsOneOfThreeExpertGemms) {
  const ModelSpec m = GenericMoe(2, 2048, 16, 64, 8, 1024, 32000);
  EfficiencyParams e = TestEfficiency();
  auto matrix = [&](double fwd, double wgrad) {
    e.grouped_gemm_fraction = fwd;
    e.grouped_wgrad_fraction = wgrad;
    const PerfModel pm = MakeWith(m, 4096, 8, nullptr, e, Framework("megatron-core"));
    TrainingConfig c = Layout(1, 1, 1, 8);
    c.ep = 8;
    const Prediction p = pm.Evaluate(c);
    EXPECT_EQ(p.issue, ConfigIssue::kOk);
    return p.breakdown.matrix_s;
  };
  const double dense = matrix(1, 1), both = matrix(0.5, 0.5), wgrad = matrix(1, 0.5);
  EXPECT_GT(both, dense);
  EXPECT_NEAR(wgrad - dense, (both - dense) / 3, 1e-9 * dense);
  // The shipped Hopper row: DeepGEMM's forward/dgrad on the dense curve,
  // its k-grouped wgrad at 457 TF against the curve's 1288 (kernel figures).
  EXPECT_DOUBLE_EQ(Shipped().For("h100-sxm5-80gb").grouped_gemm_fraction, 1.0);
  EXPECT_NEAR(Shipped().For("h100-sxm5-80gb").grouped_wgrad_fraction, 457.0 / 1288, 0.002);
}

// An expert all-to-all spanning two DGX H100 nodes (ep 16, nothing
// overlapped): each GPU sends 8 of 16 shares over its NIC at
// alltoall_nic_ratio, bus bandwidth NIC x ratio x 15 / 8, and the
// dispatch + combine of each pass is 2 x AllToAllTime by hand.
TEST(Mechanisms, ExpertAllToAllAcrossNodesRunsAtTheNicRatio) {
  const ModelSpec m = GenericMoe(2, 2048, 16, 64, 8, 1024, 32000);
  EfficiencyParams e = TestEfficiency();
  e.alltoall_nic_ratio = 0.5;
  FrameworkProfile fw = Framework("megatron-core");
  fw.ep_overlap = 0;
  const PerfModel pm = MakeWith(m, 4096, 16, "dgx-h100", e, fw);
  TrainingConfig c = Layout(1, 1, 1, 16);
  c.ep = 16;
  const Prediction p = pm.Evaluate(c);
  ASSERT_EQ(p.issue, ConfigIssue::kOk);
  const Cluster& cl = *FindCluster("dgx-h100");
  const double bw = std::min(cl.scaleout_bw_bytes_per_s * 0.5 * 15 / 8, cl.scaleup_bw_bytes_per_s * 0.75);
  const double bytes = 4096.0 * 8 * 2048 * 2;  // tokens x top-k x hidden x 2 bytes
  const double a2a = 15.0 / 16 * bytes / bw + 15 * cl.scaleout_latency_s;
  // 2 layers x (forward + backward) x (dispatch + combine).
  EXPECT_NEAR(p.breakdown.ep_comm_s, 2 * 2 * 2 * a2a, 1e-9 * p.breakdown.ep_comm_s);
}

// A DeepEP-style dispatch (frameworks.csv ep_dispatch deepep) sends a token
// once per destination GPU, and across nodes once per destination node.
// EP 16 over two DGX H100 nodes, 64 experts, top 8, routing limited to 1 of
// 2 groups (a group is a node's 32 experts): every token reaches exactly one
// node, remote for half of them, against 8 copies of which 8/16 are remote
// under the all-to-all: 1/8 of its network bytes; the latency stays.
TEST(Mechanisms, DeepEpSendsOneCopyPerDestinationNode) {
  ModelSpec m = GenericMoe(2, 2048, 16, 64, 8, 1024, 32000);
  m.moe.groups = 2;
  m.moe.group_top_k = 1;
  EfficiencyParams e = TestEfficiency();
  e.alltoall_nic_ratio = 0.5;
  FrameworkProfile fw = Framework("megatron-core");
  fw.ep_overlap = 0;
  fw.ep_dispatch = EpDispatch::kDeepEp;
  const PerfModel pm = MakeWith(m, 4096, 16, "dgx-h100", e, fw);
  TrainingConfig c = Layout(1, 1, 1, 16);
  c.ep = 16;
  const Prediction p = pm.Evaluate(c);
  ASSERT_EQ(p.issue, ConfigIssue::kOk);
  const Cluster& cl = *FindCluster("dgx-h100");
  const double bw = std::min(cl.scaleout_bw_bytes_per_s * 0.5 * 15 / 8, cl.scaleup_bw_bytes_per_s * 0.75);
  const double bytes = 4096.0 * 8 * 2048 * 2 / 8;  // one remote node copy per two tokens, not 4 of 8
  const double a2a = 15.0 / 16 * bytes / bw + 15 * cl.scaleout_latency_s;
  EXPECT_NEAR(p.breakdown.ep_comm_s, 2 * 2 * 2 * a2a, 1e-9 * p.breakdown.ep_comm_s);
}

// Within a node DeepEP sends one copy per GPU holding any of a token's
// experts: with 2 of 16 experts on each of 8 GPUs and top 2, the two
// experts share a GPU with probability 8 / C(16, 2) = 8 / 120, so a token
// moves 2 - 8/120 copies where the all-to-all moves 2.
TEST(Mechanisms, DeepEpSendsOneCopyPerDestinationGpu) {
  const ModelSpec m = GenericMoe(2, 2048, 16, 16, 2, 1024, 32000);
  FrameworkProfile fw = Framework("megatron-core");
  fw.ep_overlap = 0;
  const PerfModel a2a = MakeWith(m, 4096, 8, nullptr, TestEfficiency(), fw);
  fw.ep_dispatch = EpDispatch::kDeepEp;
  const PerfModel deepep = MakeWith(m, 4096, 8, nullptr, TestEfficiency(), fw);
  TrainingConfig c = Layout(1, 1, 1, 8);
  c.ep = 8;
  const Prediction pa = a2a.Evaluate(c), pd = deepep.Evaluate(c);
  ASSERT_EQ(pd.issue, ConfigIssue::kOk);
  // Less the latency terms (7 ring steps per all-to-all, the same both
  // ways), the bandwidth part scales by the copies.
  const double latency = 2 * 2 * 2 * 7 * Fabric::kScaleupLatencyS;
  EXPECT_NEAR((pd.breakdown.ep_comm_s - latency) / (pa.breakdown.ep_comm_s - latency), (2 - 8.0 / 120) / 2, 1e-9);
}

// Megatron's --recompute-modules: each module's forward runs again in the
// backward and the recompute time adds up module by module; moe_act (the
// experts' activation) costs less than the whole MoE block, and nothing on
// a dense model; the hardware FLOPs are ComputeTrainingFlops' for the same
// modules.
TEST(Mechanisms, RecomputeModulesRunTheirForwardsAgain) {
  const ModelSpec moe = GenericMoe(4, 2048, 16, 64, 8, 1024, 32000);
  auto recompute_s = [&](const ModelSpec& m, uint32_t modules) {
    const PerfModel pm = MakeWith(m, 4096, 8, nullptr, TestEfficiency(), Framework("megatron-core"), modules);
    TrainingConfig c = Layout(1, 1, 1, 8);
    c.ep = m.is_moe() ? 8 : 1;
    c.recompute = Recompute::kSelective;
    const Prediction p = pm.Evaluate(c);
    EXPECT_EQ(p.issue, ConfigIssue::kOk);
    auto flops = ComputeTrainingFlops(m, Convention::kMegatron, 4096, Recompute::kSelective, modules);
    EXPECT_TRUE(flops.ok());
    EXPECT_DOUBLE_EQ(p.hardware_flops_per_token, flops->hardware_per_token);
    return p.breakdown.recompute_s;
  };
  const double act = recompute_s(moe, kRecomputeMoeAct), block = recompute_s(moe, kRecomputeMoe);
  EXPECT_GT(act, 0);
  EXPECT_GT(block, act);
  EXPECT_NEAR(recompute_s(moe, kRecomputeCoreAttn | kRecomputeMoeAct), recompute_s(moe, kRecomputeCoreAttn) + act,
              1e-12);
  const ModelSpec dense = Generic(4, 4096, 32, 16384, 32000);
  EXPECT_EQ(recompute_s(dense, kRecomputeMoeAct | kRecomputeLayernorm), 0);
  EXPECT_GT(recompute_s(dense, kRecomputeMlp), 0);
}

// A whole step runs at the clock the board sustains under its power limit
// (sustained_clock_fraction), kernel figures at their own: t = flops /
// (clock x peak x efficiency) for every compute-bound GEMM and the fused
// attention, so halving the clock doubles both buckets exactly (the shapes
// below are far from the bytes roofline), while the vector kernels, the
// launch gaps and a single GemmSeconds (what `mfu kernels` checks) do not
// move.
TEST(Mechanisms, SustainedClockSlowsTheStepsComputeOnly) {
  const ModelSpec m = Generic(4, 4096, 32, 16384, 32000);
  EfficiencyParams e = TestEfficiency();
  const PerfModel full = MakeWith(m, 4096, 1, nullptr, e, Framework("megatron-core"));
  e.sustained_clock_fraction = 0.5;
  const PerfModel half = MakeWith(m, 4096, 1, nullptr, e, Framework("megatron-core"));
  const TrainingConfig c = Layout(1, 1, 1, 1);
  const Prediction a = full.Evaluate(c), b = half.Evaluate(c);
  ASSERT_EQ(a.issue, ConfigIssue::kOk);
  EXPECT_NEAR(b.breakdown.matrix_s, 2 * a.breakdown.matrix_s, 1e-9 * a.breakdown.matrix_s);
  EXPECT_NEAR(b.breakdown.attention_s, 2 * a.breakdown.attention_s, 1e-9 * a.breakdown.attention_s);
  EXPECT_DOUBLE_EQ(b.breakdown.vector_s, a.breakdown.vector_s);
  EXPECT_DOUBLE_EQ(b.breakdown.overhead_s, a.breakdown.overhead_s);
  const Accelerator* h100 = Gpu("h100-sxm5-80gb");
  EXPECT_DOUBLE_EQ(GemmSeconds(*h100, e, DType::kBf16, 8192, 8192, 8192),
                   GemmSeconds(*h100, TestEfficiency(), DType::kBf16, 8192, 8192, 8192));
  // The shipped Hopper value: ~1600 MHz sustained by an H800 under a
  // compute-bound load / the 1830 MHz of the 989 TF peak (FlashMLA kernel
  // deep-dive; kernel-benchmarks.md sec. 8) = 0.8743.
  EXPECT_NEAR(Shipped().For("h100-sxm5-80gb").sustained_clock_fraction, 1600.0 / 1830, 5e-4);
  EXPECT_DOUBLE_EQ(Shipped().For("a100-sxm4-80gb").sustained_clock_fraction, 1.0);
}

}  // namespace
}  // namespace mfu
