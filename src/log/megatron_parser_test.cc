// Megatron-LM, Megatron-Bridge and progress.txt readers: lines built from
// the format strings (training-logs.md sec. 2-3, file and commit at each test)
// and the real excerpts in tests/data/logs, values checked by hand.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "log/log_test_util.h"
#include "mfu/training_log.h"

namespace mfu {
namespace {

using log_testing::ReadExcerptTimeline;

LogTimeline Read(const std::string& text, LogFormat format = LogFormat::kAuto) {
  LogReadOptions options;
  options.format = format;
  StatusOr<LogTimeline> t = ReadTrainingLog(text, "test.log", options);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? std::move(*t) : LogTimeline{};
}

// 2026-01-16 07:32:24 UTC: 20469 days after the epoch (56 years with 14
// leap days = 20454, + 15 days into January).
constexpr double kJan16_2026 = 20469.0 * 86400 + 7 * 3600 + 32 * 60 + 24;

TEST(MegatronLm, CurrentLineEveryField) {
  // megatron/training/training.py L3567-3653 @d98e8a64: " [%Y-%m-%d
  // %H:%M:%S.%f]" (6cf285b238), ' iteration {:8d}/{:8d} |', '
  // consumed samples: {:12d} |', ' skipped samples: {:12d} |', ' elapsed time
  // per iteration (ms): {:.1f} |', ' throughput per GPU (TFLOP/s/GPU):
  // {:.1f} |', ' energy per GPU (J/iter/GPU): {:.1f} |', ' power per GPU
  // (W/GPU): {:.1f} |', ' learning rate: {:.6E} |', ' global batch size:
  // {:5d} |', loss keys '{:.6E}', ' loss scale: {:.1f} |', ' grad norm:
  // {:.3f} |', ' num zeros: {} |', ' params norm: {:.3f} |', ' number of
  // skipped iterations: {:3d} |', ' number of nan iterations: {:3d} |'.
  const std::string line =
      " [2026-01-16 07:32:24.500000] iteration        5/     100 | consumed samples:        10240 |"
      " skipped samples:            8 | elapsed time per iteration (ms): 15800.0 |"
      " throughput per GPU (TFLOP/s/GPU): 490.0 | energy per GPU (J/iter/GPU): 11060.0 |"
      " power per GPU (W/GPU): 700.0 | learning rate: 4.134000E-07 | global batch size:  2048 |"
      " lm loss: 1.344240E+01 | load_balancing_loss: 1.329517E+00 | loss scale: 1.0 | grad norm: 0.612 |"
      " num zeros: 0 | params norm: 300.123 | number of skipped iterations:   2 | number of nan iterations:   1 |\n";
  LogTimeline t = Read(line);
  EXPECT_EQ(t.format, LogFormat::kMegatronLm);
  ASSERT_EQ(t.steps.size(), 1u);
  const LogStep& s = t.steps[0];
  EXPECT_EQ(s.step, 5);
  EXPECT_EQ(t.header.train_iters, 100);
  EXPECT_NEAR(s.time_s, kJan16_2026 + 0.5, 1e-6);
  EXPECT_EQ(s.consumed_samples, 10240);
  EXPECT_DOUBLE_EQ(s.step_time_s, 15.8);
  EXPECT_DOUBLE_EQ(s.logged_tflops_per_gpu, 490.0);
  EXPECT_DOUBLE_EQ(s.energy_j, 11060.0);
  EXPECT_DOUBLE_EQ(s.power_w, 700.0);
  EXPECT_DOUBLE_EQ(s.learning_rate, 4.134e-7);
  EXPECT_EQ(s.global_batch, 2048);
  EXPECT_DOUBLE_EQ(s.loss, 13.4424);  // "lm loss", not load_balancing_loss
  EXPECT_DOUBLE_EQ(s.loss_scale, 1.0);
  EXPECT_DOUBLE_EQ(s.grad_norm, 0.612);
  EXPECT_EQ(s.skipped_iterations, 2);
  EXPECT_EQ(s.nan_iterations, 1);
  EXPECT_EQ(s.line, 1);
  EXPECT_EQ(s.steps_covered, 1);
}

TEST(MegatronLm, TimestampWithoutMicrosecondsAndNone) {
  // f427c6f0a1 (2024-03): " [%Y-%m-%d %H:%M:%S]"; before: no timestamp.
  LogTimeline t = Read(
      " [2026-01-16 07:32:24] iteration       10/     100 | elapsed time per iteration (ms): 100.0 |\n"
      " iteration       20/     100 | elapsed time per iteration (ms): 200.0 |\n");
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_DOUBLE_EQ(t.steps[0].time_s, kJan16_2026);
  EXPECT_TRUE(std::isnan(t.steps[1].time_s));
  EXPECT_EQ(t.steps[1].steps_covered, 10);  // log interval from consecutive iterations
}

TEST(MegatronLm, MegatronDeepSpeedExtras) {
  // deepspeedai/Megatron-DeepSpeed megatron/training.py @4efb479d (sec. 6.3):
  // ' samples per second: {:.3f} |', ' tokens per gpu per second (tgs):
  // {:.3f} |', ' TFLOPs: {:.2f} |', learning rate '.3E'.
  LogTimeline t = Read(
      " iteration      100/  500000 | consumed samples:        51200 | consumed tokens:    104857600 |"
      " elapsed time per iteration (ms): 1234.5 | learning rate: 1.000E-04 | global batch size:   512 |"
      " lm loss: 6.123456E+00 | loss scale: 1.0 | grad norm: 1.234 | actual seqlen:  2048 |"
      " number of skipped iterations:   0 | number of nan iterations:   0 | samples per second: 414.750 |"
      " tokens per gpu per second (tgs): 13272.000 | TFLOPs: 180.12 |\n");
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(t.steps[0].samples_per_s, 414.75);
  EXPECT_DOUBLE_EQ(t.steps[0].tokens_per_s_per_gpu, 13272.0);
  EXPECT_DOUBLE_EQ(t.steps[0].logged_tflops_per_gpu, 180.12);
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 1.2345);
}

TEST(MegatronLm, AmdForkCurrentAveragePairs) {
  // The AMD ROCm fork (training-logs.md sec. 2.4): "current/average" pairs
  // after its own logger prefix; the current value is kept.
  LogTimeline t = Read(
      "[20251202 09:12:08][rank-7/8][INFO ] [--------trainer.py:2560] : iteration 126/ 5000 |"
      " consumed samples: 64512 | elapsed time per iteration (ms): 13372.8/13364.7 |"
      " hip mem usage/free/total/usage_ratio: 150.2GB/41.8GB/192.0GB/78.24% |"
      " throughput per GPU (TFLOP/s/GPU): 567.6/568.0 | tokens per GPU (tokens/s/GPU): 9801.4/9807.3 |"
      " learning rate: 2.500000E-04 | global batch size:   512 | lm loss: 5.123000E+00 |\n");
  ASSERT_EQ(t.steps.size(), 1u);
  const LogStep& s = t.steps[0];
  EXPECT_EQ(s.step, 126);
  EXPECT_DOUBLE_EQ(s.step_time_s, 13.3728);
  EXPECT_DOUBLE_EQ(s.logged_tflops_per_gpu, 567.6);
  EXPECT_DOUBLE_EQ(s.tokens_per_s_per_gpu, 9801.4);
  // 2025-12-02 09:12:08: 20424 days (55 years, 14 leap days = 20089, + 335).
  EXPECT_DOUBLE_EQ(s.time_s, 20424.0 * 86400 + 9 * 3600 + 12 * 60 + 8);
}

TEST(MegatronLm, HeaderArgumentDumpAndParameters) {
  // arguments.py L567-576 and _print_args L1990-2001 (dots pad the name to
  // 48 columns); training.py L2447-2455's current "(tensor,
  // gtp_weight_remat, pipeline)" parameter line.
  auto arg = [](const std::string& name, const std::string& value) {
    return "  " + name + " " + std::string(48 - name.size(), '.') + " " + value + "\n";
  };
  std::string text =
      "using world size: 64, data-parallel size: 4, context-parallel size: 2, hierarchical context-parallel "
      "sizes: None, tensor-model-parallel size: 8, pipeline-model-parallel size: 1\n"
      "------------------------ arguments ------------------------\n";
  text += arg("bf16", "True") + arg("fp16", "False") + arg("fp8", "None") + arg("ffn_hidden_size", "14336") +
          arg("global_batch_size", "1024") + arg("hidden_size", "4096") + arg("log_interval", "10") +
          arg("micro_batch_size", "1") + arg("moe_ffn_hidden_size", "None") + arg("moe_router_topk", "2") +
          arg("num_attention_heads", "32") + arg("num_experts", "8") + arg("num_layers", "32") +
          arg("num_query_groups", "8") + arg("padded_vocab_size", "128256") + arg("pipeline_model_parallel_size", "1") +
          arg("recompute_granularity", "selective") + arg("seq_length", "8192") + arg("swiglu", "True") +
          arg("tensor_model_parallel_size", "8") + arg("train_iters", "5000") + arg("world_size", "64");
  text +=
      "-------------------- end of arguments ---------------------\n"
      " > number of parameters on (tensor, gtp_weight_remat, pipeline) model parallel rank (0, 0, 0): 1234567\n"
      " iteration        1/    5000 | elapsed time per iteration (ms): 9000.0 |\n"
      " iteration       10/    5000 | elapsed time per iteration (ms): 3000.0 |\n"
      " iteration       20/    5000 | elapsed time per iteration (ms): 3000.0 |\n";
  LogTimeline t = Read(text);
  const LogHeader& h = t.header;
  EXPECT_EQ(h.world_size, 64);
  EXPECT_EQ(h.data_parallel, 4);
  EXPECT_EQ(h.context_parallel, 2);
  EXPECT_EQ(h.tensor_parallel, 8);
  EXPECT_EQ(h.pipeline_parallel, 1);
  EXPECT_EQ(h.global_batch, 1024);
  EXPECT_EQ(h.micro_batch, 1);
  EXPECT_EQ(h.seq_len, 8192);
  EXPECT_EQ(h.num_layers, 32);
  EXPECT_EQ(h.hidden_size, 4096);
  EXPECT_EQ(h.num_attention_heads, 32);
  EXPECT_EQ(h.num_query_groups, 8);
  EXPECT_EQ(h.ffn_hidden_size, 14336);
  EXPECT_EQ(h.vocab_size, 128256);
  EXPECT_TRUE(h.swiglu);
  EXPECT_EQ(h.precision, "bf16");
  EXPECT_EQ(h.recompute, "selective");
  EXPECT_EQ(h.num_experts, 8);
  EXPECT_EQ(h.moe_router_topk, 2);
  EXPECT_EQ(h.moe_ffn_hidden_size, 0);  // "None"
  EXPECT_EQ(h.log_interval, 10);
  EXPECT_EQ(h.train_iters, 5000);
  EXPECT_DOUBLE_EQ(h.parameters, 1234567);
  ASSERT_EQ(t.steps.size(), 3u);
  // Iteration 1, then iteration 10 averaging the whole first interval
  // (training.py L3544: the first line does not reset the timers).
  EXPECT_EQ(t.steps[1].steps_covered, 10);
  EXPECT_EQ(t.steps[2].steps_covered, 10);
  ASSERT_FALSE(t.events.empty());
  EXPECT_EQ(t.events[0].kind, LogEventKind::kJobStart);
  EXPECT_EQ(t.attempts, 1);
}

TEST(MegatronLm, CheckpointEvaluationAndExitEvents) {
  // checkpointing.py's "saving checkpoint at iteration {:7d} to {} in {}
  // format" / "  successfully saved checkpoint from iteration {:7d} to {}",
  // "  successfully loaded checkpoint from {} [ t {}/{}, p {}/{} ] at
  // iteration {}", training.py's " validation loss at iteration {} |" and
  // "exiting program at iteration {}".
  LogTimeline t = Read(
      "  successfully loaded checkpoint from /ckpt [ t 1/8, p 1/1 ] at iteration 100\n"
      " iteration      110/    5000 | elapsed time per iteration (ms): 3000.0 |\n"
      " validation loss at iteration 110 | lm loss value: 5.1E+00 | lm loss PPL: 1.6E+02 |\n"
      "saving checkpoint at iteration     110 to /ckpt in torch_dist format\n"
      "  successfully saved checkpoint from iteration     110 to /ckpt [ t 1/8, p 1/1 ]\n"
      // training.py save_checkpoint_and_time: timers.log(['save-checkpoint']);
      // megatron/core/timers.py L338-355's "(min, max)" block.
      "(min, max) time across ranks (ms):\n"
      "    save-checkpoint ................................: (12345.67, 12500.25)\n"
      "exiting program at iteration 110\n");
  ASSERT_EQ(t.events.size(), 4u);
  EXPECT_EQ(t.events[0].kind, LogEventKind::kCheckpointLoad);
  EXPECT_EQ(t.events[0].step, 100);
  EXPECT_EQ(t.events[1].kind, LogEventKind::kEvaluation);
  EXPECT_EQ(t.events[1].step, 110);
  EXPECT_EQ(t.events[2].kind, LogEventKind::kCheckpointSave);
  EXPECT_EQ(t.events[2].step, 110);
  EXPECT_EQ(t.events[2].line, 5);
  EXPECT_DOUBLE_EQ(t.events[2].duration_s, 12.50025);  // the slowest rank
  EXPECT_TRUE(std::isnan(t.events[0].duration_s));     // no load timer printed
  EXPECT_EQ(t.events[3].kind, LogEventKind::kJobEnd);
}

TEST(MegatronLm, CutShortLineIsPartial) {
  LogTimeline t = Read(
      " iteration       10/     100 | elapsed time per iteration (ms): 100.0 |\n"
      " iteration       20/     100 | elapsed time per iter\n"
      " iteration       30/     100 | elapsed time per iteration (ms): 100.0 |\n");
  EXPECT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.stats.partial_lines, 1);
}

