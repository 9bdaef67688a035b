#pragma once

// Queries over the accelerator database for listings (`mfu hw list`).

#include <string_view>
#include <vector>

#include "mfu/hwdb.h"
#include "mfu/status.h"

namespace mfu {

// The accelerators of `vendor` (case-insensitive; "" for all) in database
// order, pointing into `hardware`. kInvalidArgument naming parameter
// 'vendor' and the vendors there are when none matches.
StatusOr<std::vector<const Accelerator*>> SelectAccelerators(const HardwareDb& hardware, std::string_view vendor);

}  // namespace mfu
