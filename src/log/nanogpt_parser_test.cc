// nanoGPT reader tests. Format strings from karpathy/nanoGPT @3adf61e
// train.py: L102 "tokens per iteration will be: {tokens_per_iter:,}", L264
// "step {iter_num}: train loss {:.4f}, val loss {:.4f}", L281 "saving
// checkpoint to {out_dir}", L325-327 "iter {iter_num}: loss {lossf:.4f},
// time {dt*1000:.2f}ms, mfu {running_mfu*100:.2f}%"; model.py "number of
// parameters: %.2fM"; configurator.py "Overriding: {key} = {attempt}";
// training-logs.md section 9.

#include <gtest/gtest.h>

#include <cmath>

#include "log/log_formats_test_util.h"

namespace mfu {
namespace {

using testing::CountEvents;
using testing::ReadExcerpt;
using testing::ReadLog;

TEST(NanoGptParser, FormatStringsAndArgs) {
  LogTimeline t = ReadLog(
      "Overriding config with config/train_shakespeare_char.py:\n"
      "n_layer = 6\n"
      "n_head = 6\n"
      "dtype = 'bfloat16'\n"
      "Overriding: batch_size = 12\n"
      "Overriding: n_embd = 384\n"
      "Overriding: block_size = 1024\n"
      "Overriding: gradient_accumulation_steps = 40\n"
      "Overriding: max_iters = 5000\n"
      "tokens per iteration will be: 491,520\n"
      "found vocab_size = 65 (inside data/shakespeare_char/meta.pkl)\n"
      "number of parameters: 10.65M\n"
      "step 0: train loss 4.2874, val loss 4.2823\n"
      "iter 0: loss 4.2649, time 30187.50ms, mfu -100.00%\n"
      "iter 10: loss 3.2438, time 425.36ms, mfu 35.51%\n"
      "step 250: train loss 1.9700, val loss 2.0700\n"
      "saving checkpoint to out-shakespeare-char\n"
      "iter 250: loss 1.9989, time 4321.00ms, mfu 32.10%\n");
  EXPECT_EQ(t.format, LogFormat::kNanoGpt);
  const LogHeader& h = t.header;
  EXPECT_EQ(h.num_layers, 6);
  EXPECT_EQ(h.num_attention_heads, 6);
  EXPECT_EQ(h.hidden_size, 384);
  EXPECT_EQ(h.seq_len, 1024);
  EXPECT_EQ(h.micro_batch, 12);
  EXPECT_EQ(h.grad_accum, 40);
  EXPECT_EQ(h.train_iters, 5000);
  EXPECT_EQ(h.vocab_size, 65);
  EXPECT_EQ(h.precision, "bf16");
  EXPECT_EQ(h.tokens_per_step, 491520);  // = 40 x 12 x 1024
  EXPECT_DOUBLE_EQ(h.parameters, 10.65e6);
  ASSERT_EQ(t.steps.size(), 3u);
  EXPECT_TRUE(std::isnan(t.steps[0].logged_mfu));  // -100.00%: not computed yet
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 30.1875);
  EXPECT_DOUBLE_EQ(t.steps[1].logged_mfu, 0.3551);
  EXPECT_DOUBLE_EQ(t.steps[1].step_time_s, 0.42536);
  EXPECT_DOUBLE_EQ(t.steps[1].tokens_per_s, 491520 / 0.42536);
  EXPECT_EQ(CountEvents(t, LogEventKind::kEvaluation), 2);
  ASSERT_EQ(CountEvents(t, LogEventKind::kCheckpointSave), 1);
  for (const LogEvent& e : t.events) {
    if (e.kind == LogEventKind::kCheckpointSave) {
      EXPECT_EQ(e.step, 250);
      EXPECT_EQ(e.line, 17);
    }
  }
}

TEST(NanoGptParser, Rtx4070Excerpt) {
  LogTimeline t = ReadExcerpt("nanogpt_rtx4070tis-shakespeare-char.log");
  EXPECT_EQ(t.format, LogFormat::kNanoGpt);
  ASSERT_EQ(t.steps.size(), 143u);  // "iter 0" .. "iter 1420" every 10
  EXPECT_EQ(t.steps[0].step, 0);
  EXPECT_DOUBLE_EQ(t.steps[0].loss, 4.2315);
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 1.18363);
  EXPECT_TRUE(std::isnan(t.steps[0].logged_mfu));  // "mfu -100.00%"
  EXPECT_DOUBLE_EQ(t.steps[1].logged_mfu, 0.0963);
  EXPECT_DOUBLE_EQ(t.steps[2].logged_mfu, 0.0971);  // ~9.7%
  // iter 50 follows the eval and checkpoint at the top of the loop: 749.81 ms vs ~450.
  EXPECT_EQ(t.steps[5].step, 50);
  EXPECT_DOUBLE_EQ(t.steps[5].step_time_s, 0.74981);
  EXPECT_EQ(t.steps.back().step, 1420);
  EXPECT_EQ(CountEvents(t, LogEventKind::kEvaluation), 29);
  EXPECT_EQ(CountEvents(t, LogEventKind::kCheckpointSave), 28);
  // Hand check of the ~9.7% (training-logs.md section 9): 2.21e7 FLOPs/token x (256 x 64 x 40) tokens per
  // iteration over the parsed step time, against nanoGPT's fixed A100 peak 312e12, is within 1% of the EMA.
  EXPECT_NEAR(2.21e7 * 256 * 64 * 40 / t.steps[2].step_time_s / 312e12, t.steps[2].logged_mfu, 0.01);
}

}  // namespace
}  // namespace mfu
