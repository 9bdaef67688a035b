#pragma once

#include <span>
#include <string_view>

namespace mfu::base {

// A data file compiled into the binary by cmake/embed_files.cmake. `path` is
// relative to data/ (e.g. "models/llama-3.1-8b-instruct.json").
struct EmbeddedFile {
  std::string_view path;
  std::string_view bytes;
};

}  // namespace mfu::base
