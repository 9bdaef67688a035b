// `mfu help <command>` and the unknown-command check of main.cc.

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "cli/command.h"

namespace mfu::cli {

int PrintHelp(const CLI::App& app, const std::string& topic, std::ostream& out, std::ostream& err) {
  if (topic.empty()) {
    out << app.help();
    return 0;
  }
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == topic) {
      out << sub->help(app.get_name());
      return 0;
    }
  }
  err << "mfu: help: unknown command '" << topic << "'\n";
  return 2;
}

std::string CheckCommandName(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-')
    return "";
  std::string word = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == word)
      return "";
    names.push_back(sub->get_name());
  }
  std::string suggestion = base::ClosestMatch(word, names);
  return "unknown command '" + word + "'" + (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
         "; commands: " + base::Join(names, ", ");
}

}  // namespace mfu::cli
