#pragma once

// Renderers of `mfu goodput` (mfu/goodput.h): the accounting of a job's
// events (wall time, productive time, badput by category, ETTR, attempts,
// MTBF, recovery, checkpoints and the optimal intervals) and the what-if
// study, as terminal text and as JSON (docs/goodput.md "JSON"). Figures
// that are not known print as "-" (text) or null (JSON).

#include <string>
#include <vector>

#include "mfu/goodput.h"
#include "mfu/text_options.h"

namespace mfu {

// `sources`: the files the events came from, listed in the header line.
std::string RenderGoodputText(const GoodputReport& report, const std::vector<std::string>& sources,
                              const TextOptions& options = {});
std::string RenderGoodputJson(const GoodputReport& report, const std::vector<std::string>& sources);

std::string RenderGoodputWhatIfText(const GoodputWhatIf& study, const TextOptions& options = {});
std::string RenderGoodputWhatIfJson(const GoodputWhatIf& study);

// "42.0 s", "18.3 min", "2.78 h", "3.2 d": a duration for people; "-" for NaN.
std::string HumanDuration(double seconds);

}  // namespace mfu
