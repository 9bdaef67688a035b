// Every run-shape finding on a hand-built timeline built to show it, and
// the figures-above-peak findings.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "log/analysis_test_util.h"

namespace mfu {
namespace {

using log_test::CountKind;
using log_test::Db;
using log_test::FindKind;
using log_test::Step;

LogTimeline Series(const std::vector<double>& tps, int64_t first_step = 1, int64_t stride = 1) {
  LogTimeline t;
  t.format = LogFormat::kNanoGpt;
  for (size_t i = 0; i < tps.size(); ++i) {
    LogStep s = Step(first_step + stride * static_cast<int64_t>(i), static_cast<int64_t>(i + 1));
    s.tokens_per_s_per_gpu = tps[i];
    t.steps.push_back(s);
  }
  return t;
}

TEST(LogFindings, RegressionNeedsFifteenPercentForThreeLines) {
  std::vector<double> tps(20, 1000);
  for (int i = 10; i < 14; ++i)
    tps[static_cast<size_t>(i)] = 800;  // -20% for 4 lines
  tps[5] = tps[6] = 900;                // -10% for 2 lines: neither
  auto a = AnalyzeTrainingLog(Series(tps), Db(), {});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(CountKind(*a, "regression"), 1u);
  const LogFinding* f = FindKind(*a, "regression");
  EXPECT_EQ(f->step, 11);
  EXPECT_NE(f->message.find("(4 lines)"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("20% below"), std::string::npos) << f->message;
  // Two lines at -20% are not a regression.
  tps[13] = tps[12] = 1000;
  a = AnalyzeTrainingLog(Series(tps), Db(), {});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(CountKind(*a, "regression"), 0u);
}

TEST(LogFindings, SingleSpikesSlowAndFast) {
  std::vector<double> tps(12, 1000);
  tps[4] = 450;   // 2.2x slower
  tps[8] = 2500;  // 2.5x faster
  tps[10] = 600;  // 1.7x slower: no spike
  auto a = AnalyzeTrainingLog(Series(tps), Db(), {});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(CountKind(*a, "spike"), 2u);
  EXPECT_EQ(a->findings[a->findings.size() - 2].step, 5);
  EXPECT_NE(a->findings[a->findings.size() - 2].message.find("slower"), std::string::npos);
  EXPECT_NE(a->findings.back().message.find("faster"), std::string::npos);
}

TEST(LogFindings, PeriodicSpikesAreOneFindingWithThePeriod) {
  // nanoGPT folds eval_interval's evaluation into the next iter line.
  std::vector<double> tps(40, 1000);
  for (size_t i = 5; i < 40; i += 10)
    tps[i] = 100;
  auto a = AnalyzeTrainingLog(Series(tps, 0, 10), Db(), {});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(CountKind(*a, "spike"), 1u);
  const LogFinding* f = FindKind(*a, "spike");
  EXPECT_EQ(f->step, 50);
  EXPECT_NE(f->message.find("every 100 steps"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("(4 lines)"), std::string::npos) << f->message;
}

TEST(LogFindings, RestartWhenTheStepGoesBackOrAttemptChanges) {
  LogTimeline t = Series(std::vector<double>(10, 1000));
  for (size_t i = 6; i < 10; ++i) {
    t.steps[i].attempt = 1;
    t.steps[i].step = static_cast<int64_t>(i) - 2;  // 5, 6, 7, 8 after 6
  }
  auto a = AnalyzeTrainingLog(t, Db(), {});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(CountKind(*a, "restart"), 1u);
  const LogFinding* f = FindKind(*a, "restart");
  EXPECT_EQ(f->step, 4);
  EXPECT_EQ(f->line, 7);
  EXPECT_NE(f->message.find("from 6 to 4"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("3 steps run again"), std::string::npos) << f->message;
}

TEST(LogFindings, RestartsCappedAtTwentyThenCounted) {
  // Steps 1,2,1,2,...: 250 pairs, so the step goes back 249 times (every
  // odd line after the first pair), each a new attempt with its own
  // warm-up-free run. 20 restarts are listed one by one; the 21st finding
  // says the other 229 are like them, at the 20th's line.
  LogTimeline t = Series(std::vector<double>(500, 1000));
  for (size_t i = 0; i < t.steps.size(); ++i) {
    t.steps[i].step = static_cast<int64_t>(i % 2) + 1;
    t.steps[i].attempt = static_cast<int32_t>(i / 2);
  }
  auto a = AnalyzeTrainingLog(t, Db(), {});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(CountKind(*a, "restart"), 21u);
  std::vector<const LogFinding*> restarts;
  for (const LogFinding& f : a->findings) {
    if (f.kind == "restart")
      restarts.push_back(&f);
  }
  EXPECT_EQ(restarts[0]->line, 3);    // the first step 1 after a step 2
  EXPECT_EQ(restarts[19]->line, 41);  // the 20th: line 2 * 20 + 1
  EXPECT_EQ(restarts[20]->line, 41);
  EXPECT_EQ(restarts[20]->message, "229 more restart lines like the above (the JSON and CSV outputs list the steps)");
}

TEST(LogFindings, SkippedIterationsSummed) {
  LogTimeline t = Series(std::vector<double>(5, 1000));
  t.steps[1].skipped_iterations = 1;
  t.steps[3].skipped_iterations = 2;
  auto a = AnalyzeTrainingLog(t, Db(), {});
  ASSERT_TRUE(a.ok());
  const LogFinding* f = FindKind(*a, "skipped_iterations");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->step, 2);
  EXPECT_NE(f->message.find("3 iterations skipped on 2 lines"), std::string::npos) << f->message;
}

// tests/data/logs/maxtext_understand-logs-v5p.log: step 1 prints
// `TFLOP/s/device: 2400...` on a v5p whose dense BF16 peak is 459
// (accelerators.csv tpu-v5p): async dispatch timed the step.
TEST(LogFindings, LoggedTflopsAboveThePeak) {
  LogTimeline t;
  t.format = LogFormat::kMaxText;
  const double tflops[] = {2400, 180, 181, 179};
  for (int i = 0; i < 4; ++i) {
    LogStep s = Step(i, i + 20);
    s.logged_tflops_per_gpu = tflops[i];
    t.steps.push_back(s);
  }
  LogAnalysisRequest r;
  r.gpu = "v5p";
  auto a = AnalyzeTrainingLog(t, Db(), r);
  ASSERT_TRUE(a.ok()) << a.status().message();
  const LogFinding* f = FindKind(*a, "tflops_above_peak");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->step, 0);
  EXPECT_NE(f->message.find("459.0"), std::string::npos) << f->message;
  EXPECT_EQ(CountKind(*a, "warmup"), 1u);
  EXPECT_EQ(a->steady_state.first_step, 1);
}

TEST(LogFindings, RecomputedMfuAbove100) {
  LogTimeline t = Series({50000, 50000});
  LogAnalysisRequest r;
  r.model = log_test::Model("llama-3-8b");
  r.gpu = "h100";
  r.gpus = 8;
  r.seq_len = 8192;
  auto a = AnalyzeTrainingLog(t, Db(), r);
  ASSERT_TRUE(a.ok());
  const LogFinding* f = FindKind(*a, "mfu_above_100");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("recomputed"), std::string::npos);
}

}  // namespace
}  // namespace mfu
