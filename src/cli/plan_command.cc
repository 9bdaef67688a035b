// mfu plan: search every valid configuration, rank by predicted throughput,
// show the best with their breakdowns, time and cost to train, and scaling.

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/plan_flags.h"
#include "mfu/report_plan.h"
#include "mfu/training_setup.h"

namespace mfu::cli {
namespace {

class PlanCommand final : public Command {
 public:
  const char* name() const override { return "plan"; }
  const char* summary() const override { return "Search every parallel configuration for the highest MFU"; }

  void Register(CLI::App& app) override {
    setup_.Register(app);
    PlanRequest& r = request_;
    PlanOptions& o = r.options;
    app.add_option("--global-batch", o.global_batch, "Global batch in sequences per step")->required();
    app.add_option("--top,-k", o.top_k, "Configurations listed")->capture_default_str();
    app.add_option("--micro-batch", o.micro_batches, "Micro-batch sizes to try")->delimiter(',')->capture_default_str();
    app.add_option("--zero", o.zero_stages,
                   "ZeRO stages to try (3 = FSDP-style) [default: every stage the framework implements]")
        ->delimiter(',');
    app.add_option("--recompute", r.recompute, "Recompute modes to try")->delimiter(',')->capture_default_str();
    app.add_option("--max-vpp", o.max_vpp, "Largest interleave (virtual stages)")->capture_default_str();
    app.add_option("--max-cp", o.max_cp, "Largest context parallel size")->capture_default_str();
    app.add_flag("--tp-across-nodes", r.tp_across_nodes, "Allow tensor parallelism beyond a scale-up domain");
    app.add_flag("--tp-comm-overlap", o.tp_comm_overlap,
                 "Assume TP communication overlaps GEMMs [default: the framework's recipe]");
    app.add_option("--tokens", r.tokens, "Token budget for time and cost to train (e.g. 15T)");
    app.add_option("--price-per-gpu-hour", r.price_per_gpu_hour, "USD per GPU-hour [default: the cluster's, if known]");
    app.add_option("--scaling", r.scaling, "Also a scaling table over these GPU counts (weak and strong scaling)")
        ->delimiter(',');
    app.add_option("--mtbf", r.mtbf,
                   "The job's mean time between failures (a node's MTBF / nodes; 24h, 90m): time to train "
                   "divided by the expected goodput at Daly's checkpoint interval");
    app.add_option("--checkpoint-time", r.checkpoint_time, "With --mtbf: blocking checkpoint save time [default: 60s]");
    app.add_option("--restart-time", r.restart_time,
                   "With --mtbf: failure to training again (detect, reschedule, init, restore) [default: 10m]");
    app.add_flag("--timing", timing_, "Also print how long the search took");
    app.add_flag("--json", json_, "Machine-readable output (docs/plan.md)");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(TrainingRequest request, setup_.ToRequest());
    MFU_ASSIGN_OR_RETURN(Catalog catalog, setup_.LoadCatalog());
    MFU_ASSIGN_OR_RETURN(std::unique_ptr<ResolvedTraining> s, ResolveTrainingSetup(catalog, request));
    MFU_ASSIGN_OR_RETURN(PlanStudy study, RunPlanStudy(*s, request_));
    ctx.out << ctx.reporter(json_).Report(*s, study, timing_);
    if (study.plan.top.empty())
      return NotFoundError("no configuration fits in memory");
    return Status::Ok();
  }

 private:
  SetupFlags setup_;
  PlanRequest request_;
  bool timing_ = false;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakePlanCommand() {
  return std::make_unique<PlanCommand>();
}

}  // namespace mfu::cli
