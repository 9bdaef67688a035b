#include "cli/plan_render.h"

#include <fmt/format.h>

#include <ostream>
#include <utility>

#include "report/table.h"

namespace mfu::cli {

std::string ConfigText(const TrainingConfig& c) {
  std::string s = fmt::format("tp={} pp={} dp={} cp={}", c.tp, c.pp, c.dp, c.cp);
  if (c.ep > 1 || c.etp > 1)
    s += fmt::format(" ep={} etp={}", c.ep, c.etp);
  if (c.vpp > 1)
    s += fmt::format(" vpp={}", c.vpp);
  s += fmt::format(" mbs={} gbs={} recompute={} {}", c.micro_batch, c.global_batch, RecomputeName(c.recompute),
                   c.fsdp ? std::string("fsdp") : "zero=" + std::to_string(c.zero_stage));
  if (c.tp > 1)
    s += c.sequence_parallel ? " sp" : " no-sp";
  if (c.tp_comm_overlap)
    s += " tp-overlap";
  if (!c.dp_overlap)
    s += " no-dp-overlap";
  return s;
}

std::vector<std::pair<std::string, double>> WaterfallBuckets(const Prediction& p) {
  const StepBreakdown& b = p.breakdown;
  const double matrix = b.matrix_s + b.attention_s + b.recompute_s;
  const double at_peak = p.peak_flops > 0 ? std::min(matrix, p.matrix_flops_per_step / p.peak_flops) : 0;
  return {
      {"idle", b.bubble_s + b.overhead_s},
      {"exposed_communication", b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.pp_comm_s + b.dp_comm_s},
      {"non_matrix_kernels", b.vector_s + b.optimizer_s},
      {"matrix_below_peak", matrix - at_peak},
      {"matrix_at_peak", at_peak},
  };
}

nlohmann::json SetupJson(const ResolvedSetup& s) {
  const TrainingSetup& t = s.perf->setup();
  nlohmann::json j;
  j["model"] = s.model.name;
  j["gpu"] = {{"id", s.gpu->id}, {"name", s.gpu->display_name()}};
  j["cluster"] = s.cluster != nullptr ? nlohmann::json(s.cluster->id) : nlohmann::json(nullptr);
  j["gpus"] = t.gpus;
  j["seq_len"] = t.seq_len;
  j["convention"] = ConventionName(t.convention);
  j["precision"] = DTypeName(s.precision);
  j["efficiency_family"] = t.efficiency.family;
  j["validation"] = t.efficiency.training_validation;
  j["framework"] = {{"name", t.framework.name},
                    {"attention", AttentionKernelName(t.framework.attention)},
                    {"cp_mode", CpModeName(t.framework.cp_mode)},
                    {"fp8_recipe", t.framework.fp8_recipe}};
  j["moe_imbalance"] = s.moe_imbalance;
  return j;
}

nlohmann::json ConfigJson(const TrainingConfig& c) {
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
          {"zero_stage", c.zero_stage},
          {"fsdp", c.fsdp},
          {"sequence_parallel", c.sequence_parallel},
          {"tp_comm_overlap", c.tp_comm_overlap},
          {"dp_overlap", c.dp_overlap}};
}

nlohmann::json PredictionJson(const Prediction& p) {
  nlohmann::json j;
  j["config"] = ConfigJson(p.config);
  j["valid"] = p.issue == ConfigIssue::kOk || p.issue == ConfigIssue::kOutOfMemory;
  j["issue"] = ConfigIssueName(p.issue);
  j["micro_batches"] = p.micro_batches;
  j["step_time_s"] = p.step_s;
  j["tokens_per_s"] = p.tokens_per_s;
  j["tflops_per_gpu"] = p.tflops_per_gpu;
  j["mfu"] = p.mfu;
  j["hfu"] = p.hfu;
  j["peak_tflops"] = p.peak_flops / 1e12;
  j["model_flops_per_token"] = p.model_flops_per_token;
  j["hardware_flops_per_token"] = p.hardware_flops_per_token;
  const StepBreakdown& b = p.breakdown;
  j["breakdown_s"] = {{"matrix", b.matrix_s},       {"attention", b.attention_s}, {"vector", b.vector_s},
                      {"recompute", b.recompute_s}, {"overhead", b.overhead_s},   {"optimizer", b.optimizer_s},
                      {"tp_comm", b.tp_comm_s},     {"cp_comm", b.cp_comm_s},     {"ep_comm", b.ep_comm_s},
                      {"pp_comm", b.pp_comm_s},     {"dp_comm", b.dp_comm_s},     {"bubble", b.bubble_s}};
  nlohmann::json w = nlohmann::json::object();
  for (const auto& [name, seconds] : WaterfallBuckets(p))
    w[name] = seconds;
  j["waterfall_s"] = w;
  const MemoryPerGpu& m = p.memory;
  j["memory_per_gpu_bytes"] = m.total();
  j["memory"] = {{"weights", m.weights},         {"gradients", m.gradients}, {"optimizer", m.optimizer},
                 {"activations", m.activations}, {"reserved", m.reserved},   {"capacity", m.capacity}};
  j["fits"] = m.fits();
  return j;
}

