// `mfu help <command>` and the unknown-command check of main.cc.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "cli/command.h"
#include "cli/vocabulary.h"
#include "mfu/setup.h"
#include "report/table.h"

namespace mfu::cli {
namespace {

// CLI11's formatter with option and command descriptions wrapped to a width.
class WrappingFormatter final : public CLI::Formatter {
 public:
  explicit WrappingFormatter(int width) : width_(width) { column_width(26); }

  std::string make_option_desc(const CLI::Option* opt) const override { return Wrap(opt->get_description()); }
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), Wrap(sub->get_description()), get_column_width());
    return out.str();
  }

 private:
  std::string Wrap(const std::string& text) const {
    const size_t room = width_ > 0 && static_cast<size_t>(width_) > get_column_width() + 20
                            ? static_cast<size_t>(width_) - get_column_width()
                            : 0;
    return base::Join(report::WrapText(text, room), "\n");
  }

  int width_;
};

struct Group {
  const char* title;
  std::vector<std::string> commands;
};

// The overview's groups; a command missing here is listed under "other".
const std::vector<Group>& Groups() {
  static const std::vector<Group> kGroups = {
      {"count: what a model costs", {"flops", "memory", "calc"}},
      {"explain: where a job's time went", {"trace", "fleet", "goodput", "log"}},
      {"optimize: predict and search configurations", {"predict", "plan", "infer"}},
      {"data: the tables behind the figures", {"hw", "clusters", "models", "calibrate", "kernels"}},
  };
  return kGroups;
}

}  // namespace

void SetHelpWidth(CLI::App& app, int width) {
  auto formatter = std::make_shared<WrappingFormatter>(width);
  std::vector<CLI::App*> pending = {&app};
  while (!pending.empty()) {
    CLI::App* current = pending.back();
    pending.pop_back();
    current->formatter(formatter);
    for (CLI::App* sub : current->get_subcommands([](CLI::App*) { return true; }))
      pending.push_back(sub);
  }
}

std::string Overview(const CLI::App& app, int width) {
  std::ostringstream out;
  out << app.get_description() << "\n\nUsage: mfu COMMAND [OPTIONS]   (mfu help COMMAND, mfu COMMAND --help)\n";
  std::vector<std::string> listed;
  const size_t room = width > 40 ? static_cast<size_t>(width) - 14 : 0;
  auto line = [&](const CLI::App* sub) {
    std::vector<std::string> lines = report::WrapText(sub->get_description(), room);
    for (size_t i = 0; i < lines.size(); ++i)
      out << "  " << (i == 0 ? sub->get_name() : "") << std::string(i == 0 ? 12 - sub->get_name().size() : 12, ' ')
          << lines[i] << "\n";
  };
  std::vector<std::string> grouped;
  for (const Group& group : Groups()) {
    out << "\n" << group.title << "\n";
    for (const std::string& name : group.commands) {
      grouped.push_back(name);
      if (const CLI::App* sub = app.get_subcommand(name); sub != nullptr)
        line(sub);
    }
  }
  out << "\nhelp\n";
  line(app.get_subcommand("help"));
  out << "\nEvery command takes --json (machine-readable) and --wide (no width limit).\nFlags, exit codes and JSON: "
         "docs/cli.md.\n";
  return out.str();
}

CLI::App* AddHelpCommand(CLI::App& app, std::vector<std::string>& topic) {
  CLI::App* help = app.add_subcommand("help", "Show help for a command: mfu help <command>");
  help->add_option("command", topic, "Command name, e.g. flops or hw list");
  return help;
}

int PrintHelp(const CLI::App& app, const std::vector<std::string>& words, int width, std::ostream& out,
              std::ostream& err) {
  const std::string topic = base::Join(words, " ");
  if (topic.empty()) {
    out << Overview(app, width);
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

namespace {

// Each "command 'hw list'" (base::CommandRef: a word of its own, so not
// "subcommand '...'") as "'mfu hw list'".
std::string InCommandSpelling(std::string message) {
  static constexpr std::string_view kPrefix = "command '";
  for (size_t at = message.find(kPrefix); at != std::string::npos; at = message.find(kPrefix, at + 1)) {
    if (at > 0 && std::isalnum(static_cast<unsigned char>(message[at - 1])))
      continue;
    const size_t name_begin = at + kPrefix.size();
    const size_t name_end = message.find('\'', name_begin);
    if (name_end == std::string::npos)
      break;
    message.replace(at, kPrefix.size(), "'mfu ");
  }
  return message;
}

}  // namespace

std::string InFlagSpelling(std::string message, std::string_view command) {
  static constexpr std::string_view kPrefix = "parameter '";
  for (size_t at = message.find(kPrefix); at != std::string::npos; at = message.find(kPrefix, at)) {
    const size_t name_begin = at + kPrefix.size();
    const size_t name_end = message.find('\'', name_begin);
    if (name_end == std::string::npos)
      break;
    std::string flag = "--" + message.substr(name_begin, name_end - name_begin);
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (const FlagSpec* spec = command.empty() ? nullptr : FindFlag(command, flag); spec != nullptr)
      flag = spec->flag;  // the library's field name is an old spelling ("weight_dtype")
    message.replace(at, name_end + 1 - at, flag);
    at += flag.size();
  }
  return InCommandSpelling(std::move(message));
}

TextOptions CliTextOptions(int width, std::string_view command) {
  TextOptions options;
  options.width = width;
  const std::string name(command);
  options.parameter = [name](std::string_view parameter, bool short_form) {
    std::string flag = "--" + std::string(parameter);
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (const FlagSpec* spec = FindFlag(name, flag); short_form && spec != nullptr && *spec->short_flag != '\0')
      return std::string(spec->short_flag);
    return InFlagSpelling(Param(std::string(parameter)), name);
  };
  options.command = [](std::string_view report) { return "'mfu " + std::string(report) + "'"; };
  return options;
}

}  // namespace mfu::cli
