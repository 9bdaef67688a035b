#include "cli/trace_render.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "base/strings.h"
#include "report/json_common.h"
#include "report/table.h"

namespace mfu::cli {
namespace {

double Us(int64_t ns) {
  return static_cast<double>(ns) / 1e3;
}
double Us(double ns) {
  return ns / 1e3;
}
// JSON has no NaN: absent values are null.
nlohmann::json Num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json TemporalJson(const TemporalBreakdown& t) {
  return {{"gpu_start_ns", t.gpu_start_ns},
          {"gpu_end_ns", t.gpu_end_ns},
          {"span_us", Us(t.span_ns)},
          {"busy_us", Us(t.busy_ns)},
          {"idle_us", Us(t.idle_ns)},
          {"compute_us", Us(t.compute_ns)},
          {"non_compute_us", Us(t.non_compute_ns)},
          {"exposed_comm_us", Us(t.exposed_comm_ns)},
          {"exposed_memcpy_us", Us(t.exposed_memcpy_ns)},
          {"exposed_memset_us", Us(t.exposed_memset_ns)},
          {"unclassified_us", Us(t.unclassified_ns)},
          {"idle_pct", t.idle_pct()},
          {"compute_pct", t.compute_pct()},
          {"non_compute_pct", t.non_compute_pct()},
          {"gpu_ops", t.num_gpu_ops}};
}

nlohmann::json KernelTypesJson(const KernelTypeBreakdown& k) {
  nlohmann::json j = nlohmann::json::object();
  for (unsigned mask = 1; mask < k.exact_ns.size(); ++mask) {
    if (k.exact_ns[mask] > 0)
      j[KernelTypeBreakdown::MaskName(mask)] = Us(k.exact_ns[mask]);
  }
  return j;
}

nlohmann::json KernelStatsJson(const KernelStats& s) {
  return {{"name", s.name},         {"count", s.count},       {"total_us", Us(s.total_ns)}, {"mean_us", Us(s.mean_ns)},
          {"min_us", Us(s.min_ns)}, {"max_us", Us(s.max_ns)}, {"std_us", Us(s.std_ns)}};
}

nlohmann::json BreakdownJson(const WindowBreakdown& w) {
  nlohmann::json j;
  j["window"] = w.window.name;
  j["variant"] = BreakdownVariantName(w.variant);
  j["temporal"] = TemporalJson(w.temporal);
  j["overlap_pct"] = Num(w.overlap.overlap_pct);
  j["kernel_types_us"] = KernelTypesJson(w.kernel_types);
  nlohmann::json classes = nlohmann::json::object();
  for (size_t c = 0; c < kNumKernelClasses; ++c) {
    const ClassTime& t = w.classes[c];
    if (t.count == 0)
      continue;
    classes[KernelClassName(static_cast<KernelClass>(c))] = {
        {"count", t.count}, {"sum_us", Us(t.sum_ns)}, {"union_us", Us(t.union_ns)}};
  }
  j["classes"] = classes;
  nlohmann::json idle = nlohmann::json::array();
  for (const StreamIdle& s : w.idle.streams) {
    nlohmann::json row = {{"device", s.device}, {"stream", s.stream}, {"ops", s.num_ops}};
    for (size_t c = 0; c < kNumIdleCategories; ++c) {
      const char* name = IdleCategoryName(static_cast<IdleCategory>(c));
      row[std::string(name) + "_us"] = Us(s.idle_ns[c]);
      row[std::string(name) + "_count"] = s.stats[c].count;
    }
    idle.push_back(row);
  }
  j["idle_breakdown"] = idle;
  nlohmann::json top = nlohmann::json::array();
  for (const KernelGroup& g : w.top_kernels) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const KernelStats& s : g.top)
      kernels.push_back(KernelStatsJson(s));
    top.push_back({{"group", g.group},
                   {"count", g.count},
                   {"total_us", Us(g.total_ns)},
                   {"kernels", kernels},
                   {"others", KernelStatsJson(g.others)}});
  }
  j["top_kernels"] = top;
  const LaunchStats& l = w.launches;
  j["launches"] = {{"count", l.launches},
                   {"short_kernels", l.short_kernels},
                   {"launch_delay_median_us", Num(l.launch_delay_median_ns / 1e3)},
                   {"launch_delay_p95_us", Num(l.launch_delay_p95_ns / 1e3)},
                   {"launch_delay_mean_us", Num(l.launch_delay_mean_ns / 1e3)},
                   {"cpu_duration_median_us", Num(l.cpu_duration_median_ns / 1e3)},
                   {"gpu_duration_median_us", Num(l.gpu_duration_median_ns / 1e3)}};
  return j;
}

