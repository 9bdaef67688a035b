#pragma once

// Interval arithmetic on [start, end) nanosecond ranges: the union-based
// accounting every time breakdown uses (HTA's "interval union across
// streams", not sums of durations).

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mfu::trace {

struct Interval {
  int64_t start = 0;
  int64_t end = 0;  // exclusive; end >= start
};

// Sorts and merges overlapping or touching intervals in place; drops empty ones.
inline void MergeIntervals(std::vector<Interval>& v) {
  auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  if (!std::is_sorted(v.begin(), v.end(), by_start))  // usually already in start order
    std::sort(v.begin(), v.end(), by_start);
  size_t out = 0;
  for (const Interval& iv : v) {
    if (iv.end <= iv.start)
      continue;
    if (out > 0 && iv.start <= v[out - 1].end) {
      v[out - 1].end = std::max(v[out - 1].end, iv.end);
    } else {
      v[out++] = iv;
    }
  }
  v.resize(out);
}

// Total length of merged (disjoint, sorted) intervals.
inline int64_t TotalLength(const std::vector<Interval>& merged) {
  int64_t total = 0;
  for (const Interval& iv : merged)
    total += iv.end - iv.start;
  return total;
}

// Intersection of two merged interval lists (result merged).
inline std::vector<Interval> Intersect(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].start, b[j].start);
    int64_t hi = std::min(a[i].end, b[j].end);
    if (lo < hi)
      out.push_back({lo, hi});
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

// Parts of merged `a` not covered by merged `b` (result merged).
inline std::vector<Interval> Subtract(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t j = 0;
  for (Interval iv : a) {
    while (j < b.size() && b[j].end <= iv.start)
      ++j;
    int64_t cursor = iv.start;
    for (size_t k = j; k < b.size() && b[k].start < iv.end; ++k) {
      if (b[k].start > cursor)
        out.push_back({cursor, b[k].start});
      cursor = std::max(cursor, b[k].end);
    }
    if (cursor < iv.end)
      out.push_back({cursor, iv.end});
  }
  return out;
}

// Clips merged intervals to [lo, hi).
inline std::vector<Interval> Clip(const std::vector<Interval>& v, int64_t lo, int64_t hi) {
  std::vector<Interval> out;
  for (const Interval& iv : v) {
    int64_t s = std::max(iv.start, lo), e = std::min(iv.end, hi);
    if (s < e)
      out.push_back({s, e});
  }
  return out;
}

}  // namespace mfu::trace
