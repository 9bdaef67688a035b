// PLACEHOLDER until the fleet exporter lands (replaced by its owner).
#include <CLI/CLI.hpp>
#include <memory>

#include "cli/fleet_commands.h"

namespace mfu::cli {
namespace {
class Placeholder final : public Command {
 public:
  Placeholder(const char* name, const char* summary) : name_(name), summary_(summary) {}
  const char* name() const override { return name_; }
  const char* summary() const override { return summary_; }
  void Register(CLI::App&) override {}
  Status Run(const CommandContext&) override { return UnsupportedError("not built yet"); }

 private:
  const char* name_;
  const char* summary_;
};
}  // namespace
std::unique_ptr<Command> MakeFleetServeCommand() {
  return std::make_unique<Placeholder>("serve", "Prometheus exporter of mfu's fleet metrics");
}
std::unique_ptr<Command> MakeFleetRulesCommand() {
  return std::make_unique<Placeholder>("rules", "Prometheus recording and alerting rules");
}
std::unique_ptr<Command> MakeFleetDashboardCommand() {
  return std::make_unique<Placeholder>("dashboard", "Grafana dashboard JSON");
}
}  // namespace mfu::cli
