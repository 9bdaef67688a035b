#pragma once

// Renders a JobAnalysis: terminal tables, JSON (docs/trace.md lists every
// field), and CSV files.

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/trace_analysis.h"
#include "mfu/status.h"

namespace mfu::cli {

nlohmann::json TraceJobJson(const JobAnalysis& job, const TraceJobOptions& options);
void PrintTraceJob(std::ostream& out, const JobAnalysis& job, const TraceJobOptions& options, bool verbose);
// Writes ranks.csv, steps.csv, classes.csv, kernels.csv, idle.csv,
// waterfall.csv, collectives.csv and diagnostics.csv into `dir` (created).
Status WriteTraceCsv(const std::string& dir, const JobAnalysis& job);

}  // namespace mfu::cli
