#include "mfu/perf_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "mfu/cluster.h"
#include "mfu/flops.h"
#include "mfu/framework.h"
#include "mfu/hwdb.h"
#include "mfu/memory.h"
#include "mfu/model.h"
#include "testing/plan_test_util.h"

namespace mfu {
namespace {

using namespace plan_test;  // NOLINT: test fixtures

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TrainingConfig Config(int64_t tp, int64_t pp, int zero, int64_t mbs = 1, int64_t global_batch = 0) {
  TrainingConfig c;
  c.tp = tp;
  c.pp = pp;
  c.zero_stage = zero;
  c.micro_batch = mbs;
  c.global_batch = global_batch;
  return c;
}

double Rel(double a, double b) {
  return std::abs(a - b) / std::max(std::abs(b), 1e-300);
}

// The small dense model of the memory and compute tests, with its parameter
// count from first principles: embedding + LM head (untied), per layer
// Q/K/V/O (MHA, no bias), gated MLP (3 matrices) and two RMSNorms, a final norm.
constexpr int64_t kL = 4, kH = 1024, kHeads = 16, kFfn = 4096, kVocab = 32000, kSeq = 2048;
constexpr double kLayerParams = 4.0 * kH * kH + 3.0 * kH * kFfn + 2.0 * kH;
constexpr double kParams = 2.0 * kVocab * kH + kL * kLayerParams + kH;

TEST(PerfModelMemory, SingleGpuHoldsTwoFourTwelveBytesPerParameter) {
  const ModelSpec model = Generic(kL, kH, kHeads, kFfn, kVocab);
  const ParamCounts counts = CountParams(model);
  ASSERT_DOUBLE_EQ(counts.total, kParams);  // the count the test derives matches the model's
  const double p = counts.embedding + counts.lm_head + counts.attention + counts.dense_mlp + counts.norms;
  ASSERT_DOUBLE_EQ(p, kParams);

  const PerfModel pm = Make(model, kSeq, 1, nullptr);
  const Prediction r = pm.Evaluate(Config(1, 1, 0, 2));
  ASSERT_EQ(r.issue, ConfigIssue::kOk) << ConfigIssueName(r.issue);
  EXPECT_LT(Rel(r.memory.weights, 2 * kParams), 1e-12);
  EXPECT_LT(Rel(r.memory.gradients, 4 * kParams), 1e-12);
  EXPECT_LT(Rel(r.memory.optimizer, 12 * kParams), 1e-12);
  EXPECT_DOUBLE_EQ(r.memory.reserved, 3 * kGiB);
  EXPECT_DOUBLE_EQ(r.memory.capacity, Gpu("h100-sxm5-80gb")->memory_gb * kGiB);

  // Activations: Korthikanti per layer for the micro-batch of 2, all layers,
  // plus the output layer (final norm, LM-head input, fp32 logits).
  TrainingMemoryOptions o;
  o.seq_len = kSeq;
  o.micro_batch = 2;
  o.flash_attention = true;
  StatusOr<TrainingMemory> mem = EstimateTrainingMemory(model, o);
  ASSERT_TRUE(mem.ok());
  const double expected = mem->activations_per_layer_bytes * kL + mem->output_layer_activations_bytes;
  EXPECT_LT(Rel(r.memory.activations, expected), 1e-12);
  // The output layer by hand: (4sbh + 4sbV) bytes.
  EXPECT_DOUBLE_EQ(mem->output_layer_activations_bytes, 4.0 * kSeq * 2 * kH + 4.0 * kSeq * 2 * kVocab);
}

TEST(PerfModelMemory, PlainMlpModelCountsTwoMatrices) {
  const ModelSpec model = Generic(kL, kH, kHeads, 0, kVocab, 0, /*gated=*/false);
  const double p = 2.0 * kVocab * kH + kL * (4.0 * kH * kH + 2.0 * kH * 4 * kH + 2.0 * kH) + kH;
  ASSERT_DOUBLE_EQ(CountParams(model).total, p);
  const PerfModel pm = Make(model, kSeq, 1, nullptr);
  const Prediction r = pm.Evaluate(Config(1, 1, 0));
  ASSERT_EQ(r.issue, ConfigIssue::kOk) << ConfigIssueName(r.issue);
  EXPECT_LT(Rel(r.memory.weights, 2 * p), 1e-12);
  EXPECT_LT(Rel(r.memory.optimizer, 12 * p), 1e-12);
}

// A tied LM head is the embedding table: one copy of it on a single stage.
TEST(PerfModelMemory, TiedEmbeddingsAreCountedOnceWithoutPipelining) {
  GenericModelOptions o;
  o.layers = kL;
  o.hidden = kH;
  o.heads = kHeads;
  o.ffn = kFfn;
  o.vocab = kVocab;
  o.tied_embeddings = true;
  StatusOr<ModelSpec> model = BuildGenericModel(o);
  ASSERT_TRUE(model.ok());
  const double p = 1.0 * kVocab * kH + kL * kLayerParams + kH;
  ASSERT_DOUBLE_EQ(CountParams(*model).total, p);
  const PerfModel pm = Make(*model, kSeq, 1, nullptr);
  const Prediction r = pm.Evaluate(Config(1, 1, 0));
  EXPECT_LT(Rel(r.memory.weights, 2 * p), 1e-12) << "extra " << (r.memory.weights - 2 * p) / 2 << " params";
}

TEST(PerfModelMemory, ZeroStagesShardOverTheDataParallelGroup) {
  const ModelSpec model = Generic(kL, kH, kHeads, kFfn, kVocab);
  const PerfModel pm = Make(model, kSeq, 8, "dgx-h100");
  const double n = 8;
  {
    const Prediction r = pm.Evaluate(Config(1, 1, 0));
    ASSERT_EQ(r.issue, ConfigIssue::kOk);
    EXPECT_EQ(r.config.dp, 8);
    EXPECT_LT(Rel(r.memory.weights, 2 * kParams), 1e-12);
    EXPECT_LT(Rel(r.memory.gradients, 4 * kParams), 1e-12);
    EXPECT_LT(Rel(r.memory.optimizer, 12 * kParams), 1e-12);
  }
  {
    const Prediction r = pm.Evaluate(Config(1, 1, 1));
    ASSERT_EQ(r.issue, ConfigIssue::kOk);
    EXPECT_LT(Rel(r.memory.weights, 2 * kParams), 1e-12);
    EXPECT_LT(Rel(r.memory.gradients, 4 * kParams), 1e-12);
    EXPECT_LT(Rel(r.memory.optimizer, 12 * kParams / n), 1e-12);
  }
  {
    const Prediction r = pm.Evaluate(Config(1, 1, 2));
    ASSERT_EQ(r.issue, ConfigIssue::kOk);
    EXPECT_LT(Rel(r.memory.weights, 2 * kParams), 1e-12);
    EXPECT_LT(Rel(r.memory.gradients, 4 * kParams / n), 1e-12);
    EXPECT_LT(Rel(r.memory.optimizer, 12 * kParams / n), 1e-12);
  }
  {
    const Prediction r = pm.Evaluate(Config(1, 1, 3));
    ASSERT_EQ(r.issue, ConfigIssue::kOk);
    // Sharded weights plus the gathered 16-bit copy of two layers. The model
    // spreads the final norm over the layers (h / L params each): tolerance
    // of that many bytes.
    EXPECT_NEAR(r.memory.weights, 2 * kParams / n + 2 * 2 * kLayerParams, 2 * 2 * kH);
    EXPECT_LT(Rel(r.memory.gradients, 4 * kParams / n), 1e-12);
    EXPECT_LT(Rel(r.memory.optimizer, 12 * kParams / n), 1e-12);
  }
  {
    TrainingConfig c = Config(1, 1, 1);
    c.fsdp = true;  // FSDP is ZeRO-3
    const Prediction r = pm.Evaluate(c);
    ASSERT_EQ(r.issue, ConfigIssue::kOk);
    EXPECT_EQ(r.config.zero_stage, 3);
    EXPECT_LT(Rel(r.memory.gradients, 4 * kParams / n), 1e-12);
  }
}

TEST(PerfModelMemory, PipelineFirstStageHoldsMinOfMicroBatchesAndStages) {
  constexpr int64_t layers = 8;
  const ModelSpec model = Generic(layers, kH, kHeads, kFfn, kVocab);
  const PerfModel pm = Make(model, kSeq, 8, "dgx-h100");
  TrainingMemoryOptions o;
  o.seq_len = kSeq;
  o.micro_batch = 1;
  StatusOr<TrainingMemory> mem = EstimateTrainingMemory(model, o);
  ASSERT_TRUE(mem.ok());
  const double per_layer = mem->activations_per_layer_bytes;
  const double pp = 4, stage_layers = layers / pp;  // dp = 2
  // m = 2 micro-batches < pp: both in flight.
  Prediction r = pm.Evaluate(Config(1, 4, 1, 1, 4));
  ASSERT_EQ(r.issue, ConfigIssue::kOk) << ConfigIssueName(r.issue);
  ASSERT_EQ(r.micro_batches, 2);
  EXPECT_LT(Rel(r.memory.activations, per_layer * stage_layers * 2), 1e-12);
  // Stage weights: two layers plus the larger of embedding and LM head.
  EXPECT_LT(Rel(r.memory.weights, 2 * (stage_layers * kLayerParams + 1.0 * kVocab * kH)), 1e-4);
  // m = 8 > pp: pp in flight.
  r = pm.Evaluate(Config(1, 4, 1, 1, 16));
  ASSERT_EQ(r.issue, ConfigIssue::kOk);
  ASSERT_EQ(r.micro_batches, 8);
  EXPECT_LT(Rel(r.memory.activations, per_layer * stage_layers * pp), 1e-12);
  // Interleaved (vpp 2): Korthikanti's factor 1 + (p-1)/(p*v).
  TrainingConfig c = Config(1, 4, 1, 1, 16);
  c.vpp = 2;
  r = pm.Evaluate(c);
  ASSERT_EQ(r.issue, ConfigIssue::kOk);
  EXPECT_LT(Rel(r.memory.activations, per_layer * stage_layers * pp * (1 + (pp - 1) / (pp * 2))), 1e-12);
  // Micro-batch 2 doubles it.
  r = pm.Evaluate(Config(1, 4, 1, 2, 32));
  ASSERT_EQ(r.issue, ConfigIssue::kOk);
  EXPECT_LT(Rel(r.memory.activations, 2 * per_layer * stage_layers * pp), 1e-12);
}

void CheckConsistent(const PerfModel& pm, const TrainingConfig& c, const std::string& what) {
  SCOPED_TRACE(what);
  const Prediction r = pm.Evaluate(c);
  ASSERT_EQ(r.issue, ConfigIssue::kOk) << ConfigIssueName(r.issue);
  const TrainingSetup& s = pm.setup();
  const StepBreakdown& b = r.breakdown;
  for (double v : {b.matrix_s, b.attention_s, b.vector_s, b.recompute_s, b.overhead_s, b.optimizer_s, b.tp_comm_s,
                   b.cp_comm_s, b.ep_comm_s, b.pp_comm_s, b.dp_comm_s, b.bubble_s}) {
    EXPECT_GE(v, 0);
    EXPECT_TRUE(std::isfinite(v));
  }
  EXPECT_GT(r.step_s, 0);
  EXPECT_LT(Rel(b.total(), r.step_s), 1e-9);
  const double gb = static_cast<double>(r.config.global_batch);
  EXPECT_EQ(r.config.global_batch % (r.config.dp * r.config.micro_batch), 0);
  EXPECT_EQ(r.micro_batches, r.config.global_batch / (r.config.dp * r.config.micro_batch));
  EXPECT_EQ(r.config.dp * r.config.tp * r.config.pp * r.config.cp, s.gpus);
  EXPECT_LT(Rel(r.tokens_per_s, gb * static_cast<double>(s.seq_len) / r.step_s), 1e-12);
  StatusOr<TrainingFlops> f = ComputeTrainingFlops(*s.model, s.convention, s.seq_len, Recompute::kNone);
  ASSERT_TRUE(f.ok());
  EXPECT_LT(Rel(r.model_flops_per_token, f->model_per_token), 1e-12);
  const double peak = s.gpu->peak_flops(DType::kBf16);
  EXPECT_DOUBLE_EQ(r.peak_flops, peak);
  const auto gpus = static_cast<double>(s.gpus);
  EXPECT_LT(Rel(r.mfu, f->model_per_token * r.tokens_per_s / gpus / peak), 1e-12);
  EXPECT_LT(Rel(r.tflops_per_gpu, f->model_per_token * r.tokens_per_s / gpus / 1e12), 1e-12);
  EXPECT_GE(r.hfu, r.mfu * (1 - 1e-12));
  EXPECT_GT(r.mfu, 0);
  EXPECT_LT(r.mfu, 1);
  if (c.recompute == Recompute::kFull) {
    EXPECT_GT(r.hfu, r.mfu);
    EXPECT_GT(b.recompute_s, 0);
  }
  if (c.recompute == Recompute::kNone) {
    EXPECT_EQ(b.recompute_s, 0);
  }
  if (r.config.pp == 1) {
    EXPECT_EQ(b.bubble_s, 0);
    EXPECT_EQ(b.pp_comm_s, 0);
  } else {
    EXPECT_GT(b.bubble_s, 0);
    EXPECT_GT(b.pp_comm_s, 0);
  }
  if (r.config.tp == 1) {
    EXPECT_EQ(b.tp_comm_s, 0);
  }
  if (r.config.cp == 1) {
    EXPECT_EQ(b.cp_comm_s, 0);
  } else {
    EXPECT_GT(b.cp_comm_s, 0);
  }
  // Full recompute is slower than none, all else equal.
  TrainingConfig none = c, full = c;
  none.recompute = Recompute::kNone;
  full.recompute = Recompute::kFull;
  const Prediction rn = pm.Evaluate(none), rf = pm.Evaluate(full);
  ASSERT_EQ(rn.issue, ConfigIssue::kOk);
  ASSERT_EQ(rf.issue, ConfigIssue::kOk);
  EXPECT_GT(rf.step_s, rn.step_s);
  EXPECT_LE(rf.memory.activations, rn.memory.activations);
}

TEST(PerfModelConsistency, BreakdownThroughputAndMfuAgreeForManyConfigs) {
  const ModelSpec model = Generic(8, 2048, 16, 8192, 32000, /*kv_heads=*/4);
  const PerfModel pm = Make(model, 4096, 16, "dgx-h100");
  int n = 0;
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    for (int zero = 0; zero <= 3; ++zero) {
      struct Shape {
        int64_t tp, pp, vpp, cp, mbs;
      };
      for (Shape sh : {Shape{1, 1, 1, 1, 1}, Shape{2, 1, 1, 1, 2}, Shape{8, 1, 1, 1, 1}, Shape{2, 2, 1, 1, 1},
                       Shape{2, 2, 2, 1, 1}, Shape{1, 4, 2, 1, 1}, Shape{8, 2, 1, 1, 4}, Shape{2, 1, 1, 2, 1},
                       Shape{4, 2, 1, 2, 1}, Shape{16, 1, 1, 1, 1}}) {
        TrainingConfig c = Config(sh.tp, sh.pp, zero, sh.mbs, 64);
        c.vpp = sh.vpp;
        c.cp = sh.cp;
        c.recompute = r;
        CheckConsistent(pm, c,
                        "tp " + std::to_string(sh.tp) + " pp " + std::to_string(sh.pp) + " vpp " +
                            std::to_string(sh.vpp) + " cp " + std::to_string(sh.cp) + " zero " + std::to_string(zero) +
                            " recompute " + RecomputeName(r));
        ++n;
      }
    }
  }
  EXPECT_EQ(n, 120);
  TrainingConfig overlap = Config(8, 1, 1, 1, 64);
  overlap.tp_comm_overlap = true;
  CheckConsistent(pm, overlap, "tp overlap");
  TrainingConfig no_dp_overlap = Config(1, 1, 0, 1, 64);
  no_dp_overlap.dp_overlap = false;
  CheckConsistent(pm, no_dp_overlap, "no dp overlap");
}

TEST(PerfModelConsistency, MoeWithExpertParallelism) {
  const ModelSpec model = GenericMoe(8, 1024, 16, 16, 2, 1024, 32000);
  ASSERT_TRUE(model.is_moe());
  const PerfModel pm = Make(model, 2048, 16, "dgx-h100");
  for (int64_t ep : {1, 2, 4, 8, 16}) {
    for (int zero : {0, 1, 3}) {
      for (int64_t tp : {1, 2}) {
        TrainingConfig c = Config(tp, 1, zero, 1, 32);
        c.ep = ep;
        if (tp * ep > 16)
          continue;
        CheckConsistent(pm, c,
                        "ep " + std::to_string(ep) + " tp " + std::to_string(tp) + " zero " + std::to_string(zero));
        const Prediction r = pm.Evaluate(c);
        if (ep > 1) {
          EXPECT_GT(r.breakdown.ep_comm_s, 0);
        } else {
          EXPECT_EQ(r.breakdown.ep_comm_s, 0);
        }
      }
    }
  }
  // Expert parallelism shards the expert weights: more ep, fewer weights.
  TrainingConfig c1 = Config(1, 1, 0, 1, 32), c8 = c1;
  c8.ep = 8;
  EXPECT_LT(pm.Evaluate(c8).memory.weights, pm.Evaluate(c1).memory.weights);
}

// GEMM efficiency as perf_model.h documents it: the peak fraction times
// d / (d + half) for each of the GEMM's three dimensions.
double GemmSeconds(double flops, double rows, double cols, double inner, const EfficiencyParams& e, double peak) {
  const double half = e.matmul_half_dim;
  const double eff = e.matmul_peak_fraction * rows / (rows + half) * cols / (cols + half) * inner / (inner + half);
  return flops / (peak * eff);
}

TEST(PerfModelCompute, SingleGpuMatrixAndAttentionTimeByHand) {
  const ModelSpec model = Generic(kL, kH, kHeads, kFfn, kVocab);
  const PerfModel pm = Make(model, kSeq, 1, nullptr);
  StatusOr<TrainingFlops> tf = ComputeTrainingFlops(model, Convention::kMaxtext, kSeq, Recompute::kNone);
  ASSERT_TRUE(tf.ok());
  const FlopsBreakdown& f = tf->forward;
  using C = FlopsComponent;
  // Per token, forward, from first principles (FMA = 2): Q, K, V, O are h x h
  // (MHA), the gated MLP 3 h x ffn matrices, the LM head h x V.
  const double h = kH, ffn = kFfn, v = kVocab, L = kL, T = kSeq;
  const double proj = f[C::kQProj] + f[C::kKProj] + f[C::kVProj] + f[C::kOProj];
  ASSERT_DOUBLE_EQ(proj, L * 4 * 2 * h * h);
  ASSERT_DOUBLE_EQ(f[C::kDenseMlp], L * 3 * 2 * h * ffn);
  ASSERT_DOUBLE_EQ(f[C::kLmHead] + f[C::kMtp], 2 * h * v);

  const EfficiencyParams e = TestEfficiency();
  const double peak = Gpu("h100-sxm5-80gb")->peak_flops(DType::kBf16);
  // One sequence of T tokens: projections (T x h x h), MLP (T x ffn x h), LM
  // head (T x V x h); forward + backward = 3 forwards.
  const double expected_matrix =
      3 * (GemmSeconds(T * proj, T, h, h, e, peak) + GemmSeconds(T * f[C::kDenseMlp], T, ffn, h, e, peak) +
           GemmSeconds(T * 2 * h * v, T, v, h, e, peak));
  // Flash attention (the framework's best kernel): forward 1, backward 2.5
  // (5 GEMMs vs 2) of the executed FLOPs, each at fraction x L / (L + half)
  // with L = T / 2 keys per query (causal), x n / (n + 1) for the n = T / 128
  // diagonal tiles, x the head-dim factor g(hd) / g(128), g(d) = d / (d + 51).
  const double core = f[C::kAttnScores] + f[C::kAttnContext];
  ASSERT_GT(core, 0);
  const double hd = h / kHeads, n = T / 128;
  const double hd_factor = (hd / (hd + 51)) / (128.0 / (128 + 51));
  const double eff_f = e.attention_peak_fraction * (T / 2) / (T / 2 + e.attention_half_seq) * n / (n + 1) * hd_factor;
  const double eff_b =
      e.attention_bwd_fraction * (T / 2) / (T / 2 + e.attention_bwd_half_seq) * n / (n + 1) * hd_factor;
  const double expected_attention = T * core / (peak * eff_f) + 2.5 * T * core / (peak * eff_b);

  TrainingConfig c = Config(1, 1, 0, 1);
  c.recompute = Recompute::kNone;
  const Prediction r = pm.Evaluate(c);
  ASSERT_EQ(r.issue, ConfigIssue::kOk);
  ASSERT_EQ(r.micro_batches, 1);
  EXPECT_LT(Rel(r.breakdown.matrix_s, expected_matrix), 1e-9);
  EXPECT_LT(Rel(r.breakdown.attention_s, expected_attention), 1e-9);
  EXPECT_EQ(r.breakdown.recompute_s, 0);
  EXPECT_EQ(r.breakdown.tp_comm_s + r.breakdown.dp_comm_s + r.breakdown.pp_comm_s + r.breakdown.bubble_s, 0);
  // Kernel gaps: 12 forward kernels per layer, backward twice as many.
  EXPECT_LT(Rel(r.breakdown.overhead_s, L * 3 * 12 * e.kernel_overhead_us * 1e-6), 1e-12);
  // Adam: 30 bytes per parameter through HBM at the vector fraction.
  const double hbm = Gpu("h100-sxm5-80gb")->memory_bw_tbps * 1e12 * e.vector_bw_fraction;
  EXPECT_LT(Rel(r.breakdown.optimizer_s, kParams * 30 / hbm), 1e-4);

  // Two micro-batches of one sequence (gbs 2): compute doubles exactly.
  const Prediction r2 = pm.Evaluate(Config(1, 1, 0, 1, 2));
  ASSERT_EQ(r2.micro_batches, 2);
  EXPECT_LT(Rel(r2.breakdown.matrix_s, 2 * expected_matrix), 1e-9);
  EXPECT_LT(Rel(r2.breakdown.attention_s, 2 * expected_attention), 1e-9);

  // Matrix FLOPs executed per step: 3 x (GEMMs) + 3.5 x core.
  EXPECT_LT(Rel(r.matrix_flops_per_step, T * (3 * (proj + f[C::kDenseMlp] + 2 * h * v) + 3.5 * core)), 1e-12);
}

ConfigIssue IssueOf(const PerfModel& pm, const TrainingConfig& c) {
  return pm.Evaluate(c).issue;
}

TEST(PerfModelIssues, EveryInvalidConfigurationIsNamed) {
  const ModelSpec model = Generic(kL, kH, kHeads, kFfn, kVocab);
  const PerfModel pm8 = Make(model, kSeq, 8, "dgx-h100");
  const PerfModel pm24 = Make(model, kSeq, 24, "dgx-h100");
  EXPECT_EQ(IssueOf(pm8, Config(1, 1, 1)), ConfigIssue::kOk);
  // GPUs not divisible by tp*pp*cp, or dp given inconsistently.
  EXPECT_EQ(IssueOf(pm8, Config(3, 1, 1)), ConfigIssue::kGpusNotDivisible);
  EXPECT_EQ(IssueOf(pm8, Config(1, 3, 1)), ConfigIssue::kGpusNotDivisible);
  EXPECT_EQ(IssueOf(pm8, Config(16, 1, 1)), ConfigIssue::kGpusNotDivisible);
  TrainingConfig c = Config(2, 1, 1);
  c.cp = 3;
  EXPECT_EQ(IssueOf(pm8, c), ConfigIssue::kGpusNotDivisible);
  c = Config(2, 1, 1);
  c.dp = 3;
  EXPECT_EQ(IssueOf(pm8, c), ConfigIssue::kGpusNotDivisible);
  c.dp = 4;  // consistent
  EXPECT_EQ(IssueOf(pm8, c), ConfigIssue::kOk);
  // Heads (16) not divisible by tp 3 (24 GPUs so that 3 divides the GPUs).
  EXPECT_EQ(IssueOf(pm24, Config(3, 1, 1)), ConfigIssue::kHeadsNotDivisible);
  EXPECT_EQ(IssueOf(pm24, Config(24, 1, 1)), ConfigIssue::kHeadsNotDivisible);
  EXPECT_EQ(IssueOf(pm24, Config(8, 1, 1)), ConfigIssue::kOk);
  // Expert parallelism on a dense model.
  c = Config(1, 1, 1);
  c.ep = 2;
  EXPECT_EQ(IssueOf(pm8, c), ConfigIssue::kExpertsNotDivisible);
  c = Config(1, 1, 1);
  c.etp = 2;
  EXPECT_EQ(IssueOf(pm8, c), ConfigIssue::kExpertsNotDivisible);
  // Batch: 12 sequences over dp 8.
  EXPECT_EQ(IssueOf(pm8, Config(1, 1, 1, 1, 12)), ConfigIssue::kBatchNotDivisible);
  EXPECT_EQ(IssueOf(pm8, Config(1, 1, 1, 2, 24)), ConfigIssue::kBatchNotDivisible);  // 24 % 16
  EXPECT_EQ(IssueOf(pm8, Config(1, 1, 1, 2, 32)), ConfigIssue::kOk);
  // Fewer layers (4) than pp*vpp.
  EXPECT_EQ(IssueOf(pm8, Config(1, 8, 1)), ConfigIssue::kLayersNotDivisible);
  c = Config(1, 2, 1);
  c.vpp = 4;
  EXPECT_EQ(IssueOf(pm8, c), ConfigIssue::kLayersNotDivisible);
  c.vpp = 2;
  EXPECT_EQ(IssueOf(pm8, c), ConfigIssue::kOk);
  // Bad values.
  EXPECT_EQ(IssueOf(pm8, Config(0, 1, 1)), ConfigIssue::kBadValue);
  EXPECT_EQ(IssueOf(pm8, Config(1, 0, 1)), ConfigIssue::kBadValue);
  EXPECT_EQ(IssueOf(pm8, Config(1, 1, 4)), ConfigIssue::kBadValue);
  EXPECT_EQ(IssueOf(pm8, Config(1, 1, -1)), ConfigIssue::kBadValue);
  EXPECT_EQ(IssueOf(pm8, Config(1, 1, 1, 0)), ConfigIssue::kBadValue);
  EXPECT_EQ(IssueOf(pm8, Config(1, 1, 1, 1, -8)), ConfigIssue::kBadValue);
  c = Config(1, 1, 1);
  c.vpp = 2;  // without pipelining
  EXPECT_EQ(IssueOf(pm8, c), ConfigIssue::kBadValue);
  c = Config(1, 1, 1);
  c.cp = 0;
  EXPECT_EQ(IssueOf(pm8, c), ConfigIssue::kBadValue);
  // No cluster: one 8-GPU NVLink domain and nothing to reach a ninth GPU.
  const PerfModel pm16 = Make(model, kSeq, 16, nullptr);
  EXPECT_EQ(IssueOf(pm16, Config(1, 1, 1)), ConfigIssue::kTopology);
  EXPECT_EQ(IssueOf(pm16, Config(16, 1, 1)), ConfigIssue::kTopology);
  EXPECT_EQ(IssueOf(pm8, Config(8, 1, 1)), ConfigIssue::kOk);
  // An issue leaves no timing behind.
  const Prediction bad = pm8.Evaluate(Config(3, 1, 1));
  EXPECT_EQ(bad.step_s, 0);
  EXPECT_EQ(bad.tokens_per_s, 0);
}

TEST(PerfModelIssues, SequenceMustDivideByTwiceTheContextParallelism) {
  const ModelSpec model = Generic(kL, kH, kHeads, kFfn, kVocab);
  const PerfModel pm = Make(model, 1000, 8, "dgx-h100");
  TrainingConfig c = Config(1, 1, 1);
  c.cp = 8;  // 1000 % 16 = 8
  EXPECT_EQ(IssueOf(pm, c), ConfigIssue::kSequenceNotDivisible);
  c.cp = 4;  // 1000 % 8 = 0
  EXPECT_EQ(IssueOf(pm, c), ConfigIssue::kOk);
  const PerfModel odd = Make(model, 1002, 8, "dgx-h100");
  c.cp = 2;  // 1002 % 4 = 2: divisible by cp but not by 2*cp
  EXPECT_EQ(IssueOf(odd, c), ConfigIssue::kSequenceNotDivisible);
}

TEST(PerfModelIssues, ExpertsNotDivisibleByExpertParallelism) {
  const ModelSpec model = GenericMoe(4, 1024, 16, 12, 2, 1024, 32000);
  const PerfModel pm = Make(model, 2048, 8, "dgx-h100");
  TrainingConfig c = Config(1, 1, 1);
  c.ep = 8;  // 12 % 8
  EXPECT_EQ(IssueOf(pm, c), ConfigIssue::kExpertsNotDivisible);
  c.ep = 4;
  EXPECT_EQ(IssueOf(pm, c), ConfigIssue::kOk);
  c.ep = 12;  // divides the experts, not the 8 GPUs
  EXPECT_EQ(IssueOf(pm, c), ConfigIssue::kExpertsNotDivisible);
}

TEST(PerfModelIssues, SeventyBillionParametersDoNotFitOneGpu) {
  const ModelSpec model = Generic(80, 8192, 64, 28672, 128256, /*kv_heads=*/8);
  ASSERT_GT(CountParams(model).total, 65e9);
  const PerfModel pm = Make(model, 4096, 1, nullptr);
  const Prediction r = pm.Evaluate(Config(1, 1, 0));
  EXPECT_EQ(r.issue, ConfigIssue::kOutOfMemory);
  EXPECT_FALSE(r.memory.fits());
  EXPECT_GT(r.memory.total(), r.memory.capacity);
  EXPECT_LT(Rel(r.memory.weights, 2 * CountParams(model).total), 1e-9);  // memory is still reported
}

TEST(PerfModelCreate, RejectsMissingOrInvalidInputs) {
  const ModelSpec model = Generic(kL, kH, kHeads, kFfn, kVocab);
  TrainingSetup s;
  s.model = &model;
  s.seq_len = kSeq;
  s.gpu = Gpu("h100-sxm5-80gb");
  s.gpus = 1;
  s.efficiency = TestEfficiency();
  ASSERT_TRUE(PerfModel::Create(s).ok());

  TrainingSetup bad = s;
  bad.model = nullptr;
  EXPECT_EQ(PerfModel::Create(bad).status().code(), StatusCode::kInvalidArgument);
  bad = s;
  bad.seq_len = 0;
  EXPECT_EQ(PerfModel::Create(bad).status().code(), StatusCode::kInvalidArgument);
  bad = s;
  bad.gpus = 0;
  EXPECT_EQ(PerfModel::Create(bad).status().code(), StatusCode::kInvalidArgument);
  bad = s;
  bad.gpu = nullptr;
  EXPECT_EQ(PerfModel::Create(bad).status().code(), StatusCode::kInvalidArgument);
  // An accelerator with no 16-bit peak at all.
  Accelerator no_peak = *s.gpu;
  no_peak.id = "no-peak";
  no_peak.peak_tflops[static_cast<size_t>(DType::kBf16)] = 0;
  no_peak.peak_tflops[static_cast<size_t>(DType::kFp16)] = 0;
  bad = s;
  bad.gpu = &no_peak;
  EXPECT_EQ(PerfModel::Create(bad).status().code(), StatusCode::kInvalidArgument);

  // A diffusion transformer is not modelled.
  StatusOr<ModelSpec> wan = LoadModel(mfu::RealFileSystem(), "wan2.1-t2v-1.3b");
  ASSERT_TRUE(wan.ok()) << wan.status().message();
  bad = s;
  bad.model = &*wan;
  EXPECT_EQ(PerfModel::Create(bad).status().code(), StatusCode::kInvalidArgument);
}

// The database has accelerators with an fp16 but no bf16 peak (V100). Create
// accepts them (bf16 or fp16), so Evaluate must then run at the fp16 peak
// rather than divide by a zero bf16 peak.
TEST(PerfModelCreate, Fp16OnlyAcceleratorIsEvaluatedAtItsFp16Peak) {
  const Accelerator* v100 = Gpu("v100-sxm2-32gb");
  ASSERT_NE(v100, nullptr);
  ASSERT_EQ(v100->peak_flops(DType::kBf16), 0);
  ASSERT_GT(v100->peak_flops(DType::kFp16), 0);
  const ModelSpec model = Generic(kL, kH, kHeads, kFfn, kVocab);
  TrainingSetup s;
  s.model = &model;
  s.seq_len = kSeq;
  s.gpu = v100;
  s.gpus = 1;
  s.efficiency = TestEfficiency();
  StatusOr<PerfModel> pm = PerfModel::Create(s);
  if (!pm.ok()) {
    EXPECT_EQ(pm.status().code(), StatusCode::kInvalidArgument);
    return;
  }
  const Prediction r = pm->Evaluate(Config(1, 1, 0));  // default precision: bf16
  ASSERT_EQ(r.issue, ConfigIssue::kOk) << ConfigIssueName(r.issue);
  EXPECT_DOUBLE_EQ(r.peak_flops, v100->peak_flops(DType::kFp16));
  EXPECT_TRUE(std::isfinite(r.step_s));
  EXPECT_GT(r.tokens_per_s, 0);
}

TEST(PerfModelComm, TensorParallelCommunicationAndItsOverlap) {
  const ModelSpec model = Generic(kL, kH, kHeads, kFfn, kVocab);
  const PerfModel pm = Make(model, kSeq, 8, "dgx-h100");
  const Prediction tp1 = pm.Evaluate(Config(1, 1, 1, 1, 8));
  const Prediction tp8 = pm.Evaluate(Config(8, 1, 1, 1, 1));
  ASSERT_EQ(tp8.issue, ConfigIssue::kOk);
  EXPECT_EQ(tp1.breakdown.tp_comm_s, 0);
  EXPECT_GT(tp8.breakdown.tp_comm_s, 0);
  TrainingConfig c = Config(8, 1, 1, 1, 1);
  c.tp_comm_overlap = true;
  const Prediction ov = pm.Evaluate(c);
  ASSERT_EQ(ov.issue, ConfigIssue::kOk);
  EXPECT_LT(ov.breakdown.tp_comm_s, tp8.breakdown.tp_comm_s);
  // At most overlap_efficiency of it is hidden.
  EXPECT_GE(ov.breakdown.tp_comm_s, (1 - TestEfficiency().overlap_efficiency) * tp8.breakdown.tp_comm_s * (1 - 1e-12));
  EXPECT_LT(ov.step_s, tp8.step_s);

  // Without overlap: per layer, forward and backward each two all-reduces of
  // the micro-batch's activations (s*h*2 bytes) over NVLink:
  // 2 (n-1)/n bytes / bw + 2 * tree steps * latency, tree steps = min(n-1, 2 log2 n).
  const Cluster* cl = FindCluster("dgx-h100");
  const double n = 8, bytes = kSeq * kH * 2.0;
  const double bw = cl->scaleup_bw_bytes_per_s * TestEfficiency().scaleup_bw_fraction;
  const double all_reduce =
      2 * (n - 1) / n * bytes / bw + 2 * std::min(n - 1, 2 * std::log2(n)) * cl->scaleup_latency_s;
  EXPECT_LT(Rel(tp8.breakdown.tp_comm_s, kL * 2 * 2 * all_reduce), 1e-9);
}

TEST(PerfModelComm, DataParallelAcrossNodes) {
  const ModelSpec model = Generic(kL, kH, kHeads, kFfn, kVocab);
  const PerfModel pm = Make(model, kSeq, 16, "dgx-h100");
  TrainingConfig c = Config(1, 1, 1, 1, 16);
  const Prediction ov = pm.Evaluate(c);
  ASSERT_EQ(ov.issue, ConfigIssue::kOk);
  c.dp_overlap = false;
  const Prediction no = pm.Evaluate(c);
  ASSERT_EQ(no.issue, ConfigIssue::kOk);
  EXPECT_GE(ov.breakdown.dp_comm_s, 0);
  EXPECT_GT(no.breakdown.dp_comm_s, ov.breakdown.dp_comm_s);
  EXPECT_GT(no.step_s, ov.step_s);
  // Exposed in full: a reduce-scatter and an all-gather of the 16-bit
  // gradients/weights, each (n-1)/n bytes / bw + (n-1) latency (ring). The
  // 16 ranks span two nodes: each of the 8 GPUs of a node drives its own NIC,
  // so the ring runs at min(8 x NIC, NVLink).
  const Cluster* cl = FindCluster("dgx-h100");
  const EfficiencyParams e = TestEfficiency();
  const double n = 16, bytes = 2 * kParams;
  const double bw = std::min(8 * cl->scaleout_bw_bytes_per_s * e.scaleout_bw_fraction,
                             cl->scaleup_bw_bytes_per_s * e.scaleup_bw_fraction);
  const double half = (n - 1) / n * bytes / bw + (n - 1) * cl->scaleout_latency_s;
  EXPECT_LT(Rel(no.breakdown.dp_comm_s, 2 * half), 1e-4);
  // Inside one node the same gradients cost less.
  const PerfModel pm8 = Make(model, kSeq, 8, "dgx-h100");
  TrainingConfig c8 = Config(1, 1, 1, 1, 8);
  c8.dp_overlap = false;
  EXPECT_LT(pm8.Evaluate(c8).breakdown.dp_comm_s, no.breakdown.dp_comm_s);
}

TEST(PerfModelComm, PipelineBubbleIsPpMinusOneOverVppForwardBackwards) {
  const ModelSpec model = Generic(8, kH, kHeads, kFfn, kVocab);
  const PerfModel pm = Make(model, kSeq, 8, "dgx-h100");
  for (int64_t pp : {2, 4, 8}) {
    for (int64_t vpp : {1, 2, 4}) {
      if (pp * vpp > 8)
        continue;
      for (int64_t gbs : {8, 64}) {
        SCOPED_TRACE("pp " + std::to_string(pp) + " vpp " + std::to_string(vpp) + " gbs " + std::to_string(gbs));
        TrainingConfig c = Config(1, pp, 1, 1, gbs);
        c.vpp = vpp;
        const Prediction r = pm.Evaluate(c);
        ASSERT_EQ(r.issue, ConfigIssue::kOk) << ConfigIssueName(r.issue);
        const StepBreakdown& b = r.breakdown;
        ASSERT_GT(b.bubble_s, 0);
        // Everything except bubble, DP, optimizer and p2p is m x (t_f + t_b).
        const double pipeline_work = r.step_s - b.bubble_s - b.dp_comm_s - b.optimizer_s - b.pp_comm_s;
        const double m = static_cast<double>(r.micro_batches);
        EXPECT_EQ(r.micro_batches, gbs / (r.config.dp * 1));
        EXPECT_LT(Rel(b.bubble_s / pipeline_work, static_cast<double>(pp - 1) / static_cast<double>(vpp) / m), 1e-9);
      }
    }
  }
}

TEST(PerfModelScaling, WeakScalingKeepsThroughputPerGpu) {
  const ModelSpec model = Generic(8, 2048, 16, 8192, 32000);
  const PerfModel pm8 = Make(model, 4096, 8, "dgx-h100");
  const PerfModel pm16 = Make(model, 4096, 16, "dgx-h100");
  for (int64_t tp : {1, 2, 8}) {
    for (int zero : {0, 1, 3}) {
      SCOPED_TRACE("tp " + std::to_string(tp) + " zero " + std::to_string(zero));
      const Prediction a = pm8.Evaluate(Config(tp, 1, zero, 1, 32));
      const Prediction b = pm16.Evaluate(Config(tp, 1, zero, 1, 64));
      ASSERT_EQ(a.issue, ConfigIssue::kOk);
      ASSERT_EQ(b.issue, ConfigIssue::kOk);
      ASSERT_EQ(a.micro_batches, b.micro_batches);  // the same work per GPU
      const double per_gpu_a = a.tokens_per_s / 8, per_gpu_b = b.tokens_per_s / 16;
      EXPECT_LT(std::abs(per_gpu_b / per_gpu_a - 1), 0.2) << per_gpu_a << " vs " << per_gpu_b;
      // Without optimizer sharding (which makes the optimizer step cheaper on
      // more GPUs), a data-parallel group leaving the node never helps.
      if (zero == 0) {
        EXPECT_LE(per_gpu_b, per_gpu_a * (1 + 1e-9));
        EXPECT_GE(b.breakdown.dp_comm_s, a.breakdown.dp_comm_s);
      }
    }
  }
}

// `mfu predict` and `mfu memory` share one memory model: PerfModel's
// memory per GPU equals EstimateTrainingMemoryPerGpu (what `mfu memory
// --gpus --tp --pp ...` prints) for the same layout, state and activations.
struct SameMemoryCase {
  const char* model;
  int64_t gpus, seq, tp, pp, vpp, cp, ep, mbs, gbs;
  int zero;
  const char* state;
  Recompute recompute;
  bool flash;
};

TEST(PerfModelMemory, SameBytesAsMfuMemory) {
  const SameMemoryCase cases[] = {
      // The docs/plan.md predict example, then its other ZeRO stages.
      {"llama-3.1-70b", 64, 8192, 8, 4, 5, 1, 1, 1, 128, 1, "megatron-core", Recompute::kNone, true},
      {"llama-3.1-70b", 64, 8192, 8, 4, 5, 1, 1, 1, 128, 0, "megatron-core", Recompute::kNone, true},
      {"llama-3.1-70b", 64, 8192, 8, 4, 1, 1, 1, 1, 128, 2, "deepspeed", Recompute::kSelective, true},
      {"llama-3.1-70b", 64, 8192, 8, 1, 1, 1, 1, 2, 128, 3, "torchtitan", Recompute::kFull, true},
      {"llama-3.1-8b", 16, 8192, 2, 1, 1, 2, 1, 2, 64, 3, "torchtitan", Recompute::kNone, false},
      {"mixtral-8x7b", 64, 4096, 2, 2, 1, 1, 8, 1, 256, 1, "megatron-core", Recompute::kNone, true},
      {"mixtral-8x7b", 64, 4096, 1, 2, 1, 2, 4, 1, 256, 3, "composer", Recompute::kSelective, true},
      // Stages that do not divide the layers: 126 over pp 16 x vpp 7 is
      // 8 on the busiest GPU in both (vpp x ceil(126 / 112) = 14 was memory's).
      {"llama-3.1-405b", 1024, 8192, 8, 16, 7, 1, 1, 1, 512, 1, "megatron-core", Recompute::kSelective, true},
  };
  for (const SameMemoryCase& k : cases) {
    SCOPED_TRACE(std::string(k.model) + " state " + k.state + " zero " + std::to_string(k.zero));
    StatusOr<ModelSpec> model = LoadModel(mfu::RealFileSystem(), k.model);
    ASSERT_TRUE(model.ok()) << model.status().message();
    StatusOr<const FrameworkProfile*> framework = (*FrameworkDb::Builtin())->FindTraining(k.state);
    ASSERT_TRUE(framework.ok()) << framework.status().message();
    const TrainingStateDtypes* state = &(*framework)->state;
    const PerfModel pm = Make(*model, k.seq, k.gpus, "dgx-h100");
    TrainingConfig c = Config(k.tp, k.pp, k.zero, k.mbs, k.gbs);
    c.vpp = k.vpp;
    c.cp = k.cp;
    c.ep = k.ep;
    c.recompute = k.recompute;
    c.flash_attention = k.flash;
    c.state = *state;
    const Prediction r = pm.Evaluate(c);
    ASSERT_TRUE(r.issue == ConfigIssue::kOk || r.issue == ConfigIssue::kOutOfMemory) << ConfigIssueName(r.issue);

    TrainingMemoryOptions o;
    o.state = *state;
    o.seq_len = k.seq;
    o.micro_batch = k.mbs;
    o.recompute = k.recompute;
    o.flash_attention = k.flash;
    o.sequence_parallel = true;  // predict's default with tp > 1
    ParallelLayout l;
    l.gpus = k.gpus;
    l.tp = k.tp;
    l.pp = k.pp;
    l.vpp = k.vpp;
    l.cp = k.cp;
    l.ep = k.ep;
    l.zero_stage = k.zero;
    l.micro_batches = r.micro_batches;
    StatusOr<TrainingMemoryPerGpu> g = EstimateTrainingMemoryPerGpu(*model, o, l);
    ASSERT_TRUE(g.ok()) << g.status().message();
    EXPECT_DOUBLE_EQ(r.memory.weights, g->state.weights_bytes);
    EXPECT_DOUBLE_EQ(r.memory.gradients, g->state.gradients_bytes);
    EXPECT_DOUBLE_EQ(r.memory.optimizer, g->state.optimizer_bytes);
    EXPECT_DOUBLE_EQ(r.memory.activations, g->activations_bytes);
    EXPECT_DOUBLE_EQ(r.memory.total() - r.memory.reserved, g->total_bytes());
  }
}

}  // namespace
}  // namespace mfu