void PrintSetup(std::ostream& out, const ResolvedSetup& s) {
  const TrainingSetup& t = s.perf->setup();
  out << fmt::format(
      "model       {} ({} layers, hidden {}{})\n", s.model.name, s.model.num_layers, s.model.hidden,
      s.model.is_moe() ? fmt::format(", {} experts top-{}", s.model.moe.num_experts, s.model.moe.top_k) : "");
  out << fmt::format("hardware    {} x {} ({}){}\n", t.gpus, s.gpu->id, s.gpu->display_name(),
                     s.cluster != nullptr ? ", cluster " + s.cluster->id : std::string());
  out << fmt::format("setup       sequence {}, {} GEMMs, FLOPs convention {}, efficiency family '{}'\n", t.seq_len,
                     DTypeName(s.precision), ConventionName(t.convention), t.efficiency.family);
  out << fmt::format("framework   {} (attention {}, CP {}{})\n", t.framework.name,
                     AttentionKernelName(t.framework.attention), CpModeName(t.framework.cp_mode),
                     s.precision == DType::kFp8 ? ", FP8 " + t.framework.fp8_recipe : std::string());
  if (t.efficiency.training_validation != "validated") {
    out << fmt::format("validation  {}: family '{}' has no measured training runs; data/efficiency/validation.csv\n",
                       t.efficiency.training_validation, t.efficiency.family);
  }
}

void PrintPrediction(std::ostream& out, const Prediction& p, const ResolvedSetup& s) {
  (void)s;
  out << "config      " << ConfigText(p.config) << fmt::format(" ({} micro-batches per step)\n\n", p.micro_batches);
  report::Table summary({"metric", "value", "note"});
  summary.AddRow({"step time", report::Fixed(p.step_s, 3) + " s", ""});
  summary.AddRow({"tokens/s", report::Fixed(p.tokens_per_s, 0), "whole job"});
  summary.AddRow({"TFLOP/s per GPU", report::Fixed(p.tflops_per_gpu, 1), "model FLOPs"});
  summary.AddRow(
      {"MFU", report::Percent(p.mfu), fmt::format("of {} TFLOP/s dense", report::Fixed(p.peak_flops / 1e12, 0))});
  summary.AddRow({"HFU", report::Percent(p.hfu), "with recomputed FLOPs"});
  summary.Print(out);

  out << "\nstep breakdown (slowest GPU)\n";
  report::Table steps({"component", "seconds", "share"});
  const StepBreakdown& b = p.breakdown;
  for (auto [name, v] : {std::pair{"matrix (GEMM)", b.matrix_s},
                         {"attention core", b.attention_s},
                         {"vector ops", b.vector_s},
                         {"recompute", b.recompute_s},
                         {"kernel gaps", b.overhead_s},
                         {"optimizer", b.optimizer_s},
                         {"TP comm (exposed)", b.tp_comm_s},
                         {"CP comm (exposed)", b.cp_comm_s},
                         {"EP all-to-all (exposed)", b.ep_comm_s},
                         {"PP send/recv (exposed)", b.pp_comm_s},
                         {"DP/FSDP comm (exposed)", b.dp_comm_s},
                         {"pipeline bubble", b.bubble_s}}) {
    if (v > 0)
      steps.AddRow({name, report::Fixed(v, 4), report::Percent(v / p.step_s)});
  }
  steps.Print(out);

  out << "\nwaterfall (the buckets of 'mfu trace')\n";
  report::Table w({"bucket", "seconds", "share"});
  for (const auto& [name, v] : WaterfallBuckets(p))
    w.AddRow({name, report::Fixed(v, 4), report::Percent(v / p.step_s)});
  w.Print(out);

  out << "\nmemory per GPU\n";
  const MemoryPerGpu& m = p.memory;
  report::Table mem({"component", "bytes"});
  mem.AddRow({"weights", report::Bytes(m.weights)});
  mem.AddRow({"gradients", report::Bytes(m.gradients)});
  mem.AddRow({"optimizer states", report::Bytes(m.optimizer)});
  mem.AddRow({"activations", report::Bytes(m.activations)});
  mem.AddRow({"reserved (context, buffers)", report::Bytes(m.reserved)});
  mem.AddRow({"total", report::Bytes(m.total())});
  mem.AddRow({"capacity", report::Bytes(m.capacity)});
  mem.Print(out);
  out << (m.fits() ? fmt::format("fits, {} free\n", report::Bytes(m.capacity - m.total()))
                   : fmt::format("DOES NOT FIT: {} over\n", report::Bytes(m.total() - m.capacity)));
}

}  // namespace mfu::cli
