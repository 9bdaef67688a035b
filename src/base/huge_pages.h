#pragma once

// Transparent huge pages for large, freshly allocated arrays. A trace of
// 10^6+ events fills column arrays of hundreds of MB; with 4 KiB pages every
// page is a fault (and a zeroing) on first touch, which costs a fifth of the
// parse. AdviseHugePages asks the kernel for 2 MiB pages over the aligned
// interior of a range (a hint: a kernel without THP, or with THP off, ignores
// it). ReserveHuge reserves a vector's capacity and advises it; untouched
// capacity costs address space only, not memory.

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace mfu {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

inline void AdviseHugePages(const void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < 2 * kHugePageBytes)
    return;
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t lo = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const uintptr_t hi = (begin + bytes) & ~(kHugePageBytes - 1);
  if (hi > lo)
    madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

template <typename T, typename A>
void ReserveHuge(std::vector<T, A>& v, size_t n) {
  if (n <= v.capacity())
    return;
  v.reserve(n);
  AdviseHugePages(v.data(), v.capacity() * sizeof(T));
}

// Resizes an empty vector to n value-initialised elements on huge pages.
template <typename T, typename A>
void ResizeHuge(std::vector<T, A>& v, size_t n) {
  ReserveHuge(v, n);
  v.resize(n);
}

}  // namespace mfu