// Counts far outside any integer type (a corrupted or fuzzed line) are
// dropped, never converted: the cast of 1e300 to int32 is undefined.
TEST(MegatronLm, OutOfRangeCountsAreDropped) {
  LogTimeline t = Read(
      " iteration       10/     100 | consumed samples:  1e300 | elapsed time per iteration (ms): 100.0 |"
      " global batch size: -4e40 | number of skipped iterations: 1e300 | number of nan iterations: 3e9 |\n");
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].consumed_samples, -1);
  EXPECT_EQ(t.steps[0].global_batch, 0);
  EXPECT_EQ(t.steps[0].skipped_iterations, 0);
  EXPECT_EQ(t.steps[0].nan_iterations, 1 << 30);
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 0.1);
}

TEST(MegatronLm, AwsSrunExcerpt) {
  // megatron-lm_aws-gpt3-slurm-srun.log: two README code blocks. The first
  // has the `srun -l` prefix "1:" (the last node prints, print_rank_last);
  // the second the argument dump, then iterations 1-3 of a new run.
  LogTimeline t = ReadExcerptTimeline("megatron-lm_aws-gpt3-slurm-srun.log");
  EXPECT_EQ(t.format, LogFormat::kMegatronLm);
  EXPECT_DOUBLE_EQ(t.header.parameters, 941594624);
  EXPECT_EQ(t.header.grad_accum, 288);    // "setting number of micro-batches to constant 288"
  EXPECT_EQ(t.header.precision, "fp16");  // "using torch.float16 for parameters ..."
  ASSERT_EQ(t.steps.size(), 6u);
  EXPECT_EQ(t.attempts, 2);
  EXPECT_EQ(t.steps[0].step, 25);
  EXPECT_EQ(t.steps[0].attempt, 0);
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 0.087);
  EXPECT_DOUBLE_EQ(t.steps[0].loss, 10.86954);
  EXPECT_DOUBLE_EQ(t.steps[0].learning_rate, 1.638e-8);
  EXPECT_DOUBLE_EQ(t.steps[0].loss_scale, 4294967296.0);
  EXPECT_EQ(t.steps[0].consumed_samples, 50);
  EXPECT_EQ(t.steps[0].global_batch, 2);
  EXPECT_DOUBLE_EQ(t.steps[0].grad_norm, 0.0);
  EXPECT_EQ(t.steps[2].step, 27);
  // The second run: fp16 loss-scale halving, one skipped iteration each.
  EXPECT_EQ(t.steps[3].step, 1);
  EXPECT_EQ(t.steps[3].attempt, 1);
  EXPECT_DOUBLE_EQ(t.steps[3].step_time_s, 255.9405);
  EXPECT_EQ(t.steps[3].skipped_iterations, 1);
  EXPECT_EQ(t.steps[3].consumed_samples, 288);
  EXPECT_TRUE(std::isnan(t.steps[3].loss));  // no loss printed while skipping
  EXPECT_DOUBLE_EQ(t.steps[4].loss_scale, 2147483648.0);
  EXPECT_DOUBLE_EQ(t.steps[5].loss_scale, 1073741824.0);
  EXPECT_EQ(t.stats.ranks_seen, 2);
}

