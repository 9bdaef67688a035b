// The predicted waterfall and utilization (FinishPrediction), Validate, and
// the plan studies (plan_studies.h).

#include "mfu/plan_studies.h"

#include <gtest/gtest.h>

#include <cmath>

#include "mfu/result.h"
#include "testing/plan_test_util.h"

namespace mfu {
namespace {

using namespace plan_test;  // NOLINT: test fixtures

TrainingConfig Config(int64_t tp, int64_t pp, int64_t mbs, int64_t gbs, Recompute recompute) {
  TrainingConfig c = Layout(tp, pp, 1, gbs);
  c.micro_batch = mbs;
  c.recompute = recompute;
  return c;
}

// For several configurations: the waterfall is consistent, its buckets sum
// to the step rounded to ns, the breakdown sums to the step, and the
// identity's product equals MFU_hw computed here from the executed matrix
// FLOPs / (step x dense peak).
TEST(PredictedWaterfall, ConsistentAndMatchesTheMatrixFlops) {
  const ModelSpec model = Generic(16, 4096, 32, 14336, 128256, 8);
  const PerfModel pm = Make(model, 4096, 64, "dgx-h100");
  for (const TrainingConfig& c : {Config(1, 1, 1, 64, Recompute::kNone), Config(4, 2, 2, 128, Recompute::kSelective),
                                  Config(8, 4, 1, 256, Recompute::kFull), Config(2, 1, 4, 512, Recompute::kNone)}) {
    SCOPED_TRACE(ConfigText(c));
    const Prediction p = pm.Evaluate(c);
    ASSERT_TRUE(p.issue == ConfigIssue::kOk || p.issue == ConfigIssue::kOutOfMemory) << ConfigIssueName(p.issue);
    const Waterfall& w = p.waterfall;
    EXPECT_TRUE(CheckConsistency(w).ok()) << CheckConsistency(w).message();
    int64_t sum = 0;
    for (int64_t b : w.bucket_ns)
      sum += b;
    EXPECT_EQ(sum, w.step_ns);
    EXPECT_EQ(w.step_ns, std::llround(p.step_s * 1e9));
    EXPECT_NEAR(p.breakdown.total(), p.step_s, 1e-12 * p.step_s);
    for (WaterfallBucket unused :
         {WaterfallBucket::kExposedMemcpy, WaterfallBucket::kUnattributed, WaterfallBucket::kMatrixUnknownFlops})
      EXPECT_EQ(w[unused], 0);
    const double peak = pm.setup().gpu->peak_flops(DType::kBf16);
    const double mfu_hw = p.matrix_flops_per_step / (p.step_s * peak);
    EXPECT_NEAR(w.compute_share * w.matrix_share * w.matrix_efficiency, mfu_hw, 1e-6);
    EXPECT_NEAR(w.mfu_hw, mfu_hw, 1e-6);
    // Utilization: model FLOP/s per GPU = FLOPs/token x tokens/s / GPUs.
    EXPECT_NEAR(p.utilization.model_flops_per_s, p.model_flops_per_token * p.tokens_per_s / 64,
                1e-9 * p.utilization.model_flops_per_s);
    EXPECT_NEAR(p.utilization.mfu, p.utilization.model_flops_per_s / peak, 1e-12);
    EXPECT_GE(p.utilization.hfu, p.utilization.mfu);
  }
}

TEST(Validate, NamesTheParameter) {
  const ModelSpec model = Generic(8, 2048, 16, 8192, 32000, 4);
  const PerfModel pm = Make(model, 4096, 16, "dgx-h100");
  TrainingConfig c = Config(1, 1, 1, 0, Recompute::kNone);
  EXPECT_TRUE(pm.Validate(c).ok());
  c.tp = 0;
  EXPECT_EQ(pm.Validate(c).message(), "parameter 'tp' must be >= 1 (got 0)");
  EXPECT_EQ(pm.Evaluate(c).issue, ConfigIssue::kBadValue);
  c.tp = 3;
  EXPECT_EQ(pm.Validate(c).message(), "tp x pp x cp = 3 does not divide 16 GPUs");
  EXPECT_EQ(pm.Evaluate(c).issue, ConfigIssue::kGpusNotDivisible);
  c.tp = 2;
  c.dp = 4;
  EXPECT_EQ(pm.Validate(c).message(), "dp x tp x pp x cp = 8 but there are 16 GPUs");
  c.dp = 0;
  c.vpp = 2;
  EXPECT_EQ(pm.Validate(c).message(), "parameter 'vpp' needs parameter 'pp' > 1");
  c.vpp = 1;
  c.ep = 2;
  EXPECT_EQ(pm.Validate(c).message(), "parameter 'ep'/parameter 'etp' need a mixture-of-experts model");
}

// 1T tokens at 1e6 tokens/s: 1e6 s = 277.8 h on 64 GPUs, at $2/GPU-hour.
TEST(TimeToTrain, HoursGpuHoursAndCost) {
  Prediction p;
  p.tokens_per_s = 1e6;
  const TrainingTime t = TimeToTrain(p, 64, {1e12, 2});
  EXPECT_NEAR(t.hours, 1e6 / 3600, 1e-9);
  EXPECT_NEAR(t.days, 1e6 / 86400, 1e-9);
  EXPECT_NEAR(t.gpu_hours, 64e6 / 3600, 1e-6);
  EXPECT_NEAR(t.cost_usd, 128e6 / 3600, 1e-6);
  EXPECT_EQ(TimeToTrain(p, 64, {1e12, 0}).cost_usd, 0);
}

TEST(ExplainDifference, FieldsAndLargestComponentFirst) {
  Prediction a, b;
  a.config = Config(8, 1, 1, 64, Recompute::kNone);
  b.config = Config(4, 2, 1, 64, Recompute::kFull);
  a.breakdown.tp_comm_s = 0.5;
  b.breakdown.tp_comm_s = 0.2;  // -0.3
  b.breakdown.bubble_s = 0.1;   // +0.1
  const ConfigDifference d = ExplainDifference(a, b);
  ASSERT_EQ(d.fields.size(), 3u);
  EXPECT_EQ(d.fields[0].field, "tp");
  EXPECT_EQ(d.fields[0].best, 8);
  EXPECT_EQ(d.fields[0].runner_up, 4);
  EXPECT_EQ(d.fields[1].field, "pp");
  EXPECT_EQ(d.fields[2].field, "recompute");
  EXPECT_EQ(d.fields[2].runner_up_name, "full");
  ASSERT_EQ(d.components.size(), 12u);
  EXPECT_EQ(d.components[0].name, "TP comm");
  EXPECT_NEAR(d.components[0].delta_s, -0.3, 1e-12);
  EXPECT_EQ(d.components[1].name, "bubble");
}

// Weak scaling doubles the global batch with the GPUs; strong keeps it. A
// model too large for 8 GPUs fits at a doubling of them.
TEST(PlanScaling, WeakAndStrongAndSmallestFit) {
  const ModelSpec model = Generic(8, 2048, 16, 8192, 32000, 4);
  const PerfModel pm = Make(model, 4096, 16, "dgx-h100");
  PlanOptions o;
  o.global_batch = 64;
  StatusOr<std::vector<ScalePoint>> s = PlanScaling(pm, o, {32});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_TRUE((*s)[0].weak);
  EXPECT_EQ((*s)[0].gbs, 128);
  EXPECT_FALSE((*s)[1].weak);
  EXPECT_EQ((*s)[1].gbs, 64);
  EXPECT_TRUE((*s)[0].found);
  EXPECT_EQ((*s)[0].best.config.tp * (*s)[0].best.config.pp * (*s)[0].best.config.cp * (*s)[0].best.config.dp, 32);
  EXPECT_FALSE(PlanScaling(pm, o, {0}).ok());

  // ~70B parameters: 18 bytes each do not fit 8 x 80 GB even fully sharded.
  const ModelSpec big = Generic(80, 8192, 64, 28672, 128256, 8);
  const PerfModel small = Make(big, 4096, 8, "dgx-h100");
  o.global_batch = 16;
  StatusOr<PlanResult> none = PlanTraining(small, o);
  ASSERT_TRUE(none.ok());
  ASSERT_TRUE(none->top.empty());
  const int64_t at = FindSmallestFittingGpus(small, o);
  EXPECT_GE(at, 16);
  EXPECT_EQ(at & (at - 1), 0);  // a doubling of 8
}

}  // namespace
}  // namespace mfu
