// Line cleaning, logger prefixes, numbers and timestamps, and the timeline
// builder's rank/duplicate/restart rules. Prefix formats from
// ../shared/reference/training-logs.md sec. 1 (sources cited there).

#include "log/log_line.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "log/log_parser.h"

namespace mfu::log_internal {
namespace {

CleanLine Clean(std::string_view raw, std::string& scratch) {
  return CleanLogLine(raw, 1, scratch);
}

TEST(CleanLogLine, SrunPrefixAndMarkdownIndent) {
  std::string scratch;
  // megatron-lm_aws-gpt3-slurm-srun.log line 1 (3-space markdown indent, then `srun -l`).
  CleanLine c = Clean("   1:  iteration       25/73242187 | consumed samples:           50 |", scratch);
  EXPECT_EQ(c.rank, "1:");
  EXPECT_EQ(c.text, "iteration       25/73242187 | consumed samples:           50 |");
}

TEST(CleanLogLine, TorchrunPrefixes) {
  std::string scratch;
  // torchrun --tee template "[${role_name}${local_rank}]:" (default role "default").
  CleanLine c = Clean("[default3]:Training epoch 0, iteration 0/19 | lr: 1.499e-07", scratch);
  EXPECT_EQ(c.rank, "[default3]:");
  EXPECT_EQ(c.text, "Training epoch 0, iteration 0/19 | lr: 1.499e-07");
  // torchtitan run_train.sh --role rank --tee 3 (torchtitan#920's line).
  c = Clean("[rank0]:[titan] 2025-03-03 14:23:29,286 - root - INFO - Peak FLOPS used for computing MFU: 1.300e+15",
            scratch);
  EXPECT_EQ(c.rank, "[rank0]:");
  EXPECT_EQ(c.text, "[titan] 2025-03-03 14:23:29,286 - root - INFO - Peak FLOPS used for computing MFU: 1.300e+15");
}

TEST(CleanLogLine, StackedNemoRunAndTorchrun) {
  std::string scratch;
  // nemo2_resiliency-demo-notebook.log: nemo-run's "ining-demo/0 " (role cut
  // to its last 12 characters + "/replica") then torchrun's "[default0]:".
  CleanLine c = Clean("ining-demo/0 [default0]:Training epoch 0, iteration 1/19 | lr: 2.999e-07", scratch);
  EXPECT_EQ(c.rank, "ining-demo/0 [default0]:");
  EXPECT_EQ(c.text, "Training epoch 0, iteration 1/19 | lr: 2.999e-07");
  // The cloudai fixture: the text after the fixed-width prefix.
  c = Clean("ain_fp8_mx/0 Step Time : 9.09s GPU utilization: 663.5MODEL_TFLOP/s/GPU", scratch);
  EXPECT_EQ(c.rank, "ain_fp8_mx/0");
  EXPECT_EQ(c.text, "Step Time : 9.09s GPU utilization: 663.5MODEL_TFLOP/s/GPU");
}

TEST(CleanLogLine, RayAndPdsh) {
  std::string scratch;
  CleanLine c = Clean("(pretraining, pid=4112) Training epoch 0, iteration 0/99 | lr: 1e-05", scratch);
  EXPECT_EQ(c.rank, "(pretraining, pid=4112)");
  EXPECT_EQ(c.text, "Training epoch 0, iteration 0/99 | lr: 1e-05");
  c = Clean("worker-0: [INFO 2020-02-06 19:53:56] 0/50, SamplesPerSec=1292.6411179579866", scratch);
  EXPECT_EQ(c.rank, "worker-0:");
  EXPECT_EQ(c.text, "[INFO 2020-02-06 19:53:56] 0/50, SamplesPerSec=1292.6411179579866");
}

TEST(CleanLogLine, NotPrefixes) {
  std::string scratch;
  // torchtitan's own "step: 1990" must not be taken for a pdsh host, nor
  // Megatron's "(iteration" for Ray, nor "25/100 " for nemo-run.
  for (std::string_view text : {"step: 1990  loss:  3.4370", "(iteration     2100/ 1000000 | x: 1 |)", "25/100 done",
                                "iter 0: loss 4.2", "2025-03-04 00:44:44,441 - root - INFO - x"}) {
    CleanLine c = Clean(text, scratch);
    EXPECT_EQ(c.rank, "") << text;
    EXPECT_EQ(c.text, text);
  }
}

TEST(CleanLogLine, AnsiCodes) {
  std::string scratch;
  // torchtitan_aws-llama3-8b-slurm-ansi.log line 1, real ESC bytes.
  CleanLine c = Clean(
      "1: 2025-03-04 00:44:44,441 - root - INFO - \x1b[36mstep: 1990  \x1b[32mloss:  3.4370  \x1b[33mmemory: "
      "68.57GiB(86.69%)  \x1b[34mtps: 6,785  \x1b[35mmfu: 39.73%\x1b[39m",
      scratch);
  EXPECT_EQ(c.rank, "1:");
  EXPECT_EQ(c.text,
            "2025-03-04 00:44:44,441 - root - INFO - step: 1990  loss:  3.4370  memory: 68.57GiB(86.69%)  tps: 6,785  "
            "mfu: 39.73%");
  // 24-bit colours (torchtitan Color.orange) and an erase-line code.
  c = Clean("\x1b[38;2;180;60;0mgrad_norm:  1.0\x1b[K\x1b[39m", scratch);
  EXPECT_EQ(c.text, "grad_norm:  1.0");
  // A coloured Ray prefix.
  c = Clean("\x1b[36m(pretraining, pid=4112)\x1b[0m hello", scratch);
  EXPECT_EQ(c.rank, "(pretraining, pid=4112)");
  EXPECT_EQ(c.text, "hello");
}

TEST(CleanLogLine, TqdmRedrawsAndCrlf) {
  std::string scratch;
  // Bars redraw with \r; the log text after the last bar is kept.
  CleanLine c = Clean(
      " 18%|#8        | 17/97 [01:44<08:14,  6.18s/it]\r 19%|#9        | 18/97 [01:50<08:31,  "
      "6.39s/it]\r{'loss': 2.5, 'epoch': 0.19}\r",
      scratch);
  EXPECT_EQ(c.text, "{'loss': 2.5, 'epoch': 0.19}");
  // A line that is only bars keeps the last bar.
  c = Clean(" 1%|          | 1/97 [00:06<09:36,  6.0s/it]\r 2%|          | 2/97 [00:12<09:30,  6.0s/it]", scratch);
  EXPECT_EQ(c.text, "2%|          | 2/97 [00:12<09:30,  6.0s/it]");
  // Bar first, then the text over it.
  c = Clean("0: 45%|####5     | 9/20 [00:01<00:02,  4.5it/s]\r0: {'loss': 1.0}", scratch);
  EXPECT_EQ(c.rank, "0:");
  EXPECT_EQ(c.text, "{'loss': 1.0}");
  c = Clean("iteration 1/ 2 | a: 1 |\r", scratch);
  EXPECT_EQ(c.text, "iteration 1/ 2 | a: 1 |");
}

TEST(StripLoggerPrefix, EveryLogger) {
  struct Case {
    std::string_view line;
    std::string_view message;
    double time_s;
  };
  // Epoch seconds computed by hand: 2024-07-16 = 19920 days after 1970-01-01
  // (54 years, 13 leap days: 54*365+13 = 19723, + 197 days to Jul 16).
  const double jul16_2024 = 19920.0 * 86400;
  const Case cases[] = {
      // DeepSpeed "[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] %(message)s"
      // (deepspeed/utils/logging.py L39-40 @edaa722); "[Rank 0] " is the message's (log_dist).
      {"[2024-07-16 22:14:01,123] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0",
       "[Rank 0] step=10, skipped=0", jul16_2024 + 22 * 3600 + 14 * 60 + 1.123},
      // DeepSpeed 2020 (deepspeed_cifar10-tutorial-2020.log).
      {"[INFO 2024-07-16 00:00:10] 0/50, SamplesPerSec=1292.6", "0/50, SamplesPerSec=1292.6", jul16_2024 + 10},
      // NeMo (nemo2_resiliency-demo-notebook.log line 53 form).
      {"[NeMo I 2024-07-16 00:01:00 tokenizer_utils:224] Getting Megatron tokenizer", "Getting Megatron tokenizer",
       jul16_2024 + 60},
      // torchtitan "[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s" (tools/logging.py L20-22 @b5bcd76).
      {"[titan] 2024-07-16 00:00:01,500 - root - INFO - step:  1  loss: 12.0", "step:  1  loss: 12.0",
       jul16_2024 + 1.5},
      {"2024-07-16 00:00:02,441 - root - INFO - step: 1990", "step: 1990", jul16_2024 + 2.441},
      // ezpz (torchtitan_aurora-xpu-blendcorpus.log).
      {"[2024-07-16 00:00:03,954794][I][components/metrics:437:log] step:  2", "step:  2", jul16_2024 + 3.954794},
      // HF "[INFO|trainer.py:2128] 2024-07-17 00:18:20,620 >> " (training-logs.md sec. 1).
      {"[INFO|trainer.py:2128] 2024-07-16 00:00:04,620 >> ***** Running training *****", "***** Running training *****",
       jul16_2024 + 4.62},
      // The AMD fork (training-logs.md sec. 2.4).
      {"[20240716 00:00:05][rank-7/8][INFO ] [--------trainer.py:2560] : iteration 126/ 5000 |",
       "iteration 126/ 5000 |", jul16_2024 + 5},
      // Megatron-LM's bare " [%Y-%m-%d %H:%M:%S.%f]" (training.py L3567 @d98e8a64).
      {"[2024-07-16 00:00:06.250000] iteration        5/     100 |", "iteration        5/     100 |",
       jul16_2024 + 6.25},
  };
  for (const Case& c : cases) {
    LoggerPrefix p = StripLoggerPrefix(c.line);
    EXPECT_EQ(p.message, c.message) << c.line;
    EXPECT_NEAR(p.time_s, c.time_s, 1e-6) << c.line;
  }
  // absl has no year: month/day/time counted from 1970.
  LoggerPrefix absl = StripLoggerPrefix("I0102 00:00:01.500000     514 train.py:12] completed step: 3");
  EXPECT_EQ(absl.message, "completed step: 3");
  EXPECT_TRUE(absl.year_missing);
  EXPECT_NEAR(absl.time_s, 86400 + 1.5, 1e-6);
  // No prefix.
  LoggerPrefix none = StripLoggerPrefix("[Rank 0] step=10");
  EXPECT_EQ(none.message, "[Rank 0] step=10");
  EXPECT_TRUE(std::isnan(none.time_s));
}

TEST(ParseLogNumber, Forms) {
  EXPECT_DOUBLE_EQ(*ParseLogNumber("6,785"), 6785);
  EXPECT_DOUBLE_EQ(*ParseLogNumber("148,796,794"), 148796794);
  EXPECT_DOUBLE_EQ(*ParseLogNumber("1.234e+04"), 12340);
  EXPECT_DOUBLE_EQ(*ParseLogNumber("2.05K"), 2050);
  EXPECT_DOUBLE_EQ(*ParseLogNumber("1.5M"), 1.5e6);
  EXPECT_DOUBLE_EQ(*ParseLogNumber("39.73%"), 39.73);
  EXPECT_DOUBLE_EQ(*ParseLogNumber("-1"), -1);
  EXPECT_DOUBLE_EQ(*ParseLogNumber(" 2.083E-05 "), 2.083e-5);
  EXPECT_TRUE(std::isnan(*ParseLogNumber("nan")));
  EXPECT_TRUE(std::isinf(*ParseLogNumber("inf")));
  EXPECT_FALSE(ParseLogNumber(""));
  EXPECT_FALSE(ParseLogNumber("abc"));
  EXPECT_FALSE(ParseLogNumber("1,2,"));
  EXPECT_FALSE(ParseLogNumber(",5"));
  EXPECT_FALSE(ParseLogNumber("12 34"));
}

TEST(ParseLogTimestamp, Forms) {
  const double jul16_2024 = 19920.0 * 86400;
  EXPECT_DOUBLE_EQ(*ParseLogTimestamp("2024-07-16 22:14:01"), jul16_2024 + 80041);
  EXPECT_DOUBLE_EQ(*ParseLogTimestamp("[2024-07-16 22:14:01]"), jul16_2024 + 80041);
  EXPECT_NEAR(*ParseLogTimestamp("2024-07-16 22:14:01.123456"), jul16_2024 + 80041.123456, 1e-6);
  EXPECT_NEAR(*ParseLogTimestamp("2024-07-16 22:14:01,441"), jul16_2024 + 80041.441, 1e-6);
  EXPECT_DOUBLE_EQ(*ParseLogTimestamp("20240716 22:14:01"), jul16_2024 + 80041);
  EXPECT_DOUBLE_EQ(*ParseLogTimestamp("2024-07-16T22:14:01Z"), jul16_2024 + 80041);
  // 2000-03-01 (after a centennial leap day): 11017 days.
  EXPECT_DOUBLE_EQ(*ParseLogTimestamp("2000-03-01 00:00:00"), 11017.0 * 86400);
  EXPECT_FALSE(ParseLogTimestamp("2024-13-01 00:00:00"));
  EXPECT_FALSE(ParseLogTimestamp("2024-07-16 25:00:00"));
  EXPECT_FALSE(ParseLogTimestamp("2024-07-16"));
  EXPECT_FALSE(ParseLogTimestamp("2024-07-16 22:14:01 extra"));
}

TEST(ForEachLogField, SplitsOnLastColon) {
  std::vector<std::pair<std::string, std::string>> fields;
  ForEachLogField(" elapsed time per iteration (ms): 87.0 | lm loss: 1.086954E+01 | train_step_timing in s: 7.5 |", '|',
                  [&](std::string_view k, std::string_view v) { fields.emplace_back(k, v); });
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0].first, "elapsed time per iteration (ms)");
  EXPECT_EQ(fields[0].second, "87.0");
  EXPECT_EQ(fields[2].first, "train_step_timing in s");
}