TEST(MegatronLm, T5NotesParenthesesAndRestarts) {
  // megatron-lm_t5-draft-notes-2023.log: 2023 lines wrapped in "(" ")", one
  // with a leading space, learning rate '.3E', no final newline. The runs
  // go back in steps (2100, 4000, then 2500, 2800, then 2600): restarts.
  LogTimeline t = ReadExcerptTimeline("megatron-lm_t5-draft-notes-2023.log");
  ASSERT_EQ(t.steps.size(), 5u);
  EXPECT_EQ(t.steps[0].step, 2100);
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 0.8757);
  EXPECT_DOUBLE_EQ(t.steps[0].learning_rate, 2.083e-5);
  EXPECT_EQ(t.steps[1].step, 4000);
  EXPECT_EQ(t.steps[1].consumed_samples, 4096000);
  EXPECT_EQ(t.attempts, 3);
  EXPECT_EQ(t.steps[2].attempt, 1);
  EXPECT_EQ(t.steps[4].step, 2600);
  EXPECT_EQ(t.steps[4].attempt, 2);
  EXPECT_EQ(t.steps[4].skipped_iterations, 3);
  EXPECT_DOUBLE_EQ(t.steps[4].loss_scale, 65536.0);
  EXPECT_DOUBLE_EQ(t.steps[4].loss, 5.322028);
}

