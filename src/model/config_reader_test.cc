// Config reader: family quirks and every kind of bad input (one clear
// message naming the file and the key).

#include <gtest/gtest.h>

#include <string>

#include "mfu/file_system.h"
#include "mfu/model.h"

namespace mfu {
namespace {

constexpr const char* kLlama = R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
  "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256})";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos)
    text.replace(pos, from.size(), to);
  return text;
}

std::string ErrorOf(const std::string& json) {
  auto spec = ParseModelConfig(json, "cfg.json");
  EXPECT_FALSE(spec.ok());
  return spec.ok() ? "" : spec.status().message();
}

TEST(ConfigReader, ReadsLlama) {
  auto spec = ParseModelConfig(kLlama, "cfg.json");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->head_dim, 128);
  EXPECT_EQ(spec->kv_heads, 8);
  EXPECT_FALSE(spec->tied_embeddings);
}

// The training dropout is the largest of the families' dropout keys; a
// probability outside [0, 1) names the key.
TEST(ConfigReader, DropoutKeys) {
  auto llama = ParseModelConfig(kLlama, "cfg.json");
  ASSERT_TRUE(llama.ok());
  EXPECT_EQ(llama->dropout, 0);
  auto two = ParseModelConfig(Replace(kLlama, "}", R"(, "attention_dropout": 0.05, "hidden_dropout": 0.1})"), "c");
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_EQ(two->dropout, 0.1);
  auto gpt2 = LoadModel(RealFileSystem(), "gpt2");
  ASSERT_TRUE(gpt2.ok());
  EXPECT_EQ(gpt2->dropout, 0.1);  // resid_pdrop and attn_pdrop in its config.json
  EXPECT_EQ(ErrorOf(Replace(kLlama, "}", R"(, "attention_dropout": "0.1"})")),
            "cfg.json: key 'attention_dropout' must be a number in [0, 1], got \"0.1\"");
  EXPECT_NE(ErrorOf(Replace(kLlama, "}", R"(, "resid_pdrop": 1.5})")).find("'resid_pdrop' must be a number in [0, 1]"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Replace(kLlama, "}", R"(, "resid_pdrop": 1})")).find("'resid_pdrop' must be below 1"),
            std::string::npos);
}

// DeepSeek's group-limited routing: DeepSeek-V3 picks its 8 experts from
// 4 of 8 groups (config n_group 8, topk_group 4); Kimi K2 has one group.
TEST(ConfigReader, RoutingGroups) {
  auto v3 = LoadModel(RealFileSystem(), "deepseek-v3");
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(v3->moe.groups, 8);
  EXPECT_EQ(v3->moe.group_top_k, 4);
  auto kimi = LoadModel(RealFileSystem(), "kimi-k2");
  ASSERT_TRUE(kimi.ok());
  EXPECT_EQ(kimi->moe.groups, 1);
  auto llama = ParseModelConfig(kLlama, "cfg.json");
  ASSERT_TRUE(llama.ok());
  EXPECT_EQ(llama->moe.groups, 1);
}

TEST(ConfigReader, MalformedJson) {
  std::string msg = ErrorOf(R"({"model_type": "llama", "hidden_size": )");
  EXPECT_NE(msg.find("cfg.json: malformed JSON at byte"), std::string::npos) << msg;
  EXPECT_NE(ErrorOf("[1, 2]").find("top level must be a JSON object"), std::string::npos);
  EXPECT_FALSE(ParseModelConfig("", "cfg.json").ok());
}

TEST(ConfigReader, MissingKeyNamesFileAndKey) {
  std::string msg = ErrorOf(Replace(kLlama, R"("hidden_size": 4096, )", ""));
  EXPECT_EQ(msg, "cfg.json: key 'hidden_size' is missing");
}

TEST(ConfigReader, WrongTypes) {
  EXPECT_EQ(ErrorOf(Replace(kLlama, "4096", "\"4096\"")),
            "cfg.json: key 'hidden_size' must be a positive integer, got \"4096\"");
  EXPECT_NE(ErrorOf(Replace(kLlama, "14336", "14336.5")).find("'intermediate_size' must be a positive integer"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Replace(kLlama, "\"llama\"", "7")).find("'model_type' must be a string"), std::string::npos);
  std::string tied = Replace(kLlama, "}", R"(, "tie_word_embeddings": "yes"})");
  EXPECT_NE(ErrorOf(tied).find("'tie_word_embeddings' must be true or false"), std::string::npos);
}

