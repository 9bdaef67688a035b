#include "mfu/hardware_query.h"

#include <algorithm>
#include <string>

#include "base/strings.h"

namespace mfu {

StatusOr<std::vector<const Accelerator*>> SelectAccelerators(const HardwareDb& hardware, std::string_view vendor) {
  std::vector<const Accelerator*> selected;
  std::vector<std::string> vendors;
  const std::string wanted = base::ToLower(vendor);
  for (const Accelerator& a : hardware.all()) {
    if (std::find(vendors.begin(), vendors.end(), a.vendor) == vendors.end())
      vendors.push_back(a.vendor);
    if (wanted.empty() || base::ToLower(a.vendor) == wanted)
      selected.push_back(&a);
  }
  if (selected.empty() && !wanted.empty()) {
    return InvalidArgumentError("parameter 'vendor' '" + std::string(vendor) +
                                "': no accelerators (vendors: " + base::Join(vendors, ", ") + ")");
  }
  return selected;
}

}  // namespace mfu
