// Parameter counts of every shipped preset against the exact counts published
// with the configs (shared/model-configs/README.md, which lists the Hugging
// Face count of each model; every computed total there matches HF). This test
// links only the library (mfu::mfu), proving the API is usable without the CLI.

#include <gtest/gtest.h>

#include "mfu/model.h"

namespace mfu {
namespace {

struct Expected {
  const char* preset;
  double total;
  double active;  // 0: dense (active == total)
};

// Totals: model-configs/README.md tables A and A2 ("computed total", equal to
// the HF count). Active (incl. input embedding): same tables, in parentheses.
constexpr Expected kExpected[] = {
    {"deepseek-v3", 671'026'419'200, 37'552'297'472},
    {"gpt-oss-120b", 116'829'156'672, 5'711'982'912},
    {"llama-3.1-8b-instruct", 8'030'261'248, 0},
    {"llama-3.1-70b-instruct", 70'553'706'496, 0},
    {"llama-3.2-1b-instruct", 1'235'814'400, 0},
    {"mistral-7b-instruct-v0.3", 7'248'023'552, 0},
    {"mixtral-8x7b-v0.1", 46'702'792'704, 12'879'925'248},
    {"qwen2.5-7b-instruct", 7'615'616'512, 0},
    {"qwen3-8b", 8'190'735'360, 0},
    {"qwen3-32b", 32'762'123'264, 0},
    {"qwen3-30b-a3b", 30'532'122'624, 3'353'032'704},
    {"phi-4", 14'659'507'200, 0},
    {"gpt2-large", 774'030'080, 0},
    {"llama-2-7b", 6'738'415'616, 0},
    {"llama-2-70b", 68'976'648'192, 0},
    {"mistral-7b-v0.1", 7'241'732'096, 0},
    {"gemma-2-9b", 9'241'705'984, 0},
    {"gemma-2-27b", 27'227'128'320, 0},
    {"gemma-3-1b-it", 999'885'952, 0},
    {"deepseek-v2-lite", 15'706'484'224, 2'661'150'208},
    {"qwen1.5-moe-a2.7b", 14'315'784'192, 2'689'173'504},
    {"phi-3.5-mini-instruct", 3'821'079'552, 0},
    {"gpt2", 124'439'808, 0},
    {"redpajama-incite-3b-gpt-neox", 2'775'864'320, 0},
    // HF safetensors totals of meta-llama/Meta-Llama-3-8B, Meta-Llama-3-70B
    // and Llama-3.3-70B-Instruct (the 3.1 8B/70B shapes).
    {"llama-3-8b", 8'030'261'248, 0},
    {"llama-3-70b", 70'553'706'496, 0},
    {"llama-3.3-70b-instruct", 70'553'706'496, 0},
    // architectures.md: Llama-3.1-405B computed total from its published shape.
    {"llama-3.1-405b", 405'853'388'800, 0},
};

class PresetParams : public ::testing::TestWithParam<Expected> {};

TEST_P(PresetParams, MatchesPublishedCountExactly) {
  const Expected& e = GetParam();
  auto spec = LoadModel(mfu::RealFileSystem(), e.preset);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ParamCounts p = CountParams(*spec);
  EXPECT_EQ(p.total, e.total) << e.preset;
  EXPECT_EQ(p.active, e.active > 0 ? e.active : e.total) << e.preset;
}

INSTANTIATE_TEST_SUITE_P(AllPresets, PresetParams, ::testing::ValuesIn(kExpected), [](const auto& test_param) {
  std::string name = test_param.param.preset;
  for (char& c : name) {
    if (!isalnum(static_cast<unsigned char>(c)))
      c = '_';
  }
  return name;
});

TEST(Params, EveryShippedPresetHasAnExpectedCount) {
  auto presets = ListModelPresets();
  int decoders = 0;
  for (const auto& preset : presets) {
    auto spec = LoadModel(mfu::RealFileSystem(), preset.name);
    ASSERT_TRUE(spec.ok()) << preset.name << ": " << spec.status().message();
    EXPECT_FALSE(preset.origin.empty()) << preset.name << " has no origin in data/models/SOURCES.csv";
    if (spec->arch == ArchKind::kDecoder)
      ++decoders;
  }
  // Presets with only rounded published figures are checked in
  // presets_test.cc instead.
  constexpr int kRoundedOnly = 8;  // Llama 4 x2, Qwen2.5-72B, Qwen3-235B, Mistral Large, Kimi K2, GLM-4.5 x2
  EXPECT_EQ(decoders, static_cast<int>(std::size(kExpected)) + kRoundedOnly);
}

TEST(Params, VendorActiveExcludesInputEmbedding) {
  // DeepSeek-V3 report: 37B activated (LM head in, embedding lookup out);
  // gpt-oss model card: 5.13B active excluding the embedding.
  auto v3 = LoadModel(mfu::RealFileSystem(), "deepseek-v3");
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(CountParams(*v3).active_non_embedding, 37'552'297'472.0 - 129280.0 * 7168);
  auto oss = LoadModel(mfu::RealFileSystem(), "gpt-oss-120b");
  ASSERT_TRUE(oss.ok());
  EXPECT_NEAR(CountParams(*oss).active_non_embedding / 1e9, 5.13, 0.005);
}

TEST(Params, DeepSeekV3MtpModuleIsSeparate) {
  // model-configs/README.md: "+MTP 11.5B unique" beside the 671B total.
  auto v3 = LoadModel(mfu::RealFileSystem(), "deepseek-v3");
  ASSERT_TRUE(v3.ok());
  EXPECT_NEAR(CountParams(*v3).mtp / 1e9, 11.5, 0.15);
}

TEST(Params, WanDitCounts) {
  // Wan2.1-T2V-14B: published 14B (flops-reference.csv); model-configs/README.md
  // computes 40 blocks x 351.4M + 0.23B embedders = ~14.29B. Exact value below
  // from the module list of wan/modules/model.py worked by hand:
  // block = 8d^2 + 2d*ffn + ffn + 21d with d=5120, ffn=13824 -> 351,394,304;
  // embedders/time projection/head = 232,719,424.
  auto wan = LoadModel(mfu::RealFileSystem(), "wan2.1-t2v-14b");
  ASSERT_TRUE(wan.ok()) << wan.status().message();
  ParamCounts p = CountParams(*wan);
  EXPECT_EQ(p.total, 40.0 * 351'394'304 + 232'719'424);
  EXPECT_NEAR(p.total / 1e9, 14.0, 0.5);
  // Wan2.1-T2V-1.3B ("1.3B" by name): the same formulas with d=1536,
  // ffn=8960, 30 blocks: 30 x 46,440,704 + 25,775,680 embedders.
  auto small = LoadModel(mfu::RealFileSystem(), "wan2.1-t2v-1.3b");
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(CountParams(*small).total, 30.0 * 46'440'704 + 25'775'680);
  auto ti2v = LoadModel(mfu::RealFileSystem(), "wan2.2-ti2v-5b");
  ASSERT_TRUE(ti2v.ok());
  EXPECT_NEAR(CountParams(*ti2v).total / 1e9, 5.0, 0.1);  // published 5B
}

}  // namespace
}  // namespace mfu
