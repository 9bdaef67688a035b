// mfu trace --json (docs/trace.md lists every field): times in integer ns
// (statistics such as means and medians in ns as numbers), each waterfall the
// shared WaterfallJson object plus the measurement's extras.

#include <cmath>
#include <iterator>
#include <string>

#include "mfu/report_trace.h"
#include "report/json_common.h"
#include "report/trace_common.h"

namespace mfu {
namespace {

using nlohmann::json;

json TemporalJson(const TemporalBreakdown& t) {
  return {{"gpu_start_ns", t.gpu_start_ns},
          {"gpu_end_ns", t.gpu_end_ns},
          {"span_ns", t.span_ns},
          {"busy_ns", t.busy_ns},
          {"idle_ns", t.idle_ns},
          {"compute_ns", t.compute_ns},
          {"non_compute_ns", t.non_compute_ns},
          {"exposed_comm_ns", t.exposed_comm_ns},
          {"exposed_memcpy_ns", t.exposed_memcpy_ns},
          {"exposed_memset_ns", t.exposed_memset_ns},
          {"unclassified_ns", t.unclassified_ns},
          {"idle_pct", t.idle_pct()},
          {"compute_pct", t.compute_pct()},
          {"non_compute_pct", t.non_compute_pct()},
          {"gpu_ops", t.num_gpu_ops},
          {"inverted_ops", t.inverted_ops},
          {"clamped_ns", t.clamped_ns}};
}

json KernelTypesJson(const KernelTypeBreakdown& k) {
  json j = json::object();
  for (unsigned mask = 1; mask < k.exact_ns.size(); ++mask) {
    if (k.exact_ns[mask] > 0)
      j[KernelTypeBreakdown::MaskName(mask)] = k.exact_ns[mask];
  }
  return j;
}

json KernelStatsJson(const KernelStats& s) {
  return {{"name", s.name},
          {"count", s.count},
          {"total_ns", s.total_ns},
          {"mean_ns", report::JsonNumber(s.mean_ns)},
          {"min_ns", s.min_ns},
          {"max_ns", s.max_ns},
          {"std_ns", report::JsonNumber(s.std_ns)}};
}

json ClassesJson(const WindowBreakdown& w) {
  json classes = json::object();
  for (size_t c = 0; c < kNumKernelClasses; ++c) {
    const ClassTime& t = w.classes[c];
    if (t.count == 0)
      continue;
    classes[KernelClassName(static_cast<KernelClass>(c))] = {
        {"count", t.count}, {"sum_ns", t.sum_ns}, {"union_ns", t.union_ns}};
  }
  return classes;
}

json IdleJson(const WindowBreakdown& w) {
  json idle = json::array();
  for (const StreamIdle& s : w.idle.streams) {
    json row = {{"device", s.device}, {"stream", s.stream}, {"ops", s.num_ops}};
    for (size_t c = 0; c < kNumIdleCategories; ++c) {
      const char* name = IdleCategoryName(static_cast<IdleCategory>(c));
      row[std::string(name) + "_ns"] = s.idle_ns[c];
      row[std::string(name) + "_count"] = s.stats[c].count;
    }
    idle.push_back(row);
  }
  return idle;
}

json TopKernelsJson(const WindowBreakdown& w) {
  json top = json::array();
  for (const KernelGroup& g : w.top_kernels) {
    json kernels = json::array();
    for (const KernelStats& s : g.top)
      kernels.push_back(KernelStatsJson(s));
    top.push_back({{"group", g.group},
                   {"count", g.count},
                   {"total_ns", g.total_ns},
                   {"kernels", kernels},
                   {"others", KernelStatsJson(g.others)}});
  }
  return top;
}

json LaunchesJson(const LaunchStats& l) {
  return {{"count", l.launches},
          {"short_kernels", l.short_kernels},
          {"launch_delay_median_ns", report::JsonNumber(l.launch_delay_median_ns)},
          {"launch_delay_p95_ns", report::JsonNumber(l.launch_delay_p95_ns)},
          {"launch_delay_mean_ns", report::JsonNumber(l.launch_delay_mean_ns)},
          {"cpu_duration_median_ns", report::JsonNumber(l.cpu_duration_median_ns)},
          {"gpu_duration_median_ns", report::JsonNumber(l.gpu_duration_median_ns)}};
}

json BreakdownJson(const WindowBreakdown& w) {
  json j;
  j["window"] = w.window.name;
  j["variant"] = BreakdownVariantName(w.variant);
  j["temporal"] = TemporalJson(w.temporal);
  j["overlap_pct"] = report::JsonNumber(w.overlap.overlap_pct);
  j["kernel_types_ns"] = KernelTypesJson(w.kernel_types);
  j["classes"] = ClassesJson(w);
  j["idle_breakdown"] = IdleJson(w);
  j["top_kernels"] = TopKernelsJson(w);
  j["launches"] = LaunchesJson(w.launches);
  j["unlinked_ops"] = w.unlinked_ops;
  return j;
}

// The shared waterfall object, then the measurement's extras beside it.
json StepWaterfallJson(const StepWaterfall& w) {
  json j = report::WaterfallJson(w);
  j["label"] = w.label;
  j["start_ns"] = w.start_ns;
  j["end_ns"] = w.end_ns;
  j["coverage"] = w.coverage;
  // "unknown": no recorded shapes (mfu_hw is then 0, not a measurement);
  // "lower_bound": shapes cover part of the matrix time; "measured".
  j["mfu_hw_status"] = w.matrix_ns > 0 && w.matrix_with_flops_ns == 0 ? "unknown"
                       : w.matrix_with_flops_ns < w.matrix_ns         ? "lower_bound"
                                                                      : "measured";
  j["matrix_flops"] = report::JsonInt(w.matrix_flops);
  if (w.model) {
    const ModelStepMfu& m = *w.model;
    j["utilization"] = report::UtilizationJson(m.utilization);
    j["model_flops"] = report::JsonInt(m.model_flops);
    j["hardware_flops"] = report::JsonInt(m.hardware_flops);
    j["executed_flops"] = report::JsonInt(m.executed_flops);
    j["executed_over_model"] = m.executed_over_model;
    if (m.peak_fallback())  // the precision whose listed peak stands in (fp16 for bf16 on a V100)
      j["peak_fallback"] = DTypeName(m.peak_precision);
  }
  return j;
}

json FlopsJson(const TraceFlopsSummary& f, const Accelerator* gpu) {
  json classes = json::object();
  for (size_t c = 0; c < kNumKernelClasses; ++c) {
    const ClassFlops& x = f.by_class[c];
    if (x.events == 0)
      continue;
    classes[KernelClassName(static_cast<KernelClass>(c))] = {{"events", x.events},
                                                             {"sum_ns", x.sum_ns},
                                                             {"union_ns", x.union_ns},
                                                             {"with_flops_ns", x.with_flops_sum_ns},
                                                             {"flops", report::JsonInt(x.flops)},
                                                             {"achieved_flops_per_s", x.achieved_flops_per_s()},
                                                             {"peak_pct", 100 * x.peak_fraction()}};
  }
  return {{"gpu", gpu ? report::GpuJson(*gpu) : json(nullptr)},
          {"classes", classes},
          {"matrix",
           {{"flops", report::JsonInt(f.matrix.flops)},
            {"achieved_flops_per_s", f.matrix.achieved_flops_per_s()},
            {"peak_pct", 100 * f.matrix.peak_fraction()}}},
          {"coverage", f.coverage()}};
}

// The verdict's losses, largest first, each with the rule that names it.
json VerdictJson(const JobVerdict& v) {
  json items = json::array();
  for (const VerdictItem& item : v.items) {
    const VerdictRule& rule = *item.rule;
    json remedies = json::array();
    for (const char* const* r = rule.remedies; r < std::end(rule.remedies) && *r != nullptr; ++r)
      remedies.push_back(*r);
    items.push_back({{"bucket", WaterfallBucketName(rule.bucket)},
                     {"code", rule.code},
                     {"loss", rule.loss},
                     {"loss_ns", item.loss_ns},
                     {"share", item.share},
                     {"basis", VerdictBasisName(v.basis)},
                     {"why", rule.why},
                     {"remedies", remedies}});
  }
  return items;
}

json SummaryJson(const JobAnalysis& job) {
  const JobSummary& s = job.summary;
  json ranks = json::array();
  for (const RankSummary& r : s.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"span_ns", r.span_ns},
                     {"compute_ns", r.compute_ns},
                     {"compute_share", r.compute_share},
                     {"exposed_comm_share", r.comm_share},
                     {"idle_share", r.idle_share},
                     {"mfu_hw", r.mfu_hw ? json(*r.mfu_hw) : json(nullptr)},
                     {"mfu_hw_lower_bound", r.mfu_hw_lower_bound},
                     {"model_mfu", r.model_mfu ? json(*r.model_mfu) : json(nullptr)},
                     {"wait_ns", r.wait_ns},
                     {"wait_share", r.wait_share},
                     {"work_ns", r.work_ns},
                     {"work_vs_median", r.work_vs_median},
                     {"compute_vs_median", r.compute_vs_median}});
  }
  json slowest = json::array();
  for (size_t i : s.slowest)
    slowest.push_back(s.ranks[i].rank);
  return {{"ranks", ranks},
          {"median_work_ns", s.median_work_ns},
          {"work_spread", s.work_spread},
          {"median_compute_ns", s.median_compute_ns},
          {"median_span_ns", s.median_span_ns},
          {"compute_spread", s.compute_spread},
          {"span_spread", s.span_spread},
          {"slowest_ranks", slowest},
          {"verdict_step_ns", job.verdict.step_ns}};
}

