// MaxText reader tests. Format strings from AI-Hypercomputer/maxtext
// @e591f30 src/maxtext/common/metric_logger.py L160-230
// (_log_training_metrics: ", "-joined parts, optional "[Rampup Batch Size
// Phase]", lm_loss/perplexity since 719eb7799, the profiler-boundary form
// since d60808f54) and maxtext_utils.py L1364-1390 ("Per train step:" /
// " Total TFLOPs: "); training-logs.md section 8.

#include <gtest/gtest.h>

#include <cmath>

#include "log/log_formats_test_util.h"

namespace mfu {
namespace {

using testing::ReadExcerpt;
using testing::ReadLog;

TEST(MaxTextParser, FormatStringEveryPart) {
  LogTimeline t = ReadLog(
      "Num_devices: 256, shape (1, 1, 256, 1, 1, 1, 1, 1, 1, 1, 1, 1)\n"
      "Config param per_device_batch_size: 4.0\n"
      "Config param max_target_length: 8192\n"
      "Config param steps: 100\n"
      "I1201 10:00:00.000000     514 metric_logger.py:200] [Rampup Batch Size Phase], completed step: 0, "
      "seconds: 30.500, Tokens/s/device: 1074.426, total_weights: 2097152, loss: 12.125\n"
      "I1201 10:00:05.000000     514 metric_logger.py:200] completed step: 1, seconds: 5.250, live slice count: 2, "
      "TFLOP/s/device: 400.125, Tokens/s/device: 6241.524, total_weights: 8388608, loss: 11.500, lm_loss: 11.250, "
      "perplexity: 76879.800, moe_lb_loss: 0.012345, mtp_loss: 0.250\n"
      "completed profiler activation/deactivation step: 2, total_weights: 8388608, loss: 11.000\n");
  EXPECT_EQ(t.format, LogFormat::kMaxText);
  EXPECT_EQ(t.header.world_size, 256);
  EXPECT_EQ(t.header.micro_batch, 4);
  EXPECT_EQ(t.header.seq_len, 8192);
  EXPECT_EQ(t.header.train_iters, 100);
  EXPECT_EQ(t.header.tokens_per_step, 4 * 8192 * 256);
  ASSERT_EQ(t.steps.size(), 3u);
  const LogStep& ramp = t.steps[0];
  EXPECT_EQ(ramp.step, 0);  // 0-based
  EXPECT_DOUBLE_EQ(ramp.step_time_s, 30.5);
  EXPECT_TRUE(std::isnan(ramp.logged_tflops_per_gpu));  // not printed during ramp-up
  EXPECT_DOUBLE_EQ(ramp.tokens_per_s_per_gpu, 1074.426);
  EXPECT_DOUBLE_EQ(ramp.loss, 12.125);
  const LogStep& s = t.steps[1];
  EXPECT_EQ(s.step, 1);
  EXPECT_DOUBLE_EQ(s.step_time_s, 5.25);
  EXPECT_DOUBLE_EQ(s.logged_tflops_per_gpu, 400.125);
  EXPECT_DOUBLE_EQ(s.tokens_per_s_per_gpu, 6241.524);
  EXPECT_DOUBLE_EQ(s.tokens_per_s, 6241.524 * 256);
  EXPECT_DOUBLE_EQ(s.loss, 11.5);  // "loss:", not "lm_loss:" or "mtp_loss:"
  const LogStep& prof = t.steps[2];
  EXPECT_EQ(prof.step, 2);
  EXPECT_TRUE(std::isnan(prof.step_time_s));  // hidden on profiler boundaries
  EXPECT_DOUBLE_EQ(prof.loss, 11.0);
}

TEST(MaxTextParser, V5pExcerpt) {
  LogTimeline t = ReadExcerpt("maxtext_understand-logs-v5p.log");
  EXPECT_EQ(t.format, LogFormat::kMaxText);
  EXPECT_EQ(t.header.world_size, 4);
  EXPECT_DOUBLE_EQ(t.header.parameters, 15.933e9);
  EXPECT_DOUBLE_EQ(t.header.logged_flops_per_step_per_gpu, 764.67e12);
  EXPECT_EQ(t.header.logged_flops_line, 16);
  // Steps 0-9, then the doc's second block (steps 8-9 of another run): a restart.
  ASSERT_EQ(t.steps.size(), 12u);
  EXPECT_EQ(t.attempts, 2);
  EXPECT_EQ(t.steps[0].step, 0);
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 44.923);
  const LogStep& s1 = t.steps[1];
  EXPECT_EQ(s1.step, 1);
  EXPECT_DOUBLE_EQ(s1.step_time_s, 0.319);
  EXPECT_DOUBLE_EQ(s1.logged_tflops_per_gpu, 2400.734);  // async dispatch: above the 459 peak
  EXPECT_DOUBLE_EQ(s1.tokens_per_s_per_gpu, 154316.608);
  EXPECT_DOUBLE_EQ(s1.loss, 12.038);
  // TFLOP/s/device = per-step TFLOPs / seconds: 764.67 / 5.668 = 134.91 (step 5 prints 134.909).
  EXPECT_NEAR(t.header.logged_flops_per_step_per_gpu / 1e12 / t.steps[5].step_time_s, t.steps[5].logged_tflops_per_gpu,
              0.01);
  EXPECT_EQ(t.steps[10].attempt, 1);
  EXPECT_EQ(t.steps[10].step, 8);
  EXPECT_DOUBLE_EQ(t.steps[10].loss, 9.596);
}

TEST(MaxTextParser, MaxtestExcerptGlogLinesAndGaps) {
  LogTimeline t = ReadExcerpt("maxtext_maxtest-getting-started.log");
  EXPECT_EQ(t.format, LogFormat::kMaxText);
  ASSERT_EQ(t.steps.size(), 5u);
  EXPECT_DOUBLE_EQ(t.steps[2].step_time_s, 0.002);
  EXPECT_DOUBLE_EQ(t.steps[2].logged_tflops_per_gpu, 917442.589);
  EXPECT_DOUBLE_EQ(t.steps[4].loss, 9.610);
}

}  // namespace
}  // namespace mfu
