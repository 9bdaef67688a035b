// torchtitan reader tests. Format strings from pytorch/torchtitan @b5bcd76
// (training-logs.md section 5): torchtitan/components/metrics.py L455-541 (the step
// line, colours from torchtitan/tools/utils.py L263-274), L570-576
// (validate), L96-101 (capacity); torchtitan/trainer.py L388-391 (model
// size), L527-528 (peak), L621-629 (Trainer is initialized), L1022
// (Training starts); torchtitan/components/checkpoint.py (save/load lines);
// the logger format "[titan] %(asctime)s - %(name)s - %(levelname)s -
// %(message)s" (torchtitan/tools/logging.py L20-22). Old forms from the
// format history (git log -S) in training-logs.md section 5.2.

#include <gtest/gtest.h>

#include <cmath>

#include "log/log_formats_test_util.h"

namespace mfu {
namespace {

using testing::ReadExcerpt;
using testing::ReadLog;

// HEAD: f"{color.red}step: {step:2}  {color.green}loss: {loss:8.5f}  {color.orange}grad_norm:
// {grad_norm:7.4f}  {color.turquoise}memory: {..:5.2f}GiB({..:.2f}%)  {color.blue}tps: {round(tps):,}
// {color.cyan}tflops: {tflops:,.2f}  {color.magenta}mfu: {mfu_str}{color.reset}"
constexpr char kHeadStep[] =
    "[rank0]:[titan] 2026-08-21 10:00:00,123 - root - INFO - \x1b[31mstep: 10  \x1b[32mloss:  2.34567  "
    "\x1b[38;2;180;60;0mgrad_norm:  1.2345  \x1b[38;2;54;234;195mmemory: 40.12GiB(50.15%)  \x1b[34mtps: 12,345  "
    "\x1b[36mtflops: 1,234.56  \x1b[35mmfu: 46.19%\x1b[39m\n";

TEST(TorchtitanParser, HeadStepLineEveryField) {
  LogTimeline t = ReadLog(kHeadStep);
  EXPECT_EQ(t.format, LogFormat::kTorchtitan);
  ASSERT_EQ(t.steps.size(), 1u);
  const LogStep& s = t.steps[0];
  EXPECT_EQ(s.step, 10);
  EXPECT_EQ(s.line, 1);
  EXPECT_DOUBLE_EQ(s.loss, 2.34567);
  EXPECT_DOUBLE_EQ(s.grad_norm, 1.2345);
  EXPECT_DOUBLE_EQ(s.memory_gib, 40.12);
  EXPECT_DOUBLE_EQ(s.tokens_per_s_per_gpu, 12345);  // per device
  EXPECT_DOUBLE_EQ(s.logged_tflops_per_gpu, 1234.56);
  EXPECT_DOUBLE_EQ(s.logged_mfu, 0.4619);      // percent -> fraction
  EXPECT_DOUBLE_EQ(s.time_s, 1787306400.123);  // 2026-08-21 10:00:00.123 UTC
  EXPECT_FALSE(s.validation);
}

TEST(TorchtitanParser, QuantizedMfuIsNotAvailable) {
  // f113706c4 (2026-02-28): mfu_str = "N/A" when float8/MX converters are on.
  LogTimeline t = ReadLog(
      "[titan] 2026-08-21 10:00:00,123 - root - INFO - step:  1  loss: 10.00000  grad_norm:  3.0000  "
      "memory: 10.00GiB(12.50%)  tps: 900  tflops: 50.00  mfu: N/A\n");
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_TRUE(std::isnan(t.steps[0].logged_mfu));
  EXPECT_DOUBLE_EQ(t.steps[0].logged_tflops_per_gpu, 50.0);
}

TEST(TorchtitanParser, OldFormsWpsAndNoTitanPrefix) {
  // e5d1b8915 (2024-03-20): "step: {step:2}  loss: {loss:7.4f}  memory: ..GiB(..%)  wps: {round(wps):,}
  // mfu: {mfu:.2f}%", Python logging without "[titan] " (before cbb7acd5b).
  LogTimeline t = ReadLog(
      "2024-04-01 00:00:01,000 - root - INFO - step:  1  loss: 10.8000  memory:  5.00GiB(6.25%)  wps: 1,024  "
      "mfu: 1.50%\n"
      "2024-04-01 00:00:11,000 - root - INFO - step: 10  loss:  9.1234  memory:  5.00GiB(6.25%)  wps: 8,192  "
      "mfu: 30.00%\n");
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_DOUBLE_EQ(t.steps[0].tokens_per_s_per_gpu, 1024);
  EXPECT_TRUE(std::isnan(t.steps[0].logged_tflops_per_gpu));
  EXPECT_TRUE(std::isnan(t.steps[0].grad_norm));
  EXPECT_DOUBLE_EQ(t.steps[1].loss, 9.1234);
  EXPECT_DOUBLE_EQ(t.steps[1].logged_mfu, 0.30);
  // The interval is the wall time since the previous log: 10 s over 9 steps.
  EXPECT_NEAR(t.steps[1].step_time_s, 10.0 / 9.0, 1e-9);
  EXPECT_EQ(t.steps[1].steps_covered, 9);
}

TEST(TorchtitanParser, HeaderValidationCheckpointsAndResume) {
  std::string log =
      "[titan] 2026-08-21 10:00:00,000 - root - INFO - Starting job: Llama 3 8B training\n"
      "[titan] 2026-08-21 10:00:01,000 - root - INFO - CUDA capacity: NVIDIA H100 80GB HBM3 with 79.11GiB memory\n"
      "[titan] 2026-08-21 10:00:02,000 - root - INFO - Model llama3 8B size: 8,030,261,248 total parameters\n"
      "[titan] 2026-08-21 10:00:03,000 - root - INFO - Peak FLOPS used for computing MFU: 9.890e+14\n"
      "[titan] 2026-08-21 10:00:04,000 - root - INFO - Trainer is initialized with 8192 tokens per DP rank, "
      "65536 tokens per train step, gradient accumulation steps 1, maximum context length 8192, total steps 1000 "
      "(warmup 200)\n"
      "[titan] 2026-08-21 10:00:05,000 - root - INFO - Training starts at step 1\n"
      "[titan] 2026-08-21 10:00:35,000 - root - INFO - step:  1  loss: 12.00000  grad_norm:  5.0000  "
      "memory: 50.00GiB(63.20%)  tps: 270  tflops: 12.00  mfu: 1.21%\n"
      "[titan] 2026-08-21 10:00:45,000 - root - INFO - step: 10  loss:  9.00000  grad_norm:  2.0000  "
      "memory: 60.00GiB(75.84%)  tps: 7,000  tflops: 350.00  mfu: 35.39%\n"
      "[titan] 2026-08-21 10:00:46,000 - root - INFO - validate step: 10  loss:  9.50000  "
      "memory: 60.00GiB(75.84%)  tps: 20,000\n"
      "[titan] 2026-08-21 10:00:47,000 - root - INFO - Saving the checkpoint (or staging if async is enabled).\n"
      "[titan] 2026-08-21 10:00:52,530 - root - INFO - Finished saving the checkpoint (or staging if async is "
      "enabled)in 5.53 seconds.\n"
      "[titan] 2026-08-21 11:00:00,000 - root - INFO - Starting job: Llama 3 8B training\n"
      "[titan] 2026-08-21 11:00:10,000 - root - INFO - Loading the checkpoint from ./outputs/checkpoint/step-10.\n"
      "[titan] 2026-08-21 11:00:15,250 - root - INFO - Finished loading the checkpoint in 5.25 seconds.\n"
      "[titan] 2026-08-21 11:00:16,000 - root - INFO - Training starts at step 11\n"
      "[titan] 2026-08-21 11:00:46,000 - root - INFO - step: 11  loss:  8.90000  grad_norm:  2.0000  "
      "memory: 60.00GiB(75.84%)  tps: 280  tflops: 14.00  mfu: 1.42%\n";
  LogTimeline t = ReadLog(log);
  const LogHeader& h = t.header;
  EXPECT_EQ(h.device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h.model_name, "llama3 8B");
  EXPECT_DOUBLE_EQ(h.parameters, 8030261248.0);
  EXPECT_DOUBLE_EQ(h.peak_flops_used, 9.89e14);
  EXPECT_EQ(h.peak_flops_line, 4);
  EXPECT_EQ(h.tokens_per_step, 65536);
  EXPECT_EQ(h.seq_len, 8192);
  EXPECT_EQ(h.global_batch, 8);  // 65536 / 8192
  EXPECT_EQ(h.grad_accum, 1);
  EXPECT_EQ(h.train_iters, 1000);

  ASSERT_EQ(t.steps.size(), 4u);
  EXPECT_EQ(t.attempts, 2);
  // Step 1 is timed from "Training starts": 10:00:35 - 10:00:05.
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 30.0);
  EXPECT_DOUBLE_EQ(t.steps[1].step_time_s, 10.0 / 9.0);
  EXPECT_TRUE(t.steps[2].validation);
  EXPECT_EQ(t.steps[2].step, 10);
  EXPECT_DOUBLE_EQ(t.steps[2].loss, 9.5);
  EXPECT_EQ(t.steps[3].attempt, 1);
  EXPECT_EQ(t.steps[3].step, 11);
  EXPECT_DOUBLE_EQ(t.steps[3].step_time_s, 30.0);  // 11:00:46 - 11:00:16

