#pragma once

// Stage 3b: the merge of per-thread builders into one trace, sorted by
// (ts, -dur, offset). See docs/trace.md for the pipeline.

#include <memory>
#include <vector>

#include "mfu/trace.h"
#include "trace/event_parser.h"
#include "trace/trace_stats.h"

namespace mfu::trace {

// Merges the builders into `out` (ids remapped, B/E pairs completed) in
// (ts, -dur, offset) order: the sort runs on keys, then each column is
// gathered once from the builders, on two threads when allowed.
void MergeAndSort(std::vector<std::unique_ptr<TraceBuilder>>& builders, RankTrace& out, DiagnosticCounter& diagnostics,
                  int threads);

}  // namespace mfu::trace
