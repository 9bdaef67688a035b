#pragma once

// What the counting jobs (flops_job.cc, memory_job.cc) share: the default
// sequence length (request fields are named by base/param.h).

#include <cstdint>

namespace mfu::flops_internal {

// Sequence length when a request gives none (capped at the model's maximum).
inline constexpr int64_t kDefaultSeqLen = 4096;

}  // namespace mfu::flops_internal
