// mfu trace's terminal report: "why MFU is low" first (the verdict and the
// notes); for a multi-rank set the cross-rank summary, then the detail of the
// ranks asked for; per rank the time breakdown, kernel classes, the MFU
// waterfall and host phases; then the collectives. Lines fit
// TextOptions::width where the content allows (paths are never cut).

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "mfu/report_trace.h"
#include "mfu/trace_kernel_names.h"
#include "report/table.h"
#include "report/trace_common.h"

namespace mfu {
namespace {

using report::Us;

std::string Pct(double v) {
  return std::isfinite(v) ? report::Fixed(v, 1) + "%" : "n/a";
}
std::string UsText(int64_t ns) {
  return report::Fixed(Us(ns), 0);
}
double Share(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}
// An MFU in percent: two decimals below 1% (0.03%, not 0.0%).
std::string MfuPct(double fraction) {
  return std::isfinite(fraction) && fraction < 0.01 ? report::Fixed(100 * fraction, 2) + "%" : Pct(100 * fraction);
}

// `text` word-wrapped into lines of at most `width` columns (0: one line),
// the first starting with `first`, the others with `indent`. A word longer
// than the line stays whole.
void PrintWrapped(std::ostream& out, const std::string& first, const std::string& indent, const std::string& text,
                  int width) {
  std::string line = first;
  // A space goes before each word unless the line ends in one (the prefixes
  // may or may not).
  size_t words_on_line = 0;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    const bool space = !line.empty() && line.back() != ' ';
    const bool has_content = words_on_line > 0 || line.size() > indent.size();
    if (has_content && width > 0 && line.size() + (space ? 1 : 0) + word.size() > static_cast<size_t>(width)) {
      out << line << "\n";
      line = indent;
      words_on_line = 0;
    }
    line += (!line.empty() && line.back() != ' ' ? " " : "") + word;
    ++words_on_line;
  }
  out << line << "\n";
}

// A fraction as a signed percentage, "+0.0%" rather than "-0.0%".
std::string SignedPct(double fraction) {
  const double pct = std::abs(fraction) < 0.0005 ? 0.0 : 100 * fraction;
  return fmt::format("{:+.1f}%", pct);
}

std::string RankId(const RankAnalysis& r, size_t index) {
  return std::to_string(r.trace.rank >= 0 ? r.trace.rank : static_cast<int64_t>(index));
}

// "why MFU is low" over `v`: each loss with its share, why, and remedies.
void PrintVerdict(std::ostream& out, const JobVerdict& v, const std::string& scope, const TextOptions& text) {
  const int width = text.width;
  const bool waterfall = v.basis == VerdictBasis::kWaterfall;
  out << "why MFU is low (" << scope
      << (waterfall ? ", MFU waterfall" : ", GPU time breakdown: no peak, pass " + text.Parameter("gpu")) << "):\n";
  if (v.items.empty()) {
    out << "  no loss above 5% of the step" << (waterfall ? ": the matrix kernels run near the peak" : "") << "\n";
    return;
  }
  for (size_t i = 0; i < v.items.size(); ++i) {
    const VerdictItem& item = v.items[i];
    const VerdictRule& rule = *item.rule;
    PrintWrapped(
        out,
        fmt::format("  {}. {} {}: {} -", i + 1, WaterfallBucketName(rule.bucket), Pct(100 * item.share), rule.loss),
        "     ", rule.why, width);
    for (const char* const* r = rule.remedies; r < std::end(rule.remedies) && *r != nullptr; ++r)
      PrintWrapped(out, "     - ", "       ", text.Spelled(*r), width);
  }
}

void PrintJobNotes(std::ostream& out, const JobAnalysis& job, const TextOptions& text) {
  for (const Note& n : job.notes)
    PrintWrapped(out, n.kind == NoteKind::kWarning ? "warning:" : "assumed:", "  ", text.Spelled(n.message),
                 text.width);
}

void PrintTemporal(std::ostream& out, const RankAnalysis& r, int width) {
  const RankTrace& t = r.trace;
  const TemporalBreakdown& tb = r.main.temporal;
  const std::string head = fmt::format("rank {}  {}", t.rank, t.path);
  const std::string facts =
      fmt::format("({} events, {:.1f} MB; device {}{})", t.num_events(), static_cast<double>(t.input_bytes) / 1e6,
                  t.device_name().empty() ? "?" : t.device_name(), r.gpu ? " = " + r.gpu->id : "");
  if (width > 0 && head.size() + 2 + facts.size() > static_cast<size_t>(width)) {
    out << head << "\n  " << facts << "\n";
  } else {
    out << head << "  " << facts << "\n";
  }
  std::string window = fmt::format("{} ({}): GPU span {} us over {} GPU ops", r.main.window.name,
                                   BreakdownVariantName(r.main.variant), UsText(tb.span_ns), tb.num_gpu_ops);
  // What the accounting had to decide without the trace's help.
  if (r.main.unlinked_ops > 0)
    window += fmt::format("; {} with no launch link, placed by their own start time", r.main.unlinked_ops);
  if (tb.inverted_ops > 0)
    window += fmt::format("; {} shorter than the rounding (inverted intervals)", tb.inverted_ops);
  if (tb.clamped_ns > 0)
    window += fmt::format("; {} us moved from idle to keep non-compute >= 0", UsText(tb.clamped_ns));
  out << report::LabelLine("window", window, width);
  report::Table temporal({"time", "us", "share"});
  temporal.AddRow({"compute", UsText(tb.compute_ns), Pct(tb.compute_pct())});
  temporal.AddRow({"non-compute", UsText(tb.non_compute_ns), Pct(tb.non_compute_pct())});
  temporal.AddRow({"  exposed communication", UsText(tb.exposed_comm_ns), Pct(tb.Pct(tb.exposed_comm_ns))});
  temporal.AddRow({"  exposed memcpy", UsText(tb.exposed_memcpy_ns), Pct(tb.Pct(tb.exposed_memcpy_ns))});
  temporal.AddRow({"  exposed memset", UsText(tb.exposed_memset_ns), Pct(tb.Pct(tb.exposed_memset_ns))});
  temporal.AddRow({"idle", UsText(tb.idle_ns), Pct(tb.idle_pct())});
  temporal.AddSeparator();
  temporal.AddRow({"span", UsText(tb.span_ns), "100.0%"});
  temporal.Print(out);
  out << fmt::format("comm/compute overlap {}; unclassified kernels {} of the span\n\n",
                     Pct(r.main.overlap.overlap_pct), Pct(tb.Pct(tb.unclassified_ns)));
}

void PrintClasses(std::ostream& out, const RankAnalysis& r) {
  report::Table classes({"kernel class", "count", "time us", "TFLOP/s", "% of peak"});
  for (size_t c = 0; c < kNumKernelClasses; ++c) {
    const ClassTime& ct = r.main.classes[c];
    if (ct.count == 0)
      continue;
    const ClassFlops& f = r.flops.by_class[c];
    bool has_flops = f.with_flops_sum_ns > 0;
    classes.AddRow({KernelClassName(static_cast<KernelClass>(c)), std::to_string(ct.count), UsText(ct.union_ns),
                    has_flops ? report::Fixed(f.achieved_flops_per_s() / 1e12, 1) : "-",
                    has_flops && r.gpu ? Pct(100 * f.peak_fraction()) : "-"});
  }
  classes.Print(out);
  // With a waterfall, the coverage line follows it (the same numbers as its
  // matrix_unknown_flops bucket).
  if (!r.waterfall)
    out << fmt::format("FLOPs from shapes cover {} of matrix-kernel time\n", Pct(100 * r.flops.coverage()));
}

void PrintWaterfall(std::ostream& out, const RankAnalysis& r, int width) {
  if (!r.waterfall) {
    if (!r.accelerator_error.empty() || !r.waterfall_error.empty())
      out << "no MFU waterfall: " << (r.accelerator_error.empty() ? r.waterfall_error : r.accelerator_error) << "\n";
    return;
  }
  const StepWaterfall& w = *r.waterfall;
  out << fmt::format("\nMFU waterfall over {} ({} us, dense peaks of {}):\n", w.label, UsText(w.step_ns), r.gpu->id);
  report::Table wf({"bucket", "us", "share of step"});
  for (size_t b = 0; b < kNumWaterfallBuckets; ++b) {
    wf.AddRow({WaterfallBucketName(static_cast<WaterfallBucket>(b)), UsText(w.bucket_ns[b]),
               Pct(Share(w.bucket_ns[b], w.step_ns))});
  }
  wf.Print(out);
  const int64_t unknown = w[WaterfallBucket::kMatrixUnknownFlops];
  if (w.matrix_ns > 0) {
    PrintWrapped(out, fmt::format("FLOPs from shapes cover {} of matrix-kernel time;", Pct(100 * w.coverage)), "  ",
                 fmt::format("matrix_unknown_flops {} of {} us", UsText(unknown), UsText(w.matrix_ns)), width);
  }
  if (w.matrix_ns > 0 && w.matrix_with_flops_ns == 0) {
    PrintWrapped(out, "MFU (hardware FLOPs): unknown -", "  ", kRecordShapesHint, width);
    out << fmt::format("compute share {} x matrix share {} x matrix efficiency unknown\n", Pct(100 * w.compute_share),
                       Pct(100 * w.matrix_share));
  } else {
    PrintWrapped(out, fmt::format("MFU (hardware FLOPs) {}{} =", unknown > 0 ? "at least " : "", MfuPct(w.mfu_hw)),
                 "  ",
                 fmt::format("compute share {} x matrix share {} x matrix efficiency {}", Pct(100 * w.compute_share),
                             Pct(100 * w.matrix_share), Pct(100 * w.matrix_efficiency)),
                 width);
  }
  if (w.model) {
    // A stated bf16 on a V100: "vs fp16 peak (no bf16 listed)".
    const std::string peak =
        w.model->peak_fallback()
            ? fmt::format("{} peak (no {} listed)", DTypeName(w.model->peak_precision), DTypeName(w.model->precision))
            : fmt::format("{} peak", DTypeName(w.model->precision));
    out << fmt::format("model MFU {} (HFU {}) vs {}; executed/model FLOPs {:.3f}\n", MfuPct(w.model->mfu),
                       MfuPct(w.model->hfu), peak, w.model->executed_over_model);
  }
}

void PrintPhases(std::ostream& out, const RankAnalysis& r) {
  if (r.phases.empty())
    return;
  std::array<int64_t, kNumStepPhases> total{};
  int64_t step_total = 0;
  for (const auto& p : r.phases) {
    for (size_t k = 0; k < kNumStepPhases; ++k)
      total[k] += p.phase_ns[k];
    step_total += p.step_ns();
  }
  out << fmt::format("\nhost time per step ({} steps, {} us on the training loop's thread):\n", r.phases.size(),
                     UsText(step_total));
  report::Table phases({"phase", "us", "share"});
  for (size_t k = 0; k < kNumStepPhases; ++k)
    phases.AddRow({StepPhaseName(static_cast<StepPhase>(k)), UsText(total[k]), Pct(Share(total[k], step_total))});
  phases.Print(out);
}

// The kernel column's room: the width less the figures' columns (about 56).
size_t KernelNameRoom(int width) {
  return width <= 0 ? 0 : static_cast<size_t>(std::max(24, width - 56));
}

void PrintTopKernels(std::ostream& out, const RankAnalysis& r, int width) {
  for (const KernelGroup& g : r.main.top_kernels) {
    out << fmt::format("\ntop {} kernels ({} us in {} kernels)\n", g.group, UsText(g.total_ns), g.count);
    report::Table top({"kernel", "count", "total us", "mean us", "min", "max", "std"});
    std::vector<std::string> names;
    for (const KernelStats& s : g.top)
      names.push_back(s.name);
    const std::vector<std::string> shown = ShortKernelNames(names, KernelNameRoom(width));
    for (size_t i = 0; i < g.top.size(); ++i) {
      const KernelStats& s = g.top[i];
      top.AddRow({shown[i], std::to_string(s.count), UsText(s.total_ns), report::Fixed(Us(s.mean_ns), 1),
                  UsText(s.min_ns), UsText(s.max_ns), report::Fixed(Us(s.std_ns), 1)});
    }
    top.Print(out);
  }
}

// With -v: every diagnostic that fired, by code, with its count, what it
// means and the first example.
void PrintDiagnosticList(std::ostream& out, const RankTrace& t, int width) {
  for (const auto& d : t.diagnostics) {
    if (d.count == 0)
      continue;
    PrintWrapped(out, fmt::format("  {} x{} ({}):", d.name, d.count, report::SeverityName(d.severity)), "    ",
                 d.description, width);
    if (!d.examples.empty()) {
      std::string example =
          fmt::format("    e.g. byte {}: {}", d.examples.front().byte_offset, d.examples.front().snippet);
      if (width > 0 && example.size() > static_cast<size_t>(width))
        example = example.substr(0, static_cast<size_t>(std::max(width, 16)) - 3) + "...";
      out << example << "\n";
    }
  }
}

void PrintDiagnostics(std::ostream& out, const RankTrace& t, bool verbose, int width) {
  uint64_t info = 0, loss = 0, errors = 0;
  for (const auto& d : t.diagnostics)
    (d.severity == Severity::kError ? errors : d.severity == Severity::kDataLoss ? loss : info) += d.count;
  out << fmt::format("diagnostics: {} error, {} data loss, {} info", errors, loss, info);
  for (const auto& d : t.diagnostics) {
    if (d.count > 0 && d.severity != Severity::kInfo)
      out << fmt::format("; {} x{}", d.name, d.count);
  }
  out << (verbose || info + loss + errors == 0 ? "\n" : " (-v lists them)\n");
  if (verbose)
    PrintDiagnosticList(out, t, width);
  if (errors > 0 || loss > 0)
    out << "WARNING: the trace is damaged; numbers above may be incomplete\n";
  out << "\n";
}

std::string RankList(const std::vector<int64_t>& ranks) {
  std::vector<std::string> names;
  for (int64_t r : ranks)
    names.push_back(std::to_string(r));
  return base::Join(names, ", ");
}

// The collectives; the per-rank table only with `per_rank` (the summary
// shows each rank's wait otherwise).
void PrintCollectives(std::ostream& out, const JobAnalysis& job, bool per_rank, const TextOptions& text) {
  const int width = text.width;
  const CollectiveAnalysis& c = *job.collectives;
  out << fmt::format("collectives: {} matched across ranks, {} unmatched{}\n", c.num_matched, c.num_unmatched,
                     per_rank ? "" : " (per rank: " + text.Parameter("ranks") + " all)");
  if (per_rank) {
    report::Table table({"rank", "comm us", "transfer us", "wait us", "last arrivals", "caused wait us"});
    for (const auto& r : c.ranks) {
      table.AddRow({std::to_string(r.rank), UsText(r.comm_ns), UsText(r.transfer_ns), UsText(r.wait_ns),
                    std::to_string(r.last_arrivals), UsText(r.caused_wait_ns)});
    }
    table.Print(out);
  }
  if (!c.bandwidth.empty()) {
    report::Table bw({"collective", "size range", "count", "median busbw GB/s"});
    for (const auto& b : c.bandwidth) {
      const bool known = b.min_bytes >= 0;
      bw.AddRow({CollectiveKindName(b.kind),
                 known ? base::FormatSi(static_cast<double>(b.min_bytes)) + "B-" +
                             base::FormatSi(static_cast<double>(b.max_bytes)) + "B"
                       : "size unknown",
                 std::to_string(b.count), known ? report::Fixed(b.median_busbw_bytes_per_s / 1e9, 1) : "-"});
    }
    bw.Print(out);
  }
  const std::string stragglers = RankList(c.stragglers.ranks);
  PrintWrapped(out, "stragglers (ranks whose late arrival caused the most wait):", "  ",
               stragglers.empty() ? "none" : stragglers, width);
  if (job.hta_stragglers)
    out << "HTA get_potential_stragglers: " << RankList(job.hta_stragglers->stragglers) << "\n";
}

// The cross-rank table, the slowest ranks and the spread.
void PrintRankSummary(std::ostream& out, const JobAnalysis& job, int width) {
  const JobSummary& s = job.summary;
  const bool model = std::any_of(s.ranks.begin(), s.ranks.end(), [](const RankSummary& r) { return r.model_mfu; });
  std::vector<std::string> header{"rank", "span us", "work us", "MFU hw"};
  if (model)
    header.push_back("model MFU");
  for (const char* h : {"compute", "comm", "idle", "wait", "work vs median"})
    header.push_back(h);
  report::Table table(header);
  for (const RankSummary& r : s.ranks) {
    std::vector<std::string> row{RankId(job.ranks[r.index], r.index), UsText(r.span_ns), UsText(r.work_ns),
                                 r.mfu_hw          ? (r.mfu_hw_lower_bound ? ">=" : "") + MfuPct(*r.mfu_hw)
                                 : r.has_waterfall ? "unknown"
                                                   : "no peak"};
    if (model)
      row.push_back(r.model_mfu ? MfuPct(*r.model_mfu) : "-");
    for (double share : {r.compute_share, r.comm_share, r.idle_share, r.wait_share})
      row.push_back(Pct(100 * share));
    row.push_back(SignedPct(r.work_vs_median));
    table.AddRow(std::move(row));
  }
  table.Print(out);
  PrintWrapped(out, "(% of the GPU span; wait: for other ranks, in collectives; work = span - wait)", "  ", "", width);
  std::vector<std::string> slow;
  for (size_t i : s.slowest) {
    const RankSummary& r = s.ranks[i];
    slow.push_back(fmt::format("{} ({})", RankId(job.ranks[r.index], r.index), SignedPct(r.work_vs_median)));
  }
  PrintWrapped(out, "slowest ranks (most work; the others wait for them):", "  ",
               (slow.empty() ? "none above the median" : base::Join(slow, ", ")) +
                   fmt::format("; spread (max - min) / median: work {}, GPU span {}", Pct(100 * s.work_spread),
                               Pct(100 * s.span_spread)),
               width);
}

// One rank's full report.
void PrintRankDetail(std::ostream& out, const RankAnalysis& r, bool verbose, int width) {
  PrintTemporal(out, r, width);
  PrintClasses(out, r);
  PrintWaterfall(out, r, width);
  PrintPhases(out, r);
  if (verbose)
    PrintTopKernels(out, r, width);
  PrintDiagnostics(out, r.trace, verbose, width);
}

// The top of a multi-rank report: the devices, the job's verdict, the notes
// and the cross-rank summary.
void PrintJobHead(std::ostream& out, const JobAnalysis& job, const TextOptions& text) {
  const int width = text.width;
  std::vector<std::string> devices;
  for (const RankAnalysis& r : job.ranks) {
    std::string d = r.trace.device_name().empty() ? "?" : r.trace.device_name();
    if (std::find(devices.begin(), devices.end(), d) == devices.end())
      devices.push_back(d);
  }
  uint64_t diagnostics = 0, damaged = 0;
  for (const RankAnalysis& r : job.ranks) {
    for (const auto& d : r.trace.diagnostics)
      (d.severity == Severity::kInfo ? diagnostics : damaged) += d.count;
  }
  PrintWrapped(
      out, fmt::format("{} ranks; device", job.ranks.size()), "  ",
      base::Join(devices, ", ") + fmt::format("; diagnostics: {} data loss or error, {} info", damaged, diagnostics),
      width);
  out << "\n";
  PrintVerdict(out, job.verdict, fmt::format("all {} ranks", job.ranks.size()), text);
  PrintJobNotes(out, job, text);
  out << "\n";
  PrintRankSummary(out, job, width);
  out << "\n";
}

}  // namespace

