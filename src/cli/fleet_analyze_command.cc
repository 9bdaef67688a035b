// PLACEHOLDER until the fleet analysis lands (replaced by its owner).
#include <CLI/CLI.hpp>
#include <memory>

#include "cli/fleet_commands.h"

namespace mfu::cli {
namespace {
class FleetAnalyzeCommand final : public Command {
 public:
  const char* name() const override { return "analyze"; }
  const char* summary() const override { return "Estimated MFU per GPU, job, node and fleet from telemetry"; }
  void Register(CLI::App&) override {}
  Status Run(const CommandContext&) override { return UnsupportedError("mfu fleet analyze is not built yet"); }
};
}  // namespace
std::unique_ptr<Command> MakeFleetAnalyzeCommand() {
  return std::make_unique<FleetAnalyzeCommand>();
}
}  // namespace mfu::cli