TEST(ConfigReader, ZeroNegativeAndAbsurdNumbers) {
  EXPECT_NE(ErrorOf(Replace(kLlama, "32,", "0,")).find("must be a positive integer, got 0"), std::string::npos);
  EXPECT_NE(ErrorOf(Replace(kLlama, "14336", "-5")).find("got -5"), std::string::npos);
  EXPECT_NE(ErrorOf(Replace(kLlama, "128256", "99999999999999999999")).find("vocab_size"), std::string::npos);
  EXPECT_NE(ErrorOf(Replace(kLlama, "128256", "1e300")).find("vocab_size"), std::string::npos);
  // Dimensions that are each below 2^40 but multiply to nonsense.
  std::string huge = Replace(Replace(kLlama, "4096", "1000000000"), "14336", "1000000000");
  EXPECT_NE(ErrorOf(huge).find("absurd"), std::string::npos);
  // kv heads must divide heads.
  EXPECT_NE(ErrorOf(Replace(kLlama, "\"num_key_value_heads\": 8", "\"num_key_value_heads\": 5"))
                .find("must divide attention heads"),
            std::string::npos);
}

TEST(ConfigReader, UnknownModelTypeListsFamilies) {
  std::string msg = ErrorOf(Replace(kLlama, "\"llama\"", "\"llamma\""));
  EXPECT_NE(msg.find("cfg.json: key 'model_type': unsupported model type 'llamma'"), std::string::npos);
  EXPECT_NE(msg.find("supported families: llama, mistral"), std::string::npos);
  std::string missing = ErrorOf(Replace(kLlama, R"("model_type": "llama", )", ""));
  EXPECT_NE(missing.find("key 'model_type' is missing; supported families"), std::string::npos);
}

TEST(ConfigReader, MoeTopKAboveExperts) {
  std::string mixtral = Replace(kLlama, "\"llama\"", "\"mixtral\"");
  mixtral = Replace(mixtral, "}", R"(, "num_local_experts": 8, "num_experts_per_tok": 9})");
  EXPECT_NE(ErrorOf(mixtral).find("'num_experts_per_tok' (9) exceeds the number of experts (8)"), std::string::npos);
}

TEST(ConfigReader, HeadDimIsItsOwnKey) {
  auto qwen3 = LoadModel(mfu::RealFileSystem(), "qwen3-32b");  // 64 heads x 128 = 8192 != hidden 5120
  ASSERT_TRUE(qwen3.ok());
  EXPECT_EQ(qwen3->head_dim, 128);
  EXPECT_EQ(qwen3->hidden, 5120);
}

TEST(ConfigReader, SlidingWindowPatterns) {
  auto gemma2 = LoadModel(mfu::RealFileSystem(), "gemma-2-9b");  // even layers slide (HF Gemma2)
  ASSERT_TRUE(gemma2.ok());
  EXPECT_EQ(gemma2->layers[0].window, 4096);
  EXPECT_EQ(gemma2->layers[1].window, 0);
  auto gemma3 = LoadModel(mfu::RealFileSystem(), "gemma-3-1b-it");  // 5 local : 1 global
  ASSERT_TRUE(gemma3.ok());
  EXPECT_EQ(gemma3->layers[4].window, 512);
  EXPECT_EQ(gemma3->layers[5].window, 0);
  auto oss = LoadModel(mfu::RealFileSystem(), "gpt-oss-120b");  // layer_types
  ASSERT_TRUE(oss.ok());
  EXPECT_EQ(oss->layers[0].window, 128);
  EXPECT_EQ(oss->layers[1].window, 0);
  auto qwen = LoadModel(mfu::RealFileSystem(), "qwen2.5-7b-instruct");  // use_sliding_window false
  ASSERT_TRUE(qwen.ok());
  for (const auto& layer : qwen->layers)
    EXPECT_EQ(layer.window, 0);
  auto mistral = LoadModel(mfu::RealFileSystem(), "mistral-7b-v0.1");  // MLC's sliding_window_size
  ASSERT_TRUE(mistral.ok());
  EXPECT_EQ(mistral->layers[31].window, 4096);
}

TEST(ConfigReader, DeepSeekLayersAndMtp) {
  auto v3 = LoadModel(mfu::RealFileSystem(), "deepseek-v3");
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(v3->num_moe_layers(), 58);  // 61 layers, first 3 dense
  EXPECT_EQ(v3->mtp_layers, 1);
  auto lite = LoadModel(mfu::RealFileSystem(), "deepseek-v2-lite");  // q_lora_rank null
  ASSERT_TRUE(lite.ok());
  EXPECT_EQ(lite->mla.q_lora_rank, 0);
}

