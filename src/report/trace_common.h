#pragma once

// What the trace renderers (trace_text.cc, trace_json.cc, trace_csv.cc)
// share: microsecond conversions and the diagnostic severity names.

#include <cstddef>
#include <cstdint>

#include "mfu/trace.h"

namespace mfu::report {

inline double Us(int64_t ns) {
  return static_cast<double>(ns) / 1e3;
}
inline double Us(double ns) {
  return ns / 1e3;
}

// "info", "data_loss", "error".
inline const char* SeverityName(Severity s) {
  static constexpr const char* kSeverity[] = {"info", "data_loss", "error"};
  return kSeverity[static_cast<size_t>(s)];
}

}  // namespace mfu::report
