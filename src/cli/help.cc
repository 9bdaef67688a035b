// `mfu help <command>` and the unknown-command check of main.cc.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "cli/command.h"

namespace mfu::cli {

CLI::App* AddHelpCommand(CLI::App& app, std::vector<std::string>& topic) {
  CLI::App* help = app.add_subcommand("help", "Show help for a command: mfu help <command>");
  help->add_option("command", topic, "Command name, e.g. flops or hw list");
  return help;
}

int PrintHelp(const CLI::App& app, const std::vector<std::string>& words, std::ostream& out, std::ostream& err) {
  const std::string topic = base::Join(words, " ");
  if (topic.empty()) {
    out << app.help();
    return 0;
  }
  // "hw list" names a nested subcommand.
  const CLI::App* current = &app;
  std::string prefix = app.get_name();
  for (const std::string& word : words) {
    if (word.empty())
      continue;
    const CLI::App* found = nullptr;
    std::vector<std::string> names;
    for (const CLI::App* sub : current->get_subcommands({})) {
      names.push_back(sub->get_name());
      if (sub->get_name() == word)
        found = sub;
    }
    if (!found) {
      std::string suggestion = base::ClosestMatch(word, names);
      err << "mfu: help: unknown command '" << topic << "'"
          << (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") << "\n";
      return 2;
    }
    if (current != &app)
      prefix += " " + current->get_name();
    current = found;
  }
  out << current->help(prefix);
  return 0;
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

std::string InFlagSpelling(std::string message) {
  static constexpr std::string_view kPrefix = "parameter '";
  for (size_t at = message.find(kPrefix); at != std::string::npos; at = message.find(kPrefix, at)) {
    const size_t name_begin = at + kPrefix.size();
    const size_t name_end = message.find('\'', name_begin);
    if (name_end == std::string::npos)
      break;
    std::string flag = "--" + message.substr(name_begin, name_end - name_begin);
    std::replace(flag.begin(), flag.end(), '_', '-');
    message.replace(at, name_end + 1 - at, flag);
    at += flag.size();
  }
  return message;
}

}  // namespace mfu::cli
