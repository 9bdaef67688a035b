#pragma once

// The one check of a duration parameter that ComputeGoodput's options
// (ValidateGoodputOptions) and the what-if study (GoodputWhatIfStudy) share,
// with one wording: "parameter 'mtbf' must be a positive duration (got -1)".

#include <limits>

#include "mfu/status.h"

namespace mfu::goodput_internal {

enum class DurationRange {
  kPositive,     // > 0: "a positive duration"
  kNonNegative,  // >= 0: "a duration >= 0"
};

// Status::Ok when `value_s` is finite, in `range` and at most `max_s`;
// otherwise kInvalidArgument naming parameter `name` (base::Param) and the
// value.
Status CheckDuration(const char* name, double value_s, DurationRange range,
                     double max_s = std::numeric_limits<double>::infinity());

}  // namespace mfu::goodput_internal