nlohmann::json WaterfallJson(const StepWaterfall& w) {
  nlohmann::json buckets = nlohmann::json::object();
  for (size_t b = 0; b < kNumWaterfallBuckets; ++b) {
    buckets[WaterfallBucketName(static_cast<WaterfallBucket>(b))] = Us(w.bucket_ns[b]);
  }
  nlohmann::json j = {{"label", w.label},
                      {"start_ns", w.start_ns},
                      {"end_ns", w.end_ns},
                      {"step_us", Us(w.step_ns())},
                      {"buckets_us", buckets},
                      {"compute_share", w.compute_share},
                      {"matrix_share", w.matrix_share},
                      {"matrix_efficiency", w.matrix_efficiency},
                      {"mfu_hw", w.mfu_hw},
                      {"coverage", w.coverage},
                      {"matrix_flops", w.matrix_flops}};
  if (w.model) {
    const ModelStepMfu& m = *w.model;
    j["model"] = {{"precision", DTypeName(m.precision)},
                  {"peak_tflops", m.peak_flops_per_s / 1e12},
                  {"model_flops", m.model_flops},
                  {"hardware_flops", m.hardware_flops},
                  {"executed_flops", m.executed_flops},
                  {"mfu", m.mfu},
                  {"hfu", m.hfu},
                  {"executed_over_model", m.executed_over_model}};
  }
  return j;
}

nlohmann::json FlopsJson(const TraceFlopsSummary& f) {
  nlohmann::json classes = nlohmann::json::object();
  for (size_t c = 0; c < kNumKernelClasses; ++c) {
    const ClassFlops& x = f.by_class[c];
    if (x.events == 0)
      continue;
    classes[KernelClassName(static_cast<KernelClass>(c))] = {{"events", x.events},
                                                             {"sum_us", Us(x.sum_ns)},
                                                             {"union_us", Us(x.union_ns)},
                                                             {"with_flops_us", Us(x.with_flops_sum_ns)},
                                                             {"flops", x.flops},
                                                             {"achieved_tflops", x.achieved_flops_per_s() / 1e12},
                                                             {"peak_pct", 100 * x.peak_fraction()}};
  }
  return {{"accelerator", f.accelerator},
          {"classes", classes},
          {"matrix",
           {{"flops", f.matrix.flops},
            {"achieved_tflops", f.matrix.achieved_flops_per_s() / 1e12},
            {"peak_pct", 100 * f.matrix.peak_fraction()}}},
          {"coverage", f.coverage()}};
}

nlohmann::json DiagnosticsJson(const RankTrace& t) {
  nlohmann::json list = nlohmann::json::array();
  for (const Diagnostic& d : t.diagnostics) {
    nlohmann::json examples = nlohmann::json::array();
    for (const auto& e : d.examples)
      examples.push_back({{"byte_offset", e.byte_offset}, {"snippet", e.snippet}});
    static constexpr const char* kSeverity[] = {"info", "data_loss", "error"};
    list.push_back({{"name", d.name},
                    {"severity", kSeverity[static_cast<size_t>(d.severity)]},
                    {"count", d.count},
                    {"description", d.description},
                    {"examples", examples}});
  }
  return list;
}

nlohmann::json RankJson(const RankAnalysis& r) {
  const RankTrace& t = r.trace;
  nlohmann::json j = BreakdownJson(r.main);
  j["rank"] = t.rank;
  j["path"] = t.path;
  j["device"] = t.device_name();
  j["accelerator"] = r.gpu ? nlohmann::json(r.gpu->id) : nlohmann::json(nullptr);
  if (!r.accelerator_error.empty())
    j["accelerator_error"] = r.accelerator_error;
  if (!r.waterfall_error.empty())
    j["waterfall_error"] = r.waterfall_error;
  j["events"] = t.num_events();
  j["input_bytes"] = t.input_bytes;
  j["diagnostics"] = DiagnosticsJson(t);
  j["error_diagnostics"] = t.error_count();
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : r.steps) {
    nlohmann::json step = BreakdownJson(s.breakdown);
    step["name"] = s.step.name;
    step["number"] = s.step.number;
    step["cpu_start_ns"] = s.step.cpu_start_ns;
    step["cpu_end_ns"] = s.step.cpu_end_ns;
    for (const auto& w : r.step_waterfalls) {
      if (w.label == s.step.name)
        step["waterfall"] = WaterfallJson(w);
    }
    for (const auto& p : r.phases) {
      if (p.label != s.step.name)
        continue;
      nlohmann::json phases = nlohmann::json::object();
      for (size_t k = 0; k < trace::kNumStepPhases; ++k) {
        phases[trace::StepPhaseName(static_cast<trace::StepPhase>(k))] = Us(p.phase_ns[k]);
      }
      step["phases_us"] = phases;
      step["cpu_step_us"] = Us(p.step_ns());
    }
    steps.push_back(step);
  }
  j["steps"] = steps;
  j["flops"] = FlopsJson(r.flops);
  if (r.waterfall)
    j["waterfall"] = WaterfallJson(*r.waterfall);
  return j;
}

