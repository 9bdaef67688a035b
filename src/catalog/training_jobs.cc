// The training jobs (training_setup.h): predict one configuration, plan the
// search with its studies. What PredictCommand and PlanCommand computed.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "base/strings.h"
#include "mfu/training_setup.h"

namespace mfu {
namespace {

// A predicted figure above the peak is the model's error, not the user's.
constexpr std::string_view kPredictedAbovePeakCauses =
    "an error of the performance model for this configuration (please report it)";

// gbs = dp x mbs: one micro-batch per pipeline per step, so with pipeline
// parallelism the step is mostly bubble (the issue's example: 69% bubble,
// 8% MFU). Said loudly, with what it costs and the parameter that fixes it.
Note DefaultGlobalBatchNote(const Prediction& p) {
  const double bubble = p.step_s > 0 ? p.breakdown.bubble_s / p.step_s : 0;
  char figures[96];
  std::snprintf(figures, sizeof figures, "%.0f%% of the step is pipeline bubble, MFU %.1f%%", 100 * bubble,
                100 * p.mfu);
  return {NoteKind::kAssumption, "default_global_batch",
          "global batch not given: dp x mbs = " + std::to_string(p.config.global_batch) + " sequences, " +
              std::to_string(p.micro_batches) + (p.micro_batches == 1 ? " micro-batch" : " micro-batches") +
              " per step (" + figures + "); give " + Param("gbs") + " (the job's global batch) for a real step"};
}

}  // namespace

StatusOr<PredictResult> PredictTraining(const ResolvedTraining& setup, const TrainingConfig& config) {
  PredictResult r;
  r.prediction = setup.perf->Evaluate(config);
  const Prediction& p = r.prediction;
  if (p.issue != ConfigIssue::kOk && p.issue != ConfigIssue::kOutOfMemory) {
    return InvalidArgumentError(std::string("the configuration is not valid: ") + ConfigIssueName(p.issue) + " (" +
                                ConfigText(p.config) + ", " + std::to_string(setup.perf->setup().gpus) + " GPUs)");
  }
  r.derived = setup.derived;
  for (std::string& d : DerivedConfigNotes(config, p))
    r.derived.push_back(std::move(d));
  r.notes = setup.notes;
  if (config.global_batch == 0)
    r.notes.push_back(DefaultGlobalBatchNote(p));
  if (std::optional<Note> n = CheckUtilizationPlausible(p.utilization, kPredictedAbovePeakCauses))
    r.notes.push_back(std::move(*n));
  return r;
}

namespace {

// The request's options with the setup's precision, imbalance and state.
StatusOr<PlanOptions> ResolvePlanOptions(const ResolvedTraining& s, const PlanRequest& q) {
  PlanOptions o = q.options;
  o.precision = s.precision;
  o.moe_imbalance = s.moe_imbalance;
  o.state = s.state;
  const FrameworkProfile& fw = s.perf->setup().framework;
  if (o.tp_comm_overlap && !fw.tp_overlap_supported) {
    return InvalidArgumentError(Param("tp_comm_overlap") + ": framework " + fw.name +
                                " cannot overlap tensor-parallel communication (data/frameworks/frameworks.csv)");
  }
  o.tp_within_node = !q.tp_across_nodes;
  o.recompute.clear();
  for (const std::string& r : q.recompute) {
    MFU_ASSIGN_OR_RETURN(Recompute asked, ParseRecompute(r));
    const Recompute mode = fw.RecomputeOf(asked);  // torchtitan's `selective` is its op policy
    if (std::find(o.recompute.begin(), o.recompute.end(), mode) == o.recompute.end())
      o.recompute.push_back(mode);
  }
  for (int64_t mbs : o.micro_batches) {
    if (mbs < 1 || mbs > 65536)
      return InvalidArgumentError(Param("mbs") + ": " + std::to_string(mbs) + " is not in [1, 65536]");
  }
  if (o.top_k < 1 || o.top_k > 1000)
    return InvalidArgumentError(Param("top") + " must be in [1, 1000]");
  if (o.global_batch < 1 || o.global_batch > (int64_t{1} << 30)) {
    return InvalidArgumentError(Param("gbs") + " (the global batch, sequences per step) must be in [1, 2^30], got " +
                                std::to_string(o.global_batch));
  }
  if (o.max_vpp < 1 || o.max_vpp > 64)
    return InvalidArgumentError(Param("max_vpp") + " must be in [1, 64], got " + std::to_string(o.max_vpp));
  if (o.max_cp < 1 || o.max_cp > 1024)
    return InvalidArgumentError(Param("max_cp") + " must be in [1, 1024], got " + std::to_string(o.max_cp));
  for (int64_t gpus : q.scaling) {
    if (gpus < 1 || gpus > (int64_t{1} << 24))
      return InvalidArgumentError(Param("scaling") + ": " + std::to_string(gpus) + " GPUs is not in [1, 2^24]");
  }
  return o;
}

// PlanRequest::price_per_gpu_hour's "not given" (exactly -1).
bool IsUnsetPrice(double price) {
  return price >= -1 && price <= -1;
}

StatusOr<TrainingBudget> ResolveBudget(const ResolvedTraining& s, const PlanRequest& q) {
  TrainingBudget budget;
  if (!q.tokens.empty()) {
    MFU_ASSIGN_OR_RETURN(budget.tokens, base::ParseScaledNumber(q.tokens, Param("tokens")));
    if (!(budget.tokens > 0))
      return InvalidArgumentError(Param("tokens") + " must be positive");
  }
  // -1 is "not given"; any other negative, NaN or infinity is a mistake,
  // never a silent fallback to the cluster's price.
  const double price = q.price_per_gpu_hour;
  if (!IsUnsetPrice(price) && !(std::isfinite(price) && price >= 0)) {
    return InvalidArgumentError(Param("price_per_gpu_hour") + " must be a finite number >= 0 (USD), got " +
                                base::FormatNumber(price));
  }
  budget.price_per_gpu_hour = price >= 0 ? price : (s.cluster != nullptr ? s.cluster->price_per_gpu_hour : 0);
  if (!std::isfinite(budget.price_per_gpu_hour) || budget.price_per_gpu_hour < 0)
    return InvalidArgumentError(Param("price_per_gpu_hour") + " must be a non-negative number");
  return budget;
}

// A duration parameter in seconds; `fallback` (noted) when not given.
StatusOr<double> PlanDuration(const std::string& text, const char* param, double fallback, const char* what,
                              std::vector<Note>& notes) {
  if (text.empty()) {
    notes.push_back(
        {NoteKind::kAssumption, std::string("default_") + param,
         std::string(what) + " not given: " + base::FormatNumber(fallback) + " s assumed; give " + Param(param)});
    return fallback;
  }
  StatusOr<double> d = ParseDuration(text);
  if (!d.ok())
    return InvalidArgumentError(Param(param) + ": " + d.status().message());
  return *d;
}

// PlanRequest::mtbf and friends -> the what-if study (nullopt without an MTBF).
StatusOr<std::optional<GoodputWhatIf>> ResolveGoodput(const PlanRequest& q, std::vector<Note>& notes) {
  if (q.mtbf.empty()) {
    if (!q.checkpoint_time.empty() || !q.restart_time.empty())
      return InvalidArgumentError(Param(q.checkpoint_time.empty() ? "restart_time" : "checkpoint_time") + " needs " +
                                  Param("mtbf"));
    return std::optional<GoodputWhatIf>();
  }
  GoodputWhatIfRequest r;
  StatusOr<double> m = ParseDuration(q.mtbf);
  if (!m.ok())
    return InvalidArgumentError(Param("mtbf") + ": " + m.status().message());
  r.mtbf_s = *m;
  // section 2.5's worked example (telemetry-goodput-inference.md): 60 s, 10 min.
  MFU_ASSIGN_OR_RETURN(r.checkpoint_time_s,
                       PlanDuration(q.checkpoint_time, "checkpoint_time", 60, "blocking checkpoint time", notes));
  MFU_ASSIGN_OR_RETURN(r.restart_time_s, PlanDuration(q.restart_time, "restart_time", 600, "restart time", notes));
  MFU_ASSIGN_OR_RETURN(GoodputWhatIf w, GoodputWhatIfStudy(r));
  for (Note& n : w.notes)
    notes.push_back(std::move(n));
  return std::optional<GoodputWhatIf>(std::move(w));
}

// The search bounds the best configuration sits on (a wider bound may find
// a faster one), the cluster's price taken for the cost, a predicted figure
// above the peak.
void AddPlanNotes(const ResolvedTraining& s, const PlanRequest& q, const PlanOptions& o, PlanStudy& study) {
  if (study.plan.top.empty())
    return;
  const Prediction& best = study.plan.top[0];
  const TrainingConfig& c = best.config;
  auto bound = [&study](const std::string& what, int64_t value, const std::string& param) {
    study.notes.push_back({NoteKind::kAssumption, "search_bound",
                           "the best configuration uses the largest " + what + " searched (" + std::to_string(value) +
                               "); a faster one may lie beyond it: widen " + Param(param)});
  };
  const auto max_mbs = std::max_element(o.micro_batches.begin(), o.micro_batches.end());
  if (c.micro_batch > 1 && c.micro_batch == *max_mbs)
    bound("micro-batch", c.micro_batch, "mbs");
  if (c.pp > 1 && c.vpp > 1 && c.vpp * 2 > o.max_vpp)
    bound("interleave (virtual stages)", c.vpp, "max_vpp");
  if (c.cp > 1 && c.cp * 2 > o.max_cp)
    bound("context parallel size", c.cp, "max_cp");
  if (IsUnsetPrice(q.price_per_gpu_hour) && study.budget.tokens > 0 && study.budget.price_per_gpu_hour > 0 &&
      s.cluster != nullptr) {
    char price[32];
    std::snprintf(price, sizeof price, "$%.2f", study.budget.price_per_gpu_hour);
    study.notes.push_back({NoteKind::kAssumption, "default_price",
                           "price not given: cluster " + s.cluster->id + "'s " + price +
                               " per GPU-hour (data/clusters/clusters.csv); give " + Param("price_per_gpu_hour") +
                               " for yours"});
  }
  for (const Prediction& p : study.plan.top) {
    if (std::optional<Note> n = CheckUtilizationPlausible(p.utilization, kPredictedAbovePeakCauses)) {
      study.notes.push_back(std::move(*n));
      break;
    }
  }
}

}  // namespace

StatusOr<PlanStudy> RunPlanStudy(const ResolvedTraining& s, const PlanRequest& q) {
  MFU_ASSIGN_OR_RETURN(PlanOptions options, ResolvePlanOptions(s, q));
  PlanStudy study;
  MFU_ASSIGN_OR_RETURN(study.budget, ResolveBudget(s, q));
  std::vector<Note> goodput_notes;
  MFU_ASSIGN_OR_RETURN(study.goodput, ResolveGoodput(q, goodput_notes));
  if (study.goodput && std::isfinite(study.goodput->intervals.goodput_daly) &&
      study.goodput->intervals.goodput_daly > 0)
    study.budget.goodput = study.goodput->intervals.goodput_daly;
  const PerfModel& model = *s.perf;
  const auto t0 = std::chrono::steady_clock::now();
  MFU_ASSIGN_OR_RETURN(study.plan, PlanTraining(model, options));
  study.search_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MFU_ASSIGN_OR_RETURN(study.scaling, PlanScaling(model, options, q.scaling));
  if (study.plan.top.empty() && s.cluster != nullptr)
    study.fits_at_gpus = FindSmallestFittingGpus(model, options);
  if (study.budget.tokens > 0) {
    for (const Prediction& p : study.plan.top)
      study.time_to_train.push_back(TimeToTrain(p, model.setup().gpus, study.budget));
  }
  study.has_runner_up = study.plan.top.size() >= 2;
  if (study.has_runner_up)
    study.difference = ExplainDifference(study.plan.top[0], study.plan.top[1]);
  study.notes = s.notes;
  study.notes.insert(study.notes.end(), goodput_notes.begin(), goodput_notes.end());
  AddPlanNotes(s, q, options, study);
  return study;
}

}  // namespace mfu
