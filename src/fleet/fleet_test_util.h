#pragma once

// Telemetry built by hand for the fleet tests: devices with the labels
// dcgm-exporter gives them and points with the fields a test sets.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "mfu/telemetry.h"

namespace mfu::testing {

inline TelemetryDevice H100(const std::string& uuid, const std::string& host = "node-a", const std::string& gpu = "0") {
  TelemetryDevice d;
  d.vendor = "nvidia";
  d.uuid = uuid;
  d.hostname = host;
  d.gpu = gpu;
  d.model_name = "NVIDIA H100 80GB HBM3";
  return d;
}

inline TelemetryPoint Point(int64_t time_ms, std::initializer_list<std::pair<TelemetryField, double>> values) {
  TelemetryPoint p;
  p.time_ms = time_ms;
  for (const auto& [field, value] : values)
    p.value[static_cast<size_t>(field)] = value;
  return p;
}

}  // namespace mfu::testing