nlohmann::json CollectivesJson(const JobAnalysis& job) {
  nlohmann::json j;
  if (!job.collectives) {
    j["error"] = job.collectives_error;
    return j;
  }
  const CollectiveAnalysis& c = *job.collectives;
  j["matched"] = c.num_matched;
  j["unmatched"] = c.num_unmatched;
  nlohmann::json ranks = nlohmann::json::array();
  for (size_t i = 0; i < c.ranks.size(); ++i) {
    const RankCommTotals& r = c.ranks[i];
    ranks.push_back({{"rank", r.rank},
                     {"kernels", r.num_kernels},
                     {"comm_us", Us(r.comm_ns)},
                     {"transfer_us", Us(r.transfer_ns)},
                     {"wait_us", Us(r.wait_ns)},
                     {"unmatched_us", Us(r.unmatched_ns)},
                     {"last_arrivals", r.last_arrivals},
                     {"caused_wait_us", Us(r.caused_wait_ns)},
                     {"clock_offset_ns", i < c.alignment.size() ? c.alignment[i].offset_ns : 0},
                     {"alignment", i < c.alignment.size() ? AlignmentMethodName(c.alignment[i].method) : ""}});
  }
  j["ranks"] = ranks;
  nlohmann::json bw = nlohmann::json::array();
  for (const auto& b : c.bandwidth) {
    bw.push_back({{"kind", CollectiveKindName(b.kind)},
                  {"min_bytes", b.min_bytes},
                  {"max_bytes", b.max_bytes},
                  {"count", b.count},
                  {"transfer_us", Us(b.transfer_ns)},
                  {"wait_us", Us(b.wait_ns)},
                  {"median_algbw_gbps", b.median_algbw_bytes_per_s / 1e9},
                  {"median_busbw_gbps", b.median_busbw_bytes_per_s / 1e9}});
  }
  j["bandwidth"] = bw;
  j["stragglers"] = c.stragglers.ranks;
  if (job.hta_stragglers)
    j["hta_stragglers"] = job.hta_stragglers->stragglers;
  return j;
}

std::string Pct(double v) {
  return std::isfinite(v) ? report::Fixed(v, 1) + "%" : "n/a";
}
std::string UsText(int64_t ns) {
  return report::Fixed(Us(ns), 0);
}