  int saves = 0, loads = 0, starts = 0;
  for (const LogEvent& e : t.events) {
    if (e.kind == LogEventKind::kCheckpointSave) {
      ++saves;
      EXPECT_DOUBLE_EQ(e.duration_s, 5.53);
      EXPECT_EQ(e.step, 10);
      EXPECT_EQ(e.attempt, 0);
    } else if (e.kind == LogEventKind::kCheckpointLoad) {
      ++loads;
      EXPECT_DOUBLE_EQ(e.duration_s, 5.25);
      EXPECT_EQ(e.step, 10);  // from the path step-10
      EXPECT_EQ(e.attempt, 1);
    } else if (e.kind == LogEventKind::kJobStart) {
      ++starts;
    }
  }
  EXPECT_EQ(saves, 1);
  EXPECT_EQ(loads, 1);
  EXPECT_EQ(starts, 4);  // "Starting job" and "Training starts", twice
}

TEST(TorchtitanParser, AwsExcerptAnsiAndDuplicateRanks) {
  // 18 lines: the BF16 run's step 1990 printed 9 times by 4 nodes, then the
  // compile+float8 run's step 1990 printed 9 times (README lines 59-67, 89-97).
  LogTimeline t = ReadExcerpt("torchtitan_aws-llama3-8b-slurm-ansi.log");
  EXPECT_EQ(t.format, LogFormat::kTorchtitan);
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.stats.step_lines, 18);
  EXPECT_EQ(t.stats.duplicate_lines, 16);
  EXPECT_EQ(t.attempts, 2);
  const LogStep& bf16 = t.steps[0];
  EXPECT_EQ(bf16.step, 1990);
  EXPECT_DOUBLE_EQ(bf16.loss, 3.4370);
  EXPECT_DOUBLE_EQ(bf16.memory_gib, 68.57);
  EXPECT_DOUBLE_EQ(bf16.tokens_per_s_per_gpu, 6785);  // "tps: 6,785"
  EXPECT_DOUBLE_EQ(bf16.logged_mfu, 0.3973);          // "mfu: 39.73%"
  EXPECT_DOUBLE_EQ(bf16.time_s, 1741049084.441);      // 2025-03-04 00:44:44,441
  const LogStep& fp8 = t.steps[1];
  EXPECT_EQ(fp8.step, 1990);
  EXPECT_EQ(fp8.attempt, 1);
  EXPECT_DOUBLE_EQ(fp8.tokens_per_s_per_gpu, 7865);
  EXPECT_DOUBLE_EQ(fp8.logged_mfu, 0.4606);
  // Llama-3-8B: 7865/6785 = 1.159, and so is 46.06/39.73 (MFU still over the BF16 peak).
  EXPECT_NEAR(fp8.tokens_per_s_per_gpu / bf16.tokens_per_s_per_gpu, fp8.logged_mfu / bf16.logged_mfu, 1e-3);
}

