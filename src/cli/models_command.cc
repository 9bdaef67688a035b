// mfu models: the shipped model presets.

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <vector>

#include "cli/command.h"
#include "mfu/flops.h"
#include "mfu/report_count.h"

namespace mfu::cli {
namespace {

class ModelsCommand final : public Command {
 public:
  const char* name() const override { return "models"; }
  const char* summary() const override { return "List the model presets shipped with mfu"; }
  void Register(CLI::App& app) override { app.add_flag("--json", json_, "Machine-readable output"); }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(std::vector<PresetCount> presets, CountPresetParams());
    ctx.out << ctx.reporter(json_).Report(presets);
    return Status::Ok();
  }

 private:
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeModelsCommand() {
  return std::make_unique<ModelsCommand>();
}

}  // namespace mfu::cli
