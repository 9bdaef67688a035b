// HTA's get_potential_stragglers (include/mfu/trace_collectives.h),
// reproduced over the traces of a job.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/strings.h"
#include "mfu/trace_collectives.h"
#include "trace/collectives_internal.h"

namespace mfu {
namespace {

struct HtaStep {
  int64_t ts = 0;
  int64_t end = 0;
  int64_t iteration = -1;
};

// N of "ProfilerStep#N" (HTA: r"ProfilerStep\s*#\s*(\d+)"), or -1.
int64_t ProfilerStepNumber(std::string_view name) {
  if (!base::StartsWith(name, "ProfilerStep"))
    return -1;
  size_t i = std::string_view("ProfilerStep").size();
  auto skip_spaces = [&] {
    while (i < name.size() && std::isspace(static_cast<unsigned char>(name[i])))
      ++i;
  };
  skip_spaces();
  if (i >= name.size() || name[i] != '#')
    return -1;
  ++i;
  skip_spaces();
  int64_t n = -1;
  auto [next, ec] = std::from_chars(name.data() + i, name.data() + name.size(), n);
  return ec == std::errc() && next != name.data() + i ? n : -1;
}

// HTA: the last step (in start order) containing `ts`, or -1.
int64_t IterationAt(const std::vector<HtaStep>& steps, int64_t ts) {
  int64_t iteration = -1;
  for (const HtaStep& s : steps) {
    if (s.ts <= ts && ts < s.end)
      iteration = s.iteration;
  }
  return iteration;
}

struct HtaKernel {
  int64_t rank = -1;
  int64_t stream = -1;
  int64_t iteration = -1;
  std::string name;
  int64_t ts = 0;
  int64_t dur = 0;
};

// One rank's events, as HTA sees them after loading.
struct HtaRankScan {
  std::vector<HtaStep> steps;
  int64_t cut_ns = std::numeric_limits<int64_t>::max();  // events from here on are dropped
  std::map<int64_t, std::pair<int64_t, int64_t>> span;   // iteration -> (min ts, max end)
  std::vector<HtaKernel> kernels;                        // communication kernels with iteration > 0
};

std::vector<HtaStep> ProfilerSteps(const RankTrace& t, std::set<std::string>& names) {
  std::vector<HtaStep> steps;
  for (size_t i = 0; i < t.num_events(); ++i) {
    if (t.kind[i] != TraceEventKind::kCpuOp && t.kind[i] != TraceEventKind::kUserAnnotation)
      continue;
    int64_t n = ProfilerStepNumber(t.event_name(i));
    if (n < 0 || t.event_track(i).gpu)
      continue;
    steps.push_back({t.ts_ns[i], t.end_ns(i), n});
    names.insert(std::string(t.event_name(i)));
  }
  return steps;
}

// Iterations of CPU events by their start, of GPU activities by the start of
// their runtime launch (HTA's index_correlation); events at or after `cut_ns`
// (CPU) or launched then (GPU) are dropped.
void ScanRank(const RankTrace& t, std::span<const KernelClass> classes, int64_t rank, bool prefix_only,
              HtaRankScan& scan) {
  std::unordered_map<int64_t, int64_t> launch_ts;
  for (size_t i = 0; i < t.num_events(); ++i) {
    if (t.kind[i] == TraceEventKind::kRuntime && t.correlation[i] != kNoId)
      launch_ts.emplace(t.correlation[i], t.ts_ns[i]);
  }
  for (size_t i = 0; i < t.num_events(); ++i) {
    int64_t at = t.ts_ns[i];
    if (IsGpuActivity(t.kind[i])) {
      auto it = launch_ts.find(t.correlation[i]);
      if (it == launch_ts.end())
        continue;
      at = it->second;
    } else if (t.event_track(i).gpu) {
      continue;
    }
    if (at >= scan.cut_ns)
      continue;
    int64_t iteration = IterationAt(scan.steps, at);
    if (iteration < 0)
      continue;
    auto [it, inserted] = scan.span.try_emplace(iteration, t.ts_ns[i], t.end_ns(i));
    it->second.first = std::min(it->second.first, t.ts_ns[i]);
    it->second.second = std::max(it->second.second, t.end_ns(i));
    bool comm =
        prefix_only ? base::StartsWith(t.event_name(i), "ncclKernel") : classes[i] == KernelClass::kCommunication;
    if (t.kind[i] == TraceEventKind::kKernel && iteration > 0 && comm) {
      scan.kernels.push_back(
          {rank, t.event_track(i).stream, iteration, std::string(t.event_name(i)), t.ts_ns[i], t.dur_ns[i]});
    }
  }
}

// Sample standard deviation (pandas' ddof=1); `v` has >= 2 values.
double SampleStd(const std::vector<double>& v) {
  double mean = 0, ss = 0;
  for (double x : v)
    mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v)
    ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

using HtaLastKey = std::tuple<int64_t, int64_t, int64_t, std::string>;  // rank, stream, iteration, name

// The (stream, name) whose normalized duration varies most across ranks.
bool PickCandidate(const std::map<HtaLastKey, HtaKernel>& last, double mean_iter_ns, HtaStragglerResult& r) {
  std::map<std::tuple<int64_t, int64_t, std::string>, std::vector<double>> durations;  // stream, iteration, name
  for (const auto& [key, k] : last) {
    durations[{k.stream, k.iteration, k.name}].push_back(static_cast<double>(k.dur) / mean_iter_ns);
  }
  std::map<std::pair<int64_t, std::string>, std::pair<double, int>> stds;  // (stream, name) -> (sum, count)
  for (const auto& [key, v] : durations) {
    if (v.size() < 2)
      continue;  // pandas: NaN, skipped by mean()
    auto& acc = stds[{std::get<0>(key), std::get<2>(key)}];
    acc.first += SampleStd(v);
    ++acc.second;
  }
  double best = -1;
  for (const auto& [key, acc] : stds) {
    double mean = acc.first / acc.second;
    if (mean > best) {
      best = mean;
      r.stream = key.first;
      r.kernel_name = key.second;
    }
  }
  return best >= 0;
}

// Flags the `k` latest starters per iteration and ranks by how often.
void FlagLatest(int num_candidates, HtaStragglerResult& r) {
  size_t k = static_cast<size_t>(std::max(num_candidates, 1));
  std::map<int64_t, std::vector<HtaStragglerMetric*>> by_iteration;
  for (HtaStragglerMetric& m : r.metrics)
    by_iteration[m.iteration].push_back(&m);
  std::map<int64_t, int64_t> counts;
  for (auto& [iteration, ms] : by_iteration) {
    std::vector<double> values;
    for (const HtaStragglerMetric* m : ms)
      values.push_back(m->normalized_start);
    std::sort(values.begin(), values.end(), std::greater<>());
    double threshold = values[std::min(k, values.size()) - 1];
    for (HtaStragglerMetric* m : ms) {
      m->flagged = m->normalized_start >= threshold;
      counts[m->rank] += m->flagged ? 1 : 0;
    }
  }
  std::vector<std::pair<int64_t, int64_t>> order(counts.begin(), counts.end());  // rank, count
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (size_t i = 0; i < order.size() && i < k; ++i)
    r.stragglers.push_back(order[i].first);
}

// Finds each rank's ProfilerSteps and the cut-off HTA's loader applies (the
// last step is dropped when the set has >= 2 step names); returns the
// iterations left (HTA's get_profiler_steps).
std::set<int64_t> PrepareSteps(const std::vector<RankTrace>& traces, bool include_last,
                               std::vector<HtaRankScan>& scans) {
  std::set<std::string> step_names;
  for (size_t t = 0; t < traces.size(); ++t)
    scans[t].steps = ProfilerSteps(traces[t], step_names);
  std::set<int64_t> valid;
  for (HtaRankScan& scan : scans) {
    std::sort(scan.steps.begin(), scan.steps.end(), [](const HtaStep& a, const HtaStep& b) { return a.ts < b.ts; });
    if (step_names.size() > 1 && !include_last && !scan.steps.empty())
      scan.cut_ns = scan.steps.back().ts;
    for (const HtaStep& s : scan.steps) {
      if (s.ts < scan.cut_ns)
        valid.insert(s.iteration);
    }
  }
  return valid;
}

// The iterations with events and their joint [t_min, t_max) over all ranks.
std::set<int64_t> IterationWindow(const std::vector<HtaRankScan>& scans, const std::set<int64_t>& valid, int64_t& t_min,
                                  int64_t& t_max) {
  std::set<int64_t> present;
  t_min = std::numeric_limits<int64_t>::max();
  t_max = std::numeric_limits<int64_t>::min();
  for (const HtaRankScan& scan : scans) {
    for (const auto& [iteration, span] : scan.span) {
      if (valid.count(iteration) == 0)
        continue;
      present.insert(iteration);
      t_min = std::min(t_min, span.first);
      t_max = std::max(t_max, span.second);
    }
  }
  return present;
}

// The last long communication kernel per (rank, stream, iteration, name).
std::map<HtaLastKey, HtaKernel> LastLongKernels(const std::vector<HtaRankScan>& scans, const std::set<int64_t>& present,
                                                double min_duration_ns) {
  std::map<HtaLastKey, HtaKernel> last;
  for (const HtaRankScan& scan : scans) {
    for (const HtaKernel& k : scan.kernels) {
      if (present.count(k.iteration) == 0 || static_cast<double>(k.dur) < min_duration_ns)
        continue;
      last[{k.rank, k.stream, k.iteration, k.name}] = k;  // kernels come in start order: the last one stays
    }
  }
  return last;
}

}  // namespace

StatusOr<HtaStragglerResult> FindStragglersHta(const std::vector<RankTrace>& traces,
                                               const std::vector<std::vector<KernelClass>>& classes,
                                               const HtaStragglerOptions& options) {
  MFU_RETURN_IF_ERROR(trace::CheckCollectiveInputs(traces, classes));
  MFU_ASSIGN_OR_RETURN(std::vector<int64_t> ranks, trace::AssignRanks(traces));
  std::vector<HtaRankScan> scans(traces.size());
  std::set<int64_t> valid = PrepareSteps(traces, options.include_last_profiler_step, scans);
  if (valid.empty())
    return NotFoundError("no ProfilerStep#N event: HTA's straggler metric needs iterations");
  for (size_t t = 0; t < traces.size(); ++t) {
    ScanRank(traces[t], classes[t], ranks[t], options.nccl_kernel_prefix_only, scans[t]);
  }
  HtaStragglerResult r;
  int64_t t_min = 0, t_max = 0;
  std::set<int64_t> present = IterationWindow(scans, valid, t_min, t_max);
  if (present.empty())
    return NotFoundError("no event inside a ProfilerStep");
  r.iterations.assign(present.begin(), present.end());
  r.mean_iteration_ns = static_cast<double>(t_max - t_min) / static_cast<double>(present.size());
  r.min_duration_ns = r.mean_iteration_ns * options.min_normalized_duration;
  std::map<HtaLastKey, HtaKernel> last = LastLongKernels(scans, present, r.min_duration_ns);
  if (!PickCandidate(last, r.mean_iteration_ns, r)) {
    return NotFoundError("no communication kernel of >= " + std::to_string(options.min_normalized_duration * 100) +
                         "% of the mean iteration ran on two or more ranks");
  }
  for (const auto& [key, k] : last) {
    if (k.stream != r.stream || k.name != r.kernel_name)
      continue;
    r.metrics.push_back({k.rank, k.iteration, k.ts, static_cast<double>(k.ts - t_min) / r.mean_iteration_ns, false});
  }
  std::sort(r.metrics.begin(), r.metrics.end(), [](const HtaStragglerMetric& a, const HtaStragglerMetric& b) {
    return std::tie(a.iteration, a.rank) < std::tie(b.iteration, b.rank);
  });
  FlagLatest(options.num_candidates, r);
  return r;
}

}  // namespace mfu
