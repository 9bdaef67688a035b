// Multi-rank collective analysis, stage 4: each matched instance split into
// transfer and wait, per-rank totals, the stragglers who caused the waits,
// bandwidth per collective and size.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/stats.h"
#include "base/strings.h"
#include "mfu/trace_collectives.h"
#include "trace/collectives_internal.h"

namespace mfu::trace {
namespace {

// [4^k, 4^(k+1)) containing `bytes`; {-1, -1} when unknown or empty.
std::pair<int64_t, int64_t> SizeBucket(int64_t bytes) {
  if (bytes <= 0)
    return {-1, -1};
  int64_t lo = 1;
  while (lo <= bytes / 4)
    lo *= 4;
  int64_t hi = lo > std::numeric_limits<int64_t>::max() / 4 ? std::numeric_limits<int64_t>::max() : lo * 4;
  return {lo, hi};
}

}  // namespace

void SplitInstance(CollectiveInstance& inst) {
  if (!inst.matched() || inst.participants.empty())
    return;
  const auto& ps = inst.participants;
  int64_t transfer = ps[0].dur_ns, first_start = ps[0].start_ns, last_start = ps[0].start_ns;
  int64_t first_end = EndOf(ps[0]), last_end = EndOf(ps[0]);
  for (const CollectiveParticipant& p : ps) {
    transfer = std::min(transfer, p.dur_ns);
    first_start = std::min(first_start, p.start_ns);
    first_end = std::min(first_end, EndOf(p));
    last_end = std::max(last_end, EndOf(p));
    if (p.start_ns > last_start)
      last_start = p.start_ns;
  }
  inst.transfer_ns = transfer;
  inst.arrival_skew_ns = last_start - first_start;
  inst.end_skew_ns = last_end - first_end;
  for (CollectiveParticipant& p : inst.participants)
    p.wait_ns = p.dur_ns - transfer;
  if (ps.size() >= 2 && !inst.point_to_point) {
    // Participants are sorted by rank: the first latest start wins ties.
    for (const CollectiveParticipant& p : ps) {
      if (p.start_ns == last_start) {
        inst.last_rank = p.rank;
        break;
      }
    }
  }
  if (inst.message_bytes > 0 && transfer > 0) {
    inst.algbw_bytes_per_s = static_cast<double>(inst.message_bytes) * 1e9 / static_cast<double>(transfer);
    inst.busbw_bytes_per_s = inst.algbw_bytes_per_s * BusBandwidthFactor(inst.kind, inst.group_size);
  }
}

int64_t EarliestStart(const CollectiveInstance& inst) {
  int64_t s = std::numeric_limits<int64_t>::max();
  for (const CollectiveParticipant& p : inst.participants)
    s = std::min(s, p.start_ns);
  return s;
}

std::vector<RankCommTotals> RankTotals(const std::vector<CollectiveInstance>& instances,
                                       const std::vector<int64_t>& ranks) {
  std::vector<RankCommTotals> out(ranks.size());
  for (size_t t = 0; t < ranks.size(); ++t)
    out[t].rank = ranks[t];
  for (const CollectiveInstance& inst : instances) {
    int64_t earliest = EarliestStart(inst), others_wait = 0;
    const CollectiveParticipant* last = nullptr;
    for (const CollectiveParticipant& p : inst.participants) {
      RankCommTotals& r = out[p.trace_index];
      ++r.num_kernels;
      r.comm_ns += p.dur_ns;
      if (!inst.matched()) {
        ++r.num_unmatched;
        r.unmatched_ns += p.dur_ns;
        continue;
      }
      r.transfer_ns += inst.transfer_ns;
      r.wait_ns += p.wait_ns;
      if (inst.last_rank < 0)
        continue;
      ++r.num_multi_rank;
      r.lateness_ns += p.start_ns - earliest;
      if (p.rank == inst.last_rank) {
        last = &p;
      } else {
        others_wait += p.wait_ns;
      }
    }
    if (last != nullptr) {
      ++out[last->trace_index].last_arrivals;
      out[last->trace_index].caused_wait_ns += others_wait;
    }
  }
  return out;
}

StragglerSummary SummarizeStragglers(const std::vector<RankCommTotals>& totals, double share_factor) {
  StragglerSummary s;
  size_t n = 0;
  for (const RankCommTotals& r : totals) {
    if (r.num_multi_rank > 0)
      ++n;
    s.total_wait_ns += r.caused_wait_ns;
  }
  if (n < 2 || s.total_wait_ns <= 0)
    return s;
  s.fair_share = 1.0 / static_cast<double>(n);
  s.threshold_share = share_factor * s.fair_share;
  std::vector<const RankCommTotals*> flagged;
  for (const RankCommTotals& r : totals) {
    double share = static_cast<double>(r.caused_wait_ns) / static_cast<double>(s.total_wait_ns);
    if (r.caused_wait_ns > 0 && share >= s.threshold_share)
      flagged.push_back(&r);
  }
  std::sort(flagged.begin(), flagged.end(), [](const RankCommTotals* a, const RankCommTotals* b) {
    return a->caused_wait_ns != b->caused_wait_ns ? a->caused_wait_ns > b->caused_wait_ns : a->rank < b->rank;
  });
  for (const RankCommTotals* r : flagged)
    s.ranks.push_back(r->rank);
  return s;
}

std::vector<CollectiveBandwidthStats> BandwidthStats(const std::vector<CollectiveInstance>& instances) {
  struct Acc {
    CollectiveBandwidthStats stats;
    std::vector<double> algbw, busbw;
  };
  std::map<std::pair<CollectiveKind, int64_t>, Acc> by_bucket;
  for (const CollectiveInstance& inst : instances) {
    if (!inst.matched())
      continue;
    auto [lo, hi] = SizeBucket(inst.message_bytes);
    Acc& acc = by_bucket[{inst.kind, lo}];
    acc.stats.kind = inst.kind;
    acc.stats.min_bytes = lo;
    acc.stats.max_bytes = hi;
    ++acc.stats.count;
    acc.stats.transfer_ns += inst.transfer_ns;
    for (const CollectiveParticipant& p : inst.participants)
      acc.stats.wait_ns += p.wait_ns;
    if (inst.algbw_bytes_per_s > 0) {
      acc.algbw.push_back(inst.algbw_bytes_per_s);
      acc.busbw.push_back(inst.busbw_bytes_per_s);
    }
  }
  std::vector<CollectiveBandwidthStats> out;
  for (auto& [key, acc] : by_bucket) {
    acc.stats.median_algbw_bytes_per_s = base::Median(std::move(acc.algbw), 0);
    acc.stats.median_busbw_bytes_per_s = base::Median(std::move(acc.busbw), 0);
    out.push_back(acc.stats);
  }
  return out;
}

}  // namespace mfu::trace
