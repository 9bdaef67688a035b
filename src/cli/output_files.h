#pragma once

// Writing a renderer's (file name, content) tables into a directory: the
// --csv DIR of `mfu trace` and `mfu fleet analyze`.

#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "mfu/status.h"

namespace mfu::cli {

// Writes each (file name, content) into `dir`, created when missing, in the
// CLI's spelling (InFlagSpelling: a library "parameter 'python'" as --python).
// kNotFound naming the directory or file when it cannot.
Status WriteOutputFiles(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files);

// Writes the file `name` into `dir` (created when missing) through `write`,
// which streams into it: a table too large to hold as a string. kNotFound
// naming the directory or file when it cannot be created or written.
Status WriteOutputFile(const std::string& dir, const std::string& name,
                       const std::function<void(std::ostream&)>& write);

}  // namespace mfu::cli
