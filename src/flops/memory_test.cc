// Memory formulas against Korthikanti et al. 2022 (arXiv:2205.05198) section 4 and
// hand computations.

#include "mfu/memory.h"

#include <gtest/gtest.h>

namespace mfu {
namespace {

StatusOr<ModelSpec> Gpt(int64_t layers, int64_t hidden, int64_t heads) {
  GenericModelOptions o;
  o.layers = layers;
  o.hidden = hidden;
  o.heads = heads;
  o.vocab = 51200;
  o.gated_mlp = false;
  return BuildGenericModel(o);
}

// Korthikanti eq. 1: per layer s*b*h*(34 + 5*a*s/h) bytes with no
// parallelism; eq. 2 (tensor parallel t): s*b*h*(10 + 24/t + 5*a*s/(h*t));
// eq. 4 (TP + sequence parallel): s*b*h/t*(34 + 5*a*s/h); selective
// recompute: s*b*h/t*34; full recompute: 2*s*b*h.
TEST(Memory, KorthikantiActivationFormulas) {
  auto spec = Gpt(96, 12288, 96);  // GPT-3 175B
  ASSERT_TRUE(spec.ok());
  const double s = 2048, b = 1, h = 12288, a = 96;
  TrainingMemoryOptions o;
  o.seq_len = 2048;
  o.flash_attention = false;
  auto none = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(none.ok());
  EXPECT_DOUBLE_EQ(none->activations_per_layer_bytes, s * b * h * (34 + 5 * a * s / h));
  EXPECT_DOUBLE_EQ(none->activations_per_layer_bytes, KorthikantiActivationBytesPerLayer(s, b, h, a));

  o.tensor_parallel = 8;
  auto tp = EstimateTrainingMemory(*spec, o);
  EXPECT_DOUBLE_EQ(tp->activations_per_layer_bytes, s * b * h * (10 + 24.0 / 8 + 5 * a * s / (h * 8)));

  o.sequence_parallel = true;
  auto sp = EstimateTrainingMemory(*spec, o);
  EXPECT_DOUBLE_EQ(sp->activations_per_layer_bytes, s * b * h / 8 * (34 + 5 * a * s / h));

  o.recompute = Recompute::kSelective;
  auto sel = EstimateTrainingMemory(*spec, o);
  EXPECT_DOUBLE_EQ(sel->activations_per_layer_bytes, s * b * h / 8 * 34);

  o.recompute = Recompute::kNone;
  o.flash_attention = true;  // flash keeps no a*s^2 terms either
  auto flash = EstimateTrainingMemory(*spec, o);
  EXPECT_DOUBLE_EQ(flash->activations_per_layer_bytes, sel->activations_per_layer_bytes);

  o.recompute = Recompute::kFull;
  o.sequence_parallel = false;
  o.tensor_parallel = 1;
  auto full = EstimateTrainingMemory(*spec, o);
  EXPECT_DOUBLE_EQ(full->activations_per_layer_bytes, 2 * s * b * h);
  EXPECT_DOUBLE_EQ(full->activations_bytes, 96 * 2 * s * b * h);
}

TEST(Memory, MixedPrecisionAdamIs16BytesPerParam) {
  auto spec = LoadModel("llama-3.1-8b");
  ASSERT_TRUE(spec.ok());
  TrainingMemoryOptions o;
  o.seq_len = 8192;
  auto m = EstimateTrainingMemory(*spec, o);
  ASSERT_TRUE(m.ok());
  const double n = 8'030'261'248.0;
  EXPECT_DOUBLE_EQ(m->weights_bytes, 2 * n);
  EXPECT_DOUBLE_EQ(m->gradients_bytes, 2 * n);
  EXPECT_DOUBLE_EQ(m->optimizer_bytes, 12 * n);
}

TEST(Memory, KvCacheGqaMlaAndWindows) {
  // Llama-3.1-8B: 32 layers x 8 kv heads x (128 + 128) x 2 bytes = 131072 B/token.
  auto llama = LoadModel("llama-3.1-8b");
  ASSERT_TRUE(llama.ok());
  auto kv = ComputeKvCache(*llama, DType::kBf16, 8192);
  ASSERT_TRUE(kv.ok());
  EXPECT_DOUBLE_EQ(kv->bytes_per_token, 32.0 * 8 * 256 * 2);
  EXPECT_DOUBLE_EQ(kv->bytes_per_sequence, 8192 * 32.0 * 8 * 256 * 2);
  // DeepSeek-V3 MLA: 61 layers x (512 + 64) latent x 2 bytes = 70,272 B/token.
  auto v3 = LoadModel("deepseek-v3");
  ASSERT_TRUE(v3.ok());
  EXPECT_DOUBLE_EQ(ComputeKvCache(*v3, DType::kBf16, 100)->bytes_per_token, 61.0 * 576 * 2);
  // gpt-oss-120b: 18 sliding layers (window 128) + 18 full, 8 kv heads x 128.
  auto oss = LoadModel("gpt-oss-120b");
  ASSERT_TRUE(oss.ok());
  auto okv = ComputeKvCache(*oss, DType::kFp8, 4096);
  ASSERT_TRUE(okv.ok());
  const double per_layer_token = 8.0 * 128 * 1;
  EXPECT_DOUBLE_EQ(okv->bytes_per_sequence, per_layer_token * (18 * 128 + 18 * 4096));
  EXPECT_FALSE(ComputeKvCache(*oss, DType::kBf16, 0).ok());
}

}  // namespace
}  // namespace mfu
