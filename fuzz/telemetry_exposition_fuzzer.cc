// Fuzzes the Prometheus exposition reader (labels, escapes, values,
// timestamps, device grouping): any bytes give devices or one error, never
// a crash; see telemetry_fuzz_check.h for the invariants. Seeds:
// fuzz/corpus/telemetry_exposition/ (the captures and hand-made edge cases).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "telemetry_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mfu::fuzz::RunTelemetryFuzz(std::string_view(reinterpret_cast<const char*>(data), size),
                              mfu::TelemetryFormat::kExposition);
  return 0;
}
