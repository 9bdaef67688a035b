#pragma once

// How a text renderer lays out its tables and names what a reader can
// change. The front end decides the width (the CLI: COLUMNS, else the
// terminal's size, else 100 when piped; --wide for no limit); renderers fit
// their tables into it by wrapping or abbreviating note columns, never by
// dropping figures. Text that points at a request parameter or another
// report asks `parameter` / `command` for the front end's spelling before it
// lays a line out (so wrapping sees the final text).

#include <cctype>
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
  // A library message (a note, a finding) in this spelling: each
  // "parameter 'NAME'" as Parameter(NAME), each "command 'NAME'" as
  // Command(NAME), so that text wraps at the words it shows. Unset
  // callbacks leave it as it is.
  std::string Spelled(std::string_view message) const {
    std::string out(message);
    if (parameter)
      out = Respell(std::move(out), "parameter '", [this](std::string_view n) { return Parameter(n); });
    if (command)
      out = Respell(std::move(out), "command '", [this](std::string_view n) { return Command(n); });
    return out;
  }

 private:
  template <typename F>
  static std::string Respell(std::string message, std::string_view prefix, F spell) {
    for (size_t at = message.find(prefix); at != std::string::npos; at = message.find(prefix, at + 1)) {
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(message[at - 1])) != 0))
        continue;  // "subcommand '...'"
      const size_t begin = at + prefix.size();
      const size_t end = message.find('\'', begin);
      if (end == std::string::npos)
        break;
      const std::string spelled = spell(std::string_view(message).substr(begin, end - begin));
      message.replace(at, end + 1 - at, spelled);
      at += spelled.empty() ? 0 : spelled.size() - 1;
    }
    return message;
  }
};

}  // namespace mfu