void PrintRank(std::ostream& out, const RankAnalysis& r, bool verbose) {
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

  if (r.waterfall) {
    const StepWaterfall& w = *r.waterfall;
    out << fmt::format("\nMFU waterfall over {} ({} us, dense peaks of {}):\n", w.label, UsText(w.step_ns()),
                       r.gpu->id);
    report::Table wf({"bucket", "us", "share of step"});
    for (size_t b = 0; b < kNumWaterfallBuckets; ++b) {
      double share =
          w.step_ns() > 0 ? 100.0 * static_cast<double>(w.bucket_ns[b]) / static_cast<double>(w.step_ns()) : 0;
      wf.AddRow({WaterfallBucketName(static_cast<WaterfallBucket>(b)), UsText(w.bucket_ns[b]), Pct(share)});
    }
    wf.Print(out);
    out << fmt::format("MFU (hardware FLOPs) {} = compute share {} x matrix share {} x matrix efficiency {}\n",
                       Pct(100 * w.mfu_hw), Pct(100 * w.compute_share), Pct(100 * w.matrix_share),
                       Pct(100 * w.matrix_efficiency));
    if (w.model) {
      out << fmt::format("model MFU {} (HFU {}) vs {} peak; executed/model FLOPs {:.3f}\n", Pct(100 * w.model->mfu),
                         Pct(100 * w.model->hfu), DTypeName(w.model->precision), w.model->executed_over_model);
    }
  } else if (!r.accelerator_error.empty() || !r.waterfall_error.empty()) {
    out << "no MFU waterfall: " << (r.accelerator_error.empty() ? r.waterfall_error : r.accelerator_error) << "\n";
  }
  if (!r.phases.empty()) {
    std::array<int64_t, trace::kNumStepPhases> total{};
    int64_t step_total = 0;
    for (const auto& p : r.phases) {
      for (size_t k = 0; k < trace::kNumStepPhases; ++k)
        total[k] += p.phase_ns[k];
      step_total += p.step_ns();
    }
    out << fmt::format("\nhost time per step ({} steps, {} us on the training loop's thread):\n", r.phases.size(),
                       UsText(step_total));
    report::Table phases({"phase", "us", "share"});
    for (size_t k = 0; k < trace::kNumStepPhases; ++k) {
      double share = step_total > 0 ? 100.0 * static_cast<double>(total[k]) / static_cast<double>(step_total) : 0;
      phases.AddRow({trace::StepPhaseName(static_cast<trace::StepPhase>(k)), UsText(total[k]), Pct(share)});
    }
    phases.Print(out);
  }
  if (verbose) {
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
  uint64_t info = 0, loss = 0, errors = 0;
  for (const auto& d : t.diagnostics) {
    (d.severity == Severity::kError ? errors : d.severity == Severity::kDataLoss ? loss : info) += d.count;
  }
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

}  // namespace

nlohmann::json TraceJobJson(const JobAnalysis& job, const TraceJobOptions& options) {
  nlohmann::json j = report::JsonEnvelope();
  j["variant"] = BreakdownVariantName(options.variant);
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : job.ranks)
    ranks.push_back(RankJson(r));
  j["ranks"] = ranks;
  j["collectives"] = CollectivesJson(job);
  return j;
}

void PrintTraceJob(std::ostream& out, const JobAnalysis& job, const TraceJobOptions& /*options*/, bool verbose) {
  for (const auto& r : job.ranks)
    PrintRank(out, r, verbose);
  if (!job.collectives_error.empty())
    out << "no collective analysis: " << job.collectives_error << "\n";
  if (!job.collectives || job.collectives->instances.empty())
    return;
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
  std::vector<std::string> names;
  for (int64_t r : c.stragglers.ranks)
    names.push_back(std::to_string(r));
  out << "stragglers (ranks whose late arrival caused the most wait): "
      << (names.empty() ? "none" : base::Join(names, ", ")) << "\n";
  if (job.hta_stragglers) {
    names.clear();
    for (int64_t r : job.hta_stragglers->stragglers)
      names.push_back(std::to_string(r));
    out << "HTA get_potential_stragglers: " << base::Join(names, ", ") << "\n";
  }
}

