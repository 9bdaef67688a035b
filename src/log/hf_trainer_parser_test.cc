// HF Trainer reader tests (training-logs.md section 7). The per-log line is
// ProgressCallback.on_log's `self.training_bar.write(str(shallow_logs))`
// (src/transformers/trainer_callback.py @55093b758b33) with epoch rounded
// to 2 decimals; the final dict and the metrics block come from
// speed_metrics (trainer_utils.py @c599e989ac5f) and Trainer.log_metrics /
// metrics_format ("{int(v) >> 30}GF", runtime "H:MM:SS.cc"); the header is
// trainer.py's "***** Running training *****" block.

#include <gtest/gtest.h>

#include <cmath>

#include "log/hf_pydict.h"
#include "log/log_formats_test_util.h"

namespace mfu {
namespace {

using testing::CountEvents;
using testing::ReadExcerpt;
using testing::ReadLog;
using testing::TrainSteps;

TEST(HfPyDict, PythonLiterals) {
  std::optional<std::vector<log_internal::PyItem>> d = log_internal::ParsePyDict(
      "{'loss': nan, 'grad_norm': inf, 'learning_rate': 4.175257731958763e-05, 'epoch': -0.5, 'flag': True, "
      "'off': False, 'none': None, 'name': 'it''s', 'nested': {'a': [1, 2, (3, 4)]}, 'neg': -inf}");
  ASSERT_FALSE(d.has_value());  // 'it''s' is not a Python repr: malformed
  d = log_internal::ParsePyDict(
      "{'loss': nan, 'grad_norm': inf, 'learning_rate': 4.175257731958763e-05, 'epoch': -0.5, 'flag': True, "
      "'off': False, 'none': None, 'name': \"it's\", 'nested': {'a': [1, 2, (3, 4)]}, 'neg': -inf}");
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(std::isnan(*log_internal::PyNumber(*d, "loss")));
  EXPECT_TRUE(std::isinf(*log_internal::PyNumber(*d, "grad_norm")));
  EXPECT_DOUBLE_EQ(*log_internal::PyNumber(*d, "learning_rate"), 4.175257731958763e-05);
  EXPECT_DOUBLE_EQ(*log_internal::PyNumber(*d, "epoch"), -0.5);
  EXPECT_DOUBLE_EQ(*log_internal::PyNumber(*d, "flag"), 1);
  EXPECT_DOUBLE_EQ(*log_internal::PyNumber(*d, "off"), 0);
  EXPECT_FALSE(log_internal::PyNumber(*d, "none").has_value());
  EXPECT_TRUE(log_internal::PyHas(*d, "nested"));
  EXPECT_LT(*log_internal::PyNumber(*d, "neg"), 0);
  EXPECT_FALSE(log_internal::ParsePyDict("{'loss': 2.5, 'epoch").has_value());  // cut short
  EXPECT_FALSE(log_internal::ParsePyDict("{'a': " + std::string(100, '[')).has_value());
}

TEST(HfTrainerParser, HeaderStepIdsFromEpochAndLoggingSteps) {
  // Steps per epoch = 97 (Total optimization steps / Num Epochs); the first
  // record at epoch 0.16 gives logging_steps 16 (16/97 = 0.1649 -> 0.16).
  std::string log =
      "[INFO|trainer.py:2128] 2024-07-17 00:18:20,620 >> ***** Running training *****\n"
      "[INFO|trainer.py:2129] 2024-07-17 00:18:20,620 >>   Num examples = 100,000\n"
      "[INFO|trainer.py:2130] 2024-07-17 00:18:20,620 >>   Num Epochs = 1\n"
      "[INFO|trainer.py:2131] 2024-07-17 00:18:20,620 >>   Instantaneous batch size per device = 8\n"
      "[INFO|trainer.py:2134] 2024-07-17 00:18:20,620 >>   Total train batch size (w. parallel, distributed & "
      "accumulation) = 1,024\n"
      "[INFO|trainer.py:2135] 2024-07-17 00:18:20,620 >>   Gradient Accumulation steps = 16\n"
      "[INFO|trainer.py:2136] 2024-07-17 00:18:20,620 >>   Total optimization steps = 97\n"
      "[INFO|trainer.py:2137] 2024-07-17 00:18:20,622 >>   Number of trainable parameters = 148,796,794\n"
      "{'loss': 2.9859, 'grad_norm': 0.97, 'learning_rate': 4.1e-05, 'epoch': 0.16}\n"
      " 36%|###6      | 35/97 [03:39<06:42,  6.39s/it]{'loss': nan, 'grad_norm': inf, 'learning_rate': 3.3e-05, "
      "'epoch': 0.33}\n"
      "{'loss': 2.716, 'grad_norm': 2.2, 'learning_rate': 2.5e-05, 'epoch': 0.49, 'flag': True, 'x': None}\n"
      "{'eval_loss': 2.5, 'eval_runtime': 12.5, 'eval_samples_per_second': 8.0, 'epoch': 0.49}\n"
      "[INFO|trainer.py:4643] 2024-07-17 00:30:00,000 >> ***** Running Evaluation *****\n"
      "[INFO|trainer.py:4645] 2024-07-17 00:30:00,000 >>   Num examples = 500\n";
  LogTimeline t = ReadLog(log);
  EXPECT_EQ(t.format, LogFormat::kHfTrainer);
  EXPECT_EQ(t.header.world_size, 8);  // 1024 / (8 x 16)
  EXPECT_EQ(t.header.global_batch, 1024);
  EXPECT_EQ(t.header.micro_batch, 8);
  EXPECT_EQ(t.header.grad_accum, 16);
  EXPECT_EQ(t.header.train_iters, 97);
  EXPECT_DOUBLE_EQ(t.header.parameters, 148796794.0);
  std::vector<LogStep> steps = TrainSteps(t);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].step, 16);
  EXPECT_EQ(steps[1].step, 32);
  EXPECT_EQ(steps[2].step, 48);
  EXPECT_EQ(steps[1].line, 10);  // the glued tqdm bar is skipped
  EXPECT_TRUE(std::isnan(steps[1].loss));
  EXPECT_TRUE(std::isinf(steps[1].grad_norm));
  EXPECT_DOUBLE_EQ(steps[2].learning_rate, 2.5e-05);
  ASSERT_EQ(t.steps.size(), 4u);
  EXPECT_TRUE(t.steps[3].validation);
  EXPECT_EQ(t.steps[3].step, 48);
  EXPECT_DOUBLE_EQ(t.steps[3].loss, 2.5);
  ASSERT_EQ(CountEvents(t, LogEventKind::kEvaluation), 1);
}

