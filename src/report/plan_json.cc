// JSON of `mfu predict` and `mfu plan` (report_plan.h; layout: docs/cli.md
// "JSON layout (schema 3)", fields: docs/plan.md).

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "mfu/report_plan.h"
#include "report/json_common.h"

namespace mfu::report {
namespace {

using nlohmann::json;

json SetupJson(const ResolvedTraining& s) {
  const TrainingSetup& t = s.perf->setup();
  json j;
  j["model"] = ModelJson(s.model);
  j["gpu"] = GpuJson(*s.gpu);
  j["cluster"] = s.cluster != nullptr ? json(s.cluster->id) : json(nullptr);
  j["gpus"] = t.gpus;
  j["seq_len"] = t.seq_len;
  j["convention"] = ConventionJson(t.convention);
  j["precision"] = DTypeName(s.precision);
  j["efficiency_family"] = t.efficiency.family;
  j["validation"] = t.efficiency.training_validation;
  j["framework"] = {{"name", t.framework.name},
                    {"attention", AttentionKernelName(t.framework.attention)},
                    {"cp_mode", CpModeName(t.framework.cp_mode)},
                    {"ep_dispatch", EpDispatchName(t.framework.ep_dispatch)},
                    {"fp8_recipe", t.framework.fp8_recipe},
                    {"elementwise", ElementwiseName(t.framework.elementwise)}};
  j["moe_imbalance"] = s.moe_imbalance;
  return j;
}

json ConfigJson(const TrainingConfig& c) {
  return {{"tp", c.tp},
          {"pp", c.pp},
          {"dp", c.dp},
          {"cp", c.cp},
          {"ep", c.ep},
          {"etp", c.etp},
          {"vpp", c.vpp},
          {"micro_batch", c.micro_batch},
          {"global_batch", c.global_batch},
          {"recompute", RecomputeName(c.recompute)},
          {"zero", c.zero_stage},
          {"fsdp", c.fsdp},
          {"sequence_parallel", c.sequence_parallel},
          {"tp_comm_overlap", c.tp_comm_overlap},
          {"dp_overlap", c.dp_overlap}};
}

// Integer bytes; the total is the sum of the rounded parts, so it adds up.
json MemoryJson(const MemoryPerGpu& m) {
  const int64_t parts[] = {JsonInt(m.weights), JsonInt(m.gradients), JsonInt(m.optimizer), JsonInt(m.activations),
                           JsonInt(m.reserved)};
  return {{"weights_bytes", parts[0]},
          {"gradients_bytes", parts[1]},
          {"optimizer_bytes", parts[2]},
          {"activations_bytes", parts[3]},
          {"reserved_bytes", parts[4]},
          {"total_bytes", parts[0] + parts[1] + parts[2] + parts[3] + parts[4]},
          {"capacity_bytes", JsonInt(m.capacity)}};
}

json PredictionJson(const Prediction& p) {
  json j;
  j["config"] = ConfigJson(p.config);
  j["valid"] = p.issue == ConfigIssue::kOk || p.issue == ConfigIssue::kOutOfMemory;
  j["issue"] = ConfigIssueCode(p.issue);
  j["micro_batches"] = p.micro_batches;
  j["step_time_s"] = p.step_s;
  j["tokens_per_s"] = p.tokens_per_s;
  j["mfu"] = p.mfu;
  j["hfu"] = p.hfu;
  j["peak_flops_per_s"] = p.peak_flops;
  j["model_flops_per_token"] = p.model_flops_per_token;
  j["hardware_flops_per_token"] = p.hardware_flops_per_token;
  const StepBreakdown& b = p.breakdown;
  j["breakdown_s"] = {{"matrix", b.matrix_s},       {"attention", b.attention_s}, {"vector", b.vector_s},
                      {"recompute", b.recompute_s}, {"overhead", b.overhead_s},   {"optimizer", b.optimizer_s},
                      {"tp_comm", b.tp_comm_s},     {"cp_comm", b.cp_comm_s},     {"ep_comm", b.ep_comm_s},
                      {"pp_comm", b.pp_comm_s},     {"dp_comm", b.dp_comm_s},     {"bubble", b.bubble_s}};
  j["waterfall"] = WaterfallJson(p.waterfall);
  j["utilization"] = UtilizationJson(p.utilization);
  j["memory"] = MemoryJson(p.memory);
  // The stored dtypes counted (the framework's); a master or gradient copy
  // only where it is counted (not for fp32 weights or gradients).
  const TrainingStateDtypes& d = p.config.state;
  j["memory"]["state"] = {{"weight_dtype", d.WeightsName()},
                          {"compute_dtype", DTypeName(d.compute)},
                          {"grad_dtype", d.MainGradsName()},
                          {"fp32_master", d.fp32_master && d.weights != DType::kFp32},
                          {"fp32_grad_copy", d.fp32_grad_copy && d.main_grads != DType::kFp32},
                          {"moment_dtype", DTypeName(d.moments)},
                          {"moments", d.moments_per_param}};
  j["fits"] = p.memory.fits();
  return j;
}

json SearchJson(const PlanStudy& study) {
  const PlanResult& plan = study.plan;
  json issues = json::array();
  for (size_t i = 0; i < plan.by_issue.size(); ++i) {
    if (plan.by_issue[i] == 0)
      continue;
    const auto issue = static_cast<ConfigIssue>(i);
    issues.push_back(
        {{"issue", ConfigIssueCode(issue)}, {"message", ConfigIssueName(issue)}, {"count", plan.by_issue[i]}});
  }
  return {{"evaluated", plan.evaluated},
          {"fitting", plan.fitting},
          {"elapsed_s", study.search_seconds},
          {"by_issue", issues}};
}

// A difference's field as its key in `config` ("mbs" -> "micro_batch"); the
// text keeps the short name.
std::string ConfigKey(const std::string& field) {
  return field == "mbs" ? "micro_batch" : field;
}

json DifferenceJson(const ConfigDifference& d) {
  json fields = json::array();
  for (const ConfigDifference::Field& f : d.fields) {
    if (f.best_name.empty())
      fields.push_back({{"field", ConfigKey(f.field)}, {"best", f.best}, {"runner_up", f.runner_up}});
    else
      fields.push_back({{"field", ConfigKey(f.field)}, {"best", f.best_name}, {"runner_up", f.runner_up_name}});
  }
  json components = json::array();
  for (const ConfigDifference::Component& c : d.components)
    components.push_back({{"component", c.name}, {"delta_s", c.delta_s}});
  return {{"fields", fields}, {"step_delta_s", components}, {"summary", DifferenceSummary(d)}};
}

json TopJson(const PlanStudy& study) {
  json top = json::array();
  for (size_t i = 0; i < study.plan.top.size(); ++i) {
    json pj = PredictionJson(study.plan.top[i]);
    if (i < study.time_to_train.size()) {
      const TrainingTime& t = study.time_to_train[i];
      pj["time_to_train_days"] = t.days;
      if (study.goodput)
        pj["failure_free_days"] = t.failure_free_hours / 24;
      pj["gpu_hours"] = t.gpu_hours;
      if (study.budget.price_per_gpu_hour > 0)
        pj["cost_usd"] = t.cost_usd;
    }
    top.push_back(pj);
  }
  return top;
}

}  // namespace
}  // namespace mfu::report