std::string RenderTraceJobText(const JobAnalysis& job, const TraceJobOptions& options, bool verbose,
                               const TextOptions& text) {
  std::ostringstream out;
  const int width = text.width;
  if (job.ranks.size() > 1) {
    PrintJobHead(out, job, text);
  } else if (job.ranks.size() == 1) {
    PrintVerdict(out, job.ranks.front().verdict, "this trace", text);
    PrintJobNotes(out, job, text);
    out << "\n";
  }
  size_t hidden = 0;
  for (size_t i = 0; i < job.ranks.size(); ++i) {
    if (verbose || ShowsRankDetail(job, options, i)) {
      PrintRankDetail(out, job.ranks[i], verbose, width);
    } else {
      ++hidden;
    }
  }
  if (hidden > 0) {
    const std::string ranks = text.Parameter("ranks");
    PrintWrapped(out, fmt::format("per-rank detail for {} more ranks:", hidden), "  ",
                 fmt::format("{} all, or a list such as {} 0,3; {} for every rank with its top kernels", ranks, ranks,
                             text.Parameter("verbose", /*short_form=*/true)),
                 width);
    out << "\n";
  }
  if (!job.collectives_error.empty())
    out << "no collective analysis: " << job.collectives_error << "\n";
  if (job.collectives && !job.collectives->instances.empty())
    PrintCollectives(out, job, job.ranks.size() <= 1 || verbose || hidden == 0, text);
  return out.str();
}

}  // namespace mfu
