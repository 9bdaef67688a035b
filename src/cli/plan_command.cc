// mfu plan: search every valid configuration, rank by predicted throughput,
// show the best with their breakdowns, time and cost to train, and scaling.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "cli/command.h"
#include "report/json_common.h"
#include "cli/plan_flags.h"
#include "cli/plan_render.h"
#include "mfu/planner.h"
#include "report/table.h"

namespace mfu::cli {
namespace {

struct Budget {
  double tokens = 0;
  double price = 0;  // USD per GPU-hour
};

// What differs between two configurations, and the step components that
// account for most of the gap.
std::string Difference(const Prediction& a, const Prediction& b) {
  std::vector<std::string> d;
  auto cmp = [&d](const char* name, int64_t x, int64_t y) {
    if (x != y)
      d.push_back(fmt::format("{} {} vs {}", name, x, y));
  };
  cmp("tp", a.config.tp, b.config.tp);
  cmp("pp", a.config.pp, b.config.pp);
  cmp("dp", a.config.dp, b.config.dp);
  cmp("cp", a.config.cp, b.config.cp);
  cmp("ep", a.config.ep, b.config.ep);
  cmp("vpp", a.config.vpp, b.config.vpp);
  cmp("mbs", a.config.micro_batch, b.config.micro_batch);
  cmp("zero", a.config.zero_stage, b.config.zero_stage);
  if (a.config.recompute != b.config.recompute)
    d.push_back(
        fmt::format("recompute {} vs {}", RecomputeName(a.config.recompute), RecomputeName(b.config.recompute)));
  const StepBreakdown &x = a.breakdown, &y = b.breakdown;
  std::vector<std::pair<std::string, double>> deltas = {{"GEMM", y.matrix_s - x.matrix_s},
                                                        {"attention", y.attention_s - x.attention_s},
                                                        {"vector", y.vector_s - x.vector_s},
                                                        {"recompute", y.recompute_s - x.recompute_s},
                                                        {"kernel gaps", y.overhead_s - x.overhead_s},
                                                        {"optimizer", y.optimizer_s - x.optimizer_s},
                                                        {"TP comm", y.tp_comm_s - x.tp_comm_s},
                                                        {"CP comm", y.cp_comm_s - x.cp_comm_s},
                                                        {"EP comm", y.ep_comm_s - x.ep_comm_s},
                                                        {"PP comm", y.pp_comm_s - x.pp_comm_s},
                                                        {"DP comm", y.dp_comm_s - x.dp_comm_s},
                                                        {"bubble", y.bubble_s - x.bubble_s}};
  std::sort(deltas.begin(), deltas.end(),
            [](const auto& p, const auto& q) { return std::fabs(p.second) > std::fabs(q.second); });
  std::string s = d.empty() ? "same dimensions" : base::Join(d, ", ");
  s += "; runner-up step differs by";
  for (size_t i = 0; i < 3 && i < deltas.size() && std::fabs(deltas[i].second) > 0; ++i)
    s += fmt::format("{} {:+.3g} s {}", i == 0 ? "" : ",", deltas[i].second, deltas[i].first);
  return s;
}

class PlanCommand final : public Command {
 public:
  const char* name() const override { return "plan"; }
  const char* summary() const override { return "Search every parallel configuration for the highest MFU"; }

