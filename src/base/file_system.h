#pragma once

// The public FileSystem (include/mfu/file_system.h) under its historical
// base:: names.

#include "mfu/file_system.h"

namespace mfu::base {
using mfu::FileSystem;
using mfu::InMemoryFileSystem;
using mfu::RealFileSystem;
}  // namespace mfu::base
