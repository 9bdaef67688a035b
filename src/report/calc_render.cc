// The `mfu calc` report (mfu/report_count.h).

#include <fmt/format.h>

#include <sstream>
#include <string>

#include "mfu/report_count.h"
#include "report/json_common.h"
#include "report/table.h"

namespace mfu {

std::string RenderCalcText(const CalcReport& c, const TextOptions& text_options) {
  const MfuResult& r = c.result;
  const MfuOptions& options = c.options;
  const auto gpus = c.throughput.gpus;
  std::ostringstream out;
  out << fmt::format("model       {} ({})\n", c.model.name, c.model.family);
  out << fmt::format("hardware    {} x {} ({}), dense {} peak {} TFLOP/s per GPU\n", gpus, c.gpu->id,
                     c.gpu->display_name(), DTypeName(options.precision), report::Fixed(r.peak_tflops, 1));
  out << fmt::format("convention  {}; recompute {}; sequence {}\n", ConventionName(options.convention),
                     RecomputeName(options.recompute), c.throughput.seq_len);
  out << fmt::format("throughput  {} tokens/s per GPU ({} tokens/s in all)\n\n",
                     report::Fixed(r.tokens_per_s_per_gpu, 1),
                     report::Fixed(r.tokens_per_s_per_gpu * static_cast<double>(gpus), 0));
  report::PrintNotes(out, c.notes, text_options.width);
  if (!c.notes.empty())
    out << "\n";
  report::Table table({"metric", "value", "note"});
  table.AddRow({"model FLOPs per token", report::Sci(r.flops.model_per_token), ConventionName(options.convention)});
  table.AddRow({"hardware FLOPs per token", report::Sci(r.flops.hardware_per_token),
                std::string("model FLOPs + recompute ") + RecomputeName(options.recompute)});
  table.AddRow({"achieved TFLOP/s per GPU", report::Fixed(r.model_tflops_per_gpu, 1), "model FLOPs"});
  table.AddRow({"MFU", report::Percent(r.mfu), r.band});
  table.AddRow({"HFU", report::Percent(r.hfu), "includes recomputed FLOPs"});
  table.Print(out, text_options.width);
  return out.str();
}

std::string RenderCalcJson(const CalcReport& c) {
  const MfuResult& r = c.result;
  nlohmann::json j = report::JsonEnvelope();
  j["model"] = report::ModelJson(c.model);
  j["gpu"] = report::GpuJson(*c.gpu);
  j["gpus"] = c.throughput.gpus;
  j["convention"] = report::ConventionJson(c.options.convention);
  j["recompute"] = RecomputeName(c.options.recompute);
  j["precision"] = DTypeName(c.options.precision);
  j["seq_len"] = c.throughput.seq_len;
  j["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
  j["tokens_per_s"] = r.tokens_per_s_per_gpu * static_cast<double>(c.throughput.gpus);
  j["model_flops_per_token"] = r.flops.model_per_token;
  j["hardware_flops_per_token"] = r.flops.hardware_per_token;
  j["utilization"] = report::UtilizationJson(c.utilization);
  j["mfu"] = r.mfu;
  j["hfu"] = r.hfu;
  j["band"] = MfuBandCode(r.mfu);
  j["notes"] = report::NotesJson(c.notes);
  return report::JsonText(j);
}

}  // namespace mfu
