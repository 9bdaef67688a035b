// The `mfu infer` report (mfu/report_infer.h).

#include <fmt/format.h>

#include <cmath>
#include <sstream>
#include <string>

#include "base/strings.h"
#include "mfu/report_infer.h"
#include "report/json_common.h"
#include "report/table.h"

namespace mfu {
namespace {

using nlohmann::json;
using report::Fixed;
using report::JsonInt;
using report::LabelLine;
using report::Percent;
using report::WrapParagraph;

// ------------------------------------------------------------------- text

// The framework, its schedule, and whether the prediction is validated.
void PrintFramework(std::ostream& o, const InferenceResult& r, int width) {
  const InferenceSetup& s = r.setup;
  const ServingSchedule& p = s.schedule;
  const std::string budget = base::FormatThousands(p.token_budget);
  std::string how;
  if (p.mixed) {
    how = p.chunked_prefill ? "prompt chunks fill what decode tokens leave of " + budget + " tokens per pass"
                            : "whole prompts share passes with decode tokens, up to " + budget + " tokens";
  } else {
    how = (p.chunked_prefill ? "prompts in chunks of " + budget + " tokens"
                             : "whole prompts, up to " + budget + " tokens per pass") +
          ", in passes apart from decode";
  }
  o << LabelLine(
      "framework",
      fmt::format("{} ({} attention): {}; batch cap {}{}", s.framework.name, AttentionKernelName(s.framework.attention),
                  how, base::FormatThousands(s.max_batch), s.attention_dp ? " per attention rank" : ""),
      width);
  if (!r.validity.validated)
    o << LabelLine("note", r.validity.note, width);
}

// The steady state's rounds: what decodes, how often prompt work joins.
std::string RoundsLine(const InferenceSetup& s, const WorkloadResult& w, int width) {
  if (w.decode_batch <= 0)
    return LabelLine("rounds", fmt::format("prompts only: {} tokens per pass", base::FormatThousands(w.prefill_tokens)),
                     width);
  if (s.schedule.mixed) {
    return LabelLine("rounds",
                     fmt::format("{} requests decoding; {} of rounds also carry {} prompt tokens",
                                 base::FormatThousands(w.decode_batch), Percent(w.prefill_round_share),
                                 base::FormatThousands(w.prefill_tokens)),
                     width);
  }
  return LabelLine("rounds",
                   fmt::format("{} requests decoding; {:.3f} prefill passes of {} tokens per decode pass",
                               base::FormatThousands(w.decode_batch), w.prefill_round_share,
                               base::FormatThousands(w.prefill_tokens)),
                   width);
}

void PrintMix(std::ostream& o, const InferenceResult& r, int width) {
  o << "\nworkload (each shape at its largest batch, one shape at a time)\n";
  report::Table t({"input", "output", "requests", "batch", "tokens/s", "TTFT ms", "TPOT ms", "MFU", "MBU"});
  for (size_t i = 0; i < r.pairs.size(); ++i) {
    const WorkloadResult& w = r.mix->pairs[i];
    t.AddRow({base::FormatThousands(r.pairs[i].input_len), base::FormatThousands(r.pairs[i].output_len),
              base::FormatThousands(r.pairs[i].requests), base::FormatThousands(w.batch),
              Fixed(w.output_tokens_per_s, 0), Fixed(w.ttft_s * 1e3, 1), Fixed(w.tpot_s * 1e3, 2), Percent(w.mfu),
              Percent(w.mbu)});
  }
  t.Print(o, width);
  o << WrapParagraph(fmt::format("mix (requests weighted as given): {} output tokens/s, MFU {}, MBU {}",
                                 Fixed(r.mix->output_tokens_per_s, 0), Percent(r.mix->mfu), Percent(r.mix->mbu)),
                     width);
}

void PrintMixOnly(std::ostream& o, const InferenceResult& r, int width) {
  const InferenceSetup& s = r.setup;
  o << LabelLine("model", fmt::format("{} ({} layers)", r.model->name, r.model->num_layers), width);
  o << LabelLine("hardware",
                 fmt::format("{} x {} (tp {} pp {}), weights {}, KV cache {}, KV capacity {} tokens", r.gpus, s.gpu->id,
                             s.tp, s.pp, DTypeName(s.weight_dtype), DTypeName(s.kv_dtype),
                             base::FormatThousands(r.memory.kv_capacity_tokens)),
                 width);
  PrintFramework(o, r, width);
  report::PrintNotes(o, r.notes, width);
  PrintMix(o, r, width);
}

void PrintHeader(std::ostream& o, const InferenceResult& r, int width) {
  const ModelSpec& spec = *r.model;
  const InferenceSetup& s = r.setup;
  o << LabelLine(
      "model",
      fmt::format("{} ({} layers{})", spec.name, spec.num_layers,
                  spec.is_moe() ? fmt::format(", {} experts top-{}", spec.moe.num_experts, spec.moe.top_k) : ""),
      width);
  o << LabelLine("hardware",
                 fmt::format("{} x {} (tp {} pp {}{}), weights {}, KV cache {}", r.gpus, s.gpu->id, s.tp, s.pp,
                             fmt::format("{}{}", s.ep > 1 ? fmt::format(" ep {}", s.ep) : "",
                                         s.attention_dp ? ", attention DP" : ""),
                             DTypeName(s.weight_dtype), DTypeName(s.kv_dtype)),
                 width);
  PrintFramework(o, r, width);
  o << LabelLine("workload",
                 fmt::format("input {} + output {} tokens per request; FLOPs convention {}", r.input_len, r.output_len,
                             ConventionName(s.convention)),
                 width);
  report::PrintNotes(o, r.notes, width);
  o << "\n";
}

void PrintMemory(std::ostream& o, const InferenceResult& r, int width) {
  const InferenceMemory& mem = r.memory;
  const InferenceSetup& s = r.setup;
  report::Table mt({"memory per GPU", "value"});
  mt.AddRow({"weights", report::Bytes(mem.weights_bytes)});
  mt.AddRow({"reserved (context, activations, buffers)", report::Bytes(mem.reserved_bytes)});
  mt.AddRow({"KV cache per token", report::Bytes(mem.kv_bytes_per_token)});
  mt.AddRow({s.attention_dp ? fmt::format("KV capacity (90% of the rest, {} ranks)", s.tp)
                            : std::string("KV capacity (90% of the rest)"),
             base::FormatThousands(mem.kv_capacity_tokens) + " tokens"});
  const auto tokens = static_cast<double>(r.input_len + r.output_len);
  mt.AddRow({"concurrent requests that fit", base::FormatThousands(std::floor(mem.kv_capacity_tokens / tokens))});
  mt.Print(o, width);
}

void PrintSweeps(std::ostream& o, const InferenceResult& r, int width) {
  o << "\ndecode at the mean context (" << base::FormatThousands(r.mean_context) << " tokens)\n";
  report::Table dt({"batch", "TPOT ms", "tokens/s", "MFU", "MBU", "bound"});
  for (const DecodePoint& p : r.decode_sweep) {
    dt.AddRow({base::FormatThousands(static_cast<double>(p.batch)), Fixed(p.step.time_s * 1e3, 2),
               Fixed(p.output_tokens_per_s, 0), Percent(p.mfu), Percent(p.mbu),
               p.step.compute_bound ? "compute" : "memory"});
  }
  dt.Print(o, width);
  o << (r.compute_bound_batch > 0
            ? fmt::format("decode becomes compute-bound at batch {}\n", base::FormatThousands(r.compute_bound_batch))
            : std::string("decode stays memory-bound up to the batch cap\n"));
  o << "\nprefill of one request\n";
  report::Table pt({"prompt tokens", "time ms", "MFU"});
  for (const PrefillPoint& p : r.prefill_sweep) {
    pt.AddRow(
        {base::FormatThousands(static_cast<double>(p.prompt_len)), Fixed(p.step.time_s * 1e3, 2), Percent(p.mfu)});
  }
  pt.Print(o, width);
}

std::string DrafterText(const SpeculativeReport& s) {
  return s.drafter.empty() ? "self-drafting heads" : s.drafter;
}

void PrintSpeculativeAndMeasured(std::ostream& o, const InferenceResult& r, int width) {
  if (r.speculative) {
    const SpeculativeResult& s = r.speculative->result;
    o << "\n"
      << WrapParagraph(fmt::format("speculative decoding: k {}, acceptance {}, drafter {}", r.speculative->draft_tokens,
                                   r.speculative->acceptance, DrafterText(*r.speculative)),
                       width);
    o << LabelLine("",
                   fmt::format("{:.2f} tokens per verify step, TPOT {} ms ({:.2f}x), model-FLOPs utilization {}, "
                               "hardware-FLOPs utilization {} (rejected positions and drafting included)",
                               s.tokens_per_step, Fixed(s.tpot_s * 1e3, 2), s.speedup, Percent(s.mfu), Percent(s.hfu)),
                   width);
  }
  if (r.measured) {
    o << "\n"
      << WrapParagraph(fmt::format("measured {} output tokens/s at batch {}: MFU {}, MBU {}",
                                   Fixed(r.measured->output_tokens_per_s, 0), base::FormatThousands(r.measured->batch),
                                   Percent(r.measured->mfu), Percent(r.measured->mbu)),
                       width);
  }
  if (const auto& t = r.measured_ttft) {
    o << WrapParagraph(
        fmt::format("measured TTFT {} ms (predicted {} ms): prefill MFU {}, MBU {}", Fixed(t->seconds * 1e3, 2),
                    Fixed(t->predicted_s * 1e3, 2), Percent(t->mfu), Percent(t->mbu)),
        width);
  }
  if (const auto& t = r.measured_tpot) {
    o << WrapParagraph(fmt::format("measured TPOT {} ms at batch {} (predicted {} ms): decode MFU {}, MBU {}",
                                   Fixed(t->seconds * 1e3, 2), base::FormatThousands(r.workload.batch),
                                   Fixed(t->predicted_s * 1e3, 2), Percent(t->mfu), Percent(t->mbu)),
                       width);
  }
}

// ------------------------------------------------------------------- JSON

// What every infer JSON names: model, GPU, layout, precisions, convention,
// framework, validation.
json HeaderJson(const InferenceResult& r) {
  const InferenceSetup& s = r.setup;
  json j = report::JsonEnvelope();
  j["model"] = report::ModelJson(*r.model);
  j["gpu"] = report::GpuJson(*s.gpu);
  j["gpus"] = r.gpus;
  j["layout"] = {{"tp", s.tp}, {"pp", s.pp}, {"ep", s.ep}, {"attention_dp", s.attention_dp}};
  j["precision"] = DTypeName(r.compute_dtype);
  j["weight_precision"] = DTypeName(s.weight_dtype);
  j["kv_precision"] = DTypeName(s.kv_dtype);
  j["convention"] = report::ConventionJson(s.convention);
  j["framework"] = {{"name", s.framework.name},
                    {"attention", AttentionKernelName(s.framework.attention)},
                    {"chunked_prefill", s.schedule.chunked_prefill},
                    {"mixed", s.schedule.mixed},
                    {"token_budget", JsonInt(s.schedule.token_budget)},
                    {"max_batch", JsonInt(s.max_batch)}};
  j["validation"] = {{"validated", r.validity.validated}, {"note", r.validity.note}};
  j["kv_capacity_tokens"] = JsonInt(std::floor(r.memory.kv_capacity_tokens));
  return j;
}

// The figures of one request shape at its batch.
json ShapeJson(const WorkloadResult& w) {
  return {{"batch", JsonInt(w.batch)},
          {"batch_reason", w.batch_reason},
          {"output_tokens_per_s", w.output_tokens_per_s},
          {"ttft_s", w.ttft_s},
          {"tpot_s", w.tpot_s},
          {"mfu", w.mfu},
          {"mbu", w.mbu}};
}

json MixJson(const InferenceResult& r) {
  json rows = json::array();
  for (size_t i = 0; i < r.pairs.size(); ++i) {
    json row = {{"input_len", JsonInt(r.pairs[i].input_len)},
                {"output_len", JsonInt(r.pairs[i].output_len)},
                {"requests", JsonInt(r.pairs[i].requests)}};
    row.update(ShapeJson(r.mix->pairs[i]));
    rows.push_back(row);
  }
  const WorkloadMix& m = *r.mix;
  return {
      {"pairs", rows},
      {"mix", {{"time_s", m.seconds}, {"output_tokens_per_s", m.output_tokens_per_s}, {"mfu", m.mfu}, {"mbu", m.mbu}}}};
}

json StepJson(const StepCost& c) {
  return {{"waterfall", report::WaterfallJson(c.waterfall)}, {"utilization", report::UtilizationJson(c.utilization)}};
}

json SweepsJson(const InferenceResult& r) {
  json j;
  j["decode_sweep"] = json::array();
  for (const DecodePoint& p : r.decode_sweep) {
    json row = {{"batch", p.batch},
                {"tpot_s", p.step.time_s},
                {"output_tokens_per_s", p.output_tokens_per_s},
                {"mfu", p.mfu},
                {"mbu", p.mbu},
                {"compute_bound", p.step.compute_bound}};
    row.update(StepJson(p.step));
    j["decode_sweep"].push_back(row);
  }
  j["prefill"] = json::array();
  for (const PrefillPoint& p : r.prefill_sweep) {
    json row = {{"prompt_len", p.prompt_len}, {"time_s", p.step.time_s}, {"mfu", p.mfu}};
    row.update(StepJson(p.step));
    j["prefill"].push_back(row);
  }
  return j;
}

json SpeculativeJson(const SpeculativeReport& s) {
  const json drafter = s.drafter.empty() ? json{{"kind", "self_drafting_heads"}, {"model", nullptr}}
                                         : json{{"kind", "model"}, {"model", s.drafter}};
  return {{"draft_tokens", s.draft_tokens},
          {"acceptance", s.acceptance},
          {"drafter", drafter},
          {"tokens_per_step", s.result.tokens_per_step},
          {"step_s", s.result.step_s},
          {"tpot_s", s.result.tpot_s},
          {"speedup", s.result.speedup},
          {"mfu", s.result.mfu},
          {"hfu", s.result.hfu}};
}

json MeasuredStepJson(const StepUtilization& u) {
  return {{"measured_s", u.seconds}, {"predicted_s", u.predicted_s}, {"mfu", u.mfu}, {"mbu", u.mbu}};
}

void AddSingleShapeJson(const InferenceResult& r, json& j) {
  const WorkloadResult& w = r.workload;
  j["input_len"] = r.input_len;
  j["output_len"] = r.output_len;
  j.update(ShapeJson(w));
  j["decode_batch"] = w.decode_batch;
  j["prefill_tokens"] = w.prefill_tokens;
  j["prefill_round_share"] = w.prefill_round_share;
  j["memory_per_gpu"] = {{"weights_bytes", JsonInt(r.memory.weights_bytes)},
                         {"kv_bytes_per_token", JsonInt(r.memory.kv_bytes_per_token)},
                         {"reserved_bytes", JsonInt(r.memory.reserved_bytes)},
                         {"capacity_bytes", JsonInt(r.memory.capacity_bytes)}};
  j["compute_bound_batch"] = r.compute_bound_batch > 0 ? json(JsonInt(r.compute_bound_batch)) : json(nullptr);
  j.update(SweepsJson(r));
  if (r.speculative)
    j["speculative"] = SpeculativeJson(*r.speculative);
  if (const auto& m = r.measured) {
    j["measured"] = {{"output_tokens_per_s", m->output_tokens_per_s},
                     {"batch", JsonInt(m->batch)},
                     {"mfu", m->mfu},
                     {"mbu", m->mbu}};
  }
  if (r.measured_ttft)
    j["measured_ttft"] = MeasuredStepJson(*r.measured_ttft);
  if (r.measured_tpot)
    j["measured_tpot"] = MeasuredStepJson(*r.measured_tpot);
}

}  // namespace

std::string RenderInferenceText(const InferenceResult& r, const TextOptions& text_options) {
  std::ostringstream o;
  if (!r.single_shape) {
    PrintMixOnly(o, r, text_options.width);
    return o.str();
  }
  const WorkloadResult& w = r.workload;
  PrintHeader(o, r, text_options.width);
  PrintMemory(o, r, text_options.width);
  o << "\n"
    << WrapParagraph(fmt::format("at batch {} ({}): {} output tokens/s, TTFT {} ms, TPOT {} ms, MFU {}, MBU {}",
                                 base::FormatThousands(w.batch), w.batch_reason, Fixed(w.output_tokens_per_s, 0),
                                 Fixed(w.ttft_s * 1e3, 1), Fixed(w.tpot_s * 1e3, 2), Percent(w.mfu), Percent(w.mbu)),
                     text_options.width);
  o << RoundsLine(r.setup, w, text_options.width);
  PrintSweeps(o, r, text_options.width);
  PrintSpeculativeAndMeasured(o, r, text_options.width);
  if (r.mix)
    PrintMix(o, r, text_options.width);
  return o.str();
}

std::string RenderInferenceJson(const InferenceResult& r) {
  json j = HeaderJson(r);
  if (r.single_shape)
    AddSingleShapeJson(r, j);
  if (r.mix)
    j["workload"] = MixJson(r);
  j["notes"] = report::NotesJson(r.notes);
  return report::JsonText(j);
}

}  // namespace mfu