TEST(MegatronBridge, StepTimeLinePairedWithIteration) {
  // train_utils.py L1049-1051 @067f987: f"Step Time :
  // {elapsed_time_per_iteration:.2f}s GPU utilization:
  // {per_gpu_tf:.1f}MODEL_TFLOP/s/GPU" (no space before MODEL_); the
  // iteration line (L1088-1140) has a timestamp without microseconds.
  LogTimeline t = Read(
      "Step Time : 9.09s GPU utilization: 663.5MODEL_TFLOP/s/GPU\n"
      " [2026-01-16 07:32:24] iteration       10/     100 | consumed samples:         5120 |"
      " elapsed time per iteration (ms): 9090.0 | learning rate: 1.000000E-04 | global batch size:   512 |"
      " lm loss: 7.000000E+00 | loss scale: 1.0 | grad norm: 0.500 | number of skipped iterations:   0 |"
      " number of nan iterations:   0 |\n"
      // The older unit "TFLOP/s/GPU" (before 23fc54521, 2025-11-07), printed
      // after its iteration line.
      " [2026-01-16 07:32:33] iteration       20/     100 | elapsed time per iteration (ms): 9100.0 |\n"
      "Step Time : 9.10s GPU utilization: 660.2TFLOP/s/GPU\n");
  EXPECT_EQ(t.format, LogFormat::kMegatronBridge);
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_DOUBLE_EQ(t.steps[0].logged_tflops_per_gpu, 663.5);
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 9.09);  // the line's ms, 9090.0
  EXPECT_DOUBLE_EQ(t.steps[0].loss, 7.0);
  EXPECT_DOUBLE_EQ(t.steps[1].logged_tflops_per_gpu, 660.2);
  EXPECT_DOUBLE_EQ(t.steps[1].time_s, kJan16_2026 + 9);
}

