#pragma once

// Multi-rank collective analysis over the traces of one job (one RankTrace
// per rank): align the ranks' clocks, match each collective across ranks,
// split every rank's communication-kernel time into transfer and wait, find
// the ranks everyone waits for, and report algorithm/bus bandwidth.
//
// Definitions:
// * A collective instance is identified by (process group, collective kind,
//   sequence number). The group is the `Process Group Name` plus the
//   `Process Group Ranks` string when the trace has them, else "" (unknown).
//   The sequence number is the trace's `Seq` when present, else the
//   occurrence index of that (group, kind) on the rank, in start order.
// * transfer time = the minimum kernel duration over the participants: the
//   time the data movement needs once every rank has arrived (TraceLens'
//   `comm_latency`). wait = duration - transfer, per participant. Both are
//   independent of clock alignment.
// * arrival skew = latest aligned start - earliest aligned start.
// * algorithm bandwidth = message bytes / transfer time; bus bandwidth =
//   algorithm bandwidth x BusBandwidthFactor() (nccl-tests PERFORMANCE.md).
//
// Every rank's communication time is accounted for exactly:
// comm_ns == transfer_ns + wait_ns + unmatched_ns (RankCommTotals).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/result.h"
#include "mfu/status.h"
#include "mfu/trace.h"
#include "mfu/trace_classify.h"

