#pragma once

// What `mfu trace` computes for a job: per rank, the breakdowns of its main
// window and of each profiler step, FLOPs from shapes, the MFU waterfall; and
// across ranks, the collectives. Rendering (text, JSON, CSV) is in
// trace_render.cc.

#include <optional>
#include <string>
#include <vector>

#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/trace.h"
#include "mfu/trace_breakdown.h"
#include "mfu/trace_classify.h"
#include "mfu/trace_collectives.h"
#include "mfu/trace_flops.h"
#include "mfu/trace_waterfall.h"
#include "trace/phases.h"

namespace mfu::cli {

struct TraceJobOptions {
  BreakdownVariant variant = BreakdownVariant::kMfu;
  size_t top_kernels = 10;
  std::string gpu_override;
  std::optional<ModelStepInput> model;
  StepTimeKind step_time = StepTimeKind::kCpuStep;
  int threads = 1;  // analyses run concurrently per rank and across ranks
};

struct StepAnalysis {
  ProfilerStepInfo step;
  WindowBreakdown breakdown;
};

struct RankAnalysis {
  RankTrace trace;
  std::vector<KernelClass> classes;
  std::string accelerator_error;  // why no accelerator was resolved
  std::string waterfall_error;    // why the waterfall could not be computed
  const Accelerator* gpu = nullptr;
  WindowBreakdown main;  // all steps (or the whole trace)
  std::vector<StepAnalysis> steps;
  TraceFlopsSummary flops;
  FlopsAttribution attribution;
  std::optional<StepWaterfall> waterfall;  // over the main window
  std::vector<StepWaterfall> step_waterfalls;
  std::vector<trace::StepPhases> phases;  // host-side step decomposition
};

struct JobAnalysis {
  std::vector<RankAnalysis> ranks;
  std::optional<CollectiveAnalysis> collectives;
  std::string collectives_error;
  std::optional<HtaStragglerResult> hta_stragglers;
};

// Analyses every rank of `traces` (consumed).
StatusOr<JobAnalysis> AnalyzeJob(std::vector<RankTrace> traces, const KernelClassifier& classifier,
                                 const HardwareDb& db, const TraceJobOptions& options);

}  // namespace mfu::cli
