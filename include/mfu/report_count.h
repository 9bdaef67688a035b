#pragma once

// The reports of the counting commands (flops, calc, memory, hw, models) as
// terminal text and as JSON (docs/cli.md "JSON layout"): exactly the bytes
// a front end writes.

#include <string>
#include <vector>

#include "mfu/calc.h"
#include "mfu/flops.h"
#include "mfu/hwdb.h"
#include "mfu/memory.h"
#include "mfu/text_options.h"

namespace mfu {

std::string RenderFlopsText(const FlopsReport& report, const TextOptions& options = {});
std::string RenderFlopsJson(const FlopsReport& report);

std::string RenderCalcText(const CalcReport& report, const TextOptions& options = {});
std::string RenderCalcJson(const CalcReport& report);

std::string RenderMemoryText(const MemoryReport& report, const TextOptions& options = {});
std::string RenderMemoryJson(const MemoryReport& report);

// One line per accelerator (`mfu hw list`).
std::string RenderAcceleratorListText(const std::vector<const Accelerator*>& accelerators,
                                      const TextOptions& options = {});
std::string RenderAcceleratorListJson(const std::vector<const Accelerator*>& accelerators);
// Every field of one accelerator (`mfu hw show`); the JSON has them at the
// top level (`peak_tflops.<dtype>`).
std::string RenderAcceleratorText(const Accelerator& accelerator, const TextOptions& options = {});
std::string RenderAcceleratorJson(const Accelerator& accelerator);

// The presets and their parameters (`mfu models`).
std::string RenderPresetListText(const std::vector<PresetCount>& presets, const TextOptions& options = {});
std::string RenderPresetListJson(const std::vector<PresetCount>& presets);

}  // namespace mfu
