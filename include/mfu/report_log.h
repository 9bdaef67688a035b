#pragma once

// Renderers of `mfu log` (mfu/log_analysis.h): the LogAnalysis as terminal
// text (what was used and where it came from, the steady state, the
// findings with their line numbers, a step table: every step when there are
// few, else evenly sampled with a note), as JSON (docs/logs.md "JSON
// schema") and as CSV tables. Figures the log could not give print as "-"
// (text), null (JSON) or an empty field (CSV).

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "mfu/log_analysis.h"
#include "mfu/text_options.h"

namespace mfu {

// Steps the text table shows in full; a longer timeline is sampled evenly
// down to this many rows (the first and last step always shown).
inline constexpr size_t kLogTextMaxSteps = 40;

std::string RenderLogText(const LogAnalysis& analysis, const TextOptions& options = {});
// schema_version, format, inputs, steps[], steady_state, findings[], notes.
std::string RenderLogJson(const LogAnalysis& analysis);
// (file name, content): steps.csv, findings.csv.
std::vector<std::pair<std::string, std::string>> RenderLogCsv(const LogAnalysis& analysis);

}  // namespace mfu