Status WriteTraceCsv(const std::string& dir, const JobAnalysis& job) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return NotFoundError(dir + ": cannot create directory (" + ec.message() + ")");
  auto open = [&](const char* name, std::ofstream& f) -> Status {
    f.open(std::filesystem::path(dir) / name);
    if (!f)
      return NotFoundError(dir + "/" + name + ": cannot write");
    return Status::Ok();
  };
  auto quote = [](const std::string& s) {
    std::string out = "\"";
    for (char c : s)
      out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  std::ofstream ranks, classes, kernels, idle, waterfall, diagnostics, steps, phases;
  MFU_RETURN_IF_ERROR(open("ranks.csv", ranks));
  MFU_RETURN_IF_ERROR(open("steps.csv", steps));
  MFU_RETURN_IF_ERROR(open("classes.csv", classes));
  MFU_RETURN_IF_ERROR(open("kernels.csv", kernels));
  MFU_RETURN_IF_ERROR(open("idle.csv", idle));
  MFU_RETURN_IF_ERROR(open("waterfall.csv", waterfall));
  MFU_RETURN_IF_ERROR(open("phases.csv", phases));
  MFU_RETURN_IF_ERROR(open("diagnostics.csv", diagnostics));
  const char* temporal_header =
      "span_us,busy_us,idle_us,compute_us,non_compute_us,exposed_comm_us,exposed_memcpy_us,exposed_memset_us,"
      "unclassified_us,overlap_pct";
  auto temporal_row = [](const WindowBreakdown& w) {
    const TemporalBreakdown& t = w.temporal;
    return fmt::format("{},{},{},{},{},{},{},{},{},{}", Us(t.span_ns), Us(t.busy_ns), Us(t.idle_ns), Us(t.compute_ns),
                       Us(t.non_compute_ns), Us(t.exposed_comm_ns), Us(t.exposed_memcpy_ns), Us(t.exposed_memset_ns),
                       Us(t.unclassified_ns),
                       std::isfinite(w.overlap.overlap_pct) ? fmt::format("{}", w.overlap.overlap_pct) : "");
  };
  ranks << "rank,path,window,variant," << temporal_header << "\n";
  steps << "rank,step,number," << temporal_header << "\n";
  classes << "rank,class,count,sum_us,union_us,flops,achieved_tflops,peak_pct\n";
  kernels << "rank,group,name,count,total_us,mean_us,min_us,max_us,std_us\n";
  idle << "rank,device,stream,host_wait_us,kernel_wait_us,other_us\n";
  waterfall << "rank,window,bucket,us\n";
  phases << "rank,step,phase,us\n";
  diagnostics << "rank,name,severity,count,description\n";
  for (const auto& r : job.ranks) {
    const int64_t rank = r.trace.rank;
    ranks << rank << "," << quote(r.trace.path) << "," << quote(r.main.window.name) << ","
          << BreakdownVariantName(r.main.variant) << "," << temporal_row(r.main) << "\n";
    for (const auto& s : r.steps) {
      steps << rank << "," << quote(s.step.name) << "," << s.step.number << "," << temporal_row(s.breakdown) << "\n";
    }
    for (size_t c = 0; c < kNumKernelClasses; ++c) {
      const ClassTime& ct = r.main.classes[c];
      if (ct.count == 0)
        continue;
      const ClassFlops& f = r.flops.by_class[c];
      classes << fmt::format("{},{},{},{},{},{},{},{}\n", rank, KernelClassName(static_cast<KernelClass>(c)), ct.count,
                             Us(ct.sum_ns), Us(ct.union_ns), f.flops, f.achieved_flops_per_s() / 1e12,
                             100 * f.peak_fraction());
    }
    for (const auto& g : r.main.top_kernels) {
      for (const auto& s : g.top) {
        kernels << fmt::format("{},{},{},{},{},{},{},{},{}\n", rank, g.group, quote(s.name), s.count, Us(s.total_ns),
                               Us(s.mean_ns), Us(s.min_ns), Us(s.max_ns), Us(s.std_ns));
      }
    }
    for (const auto& s : r.main.idle.streams) {
      idle << fmt::format("{},{},{},{},{},{}\n", rank, s.device, s.stream, Us(s.idle_ns[0]), Us(s.idle_ns[1]),
                          Us(s.idle_ns[2]));
    }
    auto waterfall_rows = [&](const StepWaterfall& w) {
      for (size_t b = 0; b < kNumWaterfallBuckets; ++b) {
        waterfall << fmt::format("{},{},{},{}\n", rank, quote(w.label),
                                 WaterfallBucketName(static_cast<WaterfallBucket>(b)), Us(w.bucket_ns[b]));
      }
    };
    if (r.waterfall)
      waterfall_rows(*r.waterfall);
    if (r.step_waterfalls.size() > 1) {  // one step: the main waterfall is that step's
      for (const auto& w : r.step_waterfalls)
        waterfall_rows(w);
    }
    for (const auto& p : r.phases) {
      for (size_t k = 0; k < trace::kNumStepPhases; ++k) {
        phases << fmt::format("{},{},{},{}\n", rank, quote(p.label),
                              trace::StepPhaseName(static_cast<trace::StepPhase>(k)), Us(p.phase_ns[k]));
      }
    }
    for (const auto& d : r.trace.diagnostics) {
      static constexpr const char* kSeverity[] = {"info", "data_loss", "error"};
      diagnostics << rank << "," << d.name << "," << kSeverity[static_cast<size_t>(d.severity)] << "," << d.count << ","
                  << quote(d.description) << "\n";
    }
  }
  if (job.collectives) {
    std::ofstream coll;
    MFU_RETURN_IF_ERROR(open("collectives.csv", coll));
    coll << "kind,group,seq,ranks,message_bytes,transfer_us,arrival_skew_us,last_rank,busbw_gbps,matched\n";
    for (const auto& i : job.collectives->instances) {
      coll << fmt::format("{},{},{},{},{},{},{},{},{},{}\n", CollectiveKindName(i.kind), quote(i.group), i.seq,
                          i.participants.size(), i.message_bytes, Us(i.transfer_ns), Us(i.arrival_skew_ns), i.last_rank,
                          i.busbw_bytes_per_s / 1e9, i.matched() ? 1 : 0);
    }
  }
  return Status::Ok();
}

}  // namespace mfu::cli