json DiagnosticsJson(const RankTrace& t) {
  json list = json::array();
  for (const Diagnostic& d : t.diagnostics) {
    json examples = json::array();
    for (const auto& e : d.examples)
      examples.push_back({{"byte_offset", e.byte_offset}, {"snippet", e.snippet}});
    list.push_back({{"name", d.name},
                    {"severity", report::SeverityName(d.severity)},
                    {"count", d.count},
                    {"description", d.description},
                    {"examples", examples}});
  }
  return list;
}

json PhasesJson(const StepPhases& p) {
  json phases = json::object();
  for (size_t k = 0; k < kNumStepPhases; ++k)
    phases[StepPhaseName(static_cast<StepPhase>(k))] = p.phase_ns[k];
  return phases;
}

json StepJson(const RankAnalysis& r, const StepAnalysis& s) {
  json step = BreakdownJson(s.breakdown);
  step["name"] = s.step.name;
  step["number"] = s.step.number;
  step["cpu_start_ns"] = s.step.cpu_start_ns;
  step["cpu_end_ns"] = s.step.cpu_end_ns;
  for (const auto& w : r.step_waterfalls) {
    if (w.label == s.step.name)
      step["waterfall"] = StepWaterfallJson(w);
  }
  for (const auto& p : r.phases) {
    if (p.label != s.step.name)
      continue;
    step["phases_ns"] = PhasesJson(p);
    step["cpu_step_ns"] = p.step_ns();
  }
  return step;
}

