#pragma once

// The event order of a parsed trace: (ts, longer first, file offset), which
// is a total order (file offsets are unique) and so the same for any thread
// count. Sorting exploits what Kineto writes: within one category of one
// thread's builder the events are already (nearly) in time order, so the
// caller hands the keys in groups and SortKeys merges their ascending runs
// (one k-way merge, split between two threads by a sampled splitter) instead
// of sorting 10^6+ keys from scratch. Input without that structure (more runs
// than kMaxRuns) falls back to std::sort.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mfu::trace {

struct SortKey {
  int64_t ts;
  int64_t neg_dur;
  uint64_t offset;
  uint32_t index;   // the event's row in its builder
  uint32_t source;  // the builder
  bool operator<(const SortKey& o) const {
    if (ts != o.ts)
      return ts < o.ts;
    if (neg_dur != o.neg_dur)
      return neg_dur < o.neg_dur;
    return offset < o.offset;
  }
};

// Sorts `keys` ascending. `group_starts` (ascending, the first 0) cuts keys
// into groups whose ascending runs are merged; an empty list is one group.
// Uses up to `threads` threads (at most two are used).
void SortKeys(std::vector<SortKey>& keys, const std::vector<size_t>& group_starts, int threads);

// Above this many ascending runs the keys are sorted with std::sort.
inline constexpr size_t kMaxRuns = 1024;

}  // namespace mfu::trace
