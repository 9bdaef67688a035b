// mfu predict: one training configuration -> step time, throughput, MFU,
// memory per GPU and the step broken into the waterfall buckets.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "base/strings.h"
#include "cli/command.h"
#include "report/json_common.h"
#include "cli/plan_flags.h"
#include "cli/plan_render.h"
#include "mfu/perf_model.h"

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
    MFU_ASSIGN_OR_RETURN(std::unique_ptr<ResolvedSetup> s, ResolveSetup(setup_));
    MFU_ASSIGN_OR_RETURN(TrainingConfig c, config_.Resolve(*s));
    const Prediction p = s->perf->Evaluate(c);
    if (p.issue != ConfigIssue::kOk && p.issue != ConfigIssue::kOutOfMemory) {
      return InvalidArgumentError(std::string("the configuration is not valid: ") + ConfigIssueName(p.issue) + " (" +
                                  ConfigText(p.config) + ", " + std::to_string(s->perf->setup().gpus) + " GPUs)");
    }
    std::vector<std::string> derived = s->derived;
    if (c.dp == 0)
      derived.push_back("dp = gpus / (tp x pp x cp) = " + std::to_string(p.config.dp));
    if (c.global_batch == 0)
      derived.push_back("global batch = dp x micro-batch = " + std::to_string(p.config.global_batch) + " sequences");
    if (json_) {
      nlohmann::json j = report::JsonEnvelope();
      j["setup"] = SetupJson(*s);
      j["derived"] = derived;
      j["prediction"] = PredictionJson(p);
      report::PrintJson(ctx.out, j);
      return Status::Ok();
    }
    PrintSetup(ctx.out, *s);
    for (const std::string& d : derived)
      ctx.out << "derived     " << d << "\n";
    PrintPrediction(ctx.out, p, *s);
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