// Without "Num Epochs" the steps per epoch come from Num examples / total
// batch (10,240 / 1,024 = 10); the evaluation banner's "Num examples = 500"
// must not replace it (it would make one step per epoch, and the record at
// epoch 0.4 step 1 instead of 4).
TEST(HfTrainerParser, EvaluationBannerDoesNotChangeStepsPerEpoch) {
  LogTimeline t = ReadLog(
      "[INFO|trainer.py:2128] 2024-07-17 00:18:20,620 >> ***** Running training *****\n"
      "[INFO|trainer.py:2129] 2024-07-17 00:18:20,620 >>   Num examples = 10,240\n"
      "[INFO|trainer.py:2134] 2024-07-17 00:18:20,620 >>   Total train batch size (w. parallel, distributed & "
      "accumulation) = 1,024\n"
      "[INFO|trainer.py:2136] 2024-07-17 00:18:20,620 >>   Total optimization steps = 20\n"
      "{'loss': 2.5, 'learning_rate': 4e-05, 'epoch': 0.2}\n"
      "[INFO|trainer.py:4643] 2024-07-17 00:30:00,000 >> ***** Running Evaluation *****\n"
      "[INFO|trainer.py:4645] 2024-07-17 00:30:00,000 >>   Num examples = 500\n"
      "{'loss': 2.25, 'learning_rate': 3e-05, 'epoch': 0.4}\n");
  std::vector<LogStep> steps = TrainSteps(t);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].step, 2);  // 0.2 x 10
  EXPECT_EQ(steps[1].step, 4);  // 0.4 x 10
}

TEST(HfTrainerParser, NoHeaderCountsRecords) {
  LogTimeline t = ReadLog(
      "{'loss': 1.5, 'learning_rate': 1e-05, 'epoch': 0.5}\n{'loss': 1.25, 'learning_rate': 5e-06, 'epoch': 1.0}\n");
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.steps[0].step, 1);
  EXPECT_EQ(t.steps[1].step, 2);
  EXPECT_EQ(t.header.world_size, 0);
}

TEST(HfTrainerParser, Esm2ExcerptTwoRanksAndBars) {
  LogTimeline t = ReadExcerpt("hf-transformers_aws-esm2-ddp-srun.log");
  EXPECT_EQ(t.format, LogFormat::kHfTrainer);
  EXPECT_EQ(t.header.world_size, 8);  // 1,024 / (8 x 16), training-logs.md section 7.3
  EXPECT_DOUBLE_EQ(t.header.parameters, 148796794.0);
  ASSERT_EQ(t.steps.size(), 5u);
  // epochs 0.16, 0.33, 0.49, 0.66, 0.82 of 97 steps, logging every 16:
  // 16/97 = 0.165, 32/97 = 0.330, 48/97 = 0.495, 64/97 = 0.660, 80/97 = 0.825.
  const int64_t expected[] = {16, 32, 48, 64, 80};
  const double losses[] = {2.9859, 2.8209, 2.716, 2.6697, 2.6591};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(t.steps[i].step, expected[i]);
    EXPECT_DOUBLE_EQ(t.steps[i].loss, losses[i]);
  }
  EXPECT_DOUBLE_EQ(t.steps[0].grad_norm, 0.9704080820083618);
  EXPECT_DOUBLE_EQ(t.steps[0].learning_rate, 4.175257731958763e-05);
  EXPECT_EQ(t.steps[0].line, 17);
  EXPECT_EQ(CountEvents(t, LogEventKind::kJobStart), 1);  // both ranks print the header
}

