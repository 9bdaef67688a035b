// LoadModel's name resolution (#12): version-aware preset matching, aliases
// and repo ids, the Hugging Face hub cache, snapshot directories, display
// names, and file errors, all through an InMemoryFileSystem.

#include <gtest/gtest.h>

#include <string>

#include "mfu/model.h"

namespace mfu {
namespace {

constexpr const char* kTiny = R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})";

std::string NameOf(const FileSystem& fs, const std::string& query, const ModelLookup& lookup = {}) {
  auto spec = LoadModel(fs, query, lookup);
  EXPECT_TRUE(spec.ok()) << query << ": " << spec.status().message();
  return spec.ok() ? spec->name : "";
}

Status ErrorOf(const FileSystem& fs, const std::string& query, const ModelLookup& lookup = {}) {
  auto spec = LoadModel(fs, query, lookup);
  EXPECT_FALSE(spec.ok()) << query;
  return spec.ok() ? Status::Ok() : spec.status();
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ModelNames, VersionAwarePresets) {
  InMemoryFileSystem fs;
  // The issue's example: llama-3-70b used to suggest llama-2-70b.
  EXPECT_EQ(NameOf(fs, "llama-3-70b"), "llama-3-70b");
  EXPECT_EQ(NameOf(fs, "llama3-70b"), "llama-3-70b");
  EXPECT_EQ(NameOf(fs, "Llama_3_70B"), "llama-3-70b");
  EXPECT_EQ(NameOf(fs, "llama-3-70b-instruct"), "llama-3-70b");
  EXPECT_EQ(NameOf(fs, "llama-3.1-8b"), "llama-3.1-8b-instruct");
  EXPECT_EQ(NameOf(fs, "llama3.1-8b"), "llama-3.1-8b-instruct");
  EXPECT_EQ(NameOf(fs, "qwen2.5-72b-instruct"), "qwen2.5-72b");
  EXPECT_EQ(NameOf(fs, "llama-4-scout"), "llama-4-scout-17b-16e");
}

TEST(ModelNames, DidYouMeanPrefersFamilyAndVersion) {
  InMemoryFileSystem fs;
  Status s = ErrorOf(fs, "llama-3-65b");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "did you mean 'llama-3-70b'?")) << s.message();
  s = ErrorOf(fs, "llama-2-65b");
  EXPECT_TRUE(Contains(s.message(), "did you mean 'llama-2-70b'?")) << s.message();
  s = ErrorOf(fs, "llama-3");
  EXPECT_TRUE(Contains(s.message(), "ambiguous")) << s.message();
}

TEST(ModelNames, RepoIdsResolveToPresets) {
  InMemoryFileSystem fs;
  EXPECT_EQ(NameOf(fs, "meta-llama/Llama-3.1-8B"), "llama-3.1-8b-instruct");
  EXPECT_EQ(NameOf(fs, "meta-llama/Meta-Llama-3-70B-Instruct"), "llama-3-70b");
  EXPECT_EQ(NameOf(fs, "qwen/qwen3-235b-a22b"), "qwen3-235b-a22b");
  EXPECT_EQ(NameOf(fs, "moonshotai/Kimi-K2-Instruct"), "kimi-k2");
}

TEST(ModelNames, EveryPresetHasARepoId) {
  for (const PresetInfo& p : ListModelPresets()) {
    EXPECT_NE(p.repo_id.find('/'), std::string::npos) << p.name;
    EXPECT_NE(p.origin, "") << p.name;
    EXPECT_NE(p.family, "?") << p.name;
  }
}

TEST(ModelNames, HubCacheFollowsRefsMain) {
  InMemoryFileSystem fs;
  const std::string repo = "/hub/models--acme--Tiny-1B";
  fs.AddFile(repo + "/refs/main", "bbb\n");
  fs.AddFile(repo + "/snapshots/aaa/config.json", R"({"model_type": "gpt2"})");  // not the one refs/main names
  fs.AddFile(repo + "/snapshots/bbb/config.json", kTiny);
  auto spec = LoadModel(fs, "acme/Tiny-1B", ModelLookup{"/hub"});
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->name, "acme/Tiny-1B");
  EXPECT_EQ(spec->source, repo + "/snapshots/bbb/config.json");
}

