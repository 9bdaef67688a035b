// Bad input for the torchtitan, HF Trainer, trainer_state.json, MaxText,
// nanoGPT, Composer and picotron readers: every prefix of a real line (a
// line cut short), absurd numbers, deep nesting. The reader must return a
// timeline or its one-line "no training step lines found" error, never
// crash, and keep sane values (no int64 overflow from a hostile header).

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "log/log_formats_test_util.h"

namespace mfu {
namespace {

struct Sample {
  LogFormat format;
  std::string text;
};

std::vector<Sample> Samples() {
  return {
      {LogFormat::kTorchtitan,
       "[titan] 2026-08-21 10:00:00,123 - root - INFO - step: 10  loss:  2.34567  grad_norm:  1.2345  memory: "
       "40.12GiB(50.15%)  tps: 12,345  tflops: 1,234.56  mfu: 46.19%\n"},
      {LogFormat::kTorchtitan,
       "Trainer is initialized with local batch size 1, global batch size 24, gradient accumulation steps 1, "
       "sequence length 4096, total steps 1000 (warmup 2)\n"},
      {LogFormat::kHfTrainer,
       " 36%|###6 | 35/97 [03:39<06:42,  6.39s/it]{'loss': 2.9859, 'grad_norm': 0.97, 'learning_rate': 4.1e-05, "
       "'epoch': 0.16, 'num_input_tokens_seen': 196608, 'train_runtime': 27.3002}\n"},
      {LogFormat::kHfTrainer,
       "{'train_runtime': 425.4295, 'train_samples_per_second': 5.641, 'train_tokens_per_second': 1925.584, "
       "'train_loss': 2.4897, 'epoch': 1.0, 'num_input_tokens_seen': 19660800}\n"},
      {LogFormat::kHfTrainerState, "{\"global_step\": 10, \"log_history\": [{\"loss\": 2.5, \"step\": 10}]}\n"},
      {LogFormat::kMaxText,
       "[Rampup Batch Size Phase], completed step: 1, seconds: 5.250, live slice count: 2, TFLOP/s/device: 400.125, "
       "Tokens/s/device: 6241.524, total_weights: 8388608, loss: 11.500, lm_loss: 11.250\n"},
      {LogFormat::kNanoGpt, "iter 10: loss 4.1081, time 482.82ms, mfu 9.63%\n"},
      {LogFormat::kComposer,
       "[epoch=1][batch=200/1000]:\n\t Train throughput/device/mfu: 0.4521\n\t Train time/train: 1.0000\n"},
      {LogFormat::kPicotron,
       "[rank 2] Step: 1     | Loss: 10.9062 | Global batch size:   2.05K | Tokens/s:  199.02 | Tokens/s/GPU:   "
       "24.88 | Tokens:   2.05K/10.00M | MFU:  0.01% | Memory usage:   1.75GB\n"},
  };
}

void ExpectTimelineOrNoStepsError(const std::string& text, LogFormat format) {
  for (LogFormat f : {format, LogFormat::kAuto}) {
    LogReadOptions options;
    options.format = f;
    StatusOr<LogTimeline> t = ReadTrainingLog(text, "bad.log", options);
    if (!t.ok()) {
      EXPECT_EQ(t.status().message().rfind("bad.log", 0), 0u) << t.status().message();
      EXPECT_EQ(t.status().message().find('\n'), std::string::npos);
      continue;
    }
    for (const LogStep& s : t->steps) {
      EXPECT_GE(s.steps_covered, 1);
    }
    EXPECT_GE(t->header.tokens_per_step, 0);
    EXPECT_GE(t->header.world_size, 0);
  }
}

TEST(LogFormatsBadInput, EveryPrefixOfEveryLine) {
  for (const Sample& sample : Samples()) {
    for (size_t n = 0; n <= sample.text.size(); ++n) {
      ExpectTimelineOrNoStepsError(sample.text.substr(0, n), sample.format);
    }
  }
}

TEST(LogFormatsBadInput, AbsurdNumbers) {
  const std::vector<Sample> samples = {
      {LogFormat::kTorchtitan,
       "Trainer is initialized with local batch size 9223372036854775807, global batch size 9223372036854775807, "
       "gradient accumulation steps 1, sequence length 9223372036854775807, total steps 1 (warmup 0)\n"
       "step: 99999999999999999999  loss: 1e308  memory: 1e400GiB(inf%)  tps: 1e308  mfu: -1e308%\n"
       "step: 2  loss: nan  memory: 1.00GiB(1.00%)  tps: inf  mfu: nan%\n"},
      {LogFormat::kHfTrainer,
       "  Instantaneous batch size per device = 4611686018427387904\n"
       "  Gradient Accumulation steps = 4611686018427387904\n"
       "  Total train batch size (w. parallel, distributed & accumulation) = 9,223,372,036,854,775,807\n"
       "  Total optimization steps = 9007199254740992\n"
       "  Num Epochs = 1\n"
       "{'loss': 1.0, 'epoch': 1e300}\n{'loss': 1.0, 'epoch': -5}\n{'loss': 1.0, 'epoch': nan}\n"
       "{'train_runtime': 1e-300, 'train_tokens_per_second': 1e-300, 'num_input_tokens_seen': 1e300, "
       "'train_loss': 1}\n"},
      {LogFormat::kMaxText,
       "Num_devices: 9223372036854775807\nConfig param per_device_batch_size: 1e300\n"
       "Config param max_target_length: 9223372036854775807\ncompleted step: 1, seconds: 1e400, loss: nan\n"},
      {LogFormat::kNanoGpt,
       "Overriding: batch_size = 9223372036854775807\nOverriding: block_size = 9223372036854775807\n"
       "Overriding: gradient_accumulation_steps = 40\niter 1: loss 1.0, time 0.00ms, mfu 1e308%\n"},
      {LogFormat::kComposer,
       "[batch=1/1]:\n\t Train time/batch: 1e300\n\t Train time/sample: -5\n\t Train time/train: inf\n"
       "\t Train trainer/device_train_microbatch_size: nan\n"},
      {LogFormat::kPicotron,
       "[rank 0] Step: 1 | Loss: 1.0 | Global batch size: 1e300 | Tokens/s: 1e300 | Tokens/s/GPU: 1e-300 | "
       "MFU: 1.00%\n"},
      {LogFormat::kHfTrainer, "{'loss': 1.0, 'x': " + std::string(5000, '[') + "}\n"},
      {LogFormat::kHfTrainerState, "{\"log_history\": [" + std::string(3000, '[') + "]}"},
  };
  for (const Sample& sample : samples) {
    ExpectTimelineOrNoStepsError(sample.text, sample.format);
  }
}

}  // namespace
}  // namespace mfu
