// AnalyzeFleet: the telemetry reader (telemetry_*.cc) feeding a
// FleetAnalyzer, in one call.

#include <string_view>

#include "mfu/fleet.h"

namespace mfu {

StatusOr<FleetReport> AnalyzeFleet(std::string_view text, std::string_view origin, const FleetOptions& options) {
  FleetAnalyzer analyzer(options);
  TelemetryReadStats stats;
  MFU_RETURN_IF_ERROR(ReadTelemetry(text, origin, TelemetryReadOptions{}, analyzer, &stats));
  return analyzer.Finish(stats, origin);
}

}  // namespace mfu
