// Composer / llm-foundry reader tests. Format from mosaicml/composer
// @6405188 composer/loggers/console_logger.py L206-248 (f'[{unit}={cur}/
// {total}]' + ':' then f'\n\t {prefix}{name}: {value}' per metric, floats
// {:.4f}) and the SpeedMonitor keys (composer/callbacks/speed_monitor.py
// L300-375); the old one-line form from composer_examples-deeplab (2022-23);
// training-logs.md section 10.

#include <gtest/gtest.h>

#include <cmath>

#include "log/log_formats_test_util.h"

namespace mfu {
namespace {

using testing::ReadExcerpt;
using testing::ReadLog;

TEST(ComposerParser, MultiLineRecordWithThroughputUnderSrun) {
  LogTimeline t = ReadLog(
      "0: [batch=100/1000]:\n"
      "0: \t Train time/batch: 99\n"
      "0: \t Train time/token: 204800\n"
      "0: \t Train time/train: 0.5000\n"
      "0: \t Train loss/train/total: 2.5000\n"
      "1: \t Train loss/train/total: 2.5000\n"
      "0: [batch=200/1000]:\n"
      "0: \t Train throughput/batches_per_sec: 0.0556\n"
      "0: \t Train throughput/samples_per_sec: 1.7778\n"
      "0: \t Train throughput/device/tokens_per_sec: 1255.1776\n"
      "0: \t Train throughput/tokens_per_sec: 10041.4208\n"
      "0: \t Train throughput/device/flops_per_sec: 447000000000000.0000\n"
      "0: \t Train throughput/device/mfu: 0.4521\n"
      "0: \t Train time/train: 1.0000\n"
      "0: \t Train lr-DecoupledAdamW/group0: 0.0006\n"
      "0: \t Train memory/reserved_mem: 70.5000\n"
      "0: \t Train loss/train/total: 2.2500\n");
  EXPECT_EQ(t.format, LogFormat::kComposer);
  EXPECT_EQ(t.header.train_iters, 1000);
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.steps[0].step, 100);
  EXPECT_EQ(t.steps[0].line, 1);
  EXPECT_DOUBLE_EQ(t.steps[0].loss, 2.5);
  EXPECT_DOUBLE_EQ(t.steps[0].consumed_tokens, 204800);
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 0.5 * 3600 / 100);  // time/train is cumulative hours
  const LogStep& s = t.steps[1];                               // flushed by Finish
  EXPECT_EQ(s.step, 200);
  EXPECT_DOUBLE_EQ(s.tokens_per_s_per_gpu, 1255.1776);
  EXPECT_DOUBLE_EQ(s.tokens_per_s, 10041.4208);
  EXPECT_DOUBLE_EQ(s.samples_per_s, 1.7778);
  EXPECT_DOUBLE_EQ(s.logged_tflops_per_gpu, 447.0);
  EXPECT_DOUBLE_EQ(s.logged_mfu, 0.4521);  // already a fraction
  EXPECT_DOUBLE_EQ(s.learning_rate, 0.0006);
  EXPECT_NEAR(s.memory_gib, 70.5e9 / 1073741824.0, 1e-9);
  EXPECT_DOUBLE_EQ(s.step_time_s, 0.5 * 3600 / 100);  // (1.0 - 0.5) h over 100 batches
  EXPECT_EQ(s.steps_covered, 100);
}

TEST(ComposerParser, AwsMptExcerpt) {
  LogTimeline t = ReadExcerpt("composer_aws-mpt-console.log");
  EXPECT_EQ(t.format, LogFormat::kComposer);
  ASSERT_EQ(t.steps.size(), 1u);
  const LogStep& s = t.steps[0];
  EXPECT_EQ(s.step, 1);
  EXPECT_DOUBLE_EQ(s.loss, 12.0);
  EXPECT_DOUBLE_EQ(s.consumed_tokens, 0);
  EXPECT_EQ(s.consumed_samples, 0);
  EXPECT_NEAR(s.memory_gib, 20.9650e9 / 1073741824.0, 1e-9);
  EXPECT_DOUBLE_EQ(s.step_time_s, 0.0037 * 3600);   // first batch, from the start
  EXPECT_TRUE(std::isnan(s.tokens_per_s_per_gpu));  // SpeedMonitor window not full yet
  EXPECT_EQ(t.header.micro_batch, 8);
  EXPECT_EQ(t.header.train_iters, 300000000);
}

TEST(ComposerParser, LlmFoundryReadmeExcerpt) {
  LogTimeline t = ReadExcerpt("llm-foundry_train-readme-console.log");
  EXPECT_EQ(t.format, LogFormat::kComposer);
  ASSERT_EQ(t.steps.size(), 4u);
  const double losses[] = {10.9736, 10.9724, 10.9745, 10.6459};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(t.steps[i].step, static_cast<int64_t>(i + 1));
    EXPECT_DOUBLE_EQ(t.steps[i].loss, losses[i]);
  }
}

TEST(ComposerParser, OldOneLinePerMetricForm) {
  LogTimeline t = ReadExcerpt("composer_examples-deeplab-old-console.log");
  EXPECT_EQ(t.format, LogFormat::kComposer);
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.steps[0].step, 16);
  EXPECT_DOUBLE_EQ(t.steps[0].loss, 7.1292);
  EXPECT_DOUBLE_EQ(t.steps[0].learning_rate, 0.0061);
  EXPECT_NEAR(t.steps[0].memory_gib, 28137488384.0 / 1073741824.0, 1e-9);  // bytes in the old form
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 17.1607 / 16);                  // wall_clock/train seconds, from the start
  EXPECT_EQ(t.steps[1].step, 17);
  EXPECT_DOUBLE_EQ(t.steps[1].loss, 7.1243);
  EXPECT_NEAR(t.steps[1].step_time_s, 17.8836 - 17.1607, 1e-9);
}

}  // namespace
}  // namespace mfu
