#pragma once

// The trace job (`mfu trace` and every other front end): per rank, the
// breakdowns of its main window and of each profiler step, FLOPs from
// shapes, the MFU waterfalls and the host-side step phases; across ranks, the
// collectives. Renderers: mfu/report_trace.h.
//
//   MFU_ASSIGN_OR_RETURN(Catalog catalog, Catalog::LoadBuiltin());
//   TraceJobOptions options;
//   MFU_ASSIGN_OR_RETURN(JobAnalysis job, AnalyzeTracePaths({"traces/"}, catalog, options));

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mfu/catalog.h"
#include "mfu/flops.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/result.h"
#include "mfu/status.h"
#include "mfu/trace.h"
#include "mfu/trace_breakdown.h"
#include "mfu/trace_classify.h"
#include "mfu/trace_collectives.h"
#include "mfu/trace_flops.h"
#include "mfu/trace_phases.h"
#include "mfu/trace_verdict.h"
#include "mfu/trace_waterfall.h"

namespace mfu {

// The model whose FLOPs give the model MFU beside each waterfall.
struct TraceModelRequest {
  ModelSpec model;
  Convention convention = Convention::kMegatron;
  Recompute recompute = Recompute::kNone;
  int64_t seq_len = 0;                    // required: the attention length
  std::optional<double> tokens_per_step;  // tokens one rank processed per step, or
  int64_t batch = 0;                      // sequences per step (tokens = batch x seq_len)
  std::optional<DType> precision;         // the peak; unset: the dominant GEMM dtype
  bool training = true;                   // false: forward only (1x instead of 3x)
};

struct TraceJobOptions {
  BreakdownVariant variant = BreakdownVariant::kMfu;
  size_t top_kernels = 10;
  std::string gpu_override;  // an accelerator id or alias; empty: each trace's device
  std::optional<TraceModelRequest> model;
  StepTimeKind step_time = StepTimeKind::kCpuStep;
  // Threads for parsing and analysis (files, events and ranks); 0: the
  // machine's cores; at most 256.
  int threads = 0;
  bool keep_python_functions = false;  // python_function events (slower, more memory)
  // Per trace file: the event cap (0: none) and the progress callback
  // (TraceParseOptions).
  uint64_t max_events = 0;
  std::function<void(const TraceProgress&)> progress;

  // The text report only: which ranks of a multi-rank set get their full
  // detail after the cross-rank summary (a single trace always does).
  bool detail_all_ranks = false;      // --ranks all, or -v
  std::vector<int64_t> detail_ranks;  // --ranks 0,3: distributedInfo ranks (input order when absent)
};

struct StepAnalysis {
  ProfilerStepInfo step;
  WindowBreakdown breakdown;
};

struct RankAnalysis {
  RankTrace trace;
  std::vector<KernelClass> classes;
  std::string accelerator_error;     // why no accelerator was resolved
  std::string waterfall_error;       // why the waterfall could not be computed
  const Accelerator* gpu = nullptr;  // into the catalog's hardware table
  WindowBreakdown main;              // all steps (or the whole trace)
  std::vector<StepAnalysis> steps;
  TraceFlopsSummary flops;
  FlopsAttribution attribution;
  std::optional<StepWaterfall> waterfall;  // over the main window
  std::vector<StepWaterfall> step_waterfalls;
  std::vector<StepPhases> phases;  // host-side step decomposition
  JobVerdict verdict;              // this rank's largest losses (its waterfall, else its time breakdown)
};

struct JobAnalysis {
  std::vector<RankAnalysis> ranks;
  std::optional<CollectiveAnalysis> collectives;
  std::string collectives_error;
  std::optional<HtaStragglerResult> hta_stragglers;
  JobSummary summary;  // SummarizeJob
  JobVerdict verdict;  // ComputeJobVerdict: the largest losses over every rank
  // Warnings and assumptions on the whole result: a model MFU above the
  // peak, a model that could not be used, FLOPs that are unknown.
  std::vector<Note> notes;
};

// The cross-rank summary of `job` (per rank MFU and shares, the slowest
// ranks against the median, the spread).
JobSummary SummarizeJob(const JobAnalysis& job);

// The largest losses over every rank of `job`: from the waterfalls when every
// rank has one, else from the time breakdowns (idle, exposed communication
// and memcpy only).
JobVerdict ComputeJobVerdict(const JobAnalysis& job, const VerdictOptions& options = {});

// The largest losses of one rank: its waterfall, else its time breakdown.
JobVerdict ComputeRankVerdict(const RankAnalysis& rank, const VerdictOptions& options = {});

// kInvalidArgument naming `ranks` when options.detail_ranks names a rank
// that is not in `job` (the message lists the ranks there are).
Status CheckDetailRanks(const JobAnalysis& job, const TraceJobOptions& options);

// Whether rank `index` of `job` gets its full detail in the text report.
bool ShowsRankDetail(const JobAnalysis& job, const TraceJobOptions& options, size_t index);

// Checks `options` (kInvalidArgument naming the parameter: threads out of
// range, a model without seq_len or tokens, tokens_per_step and batch both
// given or not positive; the catalog's kInvalidArgument for an unknown
// gpu_override).
Status ValidateTraceJobOptions(const TraceJobOptions& options, const Catalog& catalog);

// Analyses every rank of `traces` (consumed): kernel classes from
// catalog.kernel_classes, accelerators from catalog.hardware (the result
// points into `catalog`, which must outlive it). Errors:
// ValidateTraceJobOptions's; a rank whose accelerator or waterfall cannot be
// resolved is not an error (RankAnalysis says why).
StatusOr<JobAnalysis> AnalyzeTraceJob(std::vector<RankTrace> traces, const Catalog& catalog,
                                      const TraceJobOptions& options);

// Reads `paths` through `fs` (each a trace file, .json or .json.gz, or a
// directory whose files are ranks: ParseTraceSet), in order, then
// AnalyzeTraceJob. Errors:
// ValidateTraceJobOptions's (before any file is read), then ParseTraceSet's.
StatusOr<JobAnalysis> AnalyzeTracePaths(const FileSystem& fs, const std::vector<std::string>& paths,
                                        const Catalog& catalog, const TraceJobOptions& options);

// kParse naming the first rank whose trace has error-severity diagnostics.
Status CheckTraceErrors(const JobAnalysis& job);

}  // namespace mfu
