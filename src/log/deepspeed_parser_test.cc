// DeepSpeed reader: ThroughputTimer lines from deepspeed/utils/timer.py
// (L199-294 @edaa722) in their three versions, the engine's progress line
// (engine.py L3653-3656), the config dump and the flops-profiler summary
// (deepspeed/profiling/flops_profiler/profiler.py L286-399), and the two
// real excerpts.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "log/log_test_util.h"
#include "mfu/training_log.h"

// Helpers in their own namespace: the unity build compiles this file with
// its target's other tests.
namespace mfu::deepspeed_parser_test {
namespace {

using log_testing::ReadExcerptTimeline;

LogTimeline Read(const std::string& text) {
  StatusOr<LogTimeline> t = ReadTrainingLog(text, "ds.log");
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? std::move(*t) : LogTimeline{};
}

TEST(DeepSpeed, CurrentThroughputLine) {
  // "epoch={}/micro_step={}/global_step={}, RunningAvgSamplesPerSec={},
  // CurrSamplesPerSec={}, MemAllocated={}GB, MaxMemAllocated={}GB"
  // (0f0e38c52) through the DeepSpeed formatter (logging.py L39-40), after
  // the config dump's train_batch_size (the global batch: samples/s are
  // global).
  LogTimeline t = Read(
      "[2024-07-16 00:00:00,000] [INFO] [config.py:1001:print] DeepSpeedEngine configuration:\n"
      "[2024-07-16 00:00:00,000] [INFO] [config.py:1005:print]   gradient_accumulation_steps .. 2\n"
      "[2024-07-16 00:00:00,000] [INFO] [config.py:1005:print]   train_batch_size ............. 64\n"
      "[2024-07-16 00:00:00,000] [INFO] [config.py:1005:print]   train_micro_batch_size_per_gpu  4\n"
      "[2024-07-16 00:00:00,000] [INFO] [config.py:1005:print]   world_size ................... 8\n"
      "[2024-07-16 00:01:00,000] [INFO] [timer.py:264:stop] epoch=0/micro_step=20/global_step=10, "
      "RunningAvgSamplesPerSec=125.5, CurrSamplesPerSec=128.0, MemAllocated=3.5GB, MaxMemAllocated=7.25GB\n"
      "[2024-07-16 00:01:05,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=1, lr=[0.0003], "
      "mom=[(0.9, 0.95)]\n"
      "[2024-07-16 00:02:00,000] [INFO] [timer.py:264:stop] epoch=0/micro_step=40/global_step=20, "
      "RunningAvgSamplesPerSec=126.0, CurrSamplesPerSec=127.5, MemAllocated=3.5GB, MaxMemAllocated=7.25GB\n");
  EXPECT_EQ(t.format, LogFormat::kDeepSpeed);
  EXPECT_EQ(t.header.global_batch, 64);
  EXPECT_EQ(t.header.micro_batch, 4);
  EXPECT_EQ(t.header.grad_accum, 2);
  EXPECT_EQ(t.header.world_size, 8);
  ASSERT_EQ(t.steps.size(), 2u);
  const LogStep& s = t.steps[0];
  EXPECT_EQ(s.step, 10);
  EXPECT_DOUBLE_EQ(s.samples_per_s, 128.0);
  EXPECT_DOUBLE_EQ(s.step_time_s, 0.5);  // 64 samples / 128 samples/s
  EXPECT_DOUBLE_EQ(s.memory_gib, 7.25);
  EXPECT_DOUBLE_EQ(s.learning_rate, 3e-4);  // from the [Rank 0] line
  EXPECT_EQ(s.skipped_iterations, 1);
  EXPECT_DOUBLE_EQ(s.time_s, 19920.0 * 86400 + 60);
  EXPECT_EQ(t.steps[1].steps_covered, 10);
}

TEST(DeepSpeed, Form2022UsesMicroSteps) {
  // 5bd09a8f8 (2022-07-26): "{}/{}, RunningAvgSamplesPerSec={}, ..." with
  // epoch/micro_step: the optimizer step is micro_step / grad accumulation.
  LogTimeline t = Read(
      "  gradient_accumulation_steps .. 4\n"
      "[2022-08-01 10:00:00,000] [INFO] [timer.py:208:stop] 0/400, RunningAvgSamplesPerSec=50.1, "
      "CurrSamplesPerSec=51.2, MemAllocated=1.0GB, MaxMemAllocated=2.0GB\n");
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].step, 100);
  EXPECT_DOUBLE_EQ(t.steps[0].samples_per_s, 51.2);
}

