#pragma once

// How library messages of src/plan name a request field: the same spelling
// as mfu/setup.h Param ("parameter 'seq_len'"), which the CLI rewrites into
// its flag. (mfu_plan sits below mfu_catalog, which defines Param.)

#include <string>
#include <string_view>

namespace mfu::plan_internal {

inline std::string Param(std::string_view name) {
  return "parameter '" + std::string(name) + "'";
}

}  // namespace mfu::plan_internal