TEST(ConfigReader, MultimodalTextConfig) {
  std::string wrapped = std::string(R"({"model_type": "gemma3", "vision_config": {}, "text_config": )") +
                        Replace(kLlama, "\"llama\"", "\"gemma3_text\"").insert(1, R"("sliding_window": 1024,)") + "}";
  auto spec = ParseModelConfig(wrapped, "mm.json");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->family, "gemma3");
  EXPECT_TRUE(spec->tied_embeddings);
  std::string broken = Replace(wrapped, "\"hidden_size\": 4096, ", "");
  EXPECT_EQ(ParseModelConfig(broken, "mm.json").status().message(),
            "mm.json: text_config: key 'hidden_size' is missing");
}

TEST(LoadModel, PresetMatching) {
  EXPECT_TRUE(LoadModel(mfu::RealFileSystem(), "llama-3.1-8b").ok());
  EXPECT_TRUE(LoadModel(mfu::RealFileSystem(), "LLAMA-3.1-8B-Instruct").ok());
  auto ambiguous = LoadModel(mfu::RealFileSystem(), "mistral-7b");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ambiguous.status().message(),
            "model 'mistral-7b' is ambiguous; candidates: mistral-7b-instruct-v0.3, mistral-7b-v0.1");
  auto typo = LoadModel(mfu::RealFileSystem(), "qwen3-8c");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("did you mean 'qwen3-8b'"), std::string::npos);
  auto missing_file = LoadModel(mfu::RealFileSystem(), "/nonexistent/config.json");
  ASSERT_FALSE(missing_file.ok());
  EXPECT_EQ(missing_file.status().code(), StatusCode::kNotFound);
}

TEST(GenericModel, FlagErrors) {
  GenericModelOptions o;
  o.layers = 2;
  o.hidden = 64;
  o.heads = 4;
  o.vocab = 100;
  EXPECT_NE(BuildGenericModel(o).status().message().find("parameter 'ffn'"), std::string::npos);
  o.ffn = 256;
  EXPECT_TRUE(BuildGenericModel(o).ok());
  o.experts = 8;
  o.top_k = 9;
  EXPECT_EQ(BuildGenericModel(o).status().message(), "parameter 'top_k': 9 exceeds parameter 'experts' 8");
  o.top_k = 0;
  EXPECT_EQ(BuildGenericModel(o).status().message(), "parameter 'experts': given without parameter 'top_k'");
  o.experts = 0;
  o.heads = 5;
  EXPECT_NE(BuildGenericModel(o).status().message().find("does not divide parameter 'hidden'"), std::string::npos);
  o.heads = -4;
  EXPECT_FALSE(BuildGenericModel(o).ok());
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// Found by model_config_fuzzer: a number beyond double range made nlohmann
// throw out_of_range from parse(); a non-string rope_type threw type_error.
TEST(ConfigReader, ExceptionsFromTheJsonLibraryBecomeErrors) {
  auto overflow = ParseModelConfig(R"({"model_type": "gpt2", "layer_norm_epsilon": 1e505})", "f.json");
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.status().code(), StatusCode::kParse);
  EXPECT_EQ(overflow.status().message().rfind("f.json: ", 0), 0u);
  std::string rope = std::string(kLlama);
  rope.insert(1, R"("rope_scaling": {"rope_type": 5}, )");
  // rope_scaling has no FLOPs effect: an odd type is echoed as '?', not an
  // error (it used to throw inside the library).
  auto bad_rope = ParseModelConfig(rope, "r.json");
  ASSERT_TRUE(bad_rope.ok()) << bad_rope.status().message();
  EXPECT_EQ(bad_rope->notes[0], "rope_scaling ?: no FLOPs effect");
  // The overflow names the key, in mfu's words (#12: no json.exception text).
  // Byte 50: the parser stops after the 5-character number at offset 45.
  EXPECT_EQ(overflow.status().message(), "f.json: key 'layer_norm_epsilon': number out of range at byte 50");
}

// Found by model_config_fuzzer: n_layer 1e12 passed the 2^40 dimension check
// and the per-layer table tried to allocate 16 TB.
TEST(ConfigReader, AbsurdLayerCountIsRefusedBeforeAllocating) {
  auto spec = ParseModelConfig(R"({"model_type": "gpt2", "n_embd": 768, "n_head": 2, "n_layer": 1e12,
                                   "n_positions": 10, "vocab_size": 100})",
                               "g.json");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(), "g.json: key 'n_layer' is absurd: 1000000000000 layers (limit 100000)");
}

}  // namespace
}  // namespace mfu
