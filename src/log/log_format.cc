// Stable ids of log formats and event kinds.

#include <array>
#include <string_view>

#include "mfu/training_log.h"

namespace mfu {
namespace {

constexpr std::array<const char*, static_cast<size_t>(LogFormat::kCount)> kFormatIds = {
    "auto",       "megatron-lm",      "megatron-bridge", "megatron-progress", "nemo2",    "torchtitan", "deepspeed",
    "hf-trainer", "hf-trainer-state", "maxtext",         "nanogpt",           "composer", "picotron",
};

struct Alias {
  std::string_view name;
  LogFormat format;
};
constexpr Alias kAliases[] = {
    {"megatron", LogFormat::kMegatronLm},
    {"megatron-deepspeed", LogFormat::kMegatronLm},
    {"bridge", LogFormat::kMegatronBridge},
    {"progress", LogFormat::kMegatronProgress},
    {"progress.txt", LogFormat::kMegatronProgress},
    {"nemo", LogFormat::kNemo2},
    {"titan", LogFormat::kTorchtitan},
    {"hf", LogFormat::kHfTrainer},
    {"transformers", LogFormat::kHfTrainer},
    {"trainer-state", LogFormat::kHfTrainerState},
    {"trainer_state.json", LogFormat::kHfTrainerState},
    {"nanogpt", LogFormat::kNanoGpt},
    {"llm-foundry", LogFormat::kComposer},
    {"mosaic", LogFormat::kComposer},
};

constexpr std::array<const char*, static_cast<size_t>(LogEventKind::kCount)> kEventIds = {
    "job_start", "checkpoint_save", "checkpoint_save_async", "checkpoint_load", "evaluation", "data_loading",
    "job_end",   "failure",
};

}  // namespace

const char* LogFormatId(LogFormat format) {
  size_t i = static_cast<size_t>(format);
  return i < kFormatIds.size() ? kFormatIds[i] : "unknown";
}

std::optional<LogFormat> ParseLogFormat(std::string_view id) {
  std::string lower(id);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
    if (c == '_')
      c = '-';
  }
  for (size_t i = 0; i < kFormatIds.size(); ++i) {
    if (lower == kFormatIds[i])
      return static_cast<LogFormat>(i);
  }
  for (const Alias& alias : kAliases) {
    if (lower == alias.name)
      return alias.format;
  }
  return std::nullopt;
}

const char* LogEventKindId(LogEventKind kind) {
  size_t i = static_cast<size_t>(kind);
  return i < kEventIds.size() ? kEventIds[i] : "unknown";
}

}  // namespace mfu
