#pragma once

// Test helpers of the log reader tests: the excerpts in tests/data/logs and
// a field-by-field timeline comparison (NaN equal to NaN).

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "mfu/file_system.h"
#include "mfu/training_log.h"

namespace mfu::log_testing {

inline std::string ExcerptPath(const std::string& name) {
  return std::string(MFU_SOURCE_DIR) + "/tests/data/logs/" + name;
}

inline std::string ReadExcerpt(const std::string& name) {
  RealFileSystem fs;
  StatusOr<std::string> text = fs.ReadFile(ExcerptPath(name));
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? *text : std::string();
}

inline LogTimeline ReadExcerptTimeline(const std::string& name, LogFormat format = LogFormat::kAuto) {
  RealFileSystem fs;
  LogReadOptions options;
  options.format = format;
  StatusOr<LogTimeline> t = ReadTrainingLogFile(fs, ExcerptPath(name), options);
  EXPECT_TRUE(t.ok()) << name << ": " << t.status().message();
  return t.ok() ? std::move(*t) : LogTimeline{};
}

inline bool SameDouble(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return !(a < b) && !(b < a);
}

// Every field of two timelines, with `what` naming the case on failure.
inline void ExpectSameTimeline(const LogTimeline& a, const LogTimeline& b, const std::string& what) {
  EXPECT_EQ(a.format, b.format) << what;
  EXPECT_EQ(a.attempts, b.attempts) << what;
  EXPECT_EQ(a.stats.lines, b.stats.lines) << what;
  EXPECT_EQ(a.stats.bytes, b.stats.bytes) << what;
  EXPECT_EQ(a.stats.step_lines, b.stats.step_lines) << what;
  EXPECT_EQ(a.stats.duplicate_lines, b.stats.duplicate_lines) << what;
  EXPECT_EQ(a.stats.partial_lines, b.stats.partial_lines) << what;
  EXPECT_EQ(a.stats.header_lines, b.stats.header_lines) << what;
  EXPECT_EQ(a.stats.chosen_rank, b.stats.chosen_rank) << what;
  EXPECT_EQ(a.header.world_size, b.header.world_size) << what;
  EXPECT_EQ(a.header.global_batch, b.header.global_batch) << what;
  EXPECT_TRUE(SameDouble(a.header.parameters, b.header.parameters)) << what;
  ASSERT_EQ(a.steps.size(), b.steps.size()) << what;
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const LogStep& x = a.steps[i];
    const LogStep& y = b.steps[i];
    EXPECT_EQ(x.step, y.step) << what << " step " << i;
    EXPECT_EQ(x.line, y.line) << what << " step " << i;
    EXPECT_EQ(x.attempt, y.attempt) << what << " step " << i;
    EXPECT_EQ(x.steps_covered, y.steps_covered) << what << " step " << i;
    EXPECT_TRUE(SameDouble(x.time_s, y.time_s)) << what << " step " << i;
    EXPECT_TRUE(SameDouble(x.step_time_s, y.step_time_s)) << what << " step " << i;
    EXPECT_TRUE(SameDouble(x.loss, y.loss)) << what << " step " << i;
    EXPECT_TRUE(SameDouble(x.logged_tflops_per_gpu, y.logged_tflops_per_gpu)) << what << " step " << i;
    EXPECT_TRUE(SameDouble(x.samples_per_s, y.samples_per_s)) << what << " step " << i;
    EXPECT_TRUE(SameDouble(x.tokens_per_s_per_gpu, y.tokens_per_s_per_gpu)) << what << " step " << i;
  }
  ASSERT_EQ(a.events.size(), b.events.size()) << what;
  for (size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].kind, b.events[i].kind) << what << " event " << i;
    EXPECT_EQ(a.events[i].line, b.events[i].line) << what << " event " << i;
    EXPECT_EQ(a.events[i].step, b.events[i].step) << what << " event " << i;
    EXPECT_EQ(a.events[i].detail, b.events[i].detail) << what << " event " << i;
  }
}

}  // namespace mfu::log_testing