TEST(ModelNames, HubCacheWithoutRefsUsesTheSnapshot) {
  InMemoryFileSystem fs;
  fs.AddFile("/hub/models--acme--Tiny-1B/snapshots/ccc/config.json", kTiny);
  EXPECT_EQ(NameOf(fs, "acme/Tiny-1B", ModelLookup{"/hub/"}), "acme/Tiny-1B");
}

TEST(ModelNames, RepoIdNowhereSaysWhereItLooked) {
  InMemoryFileSystem fs;
  Status s = ErrorOf(fs, "acme/Missing-7B", ModelLookup{"/hub"});
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s.message(), "/hub/models--acme--Missing-7B/snapshots/*/config.json")) << s.message();
  s = ErrorOf(fs, "acme/Missing-7B", ModelLookup{});
  EXPECT_TRUE(Contains(s.message(), "HF_HUB_CACHE")) << s.message();
}

TEST(ModelNames, SnapshotDirectoryUsesItsConfig) {
  InMemoryFileSystem fs;
  const std::string snapshot = "/hub/models--acme--Tiny-1B/snapshots/ccc";
  fs.AddFile(snapshot + "/config.json", kTiny);
  EXPECT_EQ(NameOf(fs, snapshot), "acme/Tiny-1B");
  EXPECT_EQ(NameOf(fs, snapshot + "/"), "acme/Tiny-1B");
  EXPECT_EQ(NameOf(fs, "/hub/models--acme--Tiny-1B"), "acme/Tiny-1B");  // the repo directory
  fs.AddDirectory("/empty");
  Status s = ErrorOf(fs, "/empty");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s.message(), "/empty: a directory without a config.json")) << s.message();
}

TEST(ModelNames, DisplayNames) {
  InMemoryFileSystem fs;
  fs.AddFile("/m/my-finetune/config.json", kTiny);
  EXPECT_EQ(NameOf(fs, "/m/my-finetune/config.json"), "my-finetune");
  fs.AddFile("/m/tiny.json", kTiny);
  EXPECT_EQ(NameOf(fs, "/m/tiny.json"), "tiny");
  std::string named = kTiny;
  named.insert(1, R"("_name_or_path": "acme/Named-2B", )");
  fs.AddFile("/m/named/config.json", named);
  EXPECT_EQ(NameOf(fs, "/m/named/config.json"), "acme/Named-2B");
  std::string local = kTiny;
  local.insert(1, R"("_name_or_path": "/root/ckpt/step100", )");  // a local path is not a name
  fs.AddFile("/m/local/config.json", local);
  EXPECT_EQ(NameOf(fs, "/m/local/config.json"), "local");
}

TEST(ModelFiles, ErrorsNameTheFile) {
  InMemoryFileSystem fs;
  fs.AddFile("/m/config.json", kTiny);
  fs.Deny("/m/config.json");
  Status s = ErrorOf(fs, "/m/config.json");
  EXPECT_EQ(s.message(), "/m/config.json: permission denied");
  s = ErrorOf(fs, "/nowhere/config.json");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s.message(), "/nowhere/config.json: cannot open file")) << s.message();
}

TEST(ModelFiles, JsonLibraryTextNeverLeaks) {
  InMemoryFileSystem fs;
  std::string huge = kTiny;
  huge.replace(huge.find("64"), 2, "1e999");
  fs.AddFile("/m/huge.json", huge);
  Status s = ErrorOf(fs, "/m/huge.json");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_FALSE(Contains(s.message(), "json.exception")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "/m/huge.json: key 'hidden_size': number out of range at byte")) << s.message();
  fs.AddFile("/m/rope.json", std::string(kTiny).insert(1, R"("rope_scaling": {"rope_type": 3}, )"));
  auto spec = LoadModel(fs, "/m/rope.json", ModelLookup{});
  EXPECT_TRUE(spec.ok()) << spec.status().message();
}

}  // namespace
}  // namespace mfu
