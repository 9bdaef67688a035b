#include "mfu/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "mfu/cluster.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/perf_model.h"
#include "testing/plan_test_util.h"

namespace mfu {
namespace {

using namespace plan_test;  // NOLINT: test fixtures

TEST(Planner, TopConfigurationsAreValidSortedAndReproducible) {
  const ModelSpec model = Generic(8, 2048, 16, 8192, 32000, 4);
  const PerfModel pm = Make(model, 4096, 16, "dgx-h100");
  PlanOptions o = Search(64, 7);
  StatusOr<PlanResult> plan = PlanTraining(pm, o);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_FALSE(plan->top.empty());
  EXPECT_EQ(plan->top.size(), std::min<uint64_t>(o.top_k, plan->fitting));
  uint64_t issues = 0;
  for (uint64_t n : plan->by_issue)
    issues += n;
  EXPECT_EQ(issues, plan->evaluated);
  EXPECT_EQ(plan->by_issue[static_cast<size_t>(ConfigIssue::kOk)], plan->fitting);
  for (size_t i = 0; i < plan->top.size(); ++i) {
    const Prediction& p = plan->top[i];
    SCOPED_TRACE("top " + std::to_string(i));
    EXPECT_EQ(p.issue, ConfigIssue::kOk);
    EXPECT_TRUE(p.memory.fits());
    EXPECT_EQ(p.config.global_batch, 64);
    EXPECT_LE(p.config.tp, 8);  // tp within the 8-GPU NVLink domain
    EXPECT_EQ(p.config.tp * p.config.pp * p.config.cp * p.config.dp, 16);
    if (i > 0) {
      EXPECT_GE(plan->top[i - 1].tokens_per_s, p.tokens_per_s);
    }
    TrainingConfig again = p.config;
    const Prediction r = pm.Evaluate(again);
    ASSERT_EQ(r.issue, ConfigIssue::kOk);
    EXPECT_DOUBLE_EQ(r.step_s, p.step_s);
    EXPECT_DOUBLE_EQ(r.tokens_per_s, p.tokens_per_s);
  }
  o.top_k = 0;
  StatusOr<PlanResult> none = PlanTraining(pm, o);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->top.empty());
  EXPECT_EQ(none->fitting, plan->fitting);
}

// A framework whose recipes overlap TP communication (nemo) overlaps it
// where there is TP: a tp 1 configuration is reported without it, as
// predict resolves it.
TEST(Planner, TpOverlapOnlyWithTensorParallelism) {
  const ModelSpec model = Generic(8, 2048, 16, 8192, 32000, 4);
  FrameworkProfile fw = Framework("nemo");
  ASSERT_TRUE(fw.tp_overlap_default);
  const PerfModel pm = MakeWith(model, 4096, 16, "dgx-h100", TestEfficiency(), fw);
  PlanOptions o = Search(64, 50);
  StatusOr<PlanResult> plan = PlanTraining(pm, o);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  bool seen_tp1 = false, seen_tp2 = false;
  for (const Prediction& p : plan->top) {
    EXPECT_EQ(p.config.tp_comm_overlap, p.config.tp > 1) << ConfigText(p.config);
    seen_tp1 |= p.config.tp == 1;
    seen_tp2 |= p.config.tp > 1;
  }
  EXPECT_TRUE(seen_tp1 && seen_tp2);
}

// The planner's space enumerated independently: tp up to the 8-GPU domain,
// every pp, cp up to max_cp, vpp powers of two up to max_vpp (1 without
// pipelining), the micro-batch, recompute and ZeRO options (ZeRO 0 only when
// there is nothing to shard); Evaluate rejects what is invalid.
TEST(Planner, AgreesWithBruteForceOnASmallCase) {
  const ModelSpec model = Generic(8, 1024, 16, 4096, 32000, 0);
  const PerfModel pm = Make(model, 2048, 16, "dgx-h100");
  PlanOptions o = Search(32, 5);
  StatusOr<PlanResult> plan = PlanTraining(pm, o);
  ASSERT_TRUE(plan.ok()) << plan.status().message();

  std::vector<double> fitting;
  const int64_t gpus = 16;
  for (int64_t tp = 1; tp <= 8; ++tp) {
    for (int64_t pp = 1; pp <= gpus; ++pp) {
      for (int64_t cp = 1; cp <= o.max_cp; cp *= 2) {
        if (gpus % (tp * pp * cp) != 0)
          continue;
        const int64_t dp = gpus / (tp * pp * cp);
        for (int64_t vpp = 1; vpp <= o.max_vpp; vpp *= 2) {
          for (int64_t mbs : o.micro_batches) {
            for (Recompute r : o.recompute) {
              // Every stage the framework implements (o.zero_stages is
              // empty: plan's default), those of zero_stages_pp under PP.
              const FrameworkProfile& fw = pm.setup().framework;
              std::vector<int> zeros = dp * cp == 1 ? std::vector<int>{0} : fw.zero_stages;
              for (int z : zeros) {
                if (pp > 1 && !fw.Implements(z, pp))
                  continue;
                TrainingConfig c;
                c.tp = tp;
                c.pp = pp;
                c.cp = cp;
                c.vpp = vpp;
                c.micro_batch = mbs;
                c.global_batch = o.global_batch;
                c.recompute = r;
                c.zero_stage = z;
                c.sequence_parallel = tp > 1;
                const Prediction p = pm.Evaluate(c);
                if (p.issue == ConfigIssue::kOk)
                  fitting.push_back(p.tokens_per_s);
              }
            }
          }
        }
      }
    }
  }
  ASSERT_FALSE(fitting.empty());
  std::sort(fitting.begin(), fitting.end(), std::greater<>());
  EXPECT_EQ(plan->fitting, fitting.size());
  ASSERT_EQ(plan->top.size(), std::min<size_t>(o.top_k, fitting.size()));
  EXPECT_DOUBLE_EQ(plan->top.front().tokens_per_s, fitting.front());
  for (size_t i = 0; i < plan->top.size(); ++i)
    EXPECT_DOUBLE_EQ(plan->top[i].tokens_per_s, fitting[i]) << i;
}

TEST(Planner, NothingFitsReportsTheClosestConfiguration) {
  // Llama-3.1-405B-like: 126 layers, h 16384, 128 heads, 8 KV heads.
  const ModelSpec model = Generic(126, 16384, 128, 53248, 128256, 8);
  ASSERT_GT(CountParams(model).total, 4e11);
  const PerfModel pm = Make(model, 4096, 8, "dgx-a100");
  PlanOptions o;
  o.global_batch = 16;
  StatusOr<PlanResult> plan = PlanTraining(pm, o);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(plan->top.empty());
  EXPECT_EQ(plan->fitting, 0u);
  EXPECT_GT(plan->evaluated, 0u);
  EXPECT_GT(plan->by_issue[static_cast<size_t>(ConfigIssue::kOutOfMemory)], 0u);
  EXPECT_EQ(plan->closest.issue, ConfigIssue::kOutOfMemory);
  EXPECT_GT(plan->closest_over_bytes, 0);
  EXPECT_DOUBLE_EQ(plan->closest_over_bytes, plan->closest.memory.total() - plan->closest.memory.capacity);
  // Even fully sharded, 2+4+12 bytes per parameter over 8 GPUs exceed 80 GB:
  // the closest configuration is still at least that far over.
  EXPECT_GT(plan->closest.memory.total(), 16.0 * CountParams(model).total / 8);
}

TEST(Planner, RejectsInvalidOptions) {
  const ModelSpec model = Generic(4, 1024, 16, 4096, 32000, 0);
  const PerfModel pm = Make(model, 2048, 8, "dgx-h100");
  PlanOptions o;
  o.global_batch = 0;
  EXPECT_EQ(PlanTraining(pm, o).status().code(), StatusCode::kInvalidArgument);
  o.global_batch = -8;
  EXPECT_EQ(PlanTraining(pm, o).status().code(), StatusCode::kInvalidArgument);
  o = PlanOptions{};
  o.global_batch = 8;
  o.micro_batches.clear();
  EXPECT_EQ(PlanTraining(pm, o).status().code(), StatusCode::kInvalidArgument);
  o = PlanOptions{};
  o.global_batch = 8;
  o.recompute.clear();
  EXPECT_EQ(PlanTraining(pm, o).status().code(), StatusCode::kInvalidArgument);
  o = PlanOptions{};
  o.global_batch = 8;
  o.zero_stages = {1, 5};
  EXPECT_EQ(PlanTraining(pm, o).status().code(), StatusCode::kInvalidArgument);
  o.zero_stages = {-1};
  EXPECT_EQ(PlanTraining(pm, o).status().code(), StatusCode::kInvalidArgument);
  o.zero_stages = {1};
  EXPECT_TRUE(PlanTraining(pm, o).ok());
}

}  // namespace
}  // namespace mfu
