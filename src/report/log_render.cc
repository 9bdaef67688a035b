// Renderers of `mfu log`: text, JSON and CSV of one LogAnalysis.

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "mfu/report_log.h"
#include "report/json_common.h"
#include "report/table.h"

namespace mfu {
namespace {

using nlohmann::json;

json Int(int64_t v, int64_t none) {
  return v == none ? json(nullptr) : json(v);
}
std::string Count(double v) {
  return std::isfinite(v) ? base::FormatThousands(std::round(v)) : "-";
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

// What the reader passes to give an input the log lacks.
std::string Unknown(const std::string& parameter) {
  return "unknown (pass " + parameter + ")";
}

std::string Known(int64_t v, const std::string& source, const std::string& parameter) {
  return v > 0 ? Sourced(base::FormatThousands(static_cast<double>(v)), source) : Unknown(parameter);
}

void PrintInputs(std::ostream& out, const LogAnalysis& a, const TextOptions& text) {
  const int width = text.width;
  const LogTimeline& t = a.timeline;
  out << report::LabelLine("log",
                           fmt::format("{}: {}, {} step lines, {} attempt{}", t.origin, LogFormatId(t.format),
                                       t.steps.size(), t.attempts, t.attempts == 1 ? "" : "s"),
                           width);
  out << report::LabelLine(
      "model", a.model_name.empty() ? Unknown(text.Parameter("model")) : Sourced(a.model_name, a.model_source), width);
  out << report::LabelLine("gpu",
                           a.gpu ? Sourced(fmt::format("{}, dense {} {:.1f} TFLOP/s", a.gpu->display_name(),
                                                       DTypeName(a.precision), a.peak_flops / 1e12),
                                           a.gpu_source)
                                 : Unknown(text.Parameter("gpu")),
                           width);
  out << report::LabelLine("gpus", Known(a.gpus, a.gpus_source, text.Parameter("gpus")), width);
  out << report::LabelLine("seq len", Known(a.seq_len, a.seq_len_source, text.Parameter("seq_len")), width);
  out << report::LabelLine("batch", Known(a.global_batch, a.global_batch_source, text.Parameter("global_batch")),
                           width);
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
      fmt::format("steps {}-{} ({} line{}): MFU {} ({}), megatron {}, HFU {}; {} tokens/s per GPU, {} TFLOP/s per "
                  "GPU; logged MFU {}, logged {} TFLOP/s",
                  s.first_step, s.last_step, s.step_lines, s.step_lines == 1 ? "" : "s", report::PercentOrDash(s.mfu),
                  ConventionName(a.convention), report::PercentOrDash(s.mfu_megatron), report::PercentOrDash(s.hfu),
                  Count(s.tokens_per_s_per_gpu), report::FixedOrDash(s.tflops_per_gpu, 1),
                  report::PercentOrDash(s.logged_mfu), report::FixedOrDash(s.logged_tflops_per_gpu, 1)),
      width);
}

void PrintFindings(std::ostream& out, const LogAnalysis& a, const TextOptions& text) {
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
    std::string message = text.Spelled(f.message);
    if (!f.evidence.empty())
      message += " | " + f.evidence;
    t.AddRow({where, f.step >= 0 ? std::to_string(f.step) : "-", f.kind, message});
  }
  t.Print(out, text.width);
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

void PrintSteps(std::ostream& out, const LogAnalysis& a, const TextOptions& text) {
  const int width = text.width;
  const auto& steps = a.timeline.steps;
  const std::vector<size_t> rows = SampledRows(steps.size());
  if (rows.size() < steps.size())
    out << fmt::format("({} of {} step lines, evenly sampled; {} or {} lists every one)\n", rows.size(), steps.size(),
                       text.Parameter("json"), text.Parameter("csv"));
  report::Table t({"step", "line", "att", "step s", "tok/s/GPU", "TFLOP/s", "MFU", "megatron", "HFU", "logged TF",
                   "logged MFU", "loss"});
  for (size_t i : rows) {
    const LogStep& s = steps[i];
    t.AddRow({std::to_string(s.step) + (s.validation ? " eval" : ""), std::to_string(s.line), std::to_string(s.attempt),
              report::FixedOrDash(s.step_time_s, 3), Count(s.tokens_per_s_per_gpu),
              report::FixedOrDash(s.tflops_per_gpu, 1), report::PercentOrDash(s.mfu),
              report::PercentOrDash(s.mfu_megatron), report::PercentOrDash(s.hfu),
              report::FixedOrDash(s.logged_tflops_per_gpu, 1), report::PercentOrDash(s.logged_mfu),
              report::FixedOrDash(s.loss, 4)});
  }
  t.Print(out, width);
}

json SteadyJson(const LogSteadyState& s) {
  return {{"first_step", Int(s.first_step, -1)},
          {"last_step", Int(s.last_step, -1)},
          {"step_lines", s.step_lines},
          {"mfu", report::JsonNumber(s.mfu)},
          {"mfu_megatron", report::JsonNumber(s.mfu_megatron)},
          {"hfu", report::JsonNumber(s.hfu)},
          {"logged_mfu", report::JsonNumber(s.logged_mfu)},
          {"tokens_per_s_per_gpu", report::JsonNumber(s.tokens_per_s_per_gpu)},
          {"step_time_s", report::JsonNumber(s.step_time_s)},
          {"model_flops_per_s_per_gpu", report::JsonNumber(s.tflops_per_gpu * 1e12)},
          {"logged_flops_per_s_per_gpu", report::JsonNumber(s.logged_tflops_per_gpu * 1e12)}};
}

json Source(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

json InputsJson(const LogAnalysis& a) {
  return {
      {"model", a.model ? report::ModelJson(*a.model) : json(nullptr)},
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
      {"megatron_flops_per_token", a.megatron_flops_per_token > 0 ? json(a.megatron_flops_per_token) : json(nullptr)},
      {"hardware_flops_per_token", a.hardware_flops_per_token > 0 ? json(a.hardware_flops_per_token) : json(nullptr)}};
}

// Output is gathered here and handed to the stream in pieces of about
// kFlushBytes: the document is never held whole, whatever the step count.
constexpr size_t kFlushBytes = size_t{1} << 16;

class StreamBuffer {
 public:
  explicit StreamBuffer(std::ostream& out) : out_(out) {}
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  ~StreamBuffer() { Flush(); }

  void Append(std::string_view s) { buffer_.append(s.data(), s.data() + s.size()); }
  auto Out() { return std::back_inserter(buffer_); }
  void MaybeFlush() {
    if (buffer_.size() >= kFlushBytes)
      Flush();
  }
  void Flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  std::ostream& out_;
  fmt::memory_buffer buffer_;
};

// A double exactly as nlohmann::json dumps one (its to_chars: shortest
// round-trip digits, "1024.0" for integral values, "1e-05"), so that the
// streamed steps read byte for byte as the document the DOM printed;
// null when not finite, as report::JsonNumber() gives.
void AppendNumber(StreamBuffer& b, double v) {
  if (!std::isfinite(v)) {
    b.Append("null");
    return;
  }
  std::array<char, 64> digits{};
  const char* end = nlohmann::detail::to_chars(digits.data(), digits.data() + digits.size(), v);
  b.Append(std::string_view(digits.data(), static_cast<size_t>(end - digits.data())));
}

// `"key": ` at the depth of a step's members (inside steps[], inside the
// document: 6 spaces).
void StepKey(StreamBuffer& b, std::string_view key) {
  b.Append(",\n      \"");
  b.Append(key);
  b.Append("\": ");
}

void StepNumber(StreamBuffer& b, std::string_view key, double v) {
  StepKey(b, key);
  AppendNumber(b, v);
}

void StepInt(StreamBuffer& b, std::string_view key, int64_t v) {
  StepKey(b, key);
  fmt::format_to(b.Out(), "{}", v);
}

// One element of steps[] without building a DOM; the keys in the order
// nlohmann's std::map printed them (sorted), which the streaming test
// checks by re-dumping the parsed document.
void AppendStep(StreamBuffer& b, const LogStep& s) {
  fmt::format_to(b.Out(), "    {{\n      \"attempt\": {}", s.attempt);
  StepNumber(b, "grad_norm", s.grad_norm);
  StepNumber(b, "hfu", s.hfu);
  StepNumber(b, "learning_rate", s.learning_rate);
  StepInt(b, "line", s.line);
  StepNumber(b, "logged_flops_per_s_per_gpu", s.logged_tflops_per_gpu * 1e12);
  StepNumber(b, "logged_mfu", s.logged_mfu);
  StepNumber(b, "logged_total_flos", s.logged_total_flos);
  StepNumber(b, "loss", s.loss);
  StepNumber(b, "mfu", s.mfu);
  StepNumber(b, "mfu_megatron", s.mfu_megatron);
  StepNumber(b, "model_flops_per_s_per_gpu", s.tflops_per_gpu * 1e12);
  StepNumber(b, "samples_per_s", s.samples_per_s);
  StepInt(b, "skipped_iterations", s.skipped_iterations);
  StepInt(b, "step", s.step);
  StepNumber(b, "step_time_s", s.step_time_s);
  StepInt(b, "steps_covered", s.steps_covered);
  StepNumber(b, "time_s", s.time_s);
  StepNumber(b, "tokens_per_s", s.tokens_per_s);
  StepNumber(b, "tokens_per_s_per_gpu", s.tokens_per_s_per_gpu);
  StepKey(b, "validation");
  b.Append(s.validation ? "true\n    }" : "false\n    }");
}

json FindingJson(const LogFinding& f) {
  return {{"kind", f.kind},
          {"step", Int(f.step, -1)},
          {"line", Int(f.line, 0)},
          {"attempt", Int(f.attempt, -1)},
          {"origin", f.origin.empty() ? json(nullptr) : json(f.origin)},
          {"message", f.message},
          {"evidence", f.evidence}};
}

// `value` dumped as JsonText does, its continuation lines indented by
// `indent` more spaces (a dumped string never holds a raw newline).
void AppendIndented(StreamBuffer& b, const json& value, size_t indent) {
  const std::string text = value.dump(2, ' ', false, json::error_handler_t::replace);
  size_t at = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', at)) {
    b.Append(std::string_view(text).substr(at, nl + 1 - at));
    for (size_t k = 0; k < indent; ++k)
      b.Append(" ");
    at = nl + 1;
  }
  b.Append(std::string_view(text).substr(at));
}

// A top-level array of the document, written one element at a time.
template <typename T, typename AppendElement>
void AppendArray(StreamBuffer& b, const std::vector<T>& items, AppendElement append) {
  if (items.empty()) {
    b.Append("[]");
    return;
  }
  b.Append("[\n");
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0)
      b.Append(",\n");
    append(items[i]);
    b.MaybeFlush();
  }
  b.Append("\n  ]");
}

