// Parameter counts of the presets added for #12 (Llama 3/3.3/4, Qwen2.5-72B,
// Qwen3-235B-A22B, Mistral Large 2407, Kimi K2, GLM-4.5) against figures
// published independently of mfu: model cards, technical reports and the
// Hugging Face safetensors totals. Published figures are rounded (72.7B), so
// the tolerance is half the last published digit unless stated otherwise;
// where mfu's ModelSpec approximates the architecture the test says what and
// why the count still holds.

#include <gtest/gtest.h>

#include "mfu/model.h"

namespace mfu {
namespace {

ParamCounts Count(const char* preset) {
  auto spec = LoadModel(InMemoryFileSystem(), preset, ModelLookup{});
  EXPECT_TRUE(spec.ok()) << preset << ": " << spec.status().message();
  return spec.ok() ? CountParams(*spec) : ParamCounts{};
}

// Meta-Llama-3-8B and -70B have the shapes of Llama 3.1 8B/70B (only RoPE
// scaling and context differ); the Hugging Face safetensors totals are
// 8,030,261,248 and 70,553,706,496 (shown as 8.03B and 70.6B on the model
// pages). Llama-3.3-70B-Instruct is the 3.1 70B architecture (Meta's model
// card: "70B", same config keys).
TEST(NewPresets, Llama3DenseExactHfTotals) {
  EXPECT_EQ(Count("llama-3-8b").total, 8'030'261'248);
  EXPECT_EQ(Count("llama-3-70b").total, 70'553'706'496);
  EXPECT_EQ(Count("llama-3.3-70b-instruct").total, 70'553'706'496);
}

// Qwen2.5-72B model card: "Number of Parameters: 72.7B; Number of
// Paramaters (Non-Embedding): 70.0B". Qwen's non-embedding figure leaves
// out embedding and LM head (Qwen2.5-7B: 7.61B and 6.53B, which mfu
// reproduces). For the 72B the two published figures disagree with each
// other: 72.7B - 2 x 152064 x 8192 = 70.2B, so the non-embedding count is
// checked to 0.25B.
TEST(NewPresets, Qwen25_72bModelCard) {
  ParamCounts p = Count("qwen2.5-72b");
  EXPECT_NEAR(p.total, 72.7e9, 0.05e9);
  EXPECT_NEAR(p.total - p.embedding - p.lm_head, 70.0e9, 0.25e9);
  ParamCounts small = Count("qwen2.5-7b-instruct");
  EXPECT_NEAR(small.total - small.embedding - small.lm_head, 6.53e9, 0.005e9);
}

// Qwen3-235B-A22B model card: "235B in total and 22B activated; Number of
// Parameters (Non-Embedding): 234B".
TEST(NewPresets, Qwen3_235bModelCard) {
  ParamCounts p = Count("qwen3-235b-a22b");
  EXPECT_NEAR(p.total, 235e9, 0.5e9);
  EXPECT_NEAR(p.active, 22e9, 0.5e9);
  EXPECT_NEAR(p.total - p.embedding - p.lm_head, 234e9, 0.5e9);
}

// Mistral-Large-Instruct-2407 model card: "123B parameters".
TEST(NewPresets, MistralLarge2407ModelCard) {
  EXPECT_NEAR(Count("mistral-large-2407").total, 123e9, 0.5e9);
}

// Llama 4 model card: Scout "17B activated / 109B total", Maverick "17B
// activated / 400B total". Those totals include the vision encoder and
// projector, which mfu does not count (the preset is the text model): the
// text totals are about 1 and 2 billion lower, so the total is checked to
// 2% and the activated count (text only, the vision tower runs once per
// image) to the published rounding. Approximated: chunked attention is a
// sliding window of the chunk size (no parameter effect); the L2 q/k norm
// has no weights and is not counted.
TEST(NewPresets, Llama4ModelCard) {
  ParamCounts scout = Count("llama-4-scout-17b-16e");
  EXPECT_NEAR(scout.total, 109e9, 0.02 * 109e9);
  EXPECT_LT(scout.total, 109e9);
  EXPECT_NEAR(scout.active, 17e9, 0.5e9);
  ParamCounts maverick = Count("llama-4-maverick-17b-128e");
  EXPECT_NEAR(maverick.total, 400e9, 0.02 * 400e9);
  EXPECT_NEAR(maverick.active, 17e9, 0.5e9);
}

TEST(NewPresets, Llama4LayerPattern) {
  auto scout = LoadModel(InMemoryFileSystem(), "llama-4-scout", ModelLookup{});
  ASSERT_TRUE(scout.ok()) << scout.status().message();
  EXPECT_EQ(scout->num_moe_layers(), 48);
  EXPECT_EQ(scout->ffn, 16384);
  EXPECT_EQ(scout->moe.expert_ffn, 8192);
  EXPECT_EQ(scout->moe.shared_ffn, 8192);
  // Every fourth layer is NoPE with full attention, the rest chunked.
  EXPECT_EQ(scout->layers[3].window, 0);
  EXPECT_EQ(scout->layers[0].window, 8192);
  auto maverick = LoadModel(InMemoryFileSystem(), "llama-4-maverick", ModelLookup{});
  ASSERT_TRUE(maverick.ok()) << maverick.status().message();
  EXPECT_EQ(maverick->num_moe_layers(), 24);
  EXPECT_FALSE(maverick->layers[0].moe);
  EXPECT_TRUE(maverick->layers[1].moe);
}

// Kimi K2 technical report (arXiv:2507.20534), architecture table: "1.04T
// total parameters, 32.6B activated"; 61 layers (1 dense), 384 experts of
// 2048, 8 active + 1 shared, 64 MLA heads, hidden 7168, vocab 163840. MLA is
// DeepSeek-V3's, supported exactly. Computed by hand from that table:
// routed 60 x 384 x 3 x 7168 x 2048 = 1014.6B, attention 61 x 101.3M = 6.2B,
// shared 2.6B, dense MLP 0.4B, embedding + head 2 x 1.17B: 1026.4B, 1.3%
// under the report's rounded 1.04T (the report does not itemise its count;
// the released config has no MTP layer). Checked to 1.5%; the activated
// count (with the input embedding, 32.86B) to 1%.
TEST(NewPresets, KimiK2TechReport) {
  ParamCounts p = Count("kimi-k2");
  EXPECT_NEAR(p.total, 1.04e12, 0.015 * 1.04e12);
  EXPECT_NEAR(p.total, 1026.4e9, 0.05e9);  // the hand computation above
  EXPECT_NEAR(p.active, 32.6e9, 0.01 * 32.6e9);
  EXPECT_EQ(p.mtp, 0);
}

// GLM-4.5 model card / technical report (arXiv:2508.06471): GLM-4.5 "355B
// total, 32B active", GLM-4.5-Air "106B total, 12B active". Zhipu's active
// figure leaves out embedding and LM head (32.08B and 12.18B here). The MTP
// layer is counted apart (ParamCounts::mtp, 4.0B and 2.4B), as for
// DeepSeek-V3: 352.8B + 4.0B brackets the published 355B.
TEST(NewPresets, Glm45ModelCard) {
  ParamCounts glm = Count("glm-4.5");
  EXPECT_NEAR(glm.total, 355e9, 0.01 * 355e9);
  EXPECT_LT(glm.total, 355e9);
  EXPECT_GT(glm.total + glm.mtp, 355e9);
  EXPECT_NEAR(glm.active_non_embedding - glm.lm_head, 32e9, 0.5e9);
  ParamCounts air = Count("glm-4.5-air");
  EXPECT_NEAR(air.total, 106e9, 0.01 * 106e9);
  EXPECT_NEAR(air.active_non_embedding - air.lm_head, 12e9, 0.5e9);
  EXPECT_GT(air.mtp, 0);
}

}  // namespace
}  // namespace mfu