TEST(DeepSpeed, Cifar2020Excerpt) {
  // deepspeed_cifar10-tutorial-2020.log: pdsh "worker-0: ", 2020's
  // "[INFO <ts>] 0/50, SamplesPerSec=1292.6411179579866" and "rank:0
  // step=0, skipped=0, lr=[0.001], ..."; DeepSpeedLight configuration.
  LogTimeline t = ReadExcerptTimeline("deepspeed_cifar10-tutorial-2020.log");
  EXPECT_EQ(t.format, LogFormat::kDeepSpeed);
  EXPECT_EQ(t.stats.chosen_rank, "worker-0:");
  EXPECT_EQ(t.header.global_batch, 4);
  EXPECT_EQ(t.header.micro_batch, 4);
  EXPECT_EQ(t.header.grad_accum, 1);
  EXPECT_EQ(t.header.world_size, 1);  // "dist_world_size=1"
  // step 0 (the rank line), 50, 100, 150, then 24550 .. 25000 (10 lines).
  ASSERT_EQ(t.steps.size(), 14u);
  EXPECT_EQ(t.steps[0].step, 0);
  EXPECT_DOUBLE_EQ(t.steps[0].learning_rate, 0.001);
  EXPECT_EQ(t.steps[1].step, 50);
  EXPECT_DOUBLE_EQ(t.steps[1].samples_per_s, 1292.6411179579866);
  EXPECT_DOUBLE_EQ(t.steps[1].step_time_s, 4 / 1292.6411179579866);
  EXPECT_EQ(t.steps[1].steps_covered, 50);
  EXPECT_EQ(t.steps.back().step, 25000);
  EXPECT_DOUBLE_EQ(t.steps.back().samples_per_s, 1284.5698818883018);
  // 2020-02-06 20:35:24: 18298 days (50 years, 12 leap days = 18262, + 36).
  EXPECT_DOUBLE_EQ(t.steps.back().time_s, 18298.0 * 86400 + 20 * 3600 + 35 * 60 + 24);
  EXPECT_EQ(t.attempts, 1);
}

TEST(DeepSpeed, FlopsProfilerSummary) {
  // deepspeed_flops-profiler-readme-bert.log: "Profile Summary at step 10",
  // number_to_string values (T/G/M/K, ms/us), BERT-Large on one A100.
  LogTimeline t = ReadExcerptTimeline("deepspeed_flops-profiler-readme-bert.log");
  EXPECT_EQ(t.format, LogFormat::kDeepSpeed);
  ASSERT_EQ(t.steps.size(), 1u);
  const LogStep& s = t.steps[0];
  EXPECT_EQ(s.step, 10);
  // The older wording has no "FLOPS per GPU = ... / iter latency" line:
  // "fwd+bwd FLOPS per GPU = 3 * fwd flops per GPU / (fwd+bwd latency): 102.0 TFLOPS".
  EXPECT_DOUBLE_EQ(s.logged_tflops_per_gpu, 102.0);
  EXPECT_DOUBLE_EQ(s.step_time_s, 0.18473);  // iter latency 184.73 ms
  EXPECT_DOUBLE_EQ(s.samples_per_s, 433.07);
  EXPECT_EQ(t.header.world_size, 1);
  EXPECT_EQ(t.header.micro_batch, 80);
  EXPECT_DOUBLE_EQ(t.header.parameters, 336.23e6);
}

TEST(DeepSpeed, CurrentProfilerWording) {
  // profiler.py L286-399: the current summary adds "FLOPS per GPU = {3+r:g}
  // * fwd flops per GPU / iter latency:", preferred over fwd+bwd.
  LogTimeline t = Read(
      "-------------------------- DeepSpeed Flops Profiler --------------------------\n"
      "Profile Summary at step 2:\n"
      "world size:                                                             8\n"
      "data parallel size:                                                     8\n"
      "model parallel size:                                                    1\n"
      "batch size per GPU:                                                     2\n"
      "fwd+bwd FLOPS per GPU = 3 * fwd flops per GPU / (fwd+bwd latency):      150.5 TFLOPS\n"
      "iter latency:                                                           1.5 s\n"
      "FLOPS per GPU = 3 * fwd flops per GPU / iter latency:                   140.25 TFLOPS\n"
      "samples/second:                                                         1.33\n"
      "------------------------------------------------------------------------------\n");
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].step, 2);
  EXPECT_DOUBLE_EQ(t.steps[0].logged_tflops_per_gpu, 140.25);
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 1.5);
  EXPECT_DOUBLE_EQ(t.steps[0].samples_per_s, 1.33 * 8);
  EXPECT_EQ(t.header.world_size, 8);
}

}  // namespace
}  // namespace mfu::deepspeed_parser_test
