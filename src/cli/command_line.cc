#include "cli/command_line.h"

#include <CLI/CLI.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/strings.h"
#include "cli/vocabulary.h"

namespace mfu::cli {
namespace {

// The options of one (sub)command, option groups included, by spelling.
struct OptionIndex {
  std::map<std::string, const CLI::Option*> by_name;  // "--seq-len", "-s"
  std::vector<const CLI::Option*> positionals;
  std::vector<const CLI::Option*> all;

  void Add(const CLI::App& app) {
    for (const CLI::Option* opt : app.get_options()) {
      all.push_back(opt);
      if (!opt->nonpositional()) {
        positionals.push_back(opt);
        continue;
      }
      for (const std::string& l : opt->get_lnames())
        by_name["--" + l] = opt;
      for (const std::string& s : opt->get_snames())
        by_name["-" + s] = opt;
    }
    for (const CLI::App* group : app.get_subcommands([](const CLI::App* a) { return a->get_name().empty(); }))
      Add(*group);
  }
};

// The canonical spelling CLI11 knows `opt` by: its first long name.
std::string Canonical(const CLI::Option* opt) {
  return opt->get_lnames().empty() ? "-" + opt->get_snames().front() : "--" + opt->get_lnames().front();
}

std::string UnknownFlag(const std::string& given, const std::string& command, const OptionIndex& index) {
  std::vector<std::string> names;
  for (const auto& [name, opt] : index.by_name) {
    if (name.size() > 2)
      names.push_back(name);
  }
  for (const FlagSpec& spec : Vocabulary()) {
    if (!InCommands(spec.commands, command))
      continue;
    for (const std::string& alias : base::Split(spec.aliases, ' ')) {
      if (alias.size() > 2)
        names.push_back(alias);
    }
  }
  std::string suggestion = base::ClosestMatch(given, names);
  if (const FlagSpec* spec = FindFlag(command, suggestion))
    suggestion = spec->flag;
  return "unknown flag '" + given + "'" + (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
         "; see 'mfu help " + command + "'";
}

bool IsHelp(const std::string& token) {
  return token == "-h" || token == "--help";
}

class Preparer {
 public:
  Preparer(const std::string& command, const CLI::App& sub, PreparedArgs& out) : command_(command), out_(out) {
    index_.Add(sub);
  }

  // Handles tokens[i] (and its value); returns the next index, or npos after an error.
  size_t Step(const std::vector<std::string>& tokens, size_t i) {
    const std::string& token = tokens[i];
    if (token.size() < 2 || token[0] != '-') {
      positionals_.push_back(token);
      out_.args.push_back(token);
      return i + 1;
    }
    std::string name = token, value;
    bool has_value = false;
    if (token.rfind("--", 0) == 0) {
      size_t eq = token.find('=');
      if (eq != std::string::npos) {
        name = token.substr(0, eq);
        value = token.substr(eq + 1);
        has_value = true;
      }
      for (char& c : name) {
        if (c == '_')
          c = '-';
      }
    } else if (token.size() > 2) {  // -n8
      name = token.substr(0, 2);
      value = token.substr(2);
      has_value = true;
    }
    const FlagSpec* spec = FindFlag(command_, name);
    const std::string spelled = spec != nullptr ? spec->flag : name;
    auto found = index_.by_name.find(spelled);
    if (found == index_.by_name.end()) {
      // A vocabulary short option a command does not register (-b in flops).
      found = spec != nullptr ? index_.by_name.find(spec->flag) : index_.by_name.end();
      if (found == index_.by_name.end())
        return Fail(UnknownFlag(name, command_, index_));
    }
    const CLI::Option* opt = found->second;
    const std::string canonical = Canonical(opt);
    given_.insert(opt);
    if (canonical == "--json")
      out_.json = true;
    if (canonical == "--wide")
      out_.wide = true;
    const bool takes_value = spec != nullptr ? spec->kind != ValueKind::kSwitch : opt->get_type_size() != 0;
    if (!takes_value) {
      if (has_value)
        return Fail(canonical + " takes no value (got '" + value + "')");
      out_.args.push_back(canonical);
      return i + 1;
    }
    size_t next = i + 1;
    if (!has_value) {
      if (next >= tokens.size())
        return Fail(canonical + " needs a value" + (spec != nullptr ? ": " + DescribeRange(*spec) : ""));
      value = tokens[next++];
    }
    if (spec != nullptr) {
      if (std::string bad = CheckValue(*spec, value); !bad.empty())
        return Fail(bad);
    } else if (value.empty()) {
      return Fail(canonical + " must be a non-empty value (got an empty value)");
    }
    out_.args.push_back(canonical + "=" + value);
    return next;
  }

  // The checks once every token is read: stray values, missing flags.
  void Finish() {
    size_t capacity = 0;
    for (const CLI::Option* p : index_.positionals)
      capacity += static_cast<size_t>(std::max(p->get_items_expected_max(), 0));
    if (positionals_.size() > capacity) {
      const std::string& extra = positionals_[capacity];
      Fail(capacity == 0 ? "unexpected value '" + extra + "': 'mfu " + command_ +
                               "' takes no positional argument (a flag takes one value: --flag VALUE)"
                         : "unexpected extra value '" + extra + "'");
      return;
    }
    std::vector<std::string> missing;
    for (const CLI::Option* opt : index_.all) {
      if (!opt->get_required())
        continue;
      if (!opt->nonpositional()) {
        if (positionals_.empty())
          missing.push_back(opt->get_name());
      } else if (given_.count(opt) == 0) {
        missing.push_back(Canonical(opt));
      }
    }
    if (!missing.empty())
      Fail("missing " + base::Join(missing, ", ") + "; see 'mfu help " + command_ + "'");
  }

  size_t Fail(std::string message) {
    if (out_.error.empty())
      out_.error = std::move(message);
    return std::string::npos;
  }

 private:
  std::string command_;
  PreparedArgs& out_;
  OptionIndex index_;
  std::set<const CLI::Option*> given_;
  std::vector<std::string> positionals_;
};

// The named (non-group) subcommands of `app`.
std::vector<const CLI::App*> Subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* a) { return !a->get_name().empty(); });
}

}  // namespace