namespace mfu {
using namespace report;  // this file's helpers and the shared JSON shapes

std::string RenderPredictJson(const ResolvedTraining& s, const PredictResult& r) {
  json j = JsonEnvelope();
  j["setup"] = SetupJson(s);
  j["derived"] = r.derived;
  j["notes"] = NotesJson(r.notes);
  j["prediction"] = PredictionJson(r.prediction);
  return JsonText(j);
}

std::string RenderPlanJson(const ResolvedTraining& s, const PlanStudy& study) {
  const PlanResult& plan = study.plan;
  json j = JsonEnvelope();
  j["setup"] = SetupJson(s);
  j["notes"] = NotesJson(study.notes);
  j["search"] = SearchJson(study);
  j["top"] = TopJson(study);
  if (study.goodput) {
    const GoodputWhatIf& g = *study.goodput;
    const auto num = report::JsonNumber;
    j["goodput"] = {{"mtbf_s", g.request.mtbf_s},
                    {"checkpoint_time_s", g.request.checkpoint_time_s},
                    {"restart_time_s", g.request.restart_time_s},
                    {"young_s", num(g.intervals.young_s)},
                    {"daly_s", num(g.intervals.daly_s)},
                    {"availability_optimal_s", num(g.intervals.availability_optimal_s)},
                    {"goodput_young", num(g.intervals.goodput_young)},
                    {"goodput_daly", num(g.intervals.goodput_daly)},
                    {"goodput_availability_optimal", num(g.intervals.goodput_availability_optimal)},
                    {"expected_goodput", study.budget.goodput}};
  }
  if (study.has_runner_up)
    j["best_vs_runner_up"] = DifferenceJson(study.difference);
  if (plan.top.empty()) {
    j["nothing_fits"] = {
        {"closest", plan.closest.issue == ConfigIssue::kOutOfMemory ? PredictionJson(plan.closest) : json(nullptr)},
        {"over_bytes", JsonInt(plan.closest_over_bytes)},
        {"fits_at_gpus", study.fits_at_gpus > 0 ? json(study.fits_at_gpus) : json(nullptr)}};
  }
  j["scaling"] = json::array();
  for (const ScalePoint& p : study.scaling) {
    j["scaling"].push_back({{"gpus", p.gpus},
                            {"kind", p.weak ? "weak" : "strong"},
                            {"global_batch", p.gbs},
                            {"best", p.found ? PredictionJson(p.best) : json(nullptr)}});
  }
  return JsonText(j);
}

}  // namespace mfu
