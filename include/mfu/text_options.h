#pragma once

// How a text renderer lays out its tables and names what a reader can
// change. The front end decides the width (the CLI: COLUMNS, else the
// terminal's size, else 100 when piped; --wide for no limit); renderers fit
// their tables into it by wrapping or abbreviating note columns, never by
// dropping figures. Text that points at a request parameter or another
// report asks `parameter` / `command` for the front end's spelling before it
// lays a line out (so wrapping sees the final text).

#include <functional>
#include <string>
#include <string_view>

namespace mfu {

struct TextOptions {
  static constexpr int kUnlimited = 0;
  int width = 100;  // columns; kUnlimited = no limit (--wide)

  // The spelling of request parameter `name` ("gpu", "seq_len"); `short_form`
  // asks for the front end's short spelling where it has one. Unset: the
  // library's "parameter 'gpu'" (the CLI: "--gpu", "-v").
  std::function<std::string(std::string_view name, bool short_form)> parameter;
  // The spelling of another report, `command` as "hw show ID". Unset:
  // "command 'hw show ID'" (the CLI: "'mfu hw show ID'").
  std::function<std::string(std::string_view command)> command;

  std::string Parameter(std::string_view name, bool short_form = false) const {
    return parameter ? parameter(name, short_form) : "parameter '" + std::string(name) + "'";
  }
  std::string Command(std::string_view name) const {
    return command ? command(name) : "command '" + std::string(name) + "'";
  }
};

}  // namespace mfu
