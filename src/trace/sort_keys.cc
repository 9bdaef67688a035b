#include "trace/sort_keys.h"

#include <algorithm>
#include <thread>

#include "base/huge_pages.h"

namespace mfu::trace {
namespace {

struct Run {
  size_t begin, end;
};

// Ascending runs of keys[begin, end): cut where a key is smaller than the
// one before it. Stops early (returns false) past `max_runs`.
bool AppendRuns(const std::vector<SortKey>& keys, size_t begin, size_t end, size_t max_runs, std::vector<Run>& runs) {
  size_t start = begin;
  for (size_t i = begin + 1; i < end; ++i) {
    if (keys[i] < keys[i - 1]) {
      runs.push_back({start, i});
      start = i;
      if (runs.size() > max_runs)
        return false;
    }
  }
  if (end > start)
    runs.push_back({start, end});
  return runs.size() <= max_runs;
}

// Merges the sorted ranges `parts` of `in` into out[0, total): a binary
// heap over the run heads (k is small: a few runs per category and builder).
void MergeRuns(const SortKey* in, const std::vector<Run>& parts, SortKey* out) {
  std::vector<Run> heap;
  heap.reserve(parts.size());
  for (const Run& r : parts) {
    if (r.begin < r.end)
      heap.push_back(r);
  }
  // Min-heap on the head key.
  auto greater = [in](const Run& a, const Run& b) { return in[b.begin] < in[a.begin]; };
  std::make_heap(heap.begin(), heap.end(), greater);
  while (heap.size() > 1) {
    std::pop_heap(heap.begin(), heap.end(), greater);
    Run& top = heap.back();
    // Copy the run's keys while they stay below the next smallest head.
    const SortKey& bound = in[heap.front().begin];
    do {
      *out++ = in[top.begin++];
    } while (top.begin < top.end && in[top.begin] < bound);
    if (top.begin == top.end) {
      heap.pop_back();
    } else {
      std::push_heap(heap.begin(), heap.end(), greater);
    }
  }
  if (!heap.empty())
    std::copy(in + heap[0].begin, in + heap[0].end, out);
}

void SortFromScratch(std::vector<SortKey>& keys, int threads) {
  const size_t n = keys.size();
  if (threads >= 2 && n > 100000) {
    auto mid = keys.begin() + static_cast<ptrdiff_t>(n / 2);
    std::thread left([&] { std::sort(keys.begin(), mid); });
    std::sort(mid, keys.end());
    left.join();
    std::inplace_merge(keys.begin(), mid, keys.end());
  } else {
    std::sort(keys.begin(), keys.end());
  }
}

}  // namespace

void SortKeys(std::vector<SortKey>& keys, const std::vector<size_t>& group_starts, int threads) {
  const size_t n = keys.size();
  if (n < 2)
    return;
  std::vector<Run> runs;
  bool few = true;
  for (size_t g = 0; g < std::max<size_t>(group_starts.size(), 1) && few; ++g) {
    const size_t begin = group_starts.empty() ? 0 : group_starts[g];
    const size_t end = g + 1 < group_starts.size() ? group_starts[g + 1] : n;
    few = AppendRuns(keys, begin, end, kMaxRuns, runs);
  }
  if (!few) {
    SortFromScratch(keys, threads);
    return;
  }
  if (runs.size() == 1)
    return;
  std::vector<SortKey> out;
  ResizeHuge(out, n);  // like the keys: 10^6+ entries, on huge pages
  if (threads < 2 || n < 100000) {
    MergeRuns(keys.data(), runs, out.data());
    keys.swap(out);
    return;
  }
  // Two halves split at a key near the median: sample every run, take the
  // sample median as the splitter, cut each run at its lower bound. The
  // halves are exact (every key below the splitter goes left); only their
  // sizes depend on the sample.
  std::vector<SortKey> sample;
  for (const Run& r : runs) {
    const size_t step = std::max<size_t>(1, (r.end - r.begin) / 64);
    for (size_t i = r.begin; i < r.end; i += step)
      sample.push_back(keys[i]);
  }
  auto mid = sample.begin() + static_cast<ptrdiff_t>(sample.size() / 2);
  std::nth_element(sample.begin(), mid, sample.end());
  const SortKey splitter = *mid;
  std::vector<Run> left, right;
  size_t left_size = 0;
  for (const Run& r : runs) {
    const size_t cut = static_cast<size_t>(std::lower_bound(keys.begin() + static_cast<ptrdiff_t>(r.begin),
                                                            keys.begin() + static_cast<ptrdiff_t>(r.end), splitter) -
                                           keys.begin());
    left.push_back({r.begin, cut});
    right.push_back({cut, r.end});
    left_size += cut - r.begin;
  }
  std::thread first([&] { MergeRuns(keys.data(), left, out.data()); });
  MergeRuns(keys.data(), right, out.data() + left_size);
  first.join();
  keys.swap(out);
}

}  // namespace mfu::trace
