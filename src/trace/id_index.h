#pragma once

// An index from int64 ids (correlation ids, External ids) to event rows.
// Profilers hand out these ids from counters, so they are nearly dense: when
// the ids span at most a few times their count, a flat array indexed by
// (id - min) replaces the hash map (one load per lookup, no hashing); any
// other set of ids uses absl::flat_hash_map. The first row added for an id
// wins.

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "mfu/trace.h"

namespace mfu::trace {

class IdIndex {
 public:
  // Builds from the rows for which keep(row) is true, keyed by ids[row]
  // (kNoId rows are skipped).
  template <typename Keep>
  void Build(std::span<const int64_t> ids, Keep keep) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    size_t count = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] == kNoId || !keep(i))
        continue;
      lo = std::min(lo, ids[i]);
      hi = std::max(hi, ids[i]);
      ++count;
    }
    dense_.clear();
    sparse_.clear();
    if (count == 0)
      return;
    // Dense when the ids span at most 4x their count: the array is then no
    // larger than a hash map of the same ids.
    const auto span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    if (span < 4 * static_cast<uint64_t>(count) + 64) {
      base_ = lo;
      dense_.assign(static_cast<size_t>(span) + 1, kNoIndex);
      for (size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] == kNoId || !keep(i))
          continue;
        uint32_t& slot = dense_[static_cast<size_t>(static_cast<uint64_t>(ids[i]) - static_cast<uint64_t>(lo))];
        if (slot == kNoIndex)
          slot = static_cast<uint32_t>(i);
      }
      return;
    }
    sparse_.reserve(count);
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] != kNoId && keep(i))
        sparse_.try_emplace(ids[i], static_cast<uint32_t>(i));
    }
  }

  // The row for `id`, or kNoIndex.
  uint32_t Find(int64_t id) const {
    if (id == kNoId)
      return kNoIndex;
    if (!dense_.empty()) {
      const uint64_t at = static_cast<uint64_t>(id) - static_cast<uint64_t>(base_);
      return at < dense_.size() ? dense_[static_cast<size_t>(at)] : kNoIndex;
    }
    auto it = sparse_.find(id);
    return it == sparse_.end() ? kNoIndex : it->second;
  }

 private:
  int64_t base_ = 0;
  std::vector<uint32_t> dense_;
  absl::flat_hash_map<int64_t, uint32_t> sparse_;
};

}  // namespace mfu::trace
