#include "base/stats.h"

#include <algorithm>
#include <cstddef>

namespace mfu::base {

double Median(std::vector<double> values, double if_empty) {
  if (values.empty())
    return if_empty;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace mfu::base
