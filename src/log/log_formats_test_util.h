#pragma once

// Helpers of the log-format reader tests (log_formats_test): read a text or
// an excerpt of tests/data/logs, expecting success.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "mfu/training_log.h"

namespace mfu::testing {

inline LogTimeline ReadLog(std::string_view text, LogFormat format = LogFormat::kAuto,
                           std::string_view origin = "test.log") {
  LogReadOptions options;
  options.format = format;
  StatusOr<LogTimeline> t = ReadTrainingLog(text, origin, options);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? std::move(*t) : LogTimeline{};
}

inline std::string LogExcerpt(const std::string& name) {
  std::ifstream in(std::string(MFU_SOURCE_DIR) + "/tests/data/logs/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline LogTimeline ReadExcerpt(const std::string& name, LogFormat format = LogFormat::kAuto) {
  return ReadLog(LogExcerpt(name), format, name);
}

// The non-validation steps of `t`.
inline std::vector<LogStep> TrainSteps(const LogTimeline& t) {
  std::vector<LogStep> out;
  for (const LogStep& s : t.steps) {
    if (!s.validation) {
      out.push_back(s);
    }
  }
  return out;
}

inline int CountEvents(const LogTimeline& t, LogEventKind kind) {
  int n = 0;
  for (const LogEvent& e : t.events) {
    n += e.kind == kind ? 1 : 0;
  }
  return n;
}

}  // namespace mfu::testing
