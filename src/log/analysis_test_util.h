#pragma once

// Helpers of the analysis tests: hand-built steps, the built-in hardware
// database, presets, and finding look-ups.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "mfu/file_system.h"
#include "mfu/hwdb.h"
#include "mfu/log_analysis.h"
#include "mfu/model.h"

namespace mfu::log_test {

inline const HardwareDb& Db() {
  static const HardwareDb* db = [] {
    auto loaded = HardwareDb::LoadBuiltin();
    EXPECT_TRUE(loaded.ok());
    return new HardwareDb(std::move(*loaded));
  }();
  return *db;
}

inline ModelSpec Model(const char* name) {
  auto spec = LoadModel(InMemoryFileSystem(), name);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  return *spec;
}

inline LogStep Step(int64_t step, int64_t line) {
  LogStep s;
  s.step = step;
  s.line = line;
  return s;
}

inline size_t CountKind(const LogAnalysis& a, const std::string& kind) {
  size_t n = 0;
  for (const LogFinding& f : a.findings)
    n += f.kind == kind ? size_t{1} : size_t{0};
  return n;
}

inline const LogFinding* FindKind(const LogAnalysis& a, const std::string& kind) {
  for (const LogFinding& f : a.findings) {
    if (f.kind == kind)
      return &f;
  }
  return nullptr;
}

}  // namespace mfu::log_test
