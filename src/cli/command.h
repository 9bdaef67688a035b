#pragma once

// A subcommand of the mfu CLI (perfetto's shell Subcommand, ninja's tool
// table). Each command owns an options struct, registers its flags on a CLI11
// subcommand, and runs through the library, mapping failures to a Status that
// main.cc turns into an exit code (kInvalidArgument -> 2, others -> 1).

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/reporter.h"
#include "mfu/status.h"
#include "mfu/text_options.h"

namespace CLI {
class App;
}

namespace mfu::cli {

struct CommandContext {
  std::ostream& out;
  std::ostream& err;
  TextOptions text;                           // the width text tables fit (COLUMNS, the tty, 100 piped; --wide)
  ReportFormat format = ReportFormat::kText;  // --output-format
  // The library's renderer of every result in the chosen format (--json:
  // JSON, whatever --output-format said; they cannot contradict).
  Reporter reporter(bool json) const { return Reporter(json ? ReportFormat::kJson : format, text); }
};

class Command {
 public:
  virtual ~Command() = default;
  virtual const char* name() const = 0;
  virtual const char* summary() const = 0;
  // Adds this command's flags to `app` (the CLI11 subcommand).
  virtual void Register(CLI::App& app) = 0;
  virtual Status Run(const CommandContext& context) = 0;
};

// One factory per command, defined in <verb>_command.cc.
std::unique_ptr<Command> MakeFlopsCommand();
std::unique_ptr<Command> MakeCalcCommand();
std::unique_ptr<Command> MakeHwCommand();
std::unique_ptr<Command> MakeModelsCommand();
std::unique_ptr<Command> MakeMemoryCommand();
std::unique_ptr<Command> MakeTraceCommand();
std::unique_ptr<Command> MakePredictCommand();
std::unique_ptr<Command> MakePlanCommand();
std::unique_ptr<Command> MakeCalibrateCommand();
std::unique_ptr<Command> MakeKernelsCommand();
std::unique_ptr<Command> MakeInferCommand();
std::unique_ptr<Command> MakeClustersCommand();
std::unique_ptr<Command> MakeFleetCommand();
std::unique_ptr<Command> MakeGoodputCommand();
std::unique_ptr<Command> MakeLogCommand();

// Every command, in the order of the overview.
std::vector<std::unique_ptr<Command>> MakeCommands();

// The whole CLI: parses `argv`, runs one command, prints its output on `out`
// and a one-line error on `err`. Returns the exit code: 0 ok, 1 data error
// or nothing fits, 2 usage.
int RunCli(int argc, char** argv, std::ostream& out, std::ostream& err);

// The command overview of `mfu` and `mfu help`: every command with its
// summary, grouped (count, explain, optimize, data).
std::string Overview(const CLI::App& app, int width);
// Help text of every (sub)command of `app` wrapped to `width` (0: no limit).
void SetHelpWidth(CLI::App& app, int width);

// `mfu help [command]`: prints the help of `topic` (or the overview when
// empty), the same text as `mfu <command> --help`. Returns the exit code.
int PrintHelp(const CLI::App& app, const std::vector<std::string>& topic, int width, std::ostream& out,
              std::ostream& err);
// Registers `mfu help [command [subcommand]]`, filling `topic`.
CLI::App* AddHelpCommand(CLI::App& app, std::vector<std::string>& topic);

// A library message in the CLI's spelling: every "parameter 'seq_len'" (how
// the library names a request field, mfu/setup.h Param) becomes "--seq-len";
// with `command`, a field named as a deprecated flag becomes the canonical
// one ("parameter 'gbs'" -> "--global-batch"); every "command 'hw list'"
// (base::CommandRef, another report) becomes "'mfu hw list'".
std::string InFlagSpelling(std::string message, std::string_view command = "");
// The text options of `command`'s output: `width` columns, parameters in its
// flag spelling (TextOptions::Parameter("ranks") -> "--ranks", the short form
// "-v" where asked and the flag has one), other reports as "'mfu hw show
// ID'".
TextOptions CliTextOptions(int width, std::string_view command);

// "" when argv[1] is a flag or a known command; else a one-line error with a
// "did you mean" suggestion.
std::string CheckCommandName(const CLI::App& app, int argc, char** argv);

}  // namespace mfu::cli