TEST(MegatronBridge, MtpDocIterationLine) {
  // megatron-bridge_mtp-doc-iteration-line.log: MoE and MTP loss keys.
  LogTimeline t = ReadExcerptTimeline("megatron-bridge_mtp-doc-iteration-line.log", LogFormat::kMegatronBridge);
  ASSERT_EQ(t.steps.size(), 1u);
  const LogStep& s = t.steps[0];
  EXPECT_EQ(s.step, 100);
  EXPECT_EQ(t.header.train_iters, 300000);
  EXPECT_EQ(s.consumed_samples, 3200);
  EXPECT_DOUBLE_EQ(s.step_time_s, 3.7386);
  EXPECT_DOUBLE_EQ(s.learning_rate, 6e-5);
  EXPECT_EQ(s.global_batch, 32);
  EXPECT_DOUBLE_EQ(s.loss, 7.968678);
  EXPECT_DOUBLE_EQ(s.loss_scale, 1.0);
  EXPECT_DOUBLE_EQ(s.grad_norm, 1.04);
}

TEST(MegatronBridge, GoldenValuesDocument) {
  // megatron-bridge_golden-values-deepseek-fsdp-gb200.json: 50 steps keyed
  // "0".."49" plus "alloc"/"max_alloc"; step 0 is warm-up (53048.6 ms, 1.0).
  LogTimeline t = ReadExcerptTimeline("megatron-bridge_golden-values-deepseek-fsdp-gb200.json");
  EXPECT_EQ(t.format, LogFormat::kMegatronBridge);
  ASSERT_EQ(t.steps.size(), 50u);
  for (size_t i = 0; i < t.steps.size(); ++i)
    EXPECT_EQ(t.steps[i].step, static_cast<int64_t>(i));
  EXPECT_DOUBLE_EQ(t.steps[0].step_time_s, 53.0486);
  EXPECT_DOUBLE_EQ(t.steps[0].logged_tflops_per_gpu, 1.0);
  EXPECT_DOUBLE_EQ(t.steps[0].loss, 11.89415);
  EXPECT_DOUBLE_EQ(t.steps[1].step_time_s, 0.2842);
  EXPECT_DOUBLE_EQ(t.steps[1].logged_tflops_per_gpu, 252.8);
  EXPECT_DOUBLE_EQ(t.steps[10].step_time_s, 0.2421);
  EXPECT_DOUBLE_EQ(t.steps[10].logged_tflops_per_gpu, 243.2);
  EXPECT_EQ(t.attempts, 1);
}

