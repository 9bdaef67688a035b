#pragma once

// The command line checked against the flag vocabulary (cli/vocabulary.h)
// before CLI11 parses it: underscores in flag names read as dashes, hidden old
// spellings become the canonical flag, every value is checked against its
// range, unknown flags get a "did you mean", every missing required flag is
// named in one message and stray values are named as such. CLI11 then only
// sees "--flag=value" tokens it knows.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace mfu::cli {

struct PreparedArgs {
  std::vector<std::string> args;  // argv[1..], normalized
  std::string error;              // "" or the one-line usage error
  bool json = false;              // --json given
  bool wide = false;              // --wide given
  bool help = false;              // -h/--help given: nothing is checked
};

// `argv[1..]` for `app` (the root, its commands registered).
PreparedArgs PrepareArgs(const CLI::App& app, const std::vector<std::string>& argv);

}  // namespace mfu::cli
