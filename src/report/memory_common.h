#pragma once

// What `mfu memory` and `mfu predict`/`plan` say alike about the training
// state they count (memory_render.cc).

#include <string>

#include "mfu/memory.h"

namespace mfu::report {

// The optimizer state of `d` in words: "adam: fp32 master + 2 fp32 moments".
std::string OptimizerNote(const TrainingStateDtypes& d);

}  // namespace mfu::report
