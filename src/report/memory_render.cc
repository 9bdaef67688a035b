// The `mfu memory` report (mfu/report_count.h).

#include <fmt/format.h>

#include <sstream>
#include <string>

#include "base/strings.h"
#include "mfu/report_count.h"
#include "report/json_common.h"
#include "report/memory_common.h"
#include "report/table.h"

namespace mfu {

std::string report::OptimizerNote(const TrainingStateDtypes& d) {
  std::string note = d.moments_per_param == 1 ? "sgd: " : "adam: ";
  if (d.fp32_master && d.weights != DType::kFp32)
    note += "fp32 master + ";
  if (d.fp32_grad_copy && d.main_grads != DType::kFp32)
    note += "fp32 grad copy + ";
  return note +
         fmt::format("{} {} moment{}", d.moments_per_param, DTypeName(d.moments), d.moments_per_param == 1 ? "" : "s");
}

namespace {

using nlohmann::json;
using report::JsonInt;
using report::OptimizerNote;

std::string StateLine(const MemoryReport& e) {
  const TrainingStateDtypes& d = e.dtypes;
  // The default, when taken, is stated by the note "default_state".
  return fmt::format("{}: weights {}, main grads {}, {} = {} B/param unsharded", e.state, d.WeightsName(),
                     d.MainGradsName(), OptimizerNote(d), base::FormatNumber(e.state_bytes_per_param));
}

std::string LayoutLine(const ParallelLayout& l, const TrainingMemoryPerGpu& g) {
  return fmt::format(
      "{} GPU{}: tp {} pp {}{} cp {} dp {}{} zero {}; most loaded stage: {} layers, {} of {} micro-batch{} in flight",
      l.gpus, l.gpus == 1 ? "" : "s", l.tp, l.pp, l.vpp > 1 ? fmt::format(" (vpp {})", l.vpp) : "", l.cp, g.dp,
      l.ep * l.etp > 1 ? fmt::format(" ep {} etp {}", l.ep, l.etp) : "", l.zero_stage,
      base::FormatNumber(g.layers_per_stage), base::FormatNumber(g.micro_batches_in_flight), l.micro_batches,
      l.micro_batches == 1 ? "" : "es");
}

// ", / 8 (ZeRO-1)" when stage `from` shards this part over more than one rank.
std::string ShardNote(int zero, int from, double shard) {
  return zero >= from && shard > 1 ? fmt::format(", / {} (ZeRO-{})", base::FormatNumber(shard), zero) : "";
}

report::Table TrainingTable(const MemoryReport& e) {
  const TrainingMemoryPerGpu& g = e.per_gpu;
  const TrainingMemory& u = e.unsharded;
  const TrainingStateDtypes& d = e.dtypes;
  const int zero = e.layout.zero_stage;
  using report::Bytes;
  report::Table t({"memory", "per GPU", "unsharded", "note"});
  std::string weights_note = d.WeightsName() + ShardNote(zero, 3, g.sharding.dense_shard);
  if (zero >= 3)
    weights_note += fmt::format(" + 2 gathered layers in {}", DTypeName(d.compute));
  t.AddRow({"weights", Bytes(g.state.weights_bytes), Bytes(u.weights_bytes), weights_note});
  t.AddRow({"gradients", Bytes(g.state.gradients_bytes), Bytes(u.gradients_bytes),
            d.MainGradsName() + ShardNote(zero, 2, g.sharding.dense_shard)});
  t.AddRow({"optimizer states", Bytes(g.state.optimizer_bytes), Bytes(u.optimizer_bytes),
            OptimizerNote(d) + ShardNote(zero, 1, g.sharding.dense_shard)});
  t.AddRow(
      {"activations / layer", Bytes(g.activations_per_layer_bytes), Bytes(u.activations_per_layer_bytes),
       fmt::format("per TP{} rank, micro-batch {}, recompute {}{}", e.layout.cp > 1 ? "/CP" : "", e.options.micro_batch,
                   RecomputeName(e.options.recompute), e.options.flash_attention ? ", flash" : "")});
  t.AddRow({"activations (layers)", Bytes(g.activations_bytes - g.output_layer_activations_bytes),
            Bytes(u.activations_bytes), "per GPU: the stage's layers x micro-batches in flight"});
  t.AddRow({"output layer + logits", Bytes(g.output_layer_activations_bytes), Bytes(u.output_layer_activations_bytes),
            e.layout.pp > 1 ? "fp32 logits (not on the first stage)" : "fp32 logits"});
  t.AddSeparator();
  t.AddRow({"total", Bytes(g.total_bytes()), Bytes(u.total_bytes()),
            "before framework buffers, allocator slack, CUDA context"});
  return t;
}

json PerGpuJson(const ParallelLayout& l, const TrainingMemoryPerGpu& g) {
  return {{"weights_bytes", JsonInt(g.state.weights_bytes)},
          {"gradients_bytes", JsonInt(g.state.gradients_bytes)},
          {"optimizer_bytes", JsonInt(g.state.optimizer_bytes)},
          {"activations_per_layer_bytes", JsonInt(g.activations_per_layer_bytes)},
          {"activations_bytes", JsonInt(g.activations_bytes)},
          {"output_layer_activations_bytes", JsonInt(g.output_layer_activations_bytes)},
          {"total_bytes", JsonInt(g.total_bytes())},
          {"dense_params", JsonInt(g.dense_params)},
          {"expert_params", JsonInt(g.expert_params)},
          {"layers_per_stage", g.layers_per_stage},
          {"micro_batches_in_flight", g.micro_batches_in_flight},
          {"layout",
           {{"gpus", l.gpus},
            {"tp", l.tp},
            {"pp", l.pp},
            {"vpp", l.vpp},
            {"cp", l.cp},
            {"dp", g.dp},
            {"ep", l.ep},
            {"etp", l.etp},
            {"zero", l.zero_stage},
            {"micro_batches", l.micro_batches}}}};
}

json TrainingJson(const MemoryReport& e) {
  const TrainingMemory& mem = e.per_rank;
  const TrainingMemoryOptions& m = e.options;
  return {{"weights_bytes", JsonInt(mem.weights_bytes)},
          {"gradients_bytes", JsonInt(mem.gradients_bytes)},
          {"optimizer_bytes", JsonInt(mem.optimizer_bytes)},
          {"activations_per_layer_bytes", JsonInt(mem.activations_per_layer_bytes)},
          {"activations_bytes", JsonInt(mem.activations_bytes)},
          {"output_layer_activations_bytes", JsonInt(mem.output_layer_activations_bytes)},
          {"total_bytes", JsonInt(e.unsharded.total_bytes())},
          {"state_bytes_per_param", e.state_bytes_per_param},
          {"seq_len", m.seq_len},
          {"state", e.state},
          {"optimizer", e.optimizer},
          {"weight_dtype", e.dtypes.WeightsName()},
          {"grad_dtype", e.dtypes.MainGradsName()},
          {"micro_batch", m.micro_batch},
          {"recompute", RecomputeName(m.recompute)},
          {"flash_attention", m.flash_attention},
          {"tp", m.tensor_parallel},
          {"sp", m.sequence_parallel}};
}

}  // namespace

std::string RenderMemoryText(const MemoryReport& e, const TextOptions& text_options) {
  std::ostringstream out;
  report::PrintModelSummary(out, e.model, e.params, text_options.width);
  out << report::LabelLine("state", StateLine(e), text_options.width);
  out << report::LabelLine("layout", LayoutLine(e.layout, e.per_gpu), text_options.width);
  report::PrintNotes(out, e.notes, text_options.width);
  out << "\n";
  TrainingTable(e).Print(out, text_options.width);
  if (e.kv_cache) {
    report::Table kv({"KV cache", "bytes", "note"});
    kv.AddRow({"per token", report::Bytes(e.kv_cache->bytes_per_token), DTypeName(e.kv_dtype)});
    kv.AddRow({"per sequence", report::Bytes(e.kv_cache->bytes_per_sequence),
               fmt::format("context {} (sliding windows capped)", e.kv_context)});
    out << "\n";
    kv.Print(out, text_options.width);
  }
  return out.str();
}

std::string RenderMemoryJson(const MemoryReport& e) {
  json j = report::JsonEnvelope();
  j["model"] = report::ModelJson(e.model);
  j["params"] = report::ParamsJson(e.params);
  j["training"] = TrainingJson(e);
  j["per_gpu"] = PerGpuJson(e.layout, e.per_gpu);
  if (e.kv_cache) {
    j["kv_cache"] = {{"dtype", DTypeName(e.kv_dtype)},
                     {"bytes_per_token", JsonInt(e.kv_cache->bytes_per_token)},
                     {"context", e.kv_context},
                     {"bytes_per_sequence", JsonInt(e.kv_cache->bytes_per_sequence)}};
  }
  j["notes"] = report::NotesJson(e.notes);
  return report::JsonText(j);
}

}  // namespace mfu
