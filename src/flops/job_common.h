#pragma once

// What the counting jobs (flops_job.cc, memory_job.cc) share: the default
// sequence length and how a library message names a request field.

#include <cstdint>
#include <string>

namespace mfu::flops_internal {

// Sequence length when a request gives none (capped at the model's maximum).
inline constexpr int64_t kDefaultSeqLen = 4096;

// "parameter 'seq_len'", as mfu::Param (mfu/setup.h, a module above) spells
// it: front ends rewrite it into their own spelling (the CLI: --seq-len).
inline std::string Param(const std::string& name) {
  return "parameter '" + name + "'";
}

}  // namespace mfu::flops_internal