PreparedArgs PrepareArgs(const CLI::App& app, const std::vector<std::string>& argv) {
  PreparedArgs out;
  out.args = argv;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& token = argv[i];
    if (token == "--")
      break;
    if (IsHelp(token))
      out.help = true;
    // Known before any error, for the error object.
    if (token == "--json" || token == "--output-format=json" ||
        (token == "--output-format" && i + 1 < argv.size() && argv[i + 1] == "json"))
      out.json = true;
  }
  if (out.help || argv.empty() || argv[0].empty() || argv[0][0] == '-' || argv[0] == "help")
    return out;
  const CLI::App* sub = app.get_subcommand(argv[0]);
  std::string command = argv[0];
  out.args = {argv[0]};
  size_t i = 1;
  if (std::vector<const CLI::App*> nested = Subcommands(*sub); !nested.empty()) {
    std::vector<std::string> names;
    for (const CLI::App* n : nested)
      names.push_back(n->get_name());
    if (i >= argv.size() || argv[i].empty() || argv[i][0] == '-') {
      out.error = command + ": give a subcommand: " + base::Join(names, " or ");
      return out;
    }
    const CLI::App* found = nullptr;
    for (const CLI::App* n : nested) {
      if (n->get_name() == argv[i])
        found = n;
    }
    if (found == nullptr) {
      std::string suggestion = base::ClosestMatch(argv[i], names);
      out.error = command + ": unknown subcommand '" + argv[i] + "'" +
                  (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
                  "; subcommands: " + base::Join(names, ", ");
      return out;
    }
    out.args.push_back(argv[i++]);
    sub = found;
  }
  Preparer preparer(command, *sub, out);
  while (i < argv.size()) {
    if (argv[i] == "--") {
      out.args.insert(out.args.end(), argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
      break;
    }
    i = preparer.Step(argv, i);
    if (i == std::string::npos)
      return out;
  }
  preparer.Finish();
  return out;
}

}  // namespace mfu::cli
