// mfu models: the shipped model presets.

#include <CLI/CLI.hpp>
#include <ostream>

#include "base/strings.h"
#include "cli/command.h"
#include "report/json_common.h"
#include "report/table.h"

namespace mfu::cli {
namespace {

class ModelsCommand final : public Command {
 public:
  const char* name() const override { return "models"; }
  const char* summary() const override { return "List the model presets shipped with mfu"; }
  void Register(CLI::App& app) override { app.add_flag("--json", json_, "Machine-readable output"); }

  Status Run(const CommandContext& ctx) override {
    nlohmann::json list = nlohmann::json::array();
    report::Table table({"preset", "family", "parameters", "active", "origin"});
    for (const auto& preset : ListModelPresets()) {
      MFU_ASSIGN_OR_RETURN(ModelSpec spec, LoadModel(preset.name));
      ParamCounts p = CountParams(spec);
      table.AddRow({preset.name, preset.family, base::FormatSi(p.total, 4), base::FormatSi(p.active, 4),
                    preset.origin.substr(0, 60)});
      list.push_back({{"name", preset.name},
                      {"family", preset.family},
                      {"origin", preset.origin},
                      {"params", {{"total", p.total}, {"active", p.active}}}});
    }
    if (json_) {
      nlohmann::json j = report::JsonEnvelope();
      j["models"] = list;
      report::PrintJson(ctx.out, j);
    } else {
      table.Print(ctx.out);
    }
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