json RankJson(const RankAnalysis& r) {
  const RankTrace& t = r.trace;
  json j = BreakdownJson(r.main);
  j["rank"] = t.rank;
  j["path"] = t.path;
  j["device"] = t.device_name();
  j["gpu"] = r.gpu ? report::GpuJson(*r.gpu) : json(nullptr);
  if (!r.accelerator_error.empty())
    j["gpu_error"] = r.accelerator_error;
  if (!r.waterfall_error.empty())
    j["waterfall_error"] = r.waterfall_error;
  j["events"] = t.num_events();
  j["input_bytes"] = t.input_bytes;
  j["diagnostics"] = DiagnosticsJson(t);
  j["error_diagnostics"] = t.error_count();
  json steps = json::array();
  for (const auto& s : r.steps)
    steps.push_back(StepJson(r, s));
  j["steps"] = steps;
  j["flops"] = FlopsJson(r.flops, r.gpu);
  if (r.waterfall)
    j["waterfall"] = StepWaterfallJson(*r.waterfall);
  j["verdict"] = VerdictJson(r.verdict);
  return j;
}

json CommRanksJson(const CollectiveAnalysis& c) {
  json ranks = json::array();
  for (size_t i = 0; i < c.ranks.size(); ++i) {
    const RankCommTotals& r = c.ranks[i];
    ranks.push_back({{"rank", r.rank},
                     {"kernels", r.num_kernels},
                     {"comm_ns", r.comm_ns},
                     {"transfer_ns", r.transfer_ns},
                     {"wait_ns", r.wait_ns},
                     {"unmatched_ns", r.unmatched_ns},
                     {"last_arrivals", r.last_arrivals},
                     {"caused_wait_ns", r.caused_wait_ns},
                     {"clock_offset_ns", i < c.alignment.size() ? c.alignment[i].offset_ns : 0},
                     {"alignment", i < c.alignment.size() ? AlignmentMethodName(c.alignment[i].method) : ""}});
  }
  return ranks;
}

