// mfu fleet: the data center's view. GPU telemetry to estimated MFU per GPU,
// job, node and fleet (`analyze`), served to Prometheus (`serve`), with the
// recording/alerting rules (`rules`) and a Grafana dashboard (`dashboard`)
// that query mfu's series. docs/fleet.md.

#include <CLI/CLI.hpp>
#include <memory>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/fleet_commands.h"

namespace mfu::cli {
namespace {

class FleetCommand final : public Command {
 public:
  FleetCommand() {
    subcommands_.push_back(MakeFleetAnalyzeCommand());
    subcommands_.push_back(MakeFleetServeCommand());
    subcommands_.push_back(MakeFleetRulesCommand());
    subcommands_.push_back(MakeFleetDashboardCommand());
  }

  const char* name() const override { return "fleet"; }
  const char* summary() const override {
    return "GPU telemetry (dcgm-exporter, AMD) to estimated MFU per GPU and job; Prometheus exporter, rules, dashboard";
  }

  void Register(CLI::App& app) override {
    app.require_subcommand(1);
    for (auto& command : subcommands_) {
      CLI::App* sub = app.add_subcommand(command->name(), command->summary());
      command->Register(*sub);
      apps_.emplace_back(sub, command.get());
    }
  }

  Status Run(const CommandContext& context) override {
    for (auto& [app, command] : apps_)
      if (app->parsed())
        return command->Run(context);
    return InvalidArgumentError("mfu fleet needs a subcommand: analyze, serve, rules or dashboard");
  }

 private:
  std::vector<std::unique_ptr<Command>> subcommands_;
  std::vector<std::pair<CLI::App*, Command*>> apps_;
};

}  // namespace

std::unique_ptr<Command> MakeFleetCommand() {
  return std::make_unique<FleetCommand>();
}

}  // namespace mfu::cli
