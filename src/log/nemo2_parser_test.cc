// NeMo 2.0 reader: ProgressPrinter lines built from the format string
// (nemo/lightning/pytorch/callbacks/progress_printer.py L55-63, L124-151
// @8cfedd72) and the two real excerpts.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "log/log_test_util.h"
#include "mfu/training_log.h"

namespace mfu {
namespace {

using log_testing::ReadExcerptTimeline;

TEST(Nemo2, ProgressLineEveryField) {
  // prefix = self.train_description + f" epoch {epoch}, iteration {n-1}/{total-1}",
  // then f' | {metric}: {val}' for integral floats and f' | {metric}: {val:.4}'
  // otherwise: 4 significant digits, so 12340.0 prints "1.234e+04".
  // TFLOPS_per_GPU from flops_callback.py L146-214, tokens_per_sec_per_gpu
  // and "train_step_timing in s" from exp_manager.py L297-386.
  StatusOr<LogTimeline> t = ReadTrainingLog(
      "Training epoch 0, iteration 9/99 | lr: 1.5e-05 | global_batch_size: 256 | global_step: 9 |"
      " reduced_train_loss: 7.123 | train_step_timing in s: 1.234 | consumed_samples: 2560 |"
      " TFLOPS_per_GPU: 512.3 | tokens_per_sec_per_gpu: 1.234e+04\n",
      "nemo.log");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, LogFormat::kNemo2);
  ASSERT_EQ(t->steps.size(), 1u);
  const LogStep& s = t->steps[0];
  EXPECT_EQ(s.step, 9);
  EXPECT_DOUBLE_EQ(s.learning_rate, 1.5e-5);
  EXPECT_EQ(s.global_batch, 256);
  EXPECT_DOUBLE_EQ(s.loss, 7.123);
  EXPECT_DOUBLE_EQ(s.step_time_s, 1.234);
  EXPECT_EQ(s.consumed_samples, 2560);
  EXPECT_DOUBLE_EQ(s.logged_tflops_per_gpu, 512.3);
  EXPECT_DOUBLE_EQ(s.tokens_per_s_per_gpu, 12340);
  EXPECT_EQ(t->header.train_iters, 100);  // total - 1 = 99 printed
}

// A global_step, batch or sample count no integer can hold (a corrupted
// line) is ignored: the step id falls back to the printed iteration.
TEST(Nemo2, OutOfRangeCountsAreIgnored) {
  StatusOr<LogTimeline> t = ReadTrainingLog(
      "Training epoch 0, iteration 9/99 | global_batch_size: 1e300 | global_step: -1e300 |"
      " train_step_timing in s: 1.5 | consumed_samples: 9e99\n",
      "nemo.log");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->steps.size(), 1u);
  EXPECT_EQ(t->steps[0].step, 9);
  EXPECT_EQ(t->steps[0].global_batch, 0);
  EXPECT_EQ(t->steps[0].consumed_samples, -1);
  EXPECT_DOUBLE_EQ(t->steps[0].step_time_s, 1.5);
}

TEST(Nemo2, ResiliencyNotebook) {
  // nemo2_resiliency-demo-notebook.log: nemo-run + torchrun prefixes on 8
  // ranks, only [default0] prints progress; global_step 0..19 with the
  // epoch rolling over at global_step 19 ("Training epoch 1, iteration 0/19").
  LogTimeline t = ReadExcerptTimeline("nemo2_resiliency-demo-notebook.log");
  EXPECT_EQ(t.format, LogFormat::kNemo2);
  ASSERT_EQ(t.steps.size(), 20u);
  for (size_t i = 0; i < t.steps.size(); ++i) {
    EXPECT_EQ(t.steps[i].step, static_cast<int64_t>(i));
    EXPECT_EQ(t.steps[i].attempt, 0);
  }
  EXPECT_EQ(t.attempts, 1);
  EXPECT_EQ(t.stats.chosen_rank, "ining-demo/0 [default0]:");
  EXPECT_EQ(t.stats.ranks_seen, 1);
  // Line 153: the first progress line, without consumed_samples.
  EXPECT_EQ(t.steps[0].line, 153);
  EXPECT_EQ(t.steps[0].consumed_samples, -1);
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 10.31);
  EXPECT_DOUBLE_EQ(t.steps[0].learning_rate, 1.499e-7);
  EXPECT_EQ(t.steps[1].consumed_samples, 1024);
  EXPECT_DOUBLE_EQ(t.steps[1].step_time_s, 7.549);
  EXPECT_DOUBLE_EQ(t.steps[1].loss, 11.03);
  EXPECT_EQ(t.steps[1].global_batch, 512);
  // Epoch 1, iteration 0 is global_step 19.
  EXPECT_EQ(t.steps[19].consumed_samples, 10240);
  EXPECT_DOUBLE_EQ(t.steps[19].step_time_s, 7.592);
  // Header: "MEMBER: 4/8", "Starting with 8 processes", parameters, microbatches.
  EXPECT_EQ(t.header.world_size, 8);
  EXPECT_DOUBLE_EQ(t.header.parameters, 54663936);
  EXPECT_EQ(t.header.grad_accum, 128);
  EXPECT_EQ(t.header.train_iters, 20);
  // Async checkpoints: scheduled at step 9 (path "-step=9-"), finalized for
  // step 10, scheduled at 18, finalized for 19; then the end of fit.
  int saves = 0;
  for (const LogEvent& e : t.events) {
    if (e.kind == LogEventKind::kCheckpointSaveAsync) {
      ++saves;
      EXPECT_FALSE(std::isnan(e.time_s));
    }
  }
  EXPECT_EQ(saves, 4);
  ASSERT_FALSE(t.events.empty());
  EXPECT_EQ(t.events.back().kind, LogEventKind::kJobEnd);
  EXPECT_EQ(t.events.back().step, 19);
}

TEST(Nemo2, SkyPilotRayExcerpt) {
  // nemo2_aws-skypilot-ray.log: Ray prefix, log_every_n_steps=10.
  LogTimeline t = ReadExcerptTimeline("nemo2_aws-skypilot-ray.log");
  ASSERT_EQ(t.steps.size(), 5u);
  EXPECT_EQ(t.stats.chosen_rank, "(pretraining, pid=4112)");
  EXPECT_EQ(t.steps[0].step, 19);
  EXPECT_EQ(t.steps[1].step, 29);
  EXPECT_EQ(t.steps[1].steps_covered, 10);
  EXPECT_EQ(t.steps[2].step, 45);
  EXPECT_EQ(t.steps[4].step, 48);
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 46.86);
  EXPECT_EQ(t.steps[1].consumed_samples, 15360);
  EXPECT_EQ(t.header.log_interval, 10);
  ASSERT_GE(t.events.size(), 2u);
  EXPECT_EQ(t.events[1].kind, LogEventKind::kCheckpointSaveAsync);
  EXPECT_EQ(t.events[1].step, 19);
}

}  // namespace
}  // namespace mfu
