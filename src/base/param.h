#pragma once

// How a library message names a request field, "parameter 'seq_len'", and
// another report, "command 'hw list'". Every module spells them this way
// (mfu::Param in mfu/setup.h is the public name for front ends), and the CLI
// rewrites them into its spelling (--seq-len, 'mfu hw list'; cli/help.cc
// InFlagSpelling). tools/check_messages.py fails on a literal "--flag" or
// "'mfu verb'" in the library.

#include <string>
#include <string_view>

namespace mfu::base {

inline std::string Param(std::string_view name) {
  return "parameter '" + std::string(name) + "'";
}

// `name` is the command path without the program: "hw list", "goodput".
inline std::string CommandRef(std::string_view name) {
  return "command '" + std::string(name) + "'";
}

}  // namespace mfu::base
