// The vector kernel model (vector_kernels.h) by hand, and its use by the
// training and the inference model.

#include "mfu/vector_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>

#include "mfu/inference.h"
#include "mfu/model.h"
#include "mfu/perf_model.h"
#include "testing/plan_test_util.h"

namespace mfu {
namespace {

using namespace plan_test;  // NOLINT: test fixtures

constexpr double kKiB = 1024;

VectorKernelParams& Row(EfficiencyParams& e, VectorKernel k) {
  return e.vector_kernels[static_cast<size_t>(k)];
}

const VectorKernelParams& Row(const EfficiencyParams& e, VectorKernel k) {
  return e.vector_kernels[static_cast<size_t>(k)];
}

TEST(VectorKernelSeconds, FloorOrStreamingByHand) {
  const VectorKernelParams k{2, 100, 0.5, ""};
  const double hbm = 2e12;
  // One row of 16 KiB: the floor, 2 us + 16 x 100 ns.
  EXPECT_DOUBLE_EQ(VectorKernelSeconds(k, hbm, 1, 16 * kKiB), 3.6e-6);
  // 4096 rows: 64 MiB at half of 2 TB/s.
  EXPECT_DOUBLE_EQ(VectorKernelSeconds(k, hbm, 4096, 16 * kKiB), 4096 * 16 * kKiB / 1e12);
  // Nothing to move, nothing to time.
  EXPECT_EQ(VectorKernelSeconds(k, hbm, 0, 16 * kKiB), 0);
  EXPECT_EQ(VectorKernelSeconds(k, hbm, 8, 0), 0);
}

// 512 hidden rows of 4096, a dense activation over 1024 rows of 7168.
LayerVectorWork DenseWork() {
  LayerVectorWork w;
  w.hidden_rows = 512;
  w.hidden = 4096;
  w.dense_act_rows = 1024;
  w.dense_act_width = 7168;
  return w;
}

TEST(LayerVector, FivePassCountsAndFiveKernels) {
  LayerVectorWork w = DenseWork();
  // Two norms (2 passes) and two adds (3 passes) over the hidden rows, the
  // gated activation 3 passes over its rows; 16-bit elements.
  EXPECT_DOUBLE_EQ(LayerVectorBytes(w), 2 * (10.0 * 512 * 4096 + 3.0 * 1024 * 7168));
  w.gated = false;
  EXPECT_DOUBLE_EQ(LayerVectorBytes(w), 2 * (10.0 * 512 * 4096 + 2.0 * 1024 * 7168));

  // MoE: a share of the layers run the experts' activation instead.
  w.gated = true;
  w.expert_act_rows = 1024 * 2;
  w.expert_act_width = 1792;
  w.moe_share = 0.75;
  const EfficiencyParams e = TestEfficiency();
  const double hbm = 3e12;
  auto kernel = [&](VectorKernel k, double rows, double row_bytes) {
    return VectorKernelSeconds(Row(e, k), hbm, rows, row_bytes);
  };
  const double expected = 2 * kernel(VectorKernel::kNorm, 512, 2 * 4096 * 2) +
                          2 * kernel(VectorKernel::kResidualAdd, 512, 3 * 4096 * 2) +
                          0.25 * kernel(VectorKernel::kActivation, 1024, 3 * 7168 * 2) +
                          0.75 * kernel(VectorKernel::kActivation, 2048, 3 * 1792 * 2);
  EXPECT_DOUBLE_EQ(LayerVectorSeconds(e.vector_kernels, hbm, w), expected);
}

// Eager modules' extra bytes: per element of each of the two norms, of the
// activation (dense and expert rows weighed as LayerVectorBytes does), and
// of the queries and keys, forward and backward apart.
TEST(LayerVector, EagerBytesPerElementByHand) {
  LayerVectorWork w = DenseWork();
  const EagerTraffic t{.norm_fwd = 32, .norm_bwd = 80, .act_fwd = 4, .act_bwd = 6, .rope_fwd = 16, .rope_bwd = 12};
  const double qk = 1024.0 * (4096 + 1024);
  EagerBytes b = LayerEagerBytes(w, t, qk);
  EXPECT_DOUBLE_EQ(b.forward, 32 * 2 * 512 * 4096.0 + 4 * 1024 * 7168.0 + 16 * qk);
  EXPECT_DOUBLE_EQ(b.backward, 80 * 2 * 512 * 4096.0 + 6 * 1024 * 7168.0 + 12 * qk);
  w.expert_act_rows = 2048;
  w.expert_act_width = 1792;
  w.moe_share = 0.75;
  b = LayerEagerBytes(w, t, 0);
  EXPECT_DOUBLE_EQ(b.forward, 32 * 2 * 512 * 4096.0 + 4 * (0.25 * 1024 * 7168.0 + 0.75 * 2048 * 1792.0));
  // A framework whose eager modules add nothing (or a compiled one) moves nothing extra.
  b = LayerEagerBytes(w, EagerTraffic{}, qk);
  EXPECT_EQ(b.forward, 0);
  EXPECT_EQ(b.backward, 0);
}

// Training: the vector time of a step by hand. Norms stream at
// vector_bw_fraction (training frameworks' norms are not the profiled
// one-block-per-row kernel), residual adds and the activation use their
// kernels, rope streams q and k, the LM head's fp32 logits are written,
// read and written by the softmax.
TEST(LayerVector, TrainingStepByHand) {
  constexpr int64_t kL = 4, kH = 1024, kHeads = 16, kFfn = 4096, kVocab = 32000, kSeq = 2048;
  const ModelSpec model = Generic(kL, kH, kHeads, kFfn, kVocab);
  const PerfModel pm = Make(model, kSeq, 1, nullptr);
  TrainingConfig c;
  c.zero_stage = 0;
  const Prediction r = pm.Evaluate(c);
  ASSERT_EQ(r.issue, ConfigIssue::kOk);

  const EfficiencyParams e = TestEfficiency();
  const double hbm = Gpu("h100-sxm5-80gb")->memory_bw_tbps * 1e12;
  const double streamed = hbm * e.vector_bw_fraction;
  const double T = kSeq, h = kH;
  const double norms = 2 * (2 * T * h * 2) / streamed;
  const double adds = 2 * VectorKernelSeconds(Row(e, VectorKernel::kResidualAdd), hbm, T, 3 * h * 2);
  const double act = VectorKernelSeconds(Row(e, VectorKernel::kActivation), hbm, T, 3 * kFfn * 2);
  const double rope = 4 * T * h * 2 / streamed;
  const double logits = T * kVocab * 4 * 3 / streamed;
  const double expected = 3 * (kL * (norms + adds + act + rope) + logits);  // forward + 2x backward
  EXPECT_NEAR(r.breakdown.vector_s / expected, 1.0, 1e-12);

  // The norm row does not change a training step; the activation row does.
  EfficiencyParams slow = e;
  Row(slow, VectorKernel::kNorm) = {500, 1000, 0.05, ""};
  PerfModel changed = pm;
  changed.SetEfficiency(slow);
  EXPECT_DOUBLE_EQ(changed.Evaluate(c).breakdown.vector_s, r.breakdown.vector_s);
  Row(slow, VectorKernel::kActivation).bw_fraction = 0.05;
  changed.SetEfficiency(slow);
  EXPECT_GT(changed.Evaluate(c).breakdown.vector_s, r.breakdown.vector_s);
}

// Inference: a one-token decode step pays every kernel's floor, once per
// layer, on top of what the same kernels cost without floors.
TEST(LayerVector, OneTokenDecodePaysEachFloor) {
  StatusOr<ModelSpec> m = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  ASSERT_TRUE(m.ok());
  InferenceSetup s;
  s.model = &*m;
  s.gpu = Gpu("h100-sxm5-80gb");
  s.efficiency = TestEfficiency();
  InferenceSetup no_floor = s;
  for (VectorKernelParams& k : no_floor.efficiency.vector_kernels) {
    k.min_us = 0;
    k.row_ns_per_kib = 0;
  }
  StatusOr<InferenceModel> with = InferenceModel::Create(s);
  StatusOr<InferenceModel> without = InferenceModel::Create(no_floor);
  ASSERT_TRUE(with.ok() && without.ok());
  const double hbm = s.gpu->memory_bw_tbps * 1e12;
  auto floor_cost = [&](VectorKernel k, double row_bytes) {
    return VectorKernelSeconds(Row(s.efficiency, k), hbm, 1, row_bytes) -
           VectorKernelSeconds(Row(no_floor.efficiency, k), hbm, 1, row_bytes);
  };
  const double h = 4096, ffn = 14336;
  const double per_layer = 2 * floor_cost(VectorKernel::kNorm, 2 * h * 2) +
                           2 * floor_cost(VectorKernel::kResidualAdd, 3 * h * 2) +
                           floor_cost(VectorKernel::kActivation, 3 * ffn * 2);
  ASSERT_GT(per_layer, 10e-6);  // 2 x 3.6 + 2 x 1 + 1.5 + 84 KiB x 100 ns
  EXPECT_NEAR(with->Decode(1, 1000).time_s - without->Decode(1, 1000).time_s, 32 * per_layer, 1e-12);
}

}  // namespace
}  // namespace mfu
