// Fuzzes the Prometheus query_range / query JSON reader (the hand scanner,
// skipped values, the lockstep merge of one device's series): any bytes give
// devices or one error, never a crash; see telemetry_fuzz_check.h. Seeds:
// fuzz/corpus/telemetry_query_range/.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "telemetry_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mfu::fuzz::RunTelemetryFuzz(std::string_view(reinterpret_cast<const char*>(data), size),
                              mfu::TelemetryFormat::kQueryRange);
  return 0;
}
