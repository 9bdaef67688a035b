// Renderers of `mfu log`: text, JSON and CSV of one LogAnalysis.

#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"
#include "mfu/report_log.h"
#include "report/json_common.h"
#include "report/table.h"

namespace mfu {
namespace {

using nlohmann::json;

json Num(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}
json Int(int64_t v, int64_t none) {
  return v == none ? json(nullptr) : json(v);
}
std::string Pct(double fraction) {
  return std::isfinite(fraction) ? report::Percent(fraction) : "-";
}
std::string Fix(double v, int decimals) {
  return std::isfinite(v) ? report::Fixed(v, decimals) : "-";
}
std::string Count(double v) {
  return std::isfinite(v) ? base::FormatThousands(std::round(v)) : "-";
}
std::string CsvField(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "";
}
std::string CsvQuoted(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos)
    return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"')
      out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Sourced(const std::string& value, const std::string& source) {
  return source.empty() ? value : value + " (" + source + ")";
}

std::string Known(int64_t v, const std::string& source, const char* flag) {
  return v > 0 ? Sourced(base::FormatThousands(static_cast<double>(v)), source)
               : std::string("unknown (pass ") + flag + ")";
}

void PrintInputs(std::ostream& out, const LogAnalysis& a, int width) {
  const LogTimeline& t = a.timeline;
  out << report::LabelLine("log",
                           fmt::format("{}: {}, {} step lines, {} attempt{}", t.origin, LogFormatId(t.format),
                                       t.steps.size(), t.attempts, t.attempts == 1 ? "" : "s"),
                           width);
  out << report::LabelLine("model", a.model_name.empty() ? "unknown (pass --model)"
                                                         : Sourced(a.model_name, a.model_source),
                           width);
  out << report::LabelLine(
      "gpu",
      a.gpu ? Sourced(fmt::format("{}, dense {} {:.1f} TFLOP/s", a.gpu->display_name(), DTypeName(a.precision),
                                  a.peak_flops / 1e12),
                      a.gpu_source)
            : std::string("unknown (pass --gpu)"),
      width);
  out << report::LabelLine("gpus", Known(a.gpus, a.gpus_source, "--gpus"), width);
  out << report::LabelLine("seq len", Known(a.seq_len, a.seq_len_source, "--seq-len"), width);
  out << report::LabelLine("batch", Known(a.global_batch, a.global_batch_source, "--global-batch"), width);
  out << report::LabelLine("precision", Sourced(DTypeName(a.precision), a.precision_source), width);
  out << report::LabelLine("recompute", Sourced(RecomputeName(a.recompute), a.recompute_source), width);
  std::string flops = "-";
  if (a.model_flops_per_token > 0) {
    flops = fmt::format("{} per token under {} ({}); megatron {}; hardware (recompute) {}",
                        report::Sci(a.model_flops_per_token), ConventionName(a.convention), a.convention_source,
                        report::Sci(a.megatron_flops_per_token), report::Sci(a.hardware_flops_per_token));
  }
  out << report::LabelLine("FLOPs", flops, width);
  out << report::LabelLine("throughput", a.throughput_source, width);
}

void PrintSteady(std::ostream& out, const LogAnalysis& a, int width) {
  const LogSteadyState& s = a.steady_state;
  if (s.first_step < 0) {
    out << report::LabelLine("steady", "no steady window (the step lines carry no throughput)", width);
    return;
  }
  out << report::LabelLine(
      "steady",
      fmt::format("steps {}-{} ({} lines): MFU {} ({}), megatron {}, HFU {}; {} tokens/s per GPU, {} TFLOP/s per "
                  "GPU; logged MFU {}, logged {} TFLOP/s",
                  s.first_step, s.last_step, s.step_lines, Pct(s.mfu), ConventionName(a.convention),
                  Pct(s.mfu_megatron), Pct(s.hfu), Count(s.tokens_per_s_per_gpu), Fix(s.tflops_per_gpu, 1),
                  Pct(s.logged_mfu), Fix(s.logged_tflops_per_gpu, 1)),
      width);
}

void PrintFindings(std::ostream& out, const LogAnalysis& a, int width) {
  if (a.findings.empty()) {
    out << "none\n";
    return;
  }
  const bool several = a.timeline.origin.find(", ") != std::string::npos;
  report::Table t({"line", "step", "kind", "finding"});
  for (const LogFinding& f : a.findings) {
    std::string where = f.line > 0 ? std::to_string(f.line) : "-";
    if (several && f.line > 0)
      where = f.origin + ":" + where;
    std::string message = f.message;
    if (!f.evidence.empty())
      message += " | " + f.evidence;
    t.AddRow({where, f.step >= 0 ? std::to_string(f.step) : "-", f.kind, message});
  }
  t.Print(out, width);
}

// Indices of the rows the text table shows: all, or `kLogTextMaxSteps`
// evenly spaced with the first and last.
std::vector<size_t> SampledRows(size_t n) {
  std::vector<size_t> rows;
  if (n <= kLogTextMaxSteps) {
    for (size_t i = 0; i < n; ++i)
      rows.push_back(i);
    return rows;
  }
  for (size_t k = 0; k < kLogTextMaxSteps; ++k)
    rows.push_back(k * (n - 1) / (kLogTextMaxSteps - 1));
  return rows;
}

void PrintSteps(std::ostream& out, const LogAnalysis& a, int width) {
  const auto& steps = a.timeline.steps;
  const std::vector<size_t> rows = SampledRows(steps.size());
  if (rows.size() < steps.size())
    out << fmt::format("({} of {} step lines, evenly sampled; --json or --csv lists every one)\n", rows.size(),
                       steps.size());
  report::Table t({"step", "line", "att", "step s", "tok/s/GPU", "TFLOP/s", "MFU", "megatron", "HFU", "logged TF",
                   "logged MFU", "loss"});
  for (size_t i : rows) {
    const LogStep& s = steps[i];
    t.AddRow({std::to_string(s.step) + (s.validation ? " eval" : ""), std::to_string(s.line),
              std::to_string(s.attempt), Fix(s.step_time_s, 3), Count(s.tokens_per_s_per_gpu),
              Fix(s.tflops_per_gpu, 1), Pct(s.mfu), Pct(s.mfu_megatron), Pct(s.hfu), Fix(s.logged_tflops_per_gpu, 1),
              Pct(s.logged_mfu), Fix(s.loss, 4)});
  }
  t.Print(out, width);
}

json StepJson(const LogStep& s) {
  return {{"step", s.step},
          {"line", s.line},
          {"attempt", s.attempt},
          {"validation", s.validation},
          {"steps_covered", s.steps_covered},
          {"time_s", Num(s.time_s)},
          {"step_time_s", Num(s.step_time_s)},
          {"tokens_per_s_per_gpu", Num(s.tokens_per_s_per_gpu)},
          {"tokens_per_s", Num(s.tokens_per_s)},
          {"samples_per_s", Num(s.samples_per_s)},
          {"loss", Num(s.loss)},
          {"grad_norm", Num(s.grad_norm)},
          {"learning_rate", Num(s.learning_rate)},
          {"skipped_iterations", s.skipped_iterations},
          {"logged_tflops_per_gpu", Num(s.logged_tflops_per_gpu)},
          {"logged_mfu", Num(s.logged_mfu)},
          {"logged_total_flos", Num(s.logged_total_flos)},
          {"tflops_per_gpu", Num(s.tflops_per_gpu)},
          {"mfu", Num(s.mfu)},
          {"mfu_megatron", Num(s.mfu_megatron)},
          {"hfu", Num(s.hfu)}};
}

json SteadyJson(const LogSteadyState& s) {
  return {{"first_step", Int(s.first_step, -1)},
          {"last_step", Int(s.last_step, -1)},
          {"step_lines", s.step_lines},
          {"mfu", Num(s.mfu)},
          {"mfu_megatron", Num(s.mfu_megatron)},
          {"hfu", Num(s.hfu)},
          {"logged_mfu", Num(s.logged_mfu)},
          {"tokens_per_s_per_gpu", Num(s.tokens_per_s_per_gpu)},
          {"step_time_s", Num(s.step_time_s)},
          {"tflops_per_gpu", Num(s.tflops_per_gpu)},
          {"logged_tflops_per_gpu", Num(s.logged_tflops_per_gpu)}};
}

json Source(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

json InputsJson(const LogAnalysis& a) {
  return {{"model", a.model_name.empty() ? json(nullptr) : json(a.model_name)},
          {"model_source", Source(a.model_source)},
          {"gpu", a.gpu ? report::GpuJson(*a.gpu) : json(nullptr)},
          {"gpu_source", Source(a.gpu_source)},
          {"gpus", Int(a.gpus, 0)},
          {"gpus_source", Source(a.gpus_source)},
          {"seq_len", Int(a.seq_len, 0)},
          {"seq_len_source", Source(a.seq_len_source)},
          {"global_batch", Int(a.global_batch, 0)},
          {"global_batch_source", Source(a.global_batch_source)},
          {"convention", report::ConventionJson(a.convention)},
          {"convention_source", a.convention_source},
          {"precision", DTypeName(a.precision)},
          {"precision_source", a.precision_source},
          {"recompute", RecomputeName(a.recompute)},
          {"recompute_source", a.recompute_source},
          {"peak_flops_per_s", a.peak_flops > 0 ? json(a.peak_flops) : json(nullptr)},
          {"model_flops_per_token", a.model_flops_per_token > 0 ? json(a.model_flops_per_token) : json(nullptr)},
          {"megatron_flops_per_token",
           a.megatron_flops_per_token > 0 ? json(a.megatron_flops_per_token) : json(nullptr)},
          {"hardware_flops_per_token",
           a.hardware_flops_per_token > 0 ? json(a.hardware_flops_per_token) : json(nullptr)}};
}

}  // namespace

std::string RenderLogText(const LogAnalysis& a, const TextOptions& options) {
  std::ostringstream out;
  const int width = options.width;
  PrintInputs(out, a, width);
  PrintSteady(out, a, width);
  out << "\nFindings\n";
  PrintFindings(out, a, width);
  out << "\nSteps\n";
  PrintSteps(out, a, width);
  if (!a.notes.empty()) {
    out << "\n";
    report::PrintNotes(out, a.notes, width);
  }
  return out.str();
}

std::string RenderLogJson(const LogAnalysis& a) {
  const LogTimeline& t = a.timeline;
  json j = report::JsonEnvelope();
  j["origin"] = t.origin;
  j["format"] = LogFormatId(t.format);
  j["attempts"] = t.attempts;
  j["throughput_source"] = a.throughput_source;
  j["inputs"] = InputsJson(a);
  j["steady_state"] = SteadyJson(a.steady_state);
  j["findings"] = json::array();
  for (const LogFinding& f : a.findings) {
    j["findings"].push_back({{"kind", f.kind},
                             {"step", Int(f.step, -1)},
                             {"line", Int(f.line, 0)},
                             {"attempt", Int(f.attempt, -1)},
                             {"origin", f.origin.empty() ? json(nullptr) : json(f.origin)},
                             {"message", f.message},
                             {"evidence", f.evidence}});
  }
  j["steps"] = json::array();
  for (const LogStep& s : t.steps)
    j["steps"].push_back(StepJson(s));
  j["read"] = {{"bytes", t.stats.bytes},
               {"lines", t.stats.lines},
               {"step_lines", t.stats.step_lines},
               {"duplicate_lines", t.stats.duplicate_lines},
               {"partial_lines", t.stats.partial_lines},
               {"header_lines", t.stats.header_lines},
               {"ranks_seen", t.stats.ranks_seen},
               {"chosen_rank", t.stats.chosen_rank},
               {"formats_seen", t.stats.formats_seen}};
  j["notes"] = report::NotesJson(a.notes);
  return report::JsonText(j);
}

std::vector<std::pair<std::string, std::string>> RenderLogCsv(const LogAnalysis& a) {
  std::string steps =
      "step,line,attempt,validation,time_s,step_time_s,tokens_per_s_per_gpu,tokens_per_s,samples_per_s,loss,"
      "logged_tflops_per_gpu,logged_mfu,tflops_per_gpu,mfu,mfu_megatron,hfu\n";
  for (const LogStep& s : a.timeline.steps) {
    steps += base::Join({std::to_string(s.step), std::to_string(s.line), std::to_string(s.attempt),
                         s.validation ? "1" : "0", CsvField(s.time_s), CsvField(s.step_time_s),
                         CsvField(s.tokens_per_s_per_gpu), CsvField(s.tokens_per_s), CsvField(s.samples_per_s),
                         CsvField(s.loss), CsvField(s.logged_tflops_per_gpu), CsvField(s.logged_mfu),
                         CsvField(s.tflops_per_gpu), CsvField(s.mfu), CsvField(s.mfu_megatron), CsvField(s.hfu)},
                        ",");
    steps += "\n";
  }
  std::string findings = "kind,step,line,origin,message,evidence\n";
  for (const LogFinding& f : a.findings) {
    findings += base::Join({f.kind, f.step >= 0 ? std::to_string(f.step) : "", f.line > 0 ? std::to_string(f.line) : "",
                            CsvQuoted(f.origin), CsvQuoted(f.message), CsvQuoted(f.evidence)},
                           ",");
    findings += "\n";
  }
  return {{"steps.csv", std::move(steps)}, {"findings.csv", std::move(findings)}};
}

}  // namespace mfu