TEST(HfTrainerParser, EzpzExcerptRuntimeTokensAndTotalFlos) {
  LogTimeline t = ReadExcerpt("hf-transformers_ezpz-fsdp-aurora.log");
  EXPECT_EQ(t.format, LogFormat::kHfTrainer);
  const LogHeader& h = t.header;
  EXPECT_EQ(h.world_size, 24);  // 24 / (1 x 1)
  EXPECT_EQ(h.train_iters, 100);
  EXPECT_DOUBLE_EQ(h.parameters, 51492278.0);  // the FSDP shard: 1.2358e9 / 24
  std::vector<LogStep> steps = TrainSteps(t);
  // 11 records, the doc author's "[clipped]" gap, then steps 96-100.
  ASSERT_EQ(steps.size(), 16u);
  EXPECT_EQ(steps[0].step, 1);
  EXPECT_EQ(steps[10].step, 11);
  EXPECT_EQ(steps[11].step, 96);  // re-anchored from epoch 0.96 x 100 steps per epoch
  EXPECT_EQ(steps[15].step, 100);
  // Step 1: 196,608 tokens in 27.3002 s; the printed cumulative rate 7201.711 agrees.
  EXPECT_DOUBLE_EQ(steps[0].consumed_tokens, 196608);
  EXPECT_DOUBLE_EQ(steps[0].step_time_s, 27.3002);
  EXPECT_NEAR(steps[0].tokens_per_s, 7201.711, 0.01);  // HF divides by the unrounded runtime
  // Step 2: (393216 - 196608) tokens in 30.8283 - 27.3002 s, whole job.
  EXPECT_NEAR(steps[1].step_time_s, 30.8283 - 27.3002, 1e-9);
  EXPECT_NEAR(steps[1].tokens_per_s, 196608 / (30.8283 - 27.3002), 1e-6);
  EXPECT_NEAR(steps[1].tokens_per_s_per_gpu, 196608 / (30.8283 - 27.3002) / 24, 1e-6);
  // Step 96 covers 85 steps since step 11 (63.8948 s -> 375.093 s).
  EXPECT_EQ(steps[11].steps_covered, 85);
  EXPECT_NEAR(steps[11].step_time_s, (375.093 - 63.8948) / 85, 1e-9);
  // time = "***** Running training *****" (2025-12-31 13:12:20,429) + train_runtime.
  EXPECT_NEAR(steps[0].time_s, 1767186740.429 + 27.3002, 1e-3);
  // total_flos = 4454709GF: units of 2^30 FLOPs (metrics_format "int(v) >> 30").
  EXPECT_DOUBLE_EQ(steps[15].logged_total_flos, 4454709.0 * 1073741824.0);
  // = 6 x 973.1e6 non-embedding params (Llama-3.2-1B) x 819,200 tokens per
  // rank: 1/24 of 6ND, the FSDP shard count (training-logs.md section 7.3).
  EXPECT_NEAR(steps[15].logged_total_flos / (6 * 973.1e6 * 819200), 1.0, 2e-3);
  EXPECT_NEAR(19660800.0 / 24, 819200, 0);
  // The final dict: train_tokens_per_second 1925.584 is PER DEVICE:
  // 19,660,800 / 425.4295 / 24 = 1925.6.
  bool end = false;
  for (const LogEvent& e : t.events) {
    if (e.kind == LogEventKind::kJobEnd) {
      end = true;
      EXPECT_DOUBLE_EQ(e.duration_s, 425.4295);
      EXPECT_EQ(e.step, 100);
      EXPECT_EQ(e.line, 101);
    }
  }
  EXPECT_TRUE(end);
  EXPECT_NEAR(19660800.0 / 425.4295 / 24, 1925.584, 0.05);
  EXPECT_EQ(CountEvents(t, LogEventKind::kCheckpointSave), 2);  // checkpoint-100 and the final save_model
}

TEST(HfTrainerParser, MetricsBlockWithoutFinalDict) {
  LogTimeline t = ReadLog(
      "{'loss': 1.5, 'epoch': 0.5}\n"
      "***** train metrics *****\n"
      "  epoch                    =        1.0\n"
      "  total_flos               =  1024GF\n"
      "  train_runtime            = 1:02:03.50\n");
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(t.steps[0].logged_total_flos, 1024.0 * 1073741824.0);
  ASSERT_EQ(CountEvents(t, LogEventKind::kJobEnd), 1);
  for (const LogEvent& e : t.events) {
    if (e.kind == LogEventKind::kJobEnd) {
      EXPECT_DOUBLE_EQ(e.duration_s, 3600 + 2 * 60 + 3.5);
    }
  }
}

TEST(HfTrainerParser, PartialDictCounted) {
  LogTimeline t = ReadLog("{'loss': 1.5, 'epoch': 0.5}\n{'loss': 1.4, 'grad_no\n");
  EXPECT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.stats.partial_lines, 1);
}

}  // namespace
}  // namespace mfu
