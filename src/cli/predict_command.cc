// mfu predict: one training configuration -> step time, throughput, MFU,
// memory per GPU and the step broken into the waterfall buckets.

#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/command.h"
#include "cli/plan_flags.h"
#include "mfu/report_plan.h"
#include "mfu/training_setup.h"

namespace mfu::cli {
namespace {

class PredictCommand final : public Command {
 public:
  const char* name() const override { return "predict"; }
  const char* summary() const override { return "Predict step time, MFU and memory of one training configuration"; }

  void Register(CLI::App& app) override {
    setup_.Register(app);
    config_.Register(app);
    app.add_flag("--json", json_, "Machine-readable output (docs/plan.md)");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(TrainingRequest request, setup_.ToRequest());
    MFU_ASSIGN_OR_RETURN(Catalog catalog, setup_.LoadCatalog());
    MFU_ASSIGN_OR_RETURN(std::unique_ptr<ResolvedTraining> s, ResolveTrainingSetup(catalog, request));
    MFU_ASSIGN_OR_RETURN(TrainingConfig config, ResolveTrainingConfig(*s, config_.request));
    MFU_ASSIGN_OR_RETURN(PredictResult result, PredictTraining(*s, config));
    ctx.out << ctx.reporter(json_).Report(*s, result);
    if (!result.prediction.memory.fits())
      return NotFoundError("the configuration does not fit in the GPU's memory");
    return Status::Ok();
  }

 private:
  SetupFlags setup_;
  ConfigFlags config_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakePredictCommand() {
  return std::make_unique<PredictCommand>();
}

}  // namespace mfu::cli
