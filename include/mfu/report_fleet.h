#pragma once

// Renderers of `mfu fleet analyze` (mfu/fleet.h): the FleetReport as
// terminal text (per GPU, per job, per node, the fleet, the findings), as
// JSON (docs/fleet.md "JSON schema": the bytes a front end writes) and as
// CSV tables. Every estimated figure is labelled an estimate of hardware
// FLOPs; figures the telemetry could not give print as "-" (text), null
// (JSON) or an empty field (CSV).

#include <string>
#include <utility>
#include <vector>

#include "mfu/fleet.h"
#include "mfu/text_options.h"

namespace mfu {

std::string RenderFleetText(const FleetReport& report, const TextOptions& options = {});
std::string RenderFleetJson(const FleetReport& report);
// (file name, content): gpus.csv, jobs.csv, nodes.csv.
std::vector<std::pair<std::string, std::string>> RenderFleetCsv(const FleetReport& report);

}  // namespace mfu
