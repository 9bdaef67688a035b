#pragma once

// Helpers of the telemetry reader tests: read a text expecting success or
// one error, read a file.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "mfu/telemetry.h"

namespace mfu::testing {

inline TelemetryCapture ReadOk(std::string_view text, std::string_view origin,
                               const TelemetryReadOptions& options = {}) {
  StatusOr<TelemetryCapture> c = ReadTelemetryCapture(text, origin, options);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? std::move(*c) : TelemetryCapture{};
}

inline std::string ReadError(std::string_view text, std::string_view origin, const TelemetryReadOptions& options = {}) {
  StatusOr<TelemetryCapture> c = ReadTelemetryCapture(text, origin, options);
  EXPECT_FALSE(c.ok());
  return c.ok() ? "" : c.status().message();
}

// The bytes of `path`; empty (and a test failure when `required`) if absent.
inline std::string Slurp(const std::string& path, bool required = true) {
  std::ifstream in(path, std::ios::binary);
  if (required) {
    EXPECT_TRUE(in.good()) << path;
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace mfu::testing
