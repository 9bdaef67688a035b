#pragma once

// What the stages of the collective analysis (collectives_*.cc) share:
// extraction (collectives_extract.cc), matching and clock alignment
// (collectives_match.cc), transfer/wait split, totals and bandwidth
// (collectives_stats.cc), HTA's stragglers (collectives_hta.cc).

#include <cstdint>
#include <string_view>
#include <vector>

#include "mfu/status.h"
#include "mfu/trace.h"
#include "mfu/trace_classify.h"
#include "mfu/trace_collectives.h"

namespace mfu::trace {

// One kernel-class list per trace, each as long as its trace's events.
Status CheckCollectiveInputs(const std::vector<RankTrace>& traces,
                             const std::vector<std::vector<KernelClass>>& classes);

// The rank of each trace: its distributedInfo rank, else its index;
// kInvalidArgument when two traces claim one rank.
StatusOr<std::vector<int64_t>> AssignRanks(const std::vector<RankTrace>& traces);

// Ranks of a group: the ranks string ("...|[0, 1]"), else pg_config by
// name; empty if unknown.
std::vector<int64_t> GroupRanks(const RankTrace& t, std::string_view group);

inline int64_t EndOf(const CollectiveParticipant& p) {
  return p.start_ns + p.dur_ns;
}

// Transfer = the shortest participant; each participant's wait; the last
// arrival; algorithm and bus bandwidth.
void SplitInstance(CollectiveInstance& inst);
int64_t EarliestStart(const CollectiveInstance& inst);
std::vector<RankCommTotals> RankTotals(const std::vector<CollectiveInstance>& instances,
                                       const std::vector<int64_t>& ranks);
StragglerSummary SummarizeStragglers(const std::vector<RankCommTotals>& totals, double share_factor);
// Per (kind, [4^k, 4^(k+1)) bytes): counts, times and median bandwidths.
std::vector<CollectiveBandwidthStats> BandwidthStats(const std::vector<CollectiveInstance>& instances);

}  // namespace mfu::trace