json BandwidthJson(const CollectiveAnalysis& c) {
  json bw = json::array();
  for (const auto& b : c.bandwidth) {
    // Without a size there is no bandwidth: null, not 0.
    const bool known = b.min_bytes >= 0;
    bw.push_back({{"kind", CollectiveKindName(b.kind)},
                  {"min_bytes", b.min_bytes},
                  {"max_bytes", b.max_bytes},
                  {"size_known", known},
                  {"count", b.count},
                  {"transfer_ns", b.transfer_ns},
                  {"wait_ns", b.wait_ns},
                  {"median_algbw_bytes_per_s", known ? json(b.median_algbw_bytes_per_s) : json(nullptr)},
                  {"median_busbw_bytes_per_s", known ? json(b.median_busbw_bytes_per_s) : json(nullptr)}});
  }
  return bw;
}

json CollectivesJson(const JobAnalysis& job) {
  json j;
  if (!job.collectives) {
    j["error"] = job.collectives_error;
    return j;
  }
  const CollectiveAnalysis& c = *job.collectives;
  j["matched"] = c.num_matched;
  j["unmatched"] = c.num_unmatched;
  j["ranks"] = CommRanksJson(c);
  j["bandwidth"] = BandwidthJson(c);
  j["stragglers"] = c.stragglers.ranks;
  if (job.hta_stragglers)
    j["hta_stragglers"] = job.hta_stragglers->stragglers;
  return j;
}

}  // namespace

std::string RenderTraceJobJson(const JobAnalysis& job, const TraceJobOptions& options) {
  json j = report::JsonEnvelope();
  j["variant"] = BreakdownVariantName(options.variant);
  if (options.model) {
    j["model"] = report::ModelJson(options.model->model);
    j["convention"] = report::ConventionJson(options.model->convention);
  }
  json ranks = json::array();
  for (const auto& r : job.ranks)
    ranks.push_back(RankJson(r));
  j["ranks"] = ranks;
  j["summary"] = SummaryJson(job);
  j["verdict"] = VerdictJson(job.verdict);
  j["notes"] = report::NotesJson(job.notes);
  j["collectives"] = CollectivesJson(job);
  return report::JsonText(j);
}

}  // namespace mfu
