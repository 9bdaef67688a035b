#pragma once

// How a library message names a request field: "parameter 'seq_len'". Every
// module spells it this way (mfu::Param in mfu/setup.h is the public name for
// front ends), and the CLI rewrites it into its flag (--seq-len).

#include <string>
#include <string_view>

namespace mfu::base {

inline std::string Param(std::string_view name) {
  return "parameter '" + std::string(name) + "'";
}

}  // namespace mfu::base
