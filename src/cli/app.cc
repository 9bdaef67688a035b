// The mfu command line as one function (main.cc only calls it): the command
// table, the vocabulary check of the arguments (cli/command_line.h), CLI11's
// parse, the run, and the mapping of a Status to an exit code, with the
// --json error object.

#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/command_line.h"
#include "mfu/report_cli.h"
#include "mfu/version.h"

namespace mfu::cli {
namespace {

// COLUMNS if set, else the terminal's width when stdout is one, else 100.
int TerminalWidth() {
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && *columns != '\0') {
    char* end = nullptr;
    long value = std::strtol(columns, &end, 10);
    if (*end == '\0' && value > 0)
      return static_cast<int>(std::min(value, 100000L));
  }
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    return size.ws_col;
  return 100;
}

// What a command writes, forwarded to `out` in whole lines with the
// library's field names in flag spelling (InFlagSpelling: "parameter
// 'global_batch'" -> "--global-batch"). Held only until about kPending
// bytes and a newline are in: the JSON of `mfu log` on a 10-million-line
// log (hundreds of MB) is streamed, not buffered whole.
class FlagSpellingBuf final : public std::streambuf {
 public:
  FlagSpellingBuf(std::ostream& out, std::string_view command) : out_(out), command_(command) {}
  bool wrote() const { return wrote_; }
  // Writes what is pending (a last line without a newline).
  void Finish() {
    if (!pending_.empty())
      out_ << InFlagSpelling(std::move(pending_), command_);
    pending_.clear();
  }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof()))
      return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    xsputn(&ch, 1);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    wrote_ = wrote_ || n > 0;
    pending_.append(s, static_cast<size_t>(n));
    if (pending_.size() >= kPending) {
      if (const size_t nl = pending_.rfind('\n'); nl != std::string::npos) {
        out_ << InFlagSpelling(pending_.substr(0, nl + 1), command_);
        pending_.erase(0, nl + 1);
      }
    }
    return n;
  }

 private:
  static constexpr size_t kPending = size_t{1} << 16;
  std::ostream& out_;
  std::string command_;
  std::string pending_;
  bool wrote_ = false;
};

// --wide and --output-format on every command that takes flags (the leaves:
// hw list, hw show, ...).
void AddOutputFlags(CLI::App& sub, bool& wide, std::string& format) {
  std::vector<CLI::App*> nested = sub.get_subcommands([](CLI::App* a) { return !a->get_name().empty(); });
  if (nested.empty()) {
    sub.add_flag("--wide", wide, "Text tables without a width limit [default: COLUMNS, the terminal, 100]");
    sub.add_option("--output-format", format,
                   "text (default), json (as --json) or csv: one row per listed item, or one row of every field "
                   "(docs/cli.md)");
    return;
  }
  for (CLI::App* n : nested)
    AddOutputFlags(*n, wide, format);
}

// The format --output-format names (text when not given); --json with any
// other is a contradiction.
StatusOr<ReportFormat> OutputFormat(const std::string& name, bool json) {
  if (name.empty())
    return json ? ReportFormat::kJson : ReportFormat::kText;
  MFU_ASSIGN_OR_RETURN(ReportFormat format, ParseReportFormat(name));
  if (json && format != ReportFormat::kJson)
    return InvalidArgumentError("--json contradicts --output-format " + name);
  return format;
}

std::string Lowercased(std::string message) {
  if (!message.empty())
    message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  return message;
}

}  // namespace

std::vector<std::unique_ptr<Command>> MakeCommands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(MakeFlopsCommand());
  commands.push_back(MakeMemoryCommand());
  commands.push_back(MakeCalcCommand());
  commands.push_back(MakeTraceCommand());
  commands.push_back(MakePredictCommand());
  commands.push_back(MakePlanCommand());
  commands.push_back(MakeInferCommand());
  commands.push_back(MakeFleetCommand());
  commands.push_back(MakeGoodputCommand());
  commands.push_back(MakeLogCommand());
  commands.push_back(MakeHwCommand());
  commands.push_back(MakeClustersCommand());
  commands.push_back(MakeModelsCommand());
  commands.push_back(MakeCalibrateCommand());
  commands.push_back(MakeKernelsCommand());
  return commands;
}

int RunCli(int argc, char** argv, std::ostream& out, std::ostream& err) {
  CLI::App app("mfu: model FLOPs utilization - count, explain, optimize", "mfu");
  app.set_version_flag("--version", std::string("mfu ") + kVersion);
  app.require_subcommand(1);
  std::vector<std::unique_ptr<Command>> commands = MakeCommands();
  std::vector<std::pair<CLI::App*, Command*>> table;
  bool wide = false;
  std::string format_name;
  for (auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c->name(), c->summary());
    c->Register(*sub);
    AddOutputFlags(*sub, wide, format_name);
    table.emplace_back(sub, c.get());
  }
  std::vector<std::string> help_topic;
  CLI::App* help = AddHelpCommand(app, help_topic);
  const std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  if (args.empty()) {  // a usage error, but the overview is what the user needs
    err << Overview(app, TerminalWidth());
    return 2;
  }
  PreparedArgs prepared;
  auto fail = [&](const std::string& message, bool usage) {
    err << "mfu: " << message << "\n";
    if (prepared.json)
      out << RenderErrorJson(message, usage ? "usage" : "data");
    return usage ? 2 : 1;
  };
  if (std::string bad = CheckCommandName(app, argc, argv); !bad.empty())
    return fail(bad, true);
  prepared = PrepareArgs(app, args);
  if (!prepared.error.empty())
    return fail(prepared.error, true);
  const int width = prepared.wide ? TextOptions::kUnlimited : TerminalWidth();
  SetHelpWidth(app, width);
  try {
    app.parse(std::vector<std::string>(prepared.args.rbegin(), prepared.args.rend()));
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    return fail(Lowercased(e.what()), true);
  }
  if (help->parsed())
    return PrintHelp(app, help_topic, width, out, err);
  StatusOr<ReportFormat> format = OutputFormat(format_name, prepared.json);
  if (!format.ok())
    return fail(InFlagSpelling(format.status().message(), ""), true);
  for (auto& [sub, command] : table) {
    if (!sub->parsed())
      continue;
    // Results' notes name request fields as the library does ("parameter
    // 'global_batch'"); the CLI shows its flags, as in its error messages.
    FlagSpellingBuf spelled(out, sub->get_name());
    std::ostream buffer(&spelled);
    CommandContext context{buffer, err, CliTextOptions(width, sub->get_name()), *format};
    Status status = command->Run(context);
    spelled.Finish();
    if (status.ok())
      return 0;
    const bool usage = status.code() == StatusCode::kInvalidArgument;
    if (spelled.wrote()) {  // the report is out ("nothing fits"): only the reason
      err << "mfu: " << InFlagSpelling(status.message(), sub->get_name()) << "\n";
      return usage ? 2 : 1;
    }
    return fail(InFlagSpelling(status.message(), sub->get_name()), usage);
  }
  return 2;
}

}  // namespace mfu::cli
