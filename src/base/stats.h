#pragma once

// Order statistics shared by the modules that summarize samples.

#include <vector>

namespace mfu::base {

// The median of `values`, the two middle values averaged when their count
// is even; `if_empty` when there are none.
double Median(std::vector<double> values, double if_empty);

}  // namespace mfu::base
