#pragma once

// The trace job's renderers (mfu/trace_job.h): each returns exactly the bytes
// a front end writes. JSON fields: docs/trace.md.

#include <string>
#include <utility>
#include <vector>

#include "mfu/status.h"
#include "mfu/text_options.h"
#include "mfu/trace_job.h"

namespace mfu {

// The terminal report: first "why MFU is low" (the verdict: the largest
// losses with their remedies) and the notes; for several ranks the cross-rank
// summary (per rank MFU, compute / exposed communication / idle shares, the
// slowest ranks against the median, the spread), then the full detail of the
// ranks options.detail_ranks / detail_all_ranks select (every rank with
// `verbose`; a single trace always): the time breakdown, kernel classes, the
// MFU waterfall and host phases (with `verbose`, the top kernels per class
// and every diagnostic); then the collectives. Lines fit `text.width` where
// their content allows (file paths are never cut).
std::string RenderTraceJobText(const JobAnalysis& job, const TraceJobOptions& options, bool verbose,
                               const TextOptions& text = {});

// The JSON document (schema_version, variant, model and convention with a
// model, ranks, collectives), pretty-printed with a final newline.
std::string RenderTraceJobJson(const JobAnalysis& job, const TraceJobOptions& options);

// The CSV tables as (file name, content), in order: ranks.csv, steps.csv,
// classes.csv, kernels.csv, idle.csv, waterfall.csv, phases.csv,
// diagnostics.csv and, when the collectives were analysed, collectives.csv.
// Times in the CSV tables are microseconds.
std::vector<std::pair<std::string, std::string>> RenderTraceJobCsv(const JobAnalysis& job);

}  // namespace mfu
