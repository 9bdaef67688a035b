// Stable ids of badput categories, goodput event kinds and event sources.

#include <array>
#include <string>
#include <string_view>

#include "mfu/goodput.h"

namespace mfu {
namespace {

constexpr std::array<const char*, kNumBadputCategories> kCategoryIds = {
    "initialization",  "data_loading",          "checkpoint_save", "checkpoint_restore",
    "wasted_progress", "idle_between_attempts", "evaluation",      "other",
};

constexpr std::array<const char*, static_cast<size_t>(GoodputEventKind::kCount)> kEventIds = {
    "job_start",
    "job_end",
    "job_failed",
    "step",
    "checkpoint_save_begin",
    "checkpoint_save_end",
    "checkpoint_save_async",
    "checkpoint_restore_begin",
    "checkpoint_restore_end",
    "init_begin",
    "init_end",
    "data_loading_begin",
    "data_loading_end",
    "custom_begin",
    "custom_end",
    "queued",
};

constexpr std::array<const char*, static_cast<size_t>(GoodputSourceFormat::kCount)> kSourceIds = {
    "auto", "megatron-progress", "goodput-jsonl", "sacct", "slurm-jobcomp", "training-log",
};

std::string Normalize(std::string_view id) {
  std::string out(id);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

const char* BadputCategoryId(BadputCategory category) {
  size_t i = static_cast<size_t>(category);
  return i < kCategoryIds.size() ? kCategoryIds[i] : "unknown";
}

std::optional<BadputCategory> ParseBadputCategory(std::string_view id) {
  std::string lower = Normalize(id);
  for (size_t i = 0; i < kCategoryIds.size(); ++i) {
    if (lower == kCategoryIds[i])
      return static_cast<BadputCategory>(i);
  }
  return std::nullopt;
}

const char* GoodputEventKindId(GoodputEventKind kind) {
  size_t i = static_cast<size_t>(kind);
  return i < kEventIds.size() ? kEventIds[i] : "unknown";
}

const char* GoodputSourceFormatId(GoodputSourceFormat format) {
  size_t i = static_cast<size_t>(format);
  return i < kSourceIds.size() ? kSourceIds[i] : "unknown";
}

std::optional<GoodputSourceFormat> ParseGoodputSourceFormat(std::string_view id) {
  std::string lower = Normalize(id);
  for (char& c : lower) {
    if (c == '_')
      c = '-';
  }
  for (size_t i = 0; i < kSourceIds.size(); ++i) {
    if (lower == kSourceIds[i])
      return static_cast<GoodputSourceFormat>(i);
  }
  if (lower == "progress" || lower == "progress.txt")
    return GoodputSourceFormat::kMegatronProgress;
  if (lower == "jsonl" || lower == "ml-goodput")
    return GoodputSourceFormat::kGoodputJsonl;
  if (lower == "jobcomp")
    return GoodputSourceFormat::kSlurmJobComp;
  if (lower == "log")
    return GoodputSourceFormat::kTrainingLog;
  return std::nullopt;
}

}  // namespace mfu
