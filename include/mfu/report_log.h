#pragma once

// Renderers of `mfu log` (mfu/log_analysis.h): the LogAnalysis as terminal
// text (what was used and where it came from, the steady state, the
// findings with their line numbers, a step table: every step when there are
// few, else evenly sampled with a note), as JSON (docs/logs.md "JSON
// schema") and as CSV tables. Figures the log could not give print as "-"
// (text), null (JSON) or an empty field (CSV).

#include <cstddef>
#include <iosfwd>
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

// The same bytes as RenderLogJson / RenderLogCsv written into `out` as they
// are produced: steps[] and findings[] row by row, no DOM of the steps and
// no whole document in memory (the writer holds at most about 64 KiB
// beyond `analysis`), for `mfu log` on logs of millions of steps. A failed
// write leaves `out`'s failbit set for the caller to check.
void WriteLogJson(const LogAnalysis& analysis, std::ostream& out);
void WriteLogStepsCsv(const LogAnalysis& analysis, std::ostream& out);     // steps.csv
void WriteLogFindingsCsv(const LogAnalysis& analysis, std::ostream& out);  // findings.csv

}  // namespace mfu
