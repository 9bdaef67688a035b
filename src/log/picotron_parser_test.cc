// picotron reader tests. Format from huggingface/picotron train.py
// (training-logs.md section 13): f"[rank {r}] Step: {step:<5d} | Loss: {loss:6.4f}
// | Global batch size: {to_readable_format(tokens_per_step):>7s} | Tokens/s:
// {..:>7s} | Tokens/s/GPU: {..:>7s} | Tokens: {..:>7s}[/max] | MFU:
// {mfu:5.2f}% | Memory usage: {reserved / 1e9:6.2f}GB", and the variant
// with "LR: {:.2e} | GradNorm: {:.2f}" and "Memory: ..GB".

#include <gtest/gtest.h>

#include <cmath>

#include "log/log_formats_test_util.h"

namespace mfu {
namespace {

using testing::ReadExcerpt;
using testing::ReadLog;

TEST(PicotronParser, VariantWithLrGradNormAndMaxTokens) {
  LogTimeline t = ReadLog(
      "[rank 0] Step: 12    | Loss: 3.2500 | LR: 3.00e-04 | GradNorm: 0.85 | Global batch size:   1.05M | "
      "Tokens/s: 400.00K | Tokens/s/GPU:  50.00K | Tokens:  12.58M/10.00B | MFU: 41.25% | Memory: 60.12GB\n");
  EXPECT_EQ(t.format, LogFormat::kPicotron);
  ASSERT_EQ(t.steps.size(), 1u);
  const LogStep& s = t.steps[0];
  EXPECT_EQ(s.step, 12);
  EXPECT_DOUBLE_EQ(s.loss, 3.25);
  EXPECT_DOUBLE_EQ(s.learning_rate, 3e-4);
  EXPECT_DOUBLE_EQ(s.grad_norm, 0.85);
  EXPECT_DOUBLE_EQ(s.tokens_per_s, 400e3);
  EXPECT_DOUBLE_EQ(s.tokens_per_s_per_gpu, 50e3);
  EXPECT_DOUBLE_EQ(s.consumed_tokens, 12.58e6);
  EXPECT_DOUBLE_EQ(s.logged_mfu, 0.4125);
  EXPECT_NEAR(s.memory_gib, 60.12e9 / 1073741824.0, 1e-9);
  EXPECT_DOUBLE_EQ(s.step_time_s, 1.05e6 / 400e3);  // Tokens/s = tokens per step / step time
  EXPECT_EQ(t.header.world_size, 8);                // 400K / 50K
  EXPECT_EQ(t.header.tokens_per_step, 1050000);
}

TEST(PicotronParser, AwsSmollmExcerptKSuffixes) {
  LogTimeline t = ReadExcerpt("picotron_aws-smollm-ec2.log");
  EXPECT_EQ(t.format, LogFormat::kPicotron);
  ASSERT_EQ(t.steps.size(), 3u);
  const LogStep& s1 = t.steps[0];
  EXPECT_EQ(s1.step, 1);
  EXPECT_DOUBLE_EQ(s1.loss, 10.9062);
  EXPECT_DOUBLE_EQ(s1.tokens_per_s, 199.02);
  EXPECT_DOUBLE_EQ(s1.tokens_per_s_per_gpu, 24.88);
  EXPECT_DOUBLE_EQ(s1.consumed_tokens, 2050);  // "2.05K"
  EXPECT_DOUBLE_EQ(s1.logged_mfu, 0.0001);
  EXPECT_NEAR(s1.memory_gib, 1.75e9 / 1073741824.0, 1e-9);
  EXPECT_DOUBLE_EQ(s1.step_time_s, 2050 / 199.02);
  EXPECT_DOUBLE_EQ(t.steps[1].tokens_per_s, 1680);          // "1.68K"
  EXPECT_DOUBLE_EQ(t.steps[2].tokens_per_s, 10610);         // "10.61K"
  EXPECT_DOUBLE_EQ(t.steps[2].tokens_per_s_per_gpu, 1330);  // "1.33K"
  EXPECT_DOUBLE_EQ(t.steps[2].consumed_tokens, 6140);
  EXPECT_DOUBLE_EQ(t.steps[2].logged_mfu, 0.0043);
  EXPECT_EQ(t.header.world_size, 8);  // 199.02 / 24.88 = 8.0
  EXPECT_EQ(t.header.tokens_per_step, 2050);
}

}  // namespace
}  // namespace mfu
