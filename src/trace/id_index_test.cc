// IdIndex: the dense and the hash-map layouts give the same answers as a
// std::map built from the same rows (first row per id wins).
#include "trace/id_index.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace mfu::trace {
namespace {

void ExpectLikeMap(const std::vector<int64_t>& ids, const std::vector<bool>& keep) {
  IdIndex index;
  index.Build(ids, [&](size_t i) { return keep[i]; });
  std::map<int64_t, uint32_t> expected;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] != kNoId && keep[i])
      expected.try_emplace(ids[i], static_cast<uint32_t>(i));
  }
  for (int64_t id : ids) {
    auto it = expected.find(id);
    EXPECT_EQ(index.Find(id), it == expected.end() ? kNoIndex : it->second) << id;
    const auto probe = static_cast<int64_t>(static_cast<uint64_t>(id) + 1000003);  // wraps like a bit pattern
    EXPECT_EQ(index.Find(probe), expected.count(probe) ? expected[probe] : kNoIndex);
  }
  EXPECT_EQ(index.Find(kNoId), kNoIndex);
}

TEST(IdIndex, DenseCountersAndSparseIdsAgreeWithAMap) {
  std::mt19937_64 rng(5);
  for (int64_t spread : {1, 3, 1000000}) {  // dense, dense with gaps, sparse
    std::vector<int64_t> ids;
    std::vector<bool> keep;
    for (int i = 0; i < 5000; ++i) {
      ids.push_back(i % 7 == 0 ? kNoId : 1000 + static_cast<int64_t>(rng() % 4000) * spread);
      keep.push_back(rng() % 3 != 0);
    }
    ExpectLikeMap(ids, keep);
  }
}

TEST(IdIndex, Uint64BitPatternsAndExtremes) {
  // uint64 ids above INT64_MAX arrive as negative bit patterns.
  ExpectLikeMap({INT64_MIN, -5, 7, INT64_MAX, 7, -5}, {true, true, true, true, true, false});
  ExpectLikeMap({}, {});
  ExpectLikeMap({kNoId, kNoId}, {true, true});
}

}  // namespace
}  // namespace mfu::trace