// The CSV steps row of one step.
void AppendCsvField(StreamBuffer& b, double v) {
  b.Append(",");
  if (std::isfinite(v))
    fmt::format_to(b.Out(), "{:.6g}", v);
}

}  // namespace

std::string RenderLogText(const LogAnalysis& a, const TextOptions& options) {
  std::ostringstream out;
  const int width = options.width;
  PrintInputs(out, a, options);
  PrintSteady(out, a, width);
  out << "\nFindings\n";
  PrintFindings(out, a, options);
  out << "\nSteps\n";
  PrintSteps(out, a, options);
  if (!a.notes.empty()) {
    out << "\n";
    report::PrintNotes(out, a.notes, options);
  }
  return out.str();
}

std::string RenderLogJson(const LogAnalysis& a) {
  std::ostringstream out;
  WriteLogJson(a, out);
  return out.str();
}

void WriteLogJson(const LogAnalysis& a, std::ostream& out) {
  const LogTimeline& t = a.timeline;
  // The small members as a DOM (sorted keys, as before); steps[] and
  // findings[] are placeholders streamed in their sorted place.
  json j = report::JsonEnvelope();
  j["origin"] = t.origin;
  j["format"] = LogFormatId(t.format);
  j["attempts"] = t.attempts;
  j["throughput_source"] = a.throughput_source;
  j["inputs"] = InputsJson(a);
  j["steady_state"] = SteadyJson(a.steady_state);
  j["findings"] = nullptr;
  j["steps"] = nullptr;
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
  StreamBuffer b(out);
  b.Append("{\n");
  size_t left = j.size();
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    b.Append("  ");
    b.Append(json(key).dump());
    b.Append(": ");
    if (key == "steps") {
      AppendArray(b, t.steps, [&](const LogStep& s) { AppendStep(b, s); });
    } else if (key == "findings") {
      AppendArray(b, a.findings, [&](const LogFinding& f) {
        b.Append("    ");
        AppendIndented(b, FindingJson(f), 4);
      });
    } else {
      AppendIndented(b, it.value(), 2);
    }
    b.Append(--left > 0 ? ",\n" : "\n");
  }
  b.Append("}\n");
}