TEST(TorchtitanParser, AuroraExcerptHeaderAndSteps) {
  LogTimeline t = ReadExcerpt("torchtitan_aurora-xpu-blendcorpus.log");
  EXPECT_EQ(t.format, LogFormat::kTorchtitan);
  const LogHeader& h = t.header;
  EXPECT_DOUBLE_EQ(h.peak_flops_used, 2.982e14);
  EXPECT_EQ(h.peak_flops_line, 25);
  EXPECT_EQ(h.device_name, "Intel(R) Data Center GPU Max 1550");
  EXPECT_EQ(h.model_name, "blendcorpus Llama-2-7b");
  EXPECT_DOUBLE_EQ(h.parameters, 1476448256.0);
  EXPECT_EQ(h.world_size, 24);  // "Using [24/24] GPUs"
  EXPECT_EQ(h.micro_batch, 1);
  EXPECT_EQ(h.global_batch, 24);
  EXPECT_EQ(h.grad_accum, 1);
  EXPECT_EQ(h.seq_len, 4096);
  EXPECT_EQ(h.train_iters, 1000);
  EXPECT_EQ(h.tokens_per_step, 24 * 4096);

  ASSERT_EQ(t.steps.size(), 105u);
  const LogStep& s1 = t.steps[0];
  EXPECT_EQ(s1.step, 1);
  EXPECT_EQ(s1.line, 44);
  EXPECT_DOUBLE_EQ(s1.loss, 10.8595);
  EXPECT_DOUBLE_EQ(s1.grad_norm, 3.2105);
  EXPECT_DOUBLE_EQ(s1.tokens_per_s_per_gpu, 149);
  EXPECT_DOUBLE_EQ(s1.logged_tflops_per_gpu, 1.39);
  EXPECT_DOUBLE_EQ(s1.logged_mfu, 0.0047);  // warm-up
  // From "Training starts at step 1." (14:09:20,264934) to step 1 (14:09:46,954794).
  EXPECT_NEAR(s1.step_time_s, 1757599786.954794 - 1757599760.264934, 1e-5);
  const LogStep& s2 = t.steps[1];
  EXPECT_EQ(s2.step, 2);
  EXPECT_DOUBLE_EQ(s2.tokens_per_s_per_gpu, 6697);
  EXPECT_DOUBLE_EQ(s2.logged_tflops_per_gpu, 62.15);
  EXPECT_DOUBLE_EQ(s2.logged_mfu, 0.2084);
  EXPECT_NEAR(s2.step_time_s, 1757599787.568581 - 1757599786.954794, 1e-5);
  // The log's own figures agree: 62.15 TFLOP/s over the 298.2 TFLOP/s peak it printed is 20.84%.
  EXPECT_NEAR(s2.logged_tflops_per_gpu * 1e12 / h.peak_flops_used, s2.logged_mfu, 5e-5);
  // 4096 tokens per device per step (24 x 4096 / 24) in 0.614 s: ~6,673 tokens/s, the printed 6,697 within 0.5%.
  EXPECT_NEAR(4096.0 / s2.step_time_s / s2.tokens_per_s_per_gpu, 1.0, 0.005);
  EXPECT_DOUBLE_EQ(s2.tokens_per_s, 6697.0 * 24);  // whole job, from the world size
  EXPECT_EQ(t.steps.back().step, 105);
  EXPECT_EQ(testing::CountEvents(t, LogEventKind::kJobStart), 1);
}

}  // namespace
}  // namespace mfu