namespace mfu {

// The kind named by a collective argument ("allreduce", "_allgather_base",
// "all_to_all", "reduce_scatter_tensor_coalesced"), a c10d annotation
// ("nccl:all_reduce", "nccl:send 0->1") or an NCCL/RCCL kernel
// ("ncclKernel_AllReduce_RING_LL_Sum_float(...)", "ncclDevKernel_AllGather_RING_LL(...)").
// kUnknown when nothing matches ("coalesced", "ncclDevKernel_Generic").
CollectiveKind CollectiveKindFromName(std::string_view name);

// Bytes per element of a dtype as PyTorch writes it in collective args
// ("Float", "BFloat16") or in `Input type` ("float", "c10::BFloat16",
// "long int", "unsigned char"). 0 when unknown or not a tensor ("Scalar", "").
int64_t DtypeSizeBytes(std::string_view dtype);

// Where a rank's collective fields came from, most to least direct.
enum class CollectiveSource : uint8_t {
  kKernelArgs = 0,    // the kernel's own collective args (PyTorch >= 2.2)
  kRecordParamComms,  // collective args of the launching record_param_comms op
  kOpShapes,          // kind from the nccl:* annotation, size from Input Dims x Input type
  kKernelName,        // kind from the kernel name only; size unknown
};
const char* CollectiveSourceName(CollectiveSource source);

// One communication kernel of one rank, with what the trace says about it.
struct RankCollective {
  size_t event = 0;  // index into the RankTrace event columns
  CollectiveKind kind = CollectiveKind::kUnknown;
  CollectiveSource source = CollectiveSource::kKernelName;
  std::string group;       // "<pg name>|<pg ranks>", "<pg name>", "|<pg ranks>" or "" (unknown)
  std::string group_desc;  // Process Group Description ("default_pg"), or ""
  std::string op_name;     // the kernel name, kept only for kUnknown (part of the match key)
  int64_t seq = -1;        // the trace's Seq, or the occurrence index of (group, kind[, op_name])
  bool seq_from_trace = false;
  // Ranks in the group: args `Group size`, the ranks string, pg_config, or the
  // world size when the group is unknown; -1 when none of these exist.
  int64_t group_size = -1;
  // nccl-tests' size S in bytes: the buffer for allreduce/broadcast/reduce/
  // p2p, the full gathered size for allgather (out_nelems or in x n), the
  // full input for reducescatter, the send buffer for alltoall. -1 unknown.
  int64_t message_bytes = -1;
  std::string dtype;     // as written ("Float", "float"), or ""
  int64_t start_ns = 0;  // the trace's own clock
  int64_t dur_ns = 0;
};

// The communication kernels of `trace` (GPU kernels whose `classes` entry is
// KernelClass::kCommunication), in start order, each with its collective
// fields filled from the best available source: the kernel's args; else the
// record_param_comms / nccl:* ops enclosing the runtime launch that has the
// kernel's correlation id (or, without a launch event, the op with the
// kernel's External id); else the kernel name. kInvalidArgument when
// `classes` does not have one entry per event.
StatusOr<std::vector<RankCollective>> ExtractRankCollectives(const RankTrace& trace,
                                                             std::span<const KernelClass> classes);

enum class AlignmentMethod : uint8_t {
  kReference = 0,   // the rank whose clock the others are moved to (offset 0)
  kCollectiveEnds,  // median difference of matched collective end times
  kAbsoluteClock,   // no shared collective: epoch timestamps trusted as they are (offset 0)
  kFirstEvent,      // no shared collective and no epoch clock: first events aligned
};
const char* AlignmentMethodName(AlignmentMethod method);

struct RankAlignment {
  int64_t rank = -1;
  // Added to this rank's timestamps to express them on the reference clock.
  int64_t offset_ns = 0;
  AlignmentMethod method = AlignmentMethod::kReference;
  size_t num_anchors = 0;  // matched collectives whose end times set the offset
  // Median |aligned end - median aligned end of the instance| over this rank's
  // matched multi-rank collectives after alignment: how well ends agree.
  int64_t end_spread_ns = 0;
};

struct CollectiveParticipant {
  int64_t rank = -1;
  size_t trace_index = 0;  // into the `traces` argument
  size_t event = 0;        // into that trace's event columns
  int64_t start_ns = 0;    // aligned (reference clock)
  int64_t dur_ns = 0;
  int64_t message_bytes = -1;
  int64_t wait_ns = 0;  // dur_ns - instance transfer_ns; 0 for unmatched instances
};

// One collective matched across ranks.
struct CollectiveInstance {
  CollectiveKind kind = CollectiveKind::kUnknown;
  CollectiveSource source = CollectiveSource::kKernelName;  // the least direct among participants
  std::string group;
  std::string group_desc;
  std::string op_name;  // kUnknown only
  int64_t seq = -1;
  bool seq_from_trace = false;
  int64_t group_size = -1;                          // from the participants; else loaded ranks of the group
  int64_t message_bytes = -1;                       // largest over participants; -1 unknown
  bool sizes_differ = false;                        // participants reported different sizes (all_to_all_v)
  bool point_to_point = false;                      // send/recv: one participant, transfer = duration
  std::vector<CollectiveParticipant> participants;  // by rank
  // Loaded ranks of the group (all loaded ranks when the group's ranks are
  // unknown) that have no kernel for this instance. Non-empty: unmatched; no
  // transfer/wait split is made and the time counts as unmatched.
  std::vector<int64_t> missing_ranks;
  int64_t transfer_ns = 0;       // min participant duration (matched only)
  int64_t arrival_skew_ns = 0;   // latest - earliest aligned start
  int64_t end_skew_ns = 0;       // latest - earliest aligned end
  int64_t last_rank = -1;        // latest aligned start (lowest rank on ties); -1 with < 2 participants
  double algbw_bytes_per_s = 0;  // 0 when the size or the transfer time is unknown
  double busbw_bytes_per_s = 0;
  bool matched() const { return missing_ranks.empty(); }
};

// Per-rank totals. comm_ns == transfer_ns + wait_ns + unmatched_ns.
struct RankCommTotals {
  int64_t rank = -1;
  size_t num_kernels = 0;    // communication kernels
  size_t num_unmatched = 0;  // of them, in unmatched instances
  int64_t comm_ns = 0;
  int64_t transfer_ns = 0;
  int64_t wait_ns = 0;
  int64_t unmatched_ns = 0;
  // Over matched collectives with >= 2 participants:
  size_t num_multi_rank = 0;
  size_t last_arrivals = 0;    // instances this rank started last
  int64_t caused_wait_ns = 0;  // the other participants' wait in the instances this rank started last
  int64_t lateness_ns = 0;     // sum of (own start - earliest start)
};

// Matched collectives of one kind and message-size bucket. Buckets are powers
// of 4 bytes: [4^k, 4^(k+1)); min_bytes = max_bytes = -1 for unknown sizes.
struct CollectiveBandwidthStats {
  CollectiveKind kind = CollectiveKind::kUnknown;
  int64_t min_bytes = -1;
  int64_t max_bytes = -1;  // exclusive
  size_t count = 0;
  int64_t transfer_ns = 0;  // sum of instance transfer times
  int64_t wait_ns = 0;      // sum of participant waits
  double median_algbw_bytes_per_s = 0;
  double median_busbw_bytes_per_s = 0;
};

// Stragglers: the ranks the others wait for. An instance's wait (the sum of
// its participants' waits) is charged to its last arriver; a rank is a
// straggler when its charged share of all wait is at least
// `straggler_share_factor` times the fair share 1/n (n = ranks taking part
// in multi-rank collectives), i.e. it holds the others up more than a rank
// that is last by chance.
struct StragglerSummary {
  std::vector<int64_t> ranks;  // stragglers, most caused wait first
  int64_t total_wait_ns = 0;
  double fair_share = 0;
  double threshold_share = 0;
};

struct CollectiveOptions {
  // Align clocks on matched collective ends; false trusts the timestamps.
  bool align_ranks = true;
  double straggler_share_factor = 1.5;
};

struct CollectiveAnalysis {
  std::vector<RankAlignment> alignment;             // in `traces` order
  std::vector<RankCommTotals> ranks;                // in `traces` order
  std::vector<CollectiveInstance> instances;        // by earliest aligned start
  std::vector<CollectiveBandwidthStats> bandwidth;  // by kind, then size
  StragglerSummary stragglers;
  size_t num_matched = 0;
  size_t num_unmatched = 0;
};

// Runs the whole analysis. `classes[i]` holds the class of every event of
// `traces[i]` (ClassifyEvents()). Ranks are `RankTrace::rank`, or the index
// in `traces` when a trace has none. kInvalidArgument when the sizes differ
// or two traces claim the same rank. Traces without communication kernels
// are fine (empty results).
StatusOr<CollectiveAnalysis> AnalyzeCollectives(const std::vector<RankTrace>& traces,
                                                const std::vector<std::vector<KernelClass>>& classes,
                                                const CollectiveOptions& options = {});

// HTA's get_potential_stragglers (hta/analyzers/straggler.py), reproduced as
// a named variant. Per iteration (ProfilerStep#N; the last one is dropped
// when the set has >= 2 step names, as HTA's loader does): take the
// communication kernels lasting >= `min_normalized_duration` of the mean
// iteration time, keep the last one per (rank, stream, iteration, name),
// pick the (stream, name) whose normalized duration varies most across ranks
// (mean over iterations of the sample std), and flag in each iteration the
// `num_candidates` ranks that start it latest. Ranks are returned by how
// often they were flagged, then by rank. Differences from HTA: communication
// kernels are those classified kCommunication (HTA: names starting with
// "ncclKernel", missing ncclDevKernel_* and non-NCCL kernels; HTA#360)
// unless `nccl_kernel_prefix_only`; only CPU-side ProfilerStep events define
// iterations; times are exact nanoseconds (HTA rounds to microseconds).
struct HtaStragglerOptions {
  int num_candidates = 2;
  double min_normalized_duration = 0.01;
  bool include_last_profiler_step = false;
  bool nccl_kernel_prefix_only = false;
};

struct HtaStragglerMetric {
  int64_t rank = -1;
  int64_t iteration = -1;
  int64_t start_ns = 0;         // the candidate kernel's start (trace clock)
  double normalized_start = 0;  // (start - earliest event of the iterations) / mean iteration time
  bool flagged = false;
};

struct HtaStragglerResult {
  std::vector<int64_t> stragglers;  // at most num_candidates ranks
  std::vector<int64_t> iterations;
  double mean_iteration_ns = 0;
  double min_duration_ns = 0;
  int64_t stream = -1;  // the chosen (stream, kernel name)
  std::string kernel_name;
  std::vector<HtaStragglerMetric> metrics;  // by iteration, then rank
};

// kNotFound when no trace has a ProfilerStep or no communication kernel
// qualifies (HTA raises); kInvalidArgument as AnalyzeCollectives().
StatusOr<HtaStragglerResult> FindStragglersHta(const std::vector<RankTrace>& traces,
                                               const std::vector<std::vector<KernelClass>>& classes,
                                               const HtaStragglerOptions& options = {});

}  // namespace mfu