TEST(MegatronProgress, RecordsEventsAndSteps) {
  // megatron/training/utils/log_utils.py L114-135 @d98e8a64:
  // f"{datetime.now().strftime('%Y-%m-%d %H:%M:%S')}\tJob ID: {job_id}\t# GPUs: {num_gpus}\t{string}\n";
  // training.py L3722-3753's checkpoint record; checkpointing.py's async and
  // delete records; Bridge's MODEL_TFLOP/s/GPU spelling (train.py L1237-1277).
  const std::string head = "\tJob ID: 4242\t# GPUs: 16\t";
  const std::string text =
      "2026-01-16 07:32:24" + head + "Starting job\n" + "2026-01-16 08:32:24" + head +
      "Saved checkpoint\tIteration: 1000\tJob throughput: 412.3 TFLOP/s/GPU\tCumulative throughput: 410.0 "
      "TFLOP/s/GPU\tFloating-point operations: 2.37e+19\tTokens (in billions): 4.19\n" +
      "2026-01-16 09:32:24" + head +
      "Saving async checkpoint\tIteration: 2000\tJob throughput: 415.0 MODEL_TFLOP/s/GPU\tCumulative throughput: "
      "411.0 MODEL_TFLOP/s/GPU\tFloating-point operations: 4.74e+19\tTokens (in billions): 8.39\n" +
      "2026-01-16 09:33:00" + head + "Saved async checkpoint\tIteration: 2000\n" + "2026-01-16 09:33:01" + head +
      "Deleted checkpoint\tIteration: 1000\n" + "2026-01-16 10:00:00" + head + "Starting job\n" +
      "2026-01-16 11:00:00" + head +
      "Saved checkpoint\tIteration: 3000\tJob throughput: 400.0 TFLOP/s/GPU\tCumulative throughput: 380.0 "
      "TFLOP/s/GPU\tFloating-point operations: 7.0e+19\tTokens (in billions): 12.58\n";
  LogTimeline t = Read(text);
  EXPECT_EQ(t.format, LogFormat::kMegatronProgress);
  EXPECT_EQ(t.header.world_size, 16);
  EXPECT_EQ(t.header.job_id, "4242");
  ASSERT_EQ(t.steps.size(), 3u);
  EXPECT_EQ(t.steps[0].step, 1000);
  EXPECT_DOUBLE_EQ(t.steps[0].logged_tflops_per_gpu, 412.3);
  EXPECT_DOUBLE_EQ(t.steps[0].time_s, kJan16_2026 + 3600);
  EXPECT_EQ(t.steps[1].step, 2000);
  EXPECT_DOUBLE_EQ(t.steps[1].logged_tflops_per_gpu, 415.0);
  EXPECT_EQ(t.steps[1].steps_covered, 1000);
  EXPECT_EQ(t.steps[2].attempt, 1);
  EXPECT_EQ(t.attempts, 2);
  ASSERT_EQ(t.events.size(), 6u);
  EXPECT_EQ(t.events[0].kind, LogEventKind::kJobStart);
  EXPECT_DOUBLE_EQ(t.events[0].time_s, kJan16_2026);
  EXPECT_EQ(t.events[1].kind, LogEventKind::kCheckpointSave);
  EXPECT_EQ(t.events[1].step, 1000);
  EXPECT_EQ(t.events[2].kind, LogEventKind::kCheckpointSaveAsync);
  EXPECT_EQ(t.events[3].kind, LogEventKind::kCheckpointSaveAsync);
  EXPECT_EQ(t.events[3].detail, "Saved async checkpoint");
  EXPECT_EQ(t.events[4].kind, LogEventKind::kJobStart);
  EXPECT_EQ(t.events[4].attempt, 1);
  EXPECT_EQ(t.events[5].kind, LogEventKind::kCheckpointSave);
}

}  // namespace
}  // namespace mfu