LogStep Step(int64_t id) {
  LogStep s;
  s.step = id;
  return s;
}

TEST(TimelineBuilder, DuplicatesFromOtherRanksAreDropped) {
  // The AWS torchtitan excerpt: the same step from 4 nodes, in any order.
  TimelineBuilder b(100);
  for (std::string_view rank : {"1:", "0:", "0:", "3:", "2:"})
    ASSERT_TRUE(b.AddStep(Step(1990), rank).ok());
  for (std::string_view rank : {"0:", "1:", "3:", "2:"})
    ASSERT_TRUE(b.AddStep(Step(2000), rank).ok());
  LogTimeline t = b.Take("x", LogFormat::kTorchtitan);
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.steps[0].step, 1990);
  EXPECT_EQ(t.steps[1].step, 2000);
  EXPECT_EQ(t.attempts, 1);
  EXPECT_EQ(t.stats.step_lines, 9);
  EXPECT_EQ(t.stats.duplicate_lines, 7);
  EXPECT_EQ(t.stats.ranks_seen, 4);
  EXPECT_EQ(t.stats.chosen_rank, "1:");
}

TEST(TimelineBuilder, InterleavedRanksAreNotRestarts) {
  // Rank 1 is a step behind rank 0 all along: its lines are copies.
  TimelineBuilder b(100);
  ASSERT_TRUE(b.AddStep(Step(10), "0:").ok());
  ASSERT_TRUE(b.AddStep(Step(20), "0:").ok());
  ASSERT_TRUE(b.AddStep(Step(10), "1:").ok());
  ASSERT_TRUE(b.AddStep(Step(30), "0:").ok());
  ASSERT_TRUE(b.AddStep(Step(20), "1:").ok());
  LogTimeline t = b.Take("x", LogFormat::kMegatronLm);
  EXPECT_EQ(t.steps.size(), 3u);
  EXPECT_EQ(t.attempts, 1);
  EXPECT_EQ(t.stats.duplicate_lines, 2);
}