void WriteLogStepsCsv(const LogAnalysis& a, std::ostream& out) {
  StreamBuffer b(out);
  b.Append(
      "step,line,attempt,validation,time_s,step_time_s,tokens_per_s_per_gpu,tokens_per_s,samples_per_s,loss,"
      "logged_tflops_per_gpu,logged_mfu,tflops_per_gpu,mfu,mfu_megatron,hfu\n");
  for (const LogStep& s : a.timeline.steps) {
    fmt::format_to(b.Out(), "{},{},{},{}", s.step, s.line, s.attempt, s.validation ? '1' : '0');
    for (double v : {s.time_s, s.step_time_s, s.tokens_per_s_per_gpu, s.tokens_per_s, s.samples_per_s, s.loss,
                     s.logged_tflops_per_gpu, s.logged_mfu, s.tflops_per_gpu, s.mfu, s.mfu_megatron, s.hfu})
      AppendCsvField(b, v);
    b.Append("\n");
    b.MaybeFlush();
  }
}

void WriteLogFindingsCsv(const LogAnalysis& a, std::ostream& out) {
  StreamBuffer b(out);
  b.Append("kind,step,line,origin,message,evidence\n");
  for (const LogFinding& f : a.findings) {
    b.Append(base::Join({f.kind, f.step >= 0 ? std::to_string(f.step) : "", f.line > 0 ? std::to_string(f.line) : "",
                         CsvQuoted(f.origin), CsvQuoted(f.message), CsvQuoted(f.evidence)},
                        ","));
    b.Append("\n");
    b.MaybeFlush();
  }
}

std::vector<std::pair<std::string, std::string>> RenderLogCsv(const LogAnalysis& a) {
  std::ostringstream steps, findings;
  WriteLogStepsCsv(a, steps);
  WriteLogFindingsCsv(a, findings);
  return {{"steps.csv", steps.str()}, {"findings.csv", findings.str()}};
}

}  // namespace mfu
