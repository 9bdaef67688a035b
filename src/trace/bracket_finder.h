#pragma once

// The SIMD core of the structural scanner (scanner.h): over whole 64-byte
// blocks, the positions of '{', '}', '[' and ']' outside JSON strings, with
// simdjson's escaped-quote algorithm carrying the string state from block to
// block. One implementation per instruction set (SSE2 everywhere on x86-64,
// AVX2 with carry-less multiply when the CPU has them, a portable scalar one
// elsewhere), chosen once at run time; all give identical results (tested).
// (An AVX-512BW variant measured 35% slower than AVX2 on an Ice Lake server:
// its byte compares into mask registers share one port.)

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mfu::trace {

// String state at a block boundary.
struct BlockState {
  uint64_t in_string = 0;  // all ones inside a string, else 0
  uint64_t escaped = 0;    // 1 when the next byte is escaped
};

// Scans `n` bytes (a multiple of 64) at `p`; writes the offsets (from p) of
// unquoted brackets to `out` (room for n entries) and returns their count.
using BracketFinder = size_t (*)(const char* p, size_t n, uint32_t* out, BlockState& state);

struct BracketFinderImpl {
  const char* name;
  BracketFinder find;
};

// The fastest implementation this CPU supports.
BracketFinder BestBracketFinder();

// Every implementation this CPU can run (for tests and benchmarks).
std::vector<BracketFinderImpl> AvailableBracketFinders();

}  // namespace mfu::trace
