#pragma once

// ParallelFor: runs fn(i) for i in [0, n) on up to `threads` threads (the
// caller's included), handing out indices one at a time so that uneven
// items (a large rank file next to small ones) balance. fn must not throw;
// calls for different i must not race on shared state.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace mfu {

template <typename Fn>
void ParallelFor(size_t n, int threads, Fn&& fn) {
  const size_t workers = std::min(n, static_cast<size_t>(std::max(1, threads)));
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i)
      fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1))
      fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (size_t t = 1; t < workers; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread& t : pool)
    t.join();
}

}  // namespace mfu
