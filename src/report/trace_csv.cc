// mfu trace --csv: one table per file, times in microseconds.

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "mfu/report_trace.h"
#include "report/trace_common.h"

namespace mfu {
namespace {

using report::Us;

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

constexpr const char* kTemporalHeader =
    "span_us,busy_us,idle_us,compute_us,non_compute_us,exposed_comm_us,exposed_memcpy_us,exposed_memset_us,"
    "unclassified_us,overlap_pct";

std::string TemporalRow(const WindowBreakdown& w) {
  const TemporalBreakdown& t = w.temporal;
  return fmt::format("{},{},{},{},{},{},{},{},{},{}", Us(t.span_ns), Us(t.busy_ns), Us(t.idle_ns), Us(t.compute_ns),
                     Us(t.non_compute_ns), Us(t.exposed_comm_ns), Us(t.exposed_memcpy_ns), Us(t.exposed_memset_ns),
                     Us(t.unclassified_ns),
                     std::isfinite(w.overlap.overlap_pct) ? fmt::format("{}", w.overlap.overlap_pct) : "");
}

// The tables one rank adds rows to, in file order.
struct Tables {
  std::string ranks = fmt::format("rank,path,window,variant,{}\n", kTemporalHeader);
  std::string steps = fmt::format("rank,step,number,{}\n", kTemporalHeader);
  std::string classes = "rank,class,count,sum_us,union_us,flops,achieved_tflops,peak_pct\n";
  std::string kernels = "rank,group,name,count,total_us,mean_us,min_us,max_us,std_us\n";
  std::string idle = "rank,device,stream,host_wait_us,kernel_wait_us,other_us\n";
  std::string waterfall = "rank,window,bucket,us\n";
  std::string phases = "rank,step,phase,us\n";
  std::string diagnostics = "rank,name,severity,count,description\n";
};

void AddWindowRows(Tables& t, const RankAnalysis& r) {
  const int64_t rank = r.trace.rank;
  t.ranks += fmt::format("{},{},{},{},{}\n", rank, Quote(r.trace.path), Quote(r.main.window.name),
                         BreakdownVariantName(r.main.variant), TemporalRow(r.main));
  for (const auto& s : r.steps)
    t.steps += fmt::format("{},{},{},{}\n", rank, Quote(s.step.name), s.step.number, TemporalRow(s.breakdown));
  for (size_t c = 0; c < kNumKernelClasses; ++c) {
    const ClassTime& ct = r.main.classes[c];
    if (ct.count == 0)
      continue;
    const ClassFlops& f = r.flops.by_class[c];
    t.classes +=
        fmt::format("{},{},{},{},{},{},{},{}\n", rank, KernelClassName(static_cast<KernelClass>(c)), ct.count,
                    Us(ct.sum_ns), Us(ct.union_ns), f.flops, f.achieved_flops_per_s() / 1e12, 100 * f.peak_fraction());
  }
  for (const auto& g : r.main.top_kernels) {
    for (const auto& s : g.top) {
      t.kernels += fmt::format("{},{},{},{},{},{},{},{},{}\n", rank, g.group, Quote(s.name), s.count, Us(s.total_ns),
                               Us(s.mean_ns), Us(s.min_ns), Us(s.max_ns), Us(s.std_ns));
    }
  }
  for (const auto& s : r.main.idle.streams) {
    t.idle += fmt::format("{},{},{},{},{},{}\n", rank, s.device, s.stream, Us(s.idle_ns[0]), Us(s.idle_ns[1]),
                          Us(s.idle_ns[2]));
  }
}

void AddWaterfallRows(std::string& table, int64_t rank, const StepWaterfall& w) {
  for (size_t b = 0; b < kNumWaterfallBuckets; ++b) {
    table += fmt::format("{},{},{},{}\n", rank, Quote(w.label), WaterfallBucketName(static_cast<WaterfallBucket>(b)),
                         Us(w.bucket_ns[b]));
  }
}

void AddStepRows(Tables& t, const RankAnalysis& r) {
  const int64_t rank = r.trace.rank;
  if (r.waterfall)
    AddWaterfallRows(t.waterfall, rank, *r.waterfall);
  if (r.step_waterfalls.size() > 1) {  // one step: the main waterfall is that step's
    for (const auto& w : r.step_waterfalls)
      AddWaterfallRows(t.waterfall, rank, w);
  }
  for (const auto& p : r.phases) {
    for (size_t k = 0; k < kNumStepPhases; ++k) {
      t.phases += fmt::format("{},{},{},{}\n", rank, Quote(p.label), StepPhaseName(static_cast<StepPhase>(k)),
                              Us(p.phase_ns[k]));
    }
  }
  for (const auto& d : r.trace.diagnostics) {
    t.diagnostics +=
        fmt::format("{},{},{},{},{}\n", rank, d.name, report::SeverityName(d.severity), d.count, Quote(d.description));
  }
}

std::string CollectivesCsv(const CollectiveAnalysis& c) {
  std::string out = "kind,group,seq,ranks,message_bytes,transfer_us,arrival_skew_us,last_rank,busbw_gbps,matched\n";
  for (const auto& i : c.instances) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", CollectiveKindName(i.kind), Quote(i.group), i.seq,
                       i.participants.size(), i.message_bytes, Us(i.transfer_ns), Us(i.arrival_skew_ns), i.last_rank,
                       i.busbw_bytes_per_s / 1e9, i.matched() ? 1 : 0);
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> RenderTraceJobCsv(const JobAnalysis& job) {
  Tables t;
  for (const auto& r : job.ranks) {
    AddWindowRows(t, r);
    AddStepRows(t, r);
  }
  std::vector<std::pair<std::string, std::string>> files = {
      {"ranks.csv", std::move(t.ranks)},     {"steps.csv", std::move(t.steps)},
      {"classes.csv", std::move(t.classes)}, {"kernels.csv", std::move(t.kernels)},
      {"idle.csv", std::move(t.idle)},       {"waterfall.csv", std::move(t.waterfall)},
      {"phases.csv", std::move(t.phases)},   {"diagnostics.csv", std::move(t.diagnostics)}};
  if (job.collectives)
    files.emplace_back("collectives.csv", CollectivesCsv(*job.collectives));
  return files;
}

}  // namespace mfu