  void Register(CLI::App& app) override {
    setup_.Register(app);
    app.add_option("--gbs", options_.global_batch, "Global batch in sequences per step")->required();
    app.add_option("--top,-k", options_.top_k, "Configurations listed")->capture_default_str();
    app.add_option("--mbs", options_.micro_batches, "Micro-batch sizes to try")->delimiter(',')->capture_default_str();
    app.add_option("--zero", options_.zero_stages, "ZeRO stages to try (3 = FSDP-style)")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("--recompute", recompute_, "Recompute modes to try")->delimiter(',')->capture_default_str();
    app.add_option("--max-vpp", options_.max_vpp, "Largest interleave (virtual stages)")->capture_default_str();
    app.add_option("--max-cp", options_.max_cp, "Largest context parallel size")->capture_default_str();
    app.add_flag("--tp-across-nodes", tp_across_nodes_, "Allow tensor parallelism beyond a scale-up domain");
    app.add_flag("--tp-comm-overlap", options_.tp_comm_overlap,
                 "Assume TP communication overlaps GEMMs [default: the framework's recipe]");
    app.add_option("--tokens", tokens_, "Token budget for time and cost to train (e.g. 15T)");
    app.add_option("--price-per-gpu-hour", price_, "USD per GPU-hour [default: the cluster's, if known]");
    app.add_option("--scaling", scaling_, "Also a scaling table over these GPU counts (weak and strong scaling)")
        ->delimiter(',');
    app.add_flag("--timing", timing_, "Also print how long the search took");
    app.add_flag("--json", json_, "Machine-readable output (docs/plan.md)");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(std::unique_ptr<ResolvedSetup> s, ResolveSetup(setup_));
    options_.precision = s->precision;
    options_.moe_imbalance = s->moe_imbalance;
    options_.state = s->state;
    if (options_.tp_comm_overlap && !s->perf->setup().framework.tp_overlap_supported) {
      return InvalidArgumentError("--tp-comm-overlap: framework " + s->perf->setup().framework.name +
                                  " cannot overlap tensor-parallel communication (data/frameworks/frameworks.csv)");
    }
    options_.tp_within_node = !tp_across_nodes_;
    options_.recompute.clear();
    for (const std::string& r : recompute_) {
      MFU_ASSIGN_OR_RETURN(Recompute mode, ParseRecompute(r));
      options_.recompute.push_back(mode);
    }
    for (int64_t mbs : options_.micro_batches) {
      if (mbs < 1 || mbs > 65536)
        return InvalidArgumentError("--mbs: " + std::to_string(mbs) + " is not in [1, 65536]");
    }
    if (options_.top_k < 1 || options_.top_k > 1000)
      return InvalidArgumentError("--top must be in [1, 1000]");
    Budget budget;
    if (!tokens_.empty()) {
      MFU_ASSIGN_OR_RETURN(budget.tokens, base::ParseScaledNumber(tokens_, "--tokens"));
      if (!(budget.tokens > 0))
        return InvalidArgumentError("--tokens must be positive");
    }
    budget.price = price_ >= 0 ? price_ : (s->cluster != nullptr ? s->cluster->price_per_gpu_hour : 0);
    if (!std::isfinite(budget.price) || budget.price < 0)
      return InvalidArgumentError("--price-per-gpu-hour must be a non-negative number");

    const auto t0 = std::chrono::steady_clock::now();
    MFU_ASSIGN_OR_RETURN(PlanResult plan, PlanTraining(*s->perf, options_));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // Scaling: the same search at other GPU counts, with the global batch
    // scaled (weak) or kept (strong).
    struct ScalePoint {
      int64_t gpus;
      bool weak;
      int64_t gbs;
      Prediction best;
      bool found;
    };
    std::vector<ScalePoint> scale;
    for (int64_t g : scaling_) {
      if (g < 1 || g > (int64_t{1} << 24))
        return InvalidArgumentError("--scaling: " + std::to_string(g) + " GPUs is out of range");
      for (bool weak : {true, false}) {
        TrainingSetup t = s->perf->setup();
        t.gpus = g;
        StatusOr<PerfModel> m = PerfModel::Create(t);
        if (!m.ok())
          return m.status();
        PlanOptions o = options_;
        o.top_k = 1;
        const double ratio = static_cast<double>(g) / static_cast<double>(s->perf->setup().gpus);
        o.global_batch = weak ? std::max<int64_t>(1, std::llround(static_cast<double>(options_.global_batch) * ratio))
                              : options_.global_batch;
        MFU_ASSIGN_OR_RETURN(PlanResult r, PlanTraining(*m, o));
        scale.push_back({g, weak, o.global_batch, r.top.empty() ? Prediction{} : r.top.front(), !r.top.empty()});
      }
    }

    // Nothing fits: the smallest GPU count (doubling) at which something does.
    int64_t fits_at = 0;
    if (plan.top.empty() && s->cluster != nullptr) {
      for (int64_t g = s->perf->setup().gpus * 2; g <= s->perf->setup().gpus * 1024 && g <= (int64_t{1} << 24);
           g *= 2) {
        TrainingSetup t = s->perf->setup();
        t.gpus = g;
        StatusOr<PerfModel> m = PerfModel::Create(t);
        if (!m.ok())
          break;
        PlanOptions o = options_;
        o.top_k = 1;
        o.global_batch = options_.global_batch * (g / s->perf->setup().gpus);  // weak scaling
        StatusOr<PlanResult> r = PlanTraining(*m, o);
        if (r.ok() && !r->top.empty()) {
          fits_at = g;
          break;
        }
      }
    }

    if (json_) {
      nlohmann::json j = report::JsonEnvelope();
      j["setup"] = SetupJson(*s);
      j["search"] = {{"evaluated", plan.evaluated}, {"fitting", plan.fitting}, {"seconds", seconds}};
      nlohmann::json issues = nlohmann::json::object();
      for (size_t i = 0; i < plan.by_issue.size(); ++i) {
        if (plan.by_issue[i] > 0)
          issues[ConfigIssueName(static_cast<ConfigIssue>(i))] = plan.by_issue[i];
      }
      j["search"]["by_issue"] = issues;
      j["top"] = nlohmann::json::array();
      for (const Prediction& p : plan.top) {
        nlohmann::json pj = PredictionJson(p);
        if (budget.tokens > 0) {
          const double hours = budget.tokens / p.tokens_per_s / 3600;
          pj["time_to_train_days"] = hours / 24;
          pj["gpu_hours"] = hours * static_cast<double>(s->perf->setup().gpus);
          if (budget.price > 0)
            pj["cost_usd"] = hours * static_cast<double>(s->perf->setup().gpus) * budget.price;
        }
        j["top"].push_back(pj);
      }
      if (plan.top.size() >= 2)
        j["best_vs_runner_up"] = Difference(plan.top[0], plan.top[1]);
      if (plan.top.empty()) {
        j["nothing_fits"] = {{"closest", plan.closest.issue == ConfigIssue::kOutOfMemory ? PredictionJson(plan.closest)
                                                                                         : nlohmann::json(nullptr)},
                             {"over_bytes", plan.closest_over_bytes},
                             {"fits_at_gpus", fits_at > 0 ? nlohmann::json(fits_at) : nlohmann::json(nullptr)}};
      }
      j["scaling"] = nlohmann::json::array();
      for (const ScalePoint& p : scale) {
        j["scaling"].push_back({{"gpus", p.gpus},
                                {"kind", p.weak ? "weak" : "strong"},
                                {"global_batch", p.gbs},
                                {"best", p.found ? PredictionJson(p.best) : nlohmann::json(nullptr)}});
      }
      report::PrintJson(ctx.out, j);
      return Status::Ok();
    }

    PrintSetup(ctx.out, *s);
    ctx.out << fmt::format("search      {} configurations, {} fit in memory", plan.evaluated, plan.fitting);
    if (timing_) {
      ctx.out << fmt::format(" ({:.3f} s, {:.3g} configurations/s)", seconds,
                             static_cast<double>(plan.evaluated) / std::max(seconds, 1e-9));
    }
    ctx.out << "\n";
    std::vector<std::string> rejected;
    for (size_t i = 1; i < plan.by_issue.size(); ++i) {
      if (plan.by_issue[i] > 0)
        rejected.push_back(fmt::format("{} {}", plan.by_issue[i], ConfigIssueName(static_cast<ConfigIssue>(i))));
    }
    if (!rejected.empty())
      ctx.out << "rejected    " << base::Join(rejected, "; ") << "\n";
    ctx.out << "\n";
    if (plan.top.empty()) {
      ctx.out << "nothing fits in " << report::Bytes(s->gpu->memory_gb * 1024.0 * 1024 * 1024) << " per GPU.\n";
      if (plan.closest.issue == ConfigIssue::kOutOfMemory) {
        ctx.out << fmt::format("closest: {} needs {} per GPU ({} over)\n", ConfigText(plan.closest.config),
                               report::Bytes(plan.closest.memory.total()), report::Bytes(plan.closest_over_bytes));
      }
      if (fits_at > 0) {
        ctx.out << fmt::format("smallest change that fits: {} GPUs (x{} the GPUs)\n", fits_at,
                               fits_at / s->perf->setup().gpus);
      } else if (s->cluster == nullptr) {
        ctx.out << "one node cannot hold it: pass --cluster (its scale-out network) with more --gpus\n";
      } else {
        ctx.out << "no GPU count up to 1024x fits: use a larger-memory accelerator or a shorter sequence\n";
      }
      return NotFoundError("no configuration fits in memory");
    }
    report::Table t(
        {"#", "configuration", "step s", "tokens/s", "TFLOP/s/GPU", "MFU", "mem/GPU", "exposed comm", "bubble"});
    for (size_t i = 0; i < plan.top.size(); ++i) {
      const Prediction& p = plan.top[i];
      const StepBreakdown& b = p.breakdown;
      const double comm = b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.pp_comm_s + b.dp_comm_s;
      t.AddRow({std::to_string(i + 1), ConfigText(p.config), report::Fixed(p.step_s, 3),
                report::Fixed(p.tokens_per_s, 0), report::Fixed(p.tflops_per_gpu, 1), report::Percent(p.mfu),
                report::Bytes(p.memory.total()), report::Percent(comm / p.step_s),
                report::Percent(b.bubble_s / p.step_s)});
    }
    t.Print(ctx.out);
    if (plan.top.size() >= 2)
      ctx.out << "\nbest vs runner-up: " << Difference(plan.top[0], plan.top[1]) << "\n";
    if (budget.tokens > 0) {
      const Prediction& best = plan.top.front();
      const double hours = budget.tokens / best.tokens_per_s / 3600;
      const double gpu_hours = hours * static_cast<double>(s->perf->setup().gpus);
      ctx.out << fmt::format("\ntraining {} tokens with the best: {:.1f} days, {} GPU-hours",
                             base::FormatSi(budget.tokens), hours / 24, base::FormatThousands(gpu_hours));
      if (budget.price > 0)
        ctx.out << fmt::format(", ${} at ${:.2f}/GPU-hour", base::FormatThousands(gpu_hours * budget.price),
                               budget.price);
      ctx.out << " (no failures or restarts counted)\n";
    }
    if (!scale.empty()) {
      ctx.out << "\nscaling (best configuration at each GPU count)\n";
      report::Table st({"GPUs", "scaling", "gbs", "best configuration", "tokens/s", "MFU", "efficiency"});
      const double base_per_gpu = plan.top.front().tokens_per_s / static_cast<double>(s->perf->setup().gpus);
      for (const ScalePoint& p : scale) {
        if (!p.found) {
          st.AddRow({std::to_string(p.gpus), p.weak ? "weak" : "strong", std::to_string(p.gbs), "nothing fits", "-",
                     "-", "-"});
          continue;
        }
        const double per_gpu = p.best.tokens_per_s / static_cast<double>(p.gpus);
        st.AddRow({std::to_string(p.gpus), p.weak ? "weak" : "strong", std::to_string(p.gbs), ConfigText(p.best.config),
                   report::Fixed(p.best.tokens_per_s, 0), report::Percent(p.best.mfu),
                   report::Percent(per_gpu / base_per_gpu)});
      }
      st.Print(ctx.out);
      ctx.out << "efficiency = tokens/s per GPU relative to the main search's best\n";
    }
    return Status::Ok();
  }

 private:
  SetupFlags setup_;
  PlanOptions options_;
  std::vector<std::string> recompute_ = {"none", "selective", "full"};
  bool tp_across_nodes_ = false;
  std::string tokens_;
  double price_ = -1;
  std::vector<int64_t> scaling_;
  bool timing_ = false;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakePlanCommand() {
  return std::make_unique<PlanCommand>();
}

}  // namespace mfu::cli
