#pragma once

// The subcommands of `mfu fleet` (fleet_command.cc registers each under the
// `fleet` command): analyze (fleet_analyze_command.cc), serve, rules and
// dashboard (fleet_serve_command.cc). Each is a Command of its own.

#include <memory>

#include "cli/command.h"

namespace mfu::cli {

std::unique_ptr<Command> MakeFleetAnalyzeCommand();
std::unique_ptr<Command> MakeFleetServeCommand();
std::unique_ptr<Command> MakeFleetRulesCommand();
std::unique_ptr<Command> MakeFleetDashboardCommand();

}  // namespace mfu::cli
