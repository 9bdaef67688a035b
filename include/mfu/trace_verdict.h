#pragma once

// Why MFU is low: the cross-rank summary of a trace job and the verdict, the
// largest losses of the MFU waterfall named with the usual remedies for
// each. The remedies live in one rule table (VerdictRules()), one rule per
// waterfall bucket, so a reader can see why each remedy is suggested: the
// bucket it would shrink and the mechanism ("why").
//
//   std::vector<VerdictItem> v = VerdictFromWaterfall(*rank.waterfall);
//   for (const VerdictItem& item : v)
//     ...item.rule->remedies...

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "mfu/result.h"
#include "mfu/trace_breakdown.h"

namespace mfu {

// How to record the shapes the hardware-FLOPs MFU needs.
inline constexpr const char* kRecordShapesHint =
    "profile with record_shapes=True (torch.profiler.profile(record_shapes=True, with_flops=True))";

// One row of the rule table: a loss (a waterfall bucket) and what shrinks it.
struct VerdictRule {
  WaterfallBucket bucket = WaterfallBucket::kIdle;
  const char* code = "";    // stable identifier: "host_bound_idle", ...
  const char* loss = "";    // the loss in words: "GPU idle (host-bound)"
  const char* why = "";     // why the time is lost and why the remedies shrink it
  const char* remedies[4];  // the usual remedies, most effective first; nullptr-terminated
};

// Every rule, one per loss bucket (matrix_at_peak is no loss and has none),
// in WaterfallBucket order.
std::span<const VerdictRule> VerdictRules();

// The rule for `bucket`, or nullptr for matrix_at_peak.
const VerdictRule* FindVerdictRule(WaterfallBucket bucket);

// Where the loss shares come from.
enum class VerdictBasis : uint8_t {
  kWaterfall = 0,  // the MFU waterfall: every bucket
  kTimeBreakdown,  // no accelerator peak: only idle, exposed communication and memcpy
};
const char* VerdictBasisName(VerdictBasis basis);  // "waterfall", "time_breakdown"

// One named loss.
struct VerdictItem {
  const VerdictRule* rule = nullptr;  // never null
  int64_t loss_ns = 0;                // summed over the ranks the verdict covers
  double share = 0;                   // of the step time (summed likewise), 0..1
};

struct VerdictOptions {
  double min_share = 0.05;  // losses below 5% of the step are not named
  size_t max_items = 3;
};

// The losses of `loss_ns` (indexed by WaterfallBucket; matrix_at_peak is
// ignored) whose share of `step_ns` is at least options.min_share, largest
// first (ties: bucket order), at most options.max_items. Empty when
// `step_ns` <= 0.
std::vector<VerdictItem> RankLosses(const std::array<int64_t, kNumWaterfallBuckets>& loss_ns, int64_t step_ns,
                                    const VerdictOptions& options = {});

// The verdict of one waterfall: RankLosses over its buckets.
std::vector<VerdictItem> VerdictFromWaterfall(const Waterfall& w, const VerdictOptions& options = {});

// The verdict of a whole job: the losses summed over its ranks.
struct JobVerdict {
  VerdictBasis basis = VerdictBasis::kWaterfall;  // kWaterfall only when every rank has one
  int64_t step_ns = 0;                            // the ranks' step times (or GPU spans) summed
  std::vector<VerdictItem> items;
};

// The losses a time breakdown shows without a peak, in the waterfall's
// buckets: idle, exposed communication, exposed memcpy + memset; every
// other bucket 0. The step is the GPU span.
std::array<int64_t, kNumWaterfallBuckets> TemporalLosses(const TemporalBreakdown& t);

// One rank in the cross-rank summary.
struct RankSummary {
  size_t index = 0;                 // into JobAnalysis::ranks
  int64_t rank = -1;                // distributedInfo.rank (-1: absent)
  int64_t span_ns = 0;              // GPU span of the main window
  int64_t compute_ns = 0;           // compute kernels (union)
  double compute_share = 0;         // of the span, 0..1
  double comm_share = 0;            // exposed communication, of the span
  double idle_share = 0;            // of the span
  bool has_waterfall = false;       // false: no accelerator peak (or no GPU activity)
  std::optional<double> mfu_hw;     // waterfall MFU; nullopt: no waterfall or no recorded shapes
  bool mfu_hw_lower_bound = false;  // shapes cover only part of the matrix time
  std::optional<double> model_mfu;  // with a model
  // Time in collectives waiting for other ranks (the collective analysis,
  // over the whole trace; 0 without it), clipped to the span.
  int64_t wait_ns = 0;
  double wait_share = 0;         // of the span
  int64_t work_ns = 0;           // span_ns - wait_ns: the time this rank itself needed
  double work_vs_median = 0;     // work_ns / median - 1
  double compute_vs_median = 0;  // compute_ns / median - 1
};

// The summary of a job: the ranks in input order; the slowest are those
// that needed the most time themselves (work: the span less the wait for
// other ranks in collectives), because in a synchronous job every other rank
// waits for them.
struct JobSummary {
  std::vector<RankSummary> ranks;
  int64_t median_work_ns = 0;
  int64_t median_compute_ns = 0;
  int64_t median_span_ns = 0;
  double work_spread = 0;       // (max - min) / median of the work times, 0..
  double span_spread = 0;       // likewise of the spans
  double compute_spread = 0;    // likewise of the compute times
  std::vector<size_t> slowest;  // indices into `ranks`, slowest first: at most 3, each above the median work
};

}  // namespace mfu
