// The steady-state window and warm-up on hand-built throughput series whose
// answer is evident by construction.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "log/analysis_test_util.h"
#include "log/log_analysis_internal.h"

// Helpers in their own namespace: the unity build compiles this file with
// its target's other tests.
namespace mfu::steady_state_test {
namespace {

using log_test::Db;
using log_test::Step;

LogTimeline Series(const std::vector<double>& tps) {
  LogTimeline t;
  t.format = LogFormat::kTorchtitan;
  for (size_t i = 0; i < tps.size(); ++i) {
    LogStep s = Step(static_cast<int64_t>(i + 1), static_cast<int64_t>(i + 10));
    s.tokens_per_s_per_gpu = tps[i];
    t.steps.push_back(s);
  }
  return t;
}

TEST(Median, OddEvenAndNaN) {
  EXPECT_DOUBLE_EQ(log_internal::Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(log_internal::Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(log_internal::Median({kLogNaN, 5, kLogNaN}), 5);
  EXPECT_TRUE(std::isnan(log_internal::Median({kLogNaN})));
}

TEST(SteadyState, WarmupSkippedAndTheLongestWindowWins) {
  // 2 warm-up lines, steps 3-22 at 1000 +- 2%, a 5-line regression at 700,
  // steps 28-37 at 1000: the first window (20 lines) is the longest.
  std::vector<double> tps = {50, 400};
  for (int i = 0; i < 20; ++i)
    tps.push_back(i % 2 ? 980 : 1020);
  for (int i = 0; i < 5; ++i)
    tps.push_back(700);
  for (int i = 0; i < 10; ++i)
    tps.push_back(1000);
  auto a = AnalyzeTrainingLog(Series(tps), Db(), {});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->steady_state.first_step, 3);
  EXPECT_EQ(a->steady_state.last_step, 22);
  EXPECT_EQ(a->steady_state.step_lines, 20);
  EXPECT_DOUBLE_EQ(a->steady_state.tokens_per_s_per_gpu, 1000);  // median of 980s and 1020s
  const LogFinding* w = log_test::FindKind(*a, "warmup");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->step, 1);
  EXPECT_NE(w->message.find("steps 1-2 (2 lines)"), std::string::npos) << w->message;
}

TEST(SteadyState, OneLineSpikeStaysInsideTheWindowButOutOfItsMedian) {
  std::vector<double> tps(30, 1000);
  tps[15] = 300;  // an eval folded into one line
  auto a = AnalyzeTrainingLog(Series(tps), Db(), {});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->steady_state.first_step, 1);
  EXPECT_EQ(a->steady_state.last_step, 30);
  EXPECT_EQ(a->steady_state.step_lines, 29);
  EXPECT_EQ(log_test::CountKind(*a, "warmup"), 0u);
}

TEST(SteadyState, TwoConsecutiveOutliersEndTheWindow) {
  std::vector<double> tps(10, 1000);
  for (int i = 0; i < 14; ++i)
    tps.push_back(i == 3 || i == 4 ? 300 : 1000);
  auto a = AnalyzeTrainingLog(Series(tps), Db(), {});
  ASSERT_TRUE(a.ok());
  // Lines 1-13 in band, 14-15 out, 16-24 in band: the first run wins.
  EXPECT_EQ(a->steady_state.first_step, 1);
  EXPECT_EQ(a->steady_state.last_step, 13);
}

TEST(SteadyState, StepTimeOnlyLogsUseStepsPerSecond) {
  LogTimeline t;
  t.format = LogFormat::kMegatronLm;
  for (int i = 0; i < 6; ++i) {
    LogStep s = Step(i + 1, i + 1);
    s.step_time_s = i == 0 ? 30 : 2.0;
    t.steps.push_back(s);
  }
  auto a = AnalyzeTrainingLog(t, Db(), {});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->steady_state.first_step, 2);
  EXPECT_DOUBLE_EQ(a->steady_state.step_time_s, 2.0);
}

TEST(SteadyState, NoThroughputNoWindow) {
  LogTimeline t;
  t.format = LogFormat::kHfTrainer;
  LogStep s = Step(1, 1);
  s.loss = 2.5;
  t.steps.push_back(s);
  auto a = AnalyzeTrainingLog(t, Db(), {});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->steady_state.first_step, -1);
  EXPECT_TRUE(std::isnan(a->steady_state.mfu));
}

}  // namespace
}  // namespace mfu::steady_state_test
