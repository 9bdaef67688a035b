// Multi-rank collective analysis, stages 2 and 3: instances matched across
// ranks by (group, kind, op, sequence), ranks missing from an instance
// found, clocks aligned on matched ends; then the whole analysis
// (AnalyzeCollectives) over the stages.

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

#include "base/strings.h"
#include "mfu/trace_collectives.h"
#include "trace/collectives_internal.h"

namespace mfu {
namespace {

using trace::EndOf;

// Timestamps at or after 2001-09-09 are taken to be epoch times.
constexpr int64_t kEpochClockMinNs = 1'000'000'000'000'000'000;

// Lower median (integers: no rounding). `v` must not be empty.
int64_t LowerMedian(std::vector<int64_t> v) {
  auto mid = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// ---------------------------------------------------------------------------
// Matching.

// (group, kind, op name, seq, repeat): `repeat` pairs the n-th kernel of a
// rank carrying the same key with the n-th of the others.
using MatchKey = std::tuple<std::string, CollectiveKind, std::string, int64_t, int64_t>;

void AddParticipant(CollectiveInstance& inst, const RankCollective& c, int64_t rank, size_t trace_index) {
  if (inst.participants.empty()) {
    inst.kind = c.kind;
    inst.source = c.source;
    inst.group = c.group;
    inst.op_name = c.op_name;
    inst.seq = c.seq;
    inst.seq_from_trace = c.seq_from_trace;
  }
  inst.source = std::max(inst.source, c.source);
  if (inst.group_desc.empty())
    inst.group_desc = c.group_desc;
  inst.group_size = std::max(inst.group_size, c.group_size);
  if (c.message_bytes >= 0) {
    if (inst.message_bytes >= 0 && inst.message_bytes != c.message_bytes)
      inst.sizes_differ = true;
    inst.message_bytes = std::max(inst.message_bytes, c.message_bytes);
  }
  CollectiveParticipant p;
  p.rank = rank;
  p.trace_index = trace_index;
  p.event = c.event;
  p.start_ns = c.start_ns;  // the rank's own clock until offsets are applied
  p.dur_ns = c.dur_ns;
  p.message_bytes = c.message_bytes;
  inst.participants.push_back(p);
}

std::vector<CollectiveInstance> MatchCollectives(const std::vector<std::vector<RankCollective>>& per_trace,
                                                 const std::vector<int64_t>& ranks) {
  std::vector<CollectiveInstance> out;
  std::map<MatchKey, size_t> index;
  for (size_t t = 0; t < per_trace.size(); ++t) {
    std::map<MatchKey, int64_t> repeats;
    for (const RankCollective& c : per_trace[t]) {
      size_t slot = out.size();
      if (IsPointToPoint(c.kind)) {
        out.emplace_back().point_to_point = true;
      } else {
        MatchKey key{c.group, c.kind, c.op_name, c.seq, 0};
        std::get<4>(key) = repeats[key]++;
        auto [it, inserted] = index.emplace(std::move(key), out.size());
        if (inserted)
          out.emplace_back();
        slot = it->second;
      }
      AddParticipant(out[slot], c, ranks[t], t);
    }
  }
  return out;
}

// Sorts participants and lists the loaded ranks of each group that lack the
// instance; fills the group size from the group's ranks when no rank gave it.
void FindMissingRanks(std::vector<CollectiveInstance>& instances, const std::vector<RankTrace>& traces,
                      const std::vector<int64_t>& ranks) {
  std::set<int64_t> loaded(ranks.begin(), ranks.end());
  std::unordered_map<std::string, std::vector<int64_t>> group_ranks;
  for (CollectiveInstance& inst : instances) {
    std::sort(inst.participants.begin(), inst.participants.end(),
              [](const CollectiveParticipant& a, const CollectiveParticipant& b) { return a.rank < b.rank; });
    if (inst.point_to_point)
      continue;
    auto it = group_ranks.find(inst.group);
    if (it == group_ranks.end()) {
      it = group_ranks.emplace(inst.group, trace::GroupRanks(traces[inst.participants[0].trace_index], inst.group))
               .first;
    }
    std::set<int64_t> expected;
    for (int64_t r : it->second) {
      if (loaded.count(r) > 0)
        expected.insert(r);
    }
    if (it->second.empty())
      expected = loaded;
    for (const CollectiveParticipant& p : inst.participants)
      expected.erase(p.rank);
    inst.missing_ranks.assign(expected.begin(), expected.end());
    if (inst.group_size <= 0) {
      size_t n = it->second.empty() ? loaded.size() : it->second.size();
      inst.group_size = static_cast<int64_t>(n);
    }
  }
}

// ---------------------------------------------------------------------------
// Clock alignment.

bool IsAnchor(const CollectiveInstance& inst) {
  return inst.matched() && !inst.point_to_point && inst.participants.size() >= 2;
}

// Aligns, round by round, every rank that shares an anchor with an aligned
// rank: its offset is the median over shared anchors of (median aligned end
// of the anchor's aligned participants - its own end).
void AlignOnEnds(const std::vector<CollectiveInstance>& instances, std::vector<RankAlignment>& out,
                 std::vector<bool>& done) {
  for (bool progress = true; progress;) {
    progress = false;
    std::vector<std::vector<int64_t>> diffs(out.size());
    for (const CollectiveInstance& inst : instances) {
      if (!IsAnchor(inst))
        continue;
      std::vector<int64_t> ends;
      for (const CollectiveParticipant& p : inst.participants) {
        if (done[p.trace_index])
          ends.push_back(EndOf(p) + out[p.trace_index].offset_ns);
      }
      if (ends.empty())
        continue;
      int64_t anchor_end = LowerMedian(std::move(ends));
      for (const CollectiveParticipant& p : inst.participants) {
        if (!done[p.trace_index])
          diffs[p.trace_index].push_back(anchor_end - EndOf(p));
      }
    }
    for (size_t t = 0; t < out.size(); ++t) {
      if (diffs[t].empty())
        continue;
      out[t].num_anchors = diffs[t].size();
      out[t].offset_ns = LowerMedian(std::move(diffs[t]));
      out[t].method = AlignmentMethod::kCollectiveEnds;
      done[t] = true;
      progress = true;
    }
  }
}

std::vector<RankAlignment> AlignClocks(const std::vector<RankTrace>& traces, const std::vector<int64_t>& ranks,
                                       const std::vector<CollectiveInstance>& instances, bool align) {
  std::vector<RankAlignment> out(traces.size());
  if (traces.empty())
    return out;
  std::vector<size_t> anchors(traces.size(), 0);
  for (const CollectiveInstance& inst : instances) {
    if (!IsAnchor(inst))
      continue;
    for (const CollectiveParticipant& p : inst.participants)
      ++anchors[p.trace_index];
  }
  size_t ref = static_cast<size_t>(std::max_element(anchors.begin(), anchors.end()) - anchors.begin());
  std::vector<bool> done(traces.size(), false);
  done[ref] = true;
  out[ref].num_anchors = anchors[ref];
  if (align)
    AlignOnEnds(instances, out, done);
  auto first_ns = [&](size_t t) { return traces[t].num_events() > 0 ? traces[t].ts_ns[0] : 0; };
  for (size_t t = 0; t < traces.size(); ++t) {
    out[t].rank = ranks[t];
    if (done[t])
      continue;
    bool epoch = first_ns(t) >= kEpochClockMinNs && first_ns(ref) >= kEpochClockMinNs;
    out[t].method = epoch || !align ? AlignmentMethod::kAbsoluteClock : AlignmentMethod::kFirstEvent;
    out[t].offset_ns = epoch || !align ? 0 : first_ns(ref) - first_ns(t);
  }
  out[ref].method = AlignmentMethod::kReference;
  return out;
}

// Moves participants onto the reference clock and measures how well the ends
// of each rank's anchors then agree.
void ApplyAlignment(std::vector<CollectiveInstance>& instances, std::vector<RankAlignment>& alignment) {
  std::vector<std::vector<int64_t>> deviations(alignment.size());
  for (CollectiveInstance& inst : instances) {
    for (CollectiveParticipant& p : inst.participants)
      p.start_ns += alignment[p.trace_index].offset_ns;
    if (!IsAnchor(inst))
      continue;
    std::vector<int64_t> ends;
    for (const CollectiveParticipant& p : inst.participants)
      ends.push_back(EndOf(p));
    int64_t median_end = LowerMedian(std::move(ends));
    for (const CollectiveParticipant& p : inst.participants) {
      deviations[p.trace_index].push_back(std::abs(EndOf(p) - median_end));
    }
  }
  for (size_t t = 0; t < alignment.size(); ++t) {
    if (!deviations[t].empty())
      alignment[t].end_spread_ns = LowerMedian(std::move(deviations[t]));
  }
}

}  // namespace

StatusOr<CollectiveAnalysis> AnalyzeCollectives(const std::vector<RankTrace>& traces,
                                                const std::vector<std::vector<KernelClass>>& classes,
                                                const CollectiveOptions& options) {
  MFU_RETURN_IF_ERROR(trace::CheckCollectiveInputs(traces, classes));
  MFU_ASSIGN_OR_RETURN(std::vector<int64_t> ranks, trace::AssignRanks(traces));
  std::vector<std::vector<RankCollective>> per_trace;
  for (size_t t = 0; t < traces.size(); ++t) {
    MFU_ASSIGN_OR_RETURN(std::vector<RankCollective> collectives, ExtractRankCollectives(traces[t], classes[t]));
    per_trace.push_back(std::move(collectives));
  }
  CollectiveAnalysis a;
  a.instances = MatchCollectives(per_trace, ranks);
  FindMissingRanks(a.instances, traces, ranks);
  a.alignment = AlignClocks(traces, ranks, a.instances, options.align_ranks);
  ApplyAlignment(a.instances, a.alignment);
  for (CollectiveInstance& inst : a.instances) {
    trace::SplitInstance(inst);
    ++(inst.matched() ? a.num_matched : a.num_unmatched);
  }
  std::stable_sort(a.instances.begin(), a.instances.end(),
                   [](const CollectiveInstance& x, const CollectiveInstance& y) {
                     return trace::EarliestStart(x) < trace::EarliestStart(y);
                   });
  a.ranks = trace::RankTotals(a.instances, ranks);
  a.stragglers = trace::SummarizeStragglers(a.ranks, options.straggler_share_factor);
  a.bandwidth = trace::BandwidthStats(a.instances);
  return a;
}
}  // namespace mfu
