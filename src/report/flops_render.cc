// The `mfu flops` report (mfu/report_count.h).

#include <fmt/format.h>

#include <sstream>
#include <string>

#include "base/strings.h"
#include "mfu/report_count.h"
#include "report/json_common.h"
#include "report/table.h"

namespace mfu {
namespace {

using nlohmann::json;

void PrintComponents(std::ostream& out, const FlopsBreakdown& f, int width) {
  report::Table table({"component", "forward FLOPs/token", "share"});
  const double total = f.total();
  for (size_t i = 0; i < kNumFlopsComponents; ++i) {
    auto c = static_cast<FlopsComponent>(i);
    if (!(f[c] > 0) && c != FlopsComponent::kLmHead)
      continue;
    table.AddRow({FlopsComponentName(c), report::Sci(f[c]), report::Percent(total > 0 ? f[c] / total : 0)});
  }
  table.AddSeparator();
  table.AddRow({"forward total", report::Sci(total), "100.0%"});
  table.Print(out, width);
}

json ComponentsJson(const FlopsBreakdown& f) {
  json j = json::object();
  for (size_t i = 0; i < kNumFlopsComponents; ++i)
    j[FlopsComponentName(static_cast<FlopsComponent>(i))] = f.forward[i];
  return j;
}

std::string ConventionLine(Convention convention, int width) {
  return report::LabelLine("convention",
                           fmt::format("{}: {}", ConventionName(convention), ConventionSummary(convention)), width);
}

void PrintTraining(std::ostream& out, const FlopsReport& r, int width) {
  const TrainingFlops& t = *r.training;
  const double tokens = static_cast<double>(r.batch) * static_cast<double>(r.seq_len);
  out << ConventionLine(r.convention, width);
  out << fmt::format("sequence    {} tokens x batch {}; recompute {}\n\n", r.seq_len, r.batch,
                     RecomputeName(r.recompute));
  PrintComponents(out, t.forward, width);
  out << "\n";
  report::Table table({"training (" + std::string(ConventionName(r.convention)) + ")", "per token", "per step"});
  table.AddRow(
      {"model FLOPs (3x forward, MFU)", report::Sci(t.model_per_token), report::Sci(t.model_per_token * tokens)});
  table.AddRow({"recompute FLOPs", report::Sci(t.recompute_per_token), report::Sci(t.recompute_per_token * tokens)});
  table.AddRow({"hardware FLOPs (HFU)", report::Sci(t.hardware_per_token), report::Sci(t.hardware_per_token * tokens)});
  table.Print(out, width);
}

void PrintAllConventions(std::ostream& out, const FlopsReport& r, int width) {
  report::Table table({"convention", "training FLOPs/token", "vs megatron", "what it counts"});
  double reference = 0;
  for (const ConventionCount& row : r.conventions) {
    if (!row.flops) {
      table.AddRow({row.info->name, "n/a", "", row.error});
      continue;
    }
    if (row.info->convention == Convention::kMegatron)
      reference = row.flops->model_per_token;
    const double ratio = reference > 0 ? row.flops->model_per_token / reference : 0;
    table.AddRow({row.info->name, report::Sci(row.flops->model_per_token), report::Fixed(ratio, 3), row.info->summary});
  }
  out << "\n";
  table.Print(out, width);
}

void PrintInference(std::ostream& out, const FlopsReport& r, int width) {
  const InferenceFlops& f = *r.inference_flops;
  const std::string what =
      r.inference == "prefill"
          ? fmt::format("prefill of {} tokens on {} cached, batch {}", r.seq_len, r.cached, r.batch)
          : fmt::format("decode step at context {}, batch {}", r.context, r.batch);
  out << ConventionLine(r.convention, width);
  out << fmt::format("inference   {}; MLA {}\n\n", what, r.mla);
  PrintComponents(out, f.per_token, width);
  out << fmt::format("\ntokens {}  total FLOPs {}\n", base::FormatThousands(f.tokens), report::Sci(f.total));
}

void AddTrainingJson(const FlopsReport& r, json& j) {
  const TrainingFlops& t = *r.training;
  const double tokens = static_cast<double>(r.batch) * static_cast<double>(r.seq_len);
  j["recompute"] = RecomputeName(r.recompute);
  j["flops_per_token"] = {{"forward", t.forward.total()},
                          {"training", t.model_per_token},
                          {"recompute", t.recompute_per_token},
                          {"hardware", t.hardware_per_token},
                          {"components_forward", ComponentsJson(t.forward)}};
  j["flops_per_step"] = {{"training", t.model_per_token * tokens}, {"hardware", t.hardware_per_token * tokens}};
  if (r.conventions.empty())
    return;
  json rows = json::array();
  for (const ConventionCount& row : r.conventions) {
    rows.push_back(row.flops ? json{{"name", row.info->name},
                                    {"training", row.flops->model_per_token},
                                    {"hardware", row.flops->hardware_per_token}}
                             : json{{"name", row.info->name}, {"error", row.error}});
  }
  j["conventions"] = rows;
}

}  // namespace

std::string RenderFlopsText(const FlopsReport& r, const TextOptions& text_options) {
  std::ostringstream out;
  report::PrintModelSummary(out, r.model, r.params, text_options.width);
  report::PrintNotes(out, r.notes, text_options.width);
  if (r.inference_flops) {
    PrintInference(out, r, text_options.width);
  } else {
    PrintTraining(out, r, text_options.width);
    if (!r.conventions.empty())
      PrintAllConventions(out, r, text_options.width);
  }
  return out.str();
}

std::string RenderFlopsJson(const FlopsReport& r) {
  json j = report::JsonEnvelope();
  j["model"] = report::ModelJson(r.model);
  j["params"] = report::ParamsJson(r.params);
  if (r.inference != "decode")
    j["seq_len"] = r.seq_len;
  j["batch"] = r.batch;
  j["convention"] = report::ConventionJson(r.convention);
  if (const auto& f = r.inference_flops) {
    j["inference"] = {{"mode", r.inference},
                      {"mla", r.mla},
                      {"context", r.context},
                      {"cached", r.cached},
                      {"tokens", report::JsonInt(f->tokens)},
                      {"flops_per_token", f->per_token.total()},
                      {"flops_total", f->total},
                      {"components_forward", ComponentsJson(f->per_token)}};
  } else {
    AddTrainingJson(r, j);
  }
  j["notes"] = report::NotesJson(r.notes);
  return report::JsonText(j);
}

}  // namespace mfu