TEST(TimelineBuilder, StepGoingBackIsARestart) {
  TimelineBuilder b(100);
  for (int64_t s : {100, 200, 300, 201, 301})
    ASSERT_TRUE(b.AddStep(Step(s), "").ok());
  b.NewAttempt(50);  // a new header after steps
  ASSERT_TRUE(b.AddStep(Step(401), "").ok());
  b.NewAttempt(60);  // two headers in a row are one restart
  b.NewAttempt(61);
  ASSERT_TRUE(b.AddStep(Step(402), "").ok());
  LogTimeline t = b.Take("x", LogFormat::kMegatronLm);
  ASSERT_EQ(t.steps.size(), 7u);
  EXPECT_EQ(t.attempts, 4);
  EXPECT_EQ(t.steps[2].attempt, 0);
  EXPECT_EQ(t.steps[3].attempt, 1);
  EXPECT_EQ(t.steps[5].attempt, 2);
  EXPECT_EQ(t.steps[6].attempt, 3);
}

TEST(TimelineBuilder, MaxSteps) {
  TimelineBuilder b(2);
  EXPECT_TRUE(b.AddStep(Step(1), "").ok());
  EXPECT_TRUE(b.AddStep(Step(2), "").ok());
  Status st = b.AddStep(Step(3), "");
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace mfu::log_internal
