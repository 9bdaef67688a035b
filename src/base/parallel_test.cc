#include "base/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace mfu {
namespace {

TEST(ParallelFor, VisitsEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    std::vector<std::atomic<int>> seen(1000);
    ParallelFor(seen.size(), threads, [&](size_t i) { seen[i].fetch_add(1); });
    for (size_t i = 0; i < seen.size(); ++i)
      ASSERT_EQ(seen[i].load(), 1) << "index " << i << " threads " << threads;
  }
}

TEST(ParallelFor, NothingToDoAndMoreThreadsThanItems) {
  int calls = 0;
  ParallelFor(0, 4, [&](size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  std::vector<std::atomic<int>> seen(2);
  ParallelFor(seen.size(), 16, [&](size_t i) { seen[i].fetch_add(1); });
  EXPECT_EQ(seen[0].load() + seen[1].load(), 2);
}

TEST(ParallelFor, OneThreadRunsInlineInOrder) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<size_t> order;
  ParallelFor(5, 1, [&](size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
}

TEST(ParallelFor, UsesMoreThanOneThreadWhenAsked) {
  // Two items that each wait for the other to start: only completes when
  // they run concurrently (a serial run would spin forever, so bound it).
  std::atomic<int> started{0};
  std::atomic<bool> both{false};
  ParallelFor(2, 2, [&](size_t) {
    started.fetch_add(1);
    for (int spin = 0; spin < 200000000 && started.load() < 2; ++spin) {
    }
    if (started.load() == 2)
      both = true;
  });
  EXPECT_TRUE(both.load());
}

}  // namespace
}  // namespace mfu
