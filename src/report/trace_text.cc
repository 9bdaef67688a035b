// mfu trace's terminal report: per rank the time breakdown, kernel classes,
// the MFU waterfall and host phases, then the collectives.

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "mfu/report_trace.h"
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

void PrintTemporal(std::ostream& out, const RankAnalysis& r) {
  const RankTrace& t = r.trace;
  const TemporalBreakdown& tb = r.main.temporal;
  out << fmt::format("rank {}  {}  ({} events, {:.1f} MB; device {}{})\n", t.rank, t.path, t.num_events(),
                     static_cast<double>(t.input_bytes) / 1e6, t.device_name().empty() ? "?" : t.device_name(),
                     r.gpu ? " = " + r.gpu->id : "");
  out << fmt::format("window      {} ({}): GPU span {} us over {} GPU ops\n", r.main.window.name,
                     BreakdownVariantName(r.main.variant), UsText(tb.span_ns), tb.num_gpu_ops);
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
  out << fmt::format("FLOPs from shapes cover {} of matrix-kernel time\n", Pct(100 * r.flops.coverage()));
}

void PrintWaterfall(std::ostream& out, const RankAnalysis& r) {
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
  out << fmt::format("MFU (hardware FLOPs) {} = compute share {} x matrix share {} x matrix efficiency {}\n",
                     Pct(100 * w.mfu_hw), Pct(100 * w.compute_share), Pct(100 * w.matrix_share),
                     Pct(100 * w.matrix_efficiency));
  if (w.model) {
    out << fmt::format("model MFU {} (HFU {}) vs {} peak; executed/model FLOPs {:.3f}\n", Pct(100 * w.model->mfu),
                       Pct(100 * w.model->hfu), DTypeName(w.model->precision), w.model->executed_over_model);
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

void PrintTopKernels(std::ostream& out, const RankAnalysis& r) {
  for (const KernelGroup& g : r.main.top_kernels) {
    out << fmt::format("\ntop {} kernels ({} us in {} kernels)\n", g.group, UsText(g.total_ns), g.count);
    report::Table top({"kernel", "count", "total us", "mean us", "min", "max", "std"});
    for (const KernelStats& s : g.top) {
      top.AddRow({s.name.substr(0, 70), std::to_string(s.count), UsText(s.total_ns), report::Fixed(Us(s.mean_ns), 1),
                  UsText(s.min_ns), UsText(s.max_ns), report::Fixed(Us(s.std_ns), 1)});
    }
    top.Print(out);
  }
}

void PrintDiagnostics(std::ostream& out, const RankTrace& t) {
  uint64_t info = 0, loss = 0, errors = 0;
  for (const auto& d : t.diagnostics)
    (d.severity == Severity::kError ? errors : d.severity == Severity::kDataLoss ? loss : info) += d.count;
  out << fmt::format("diagnostics: {} error, {} data loss, {} info", errors, loss, info);
  for (const auto& d : t.diagnostics) {
    if (d.count > 0 && d.severity != Severity::kInfo)
      out << fmt::format("; {} x{}", d.name, d.count);
  }
  out << "\n";
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

void PrintCollectives(std::ostream& out, const JobAnalysis& job) {
  const CollectiveAnalysis& c = *job.collectives;
  out << fmt::format("collectives: {} matched across ranks, {} unmatched\n", c.num_matched, c.num_unmatched);
  report::Table table({"rank", "comm us", "transfer us", "wait us", "last arrivals", "caused wait us"});
  for (const auto& r : c.ranks) {
    table.AddRow({std::to_string(r.rank), UsText(r.comm_ns), UsText(r.transfer_ns), UsText(r.wait_ns),
                  std::to_string(r.last_arrivals), UsText(r.caused_wait_ns)});
  }
  table.Print(out);
  if (!c.bandwidth.empty()) {
    report::Table bw({"collective", "size range", "count", "median busbw GB/s"});
    for (const auto& b : c.bandwidth) {
      bw.AddRow({CollectiveKindName(b.kind),
                 b.min_bytes < 0 ? "unknown"
                                 : base::FormatSi(static_cast<double>(b.min_bytes)) + "B-" +
                                       base::FormatSi(static_cast<double>(b.max_bytes)) + "B",
                 std::to_string(b.count), report::Fixed(b.median_busbw_bytes_per_s / 1e9, 1)});
    }
    bw.Print(out);
  }
  const std::string stragglers = RankList(c.stragglers.ranks);
  out << "stragglers (ranks whose late arrival caused the most wait): " << (stragglers.empty() ? "none" : stragglers)
      << "\n";
  if (job.hta_stragglers)
    out << "HTA get_potential_stragglers: " << RankList(job.hta_stragglers->stragglers) << "\n";
}

}  // namespace

std::string RenderTraceJobText(const JobAnalysis& job, const TraceJobOptions& /*options*/, bool verbose) {
  std::ostringstream out;
  for (const auto& r : job.ranks) {
    PrintTemporal(out, r);
    PrintClasses(out, r);
    PrintWaterfall(out, r);
    PrintPhases(out, r);
    if (verbose)
      PrintTopKernels(out, r);
    PrintDiagnostics(out, r.trace);
  }
  if (!job.collectives_error.empty())
    out << "no collective analysis: " << job.collectives_error << "\n";
  if (job.collectives && !job.collectives->instances.empty())
    PrintCollectives(out, job);
  return out.str();
}

}  // namespace mfu
