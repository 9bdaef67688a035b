// SortKeys against std::sort (an independent order) on inputs with few runs,
// many runs (the std::sort fallback), ties in ts and dur, groups, and both
// the one- and two-thread merges.
#include "trace/sort_keys.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace mfu::trace {
namespace {

std::vector<SortKey> Reference(std::vector<SortKey> keys) {
  std::sort(keys.begin(), keys.end());
  return keys;
}

bool SameOrder(const std::vector<SortKey>& a, const std::vector<SortKey>& b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].offset != b[i].offset || a[i].index != b[i].index || a[i].source != b[i].source)
      return false;
  }
  return true;
}

// `groups` interleaved sorted sequences (like Kineto categories), written
// group after group; ts drawn from a small range so ts and dur tie often.
std::vector<SortKey> Grouped(size_t n, size_t groups, size_t descents, std::mt19937_64& rng,
                             std::vector<size_t>& starts) {
  std::vector<std::vector<SortKey>> g(groups);
  std::uniform_int_distribution<int64_t> ts(0, static_cast<int64_t>(n / 4)), dur(0, 3);
  for (size_t i = 0; i < n; ++i) {
    SortKey k{ts(rng), -dur(rng), i * 7 + 3, static_cast<uint32_t>(i), static_cast<uint32_t>(i % 3)};
    g[rng() % groups].push_back(k);
  }
  std::vector<SortKey> keys;
  starts.clear();
  for (auto& part : g) {
    std::sort(part.begin(), part.end());
    // A few out-of-place keys per group: more runs than groups.
    for (size_t d = 0; d < descents && part.size() > 2; ++d)
      std::swap(part[rng() % part.size()], part[rng() % part.size()]);
    starts.push_back(keys.size());
    keys.insert(keys.end(), part.begin(), part.end());
  }
  return keys;
}

TEST(SortKeys, MergesGroupedRunsLikeStdSort) {
  std::mt19937_64 rng(7);
  for (size_t n : {0u, 1u, 2u, 17u, 5000u, 250000u}) {
    for (size_t groups : {1u, 3u, 22u}) {
      for (size_t descents : {0u, 4u}) {
        for (int threads : {1, 2}) {
          std::vector<size_t> starts;
          std::vector<SortKey> keys = Grouped(n, groups, descents, rng, starts);
          const std::vector<SortKey> expected = Reference(keys);
          SortKeys(keys, starts, threads);
          EXPECT_TRUE(SameOrder(keys, expected))
              << n << " keys, " << groups << " groups, " << descents << " swaps, " << threads << " threads";
        }
      }
    }
  }
}

TEST(SortKeys, ShuffledInputFallsBackToStdSort) {
  std::mt19937_64 rng(11);
  for (int threads : {1, 2}) {
    std::vector<SortKey> keys;
    for (uint32_t i = 0; i < 200000; ++i)
      keys.push_back({static_cast<int64_t>(rng() % 1000), -static_cast<int64_t>(rng() % 5), i, i, 0});
    std::shuffle(keys.begin(), keys.end(), rng);
    const std::vector<SortKey> expected = Reference(keys);
    SortKeys(keys, {}, threads);
    EXPECT_TRUE(SameOrder(keys, expected)) << threads << " threads";
  }
}

TEST(SortKeys, EmptyGroupsAndNoGroupList) {
  std::vector<SortKey> keys = {{5, 0, 1, 0, 0}, {3, 0, 2, 1, 0}, {4, -2, 3, 2, 0}, {4, -1, 4, 3, 0}};
  const std::vector<SortKey> expected = Reference(keys);
  std::vector<SortKey> copy = keys;
  SortKeys(copy, {0, 0, 2, 2, 4}, 2);
  EXPECT_TRUE(SameOrder(copy, expected));
  SortKeys(keys, {}, 1);
  EXPECT_TRUE(SameOrder(keys, expected));
}

}  // namespace
}  // namespace mfu::trace
