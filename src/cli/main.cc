// mfu: thin entry point. Parses the command line, runs one subcommand and maps
// its Status to an exit code: 0 ok, 1 runtime/data error, 2 usage error.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <vector>

#include "cli/command.h"
#include "mfu/version.h"

int main(int argc, char** argv) {
  using mfu::cli::Command;
  CLI::App app("mfu: model FLOPs utilization - count, explain, optimize", "mfu");
  app.set_version_flag("--version", std::string("mfu ") + mfu::kVersion);
  app.require_subcommand(1);
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(mfu::cli::MakeFlopsCommand());
  commands.push_back(mfu::cli::MakeCalcCommand());
  commands.push_back(mfu::cli::MakeMemoryCommand());
  commands.push_back(mfu::cli::MakeTraceCommand());
  commands.push_back(mfu::cli::MakePredictCommand());
  commands.push_back(mfu::cli::MakePlanCommand());
  commands.push_back(mfu::cli::MakeCalibrateCommand());
  commands.push_back(mfu::cli::MakeKernelsCommand());
  commands.push_back(mfu::cli::MakeInferCommand());
  commands.push_back(mfu::cli::MakeHwCommand());
  commands.push_back(mfu::cli::MakeModelsCommand());
  std::vector<std::pair<CLI::App*, Command*>> table;
  for (auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c->name(), c->summary());
    c->Register(*sub);
    table.emplace_back(sub, c.get());
  }
  std::vector<std::string> help_topic;
  CLI::App* help = mfu::cli::AddHelpCommand(app, help_topic);
  if (std::string bad = mfu::cli::CheckCommandName(app, argc, argv); !bad.empty()) {
    std::cerr << "mfu: " << bad << "\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (!message.empty())
      message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
    std::cerr << "mfu: " << message << "\n";
    return 2;
  }
  if (help->parsed())
    return mfu::cli::PrintHelp(app, help_topic, std::cout, std::cerr);
  mfu::cli::CommandContext context{std::cout, std::cerr};
  for (auto& [sub, command] : table) {
    if (!sub->parsed())
      continue;
    mfu::Status status = command->Run(context);
    if (status.ok())
      return 0;
    std::cerr << "mfu: " << mfu::cli::InFlagSpelling(status.message()) << "\n";
    return status.code() == mfu::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 2;
}
