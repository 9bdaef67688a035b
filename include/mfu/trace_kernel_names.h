#pragma once

// Kernel names a reader can tell apart: C++ kernel names shortened by
// removing what makes them long (the return type, template arguments and the
// parameter list) instead of cutting them at a fixed width, which makes
// different kernels look the same.
//
//   ShortKernelName("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm<...>>(Params)")
//     == "cutlass::Kernel<...>"

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mfu {

// `name` without a leading "void ", without "(anonymous namespace)::", with
// each outermost template argument list replaced by "<...>" and the
// parameter list after the function name dropped. Names that are not C++
// signatures ("Memcpy HtoD (Pageable -> Device)", "ampere_sgemm_128x64_tn")
// are returned unchanged. When the result is longer than `max_len` (0: no
// limit, else at least 8) it is cut to max_len - 3 characters plus "...".
std::string ShortKernelName(std::string_view name, size_t max_len = 0);

// ShortKernelName of each of `names`, made unique: where different names
// shorten to the same text, each gets a suffix " [1]", " [2]", ... in the
// order of `names` (the suffix counts within `max_len`). Equal names get
// equal short names.
std::vector<std::string> ShortKernelNames(std::span<const std::string> names, size_t max_len = 0);

}  // namespace mfu
