// Accuracy of the performance model on measured runs, and the coordinate-
// descent fit of the efficiency parameters (calibrate.h).

#include "mfu/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "base/strings.h"

namespace mfu {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && !(v[order[j + 1]] < v[order[i]]) && !(v[order[i]] < v[order[j + 1]]))
      ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k)
      ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

void Summarize(const std::vector<const RunPrediction*>& runs, SourceAccuracy& s) {
  std::vector<double> predicted, measured;
  double sum_ape = 0, sum_bias = 0;
  for (const RunPrediction* r : runs) {
    if (!r->problem.empty()) {
      ++s.not_predicted;
      continue;
    }
    ++s.runs;
    sum_ape += r->ape;
    s.max_ape = std::max(s.max_ape, r->ape);
    sum_bias += r->predicted_tokens_per_s_per_gpu / r->run->measured_tokens_per_s_per_gpu - 1;
    predicted.push_back(r->predicted_tokens_per_s_per_gpu);
    measured.push_back(r->run->measured_tokens_per_s_per_gpu);
  }
  if (s.runs > 0) {
    s.mape = sum_ape / static_cast<double>(s.runs);
    s.bias = sum_bias / static_cast<double>(s.runs);
  }
  s.spearman = SpearmanCorrelation(predicted, measured);
}

}  // namespace

double SpearmanCorrelation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 3)
    return kNaN;
  const std::vector<double> ra = Ranks(a), rb = Ranks(b);
  const auto n = static_cast<double>(a.size());
  const double mean = (n + 1) / 2;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (va <= 0 || vb <= 0)
    return kNaN;
  return cov / std::sqrt(va * vb);
}

StatusOr<const FrameworkProfile*> FindRunFramework(const TrainingRun& run) {
  MFU_ASSIGN_OR_RETURN(const FrameworkDb* db, FrameworkDb::Builtin());
  MFU_ASSIGN_OR_RETURN(const FrameworkProfile* p, db->Find(run.framework_profile));
  if (!run.attention.empty()) {
    StatusOr<AttentionKernel> k = ParseAttentionKernel(run.attention);
    if (!k.ok())
      return InvalidArgumentError("row " + std::to_string(run.row_id) +
                                  ": column 'attention': " + k.status().message());
  }
  return p;
}

TrainingConfig ConfigOfRun(const TrainingRun& run, const FrameworkProfile& framework) {
  TrainingConfig c;
  c.tp = run.tp;
  c.pp = run.pp;
  c.dp = run.dp;
  c.cp = run.cp;
  c.ep = run.ep;
  c.vpp = run.vpp;
  // Everything the row does not state is the framework's (frameworks.csv).
  c.sequence_parallel = run.sequence_parallel || framework.sequence_parallel;
  c.zero_stage = run.zero_stage;
  c.fsdp = run.fsdp;
  c.micro_batch = run.micro_batch > 0 ? run.micro_batch : 1;
  c.global_batch = run.global_batch;
  c.recompute = run.recompute;
  c.precision = run.precision;
  c.tp_comm_overlap = framework.tp_overlap_supported && framework.tp_overlap_default && run.tp > 1;
  c.flash_attention = run.attention != "unfused" && framework.attention != AttentionKernel::kUnfused;
  return c;
}

StatusOr<RunSet> RunSet::Prepare(const TrainingRunSet& runs, const HardwareDb& hw, const ClusterDb& clusters,
                                 const EfficiencyDb& efficiency) {
  RunSet set;
  for (const TrainingRun& run : runs.runs) {
    Entry e;
    e.run = &run;
    StatusOr<const Accelerator*> gpu = hw.Find(run.accelerator);
    StatusOr<const Cluster*> cluster = clusters.Find(run.cluster);
    if (!gpu.ok()) {
      e.problem = gpu.status().message();
    } else if (!cluster.ok()) {
      e.problem = cluster.status().message();
    } else {
      e.family = efficiency.For((*gpu)->id).family;
      TrainingSetup setup;
      setup.model = &run.model;
      setup.seq_len = run.seq_len;
      setup.gpu = *gpu;
      setup.cluster = *cluster;
      setup.gpus = run.gpus;
      setup.efficiency = efficiency.For((*gpu)->id);
      StatusOr<const FrameworkProfile*> framework = FindRunFramework(run);
      if (!framework.ok()) {
        e.problem = framework.status().message();
        set.entries_.push_back(std::move(e));
        continue;
      }
      setup.framework = **framework;
      if (!run.attention.empty())
        setup.framework.attention = *ParseAttentionKernel(run.attention);  // checked by FindRunFramework
      e.framework = *framework;
      StatusOr<PerfModel> model = PerfModel::Create(setup);
      if (model.ok()) {
        e.model.push_back(std::move(model).value());
      } else {
        e.problem = model.status().message();
      }
    }
    set.entries_.push_back(std::move(e));
  }
  return set;
}

AccuracyReport RunSet::Evaluate(const EfficiencyDb& efficiency) {
  AccuracyReport report;
  report.runs.reserve(entries_.size());
  for (Entry& e : entries_) {
    RunPrediction r;
    r.run = e.run;
    r.problem = e.problem;
    if (r.problem.empty()) {
      PerfModel& model = e.model.front();
      model.SetEfficiency(efficiency.For(model.setup().gpu->id));
      // A measured run ran: memory is reported, not a reason to refuse it.
      model.Evaluate(ConfigOfRun(*e.run, *e.framework), r.prediction);
      if (r.prediction.issue != ConfigIssue::kOk && r.prediction.issue != ConfigIssue::kOutOfMemory) {
        r.problem = std::string("configuration: ") + ConfigIssueName(r.prediction.issue);
      } else {
        r.predicted_tokens_per_s_per_gpu = r.prediction.tokens_per_s / static_cast<double>(e.run->gpus);
        r.ape = std::fabs(r.predicted_tokens_per_s_per_gpu / e.run->measured_tokens_per_s_per_gpu - 1);
      }
    }
    report.runs.push_back(std::move(r));
  }
  std::vector<std::string> sources;
  std::map<std::string, std::vector<const RunPrediction*>> by;
  std::vector<const RunPrediction*> all;
  for (const RunPrediction& r : report.runs) {
    if (by.find(r.run->source) == by.end())
      sources.push_back(r.run->source);
    by[r.run->source].push_back(&r);
    all.push_back(&r);
  }
  for (const std::string& s : sources) {
    SourceAccuracy a;
    a.source = s;
    Summarize(by[s], a);
    report.by_source.push_back(a);
  }
  report.overall.source = "overall";
  Summarize(all, report.overall);
  return report;
}

namespace {

// Mean over sources of each source's mean |log(predicted / measured)| over
// the runs of `family`.
double Objective(const AccuracyReport& report, const std::string& family, const std::vector<std::string>& families) {
  std::map<std::string, std::pair<double, size_t>> per_source;
  for (size_t i = 0; i < report.runs.size(); ++i) {
    const RunPrediction& r = report.runs[i];
    if (families[i] != family)
      continue;
    auto& [sum, n] = per_source[r.run->source];
    ++n;
    if (!r.problem.empty() || !(r.predicted_tokens_per_s_per_gpu > 0)) {
      sum += 1;  // unpredictable under these parameters: a large, finite penalty
      continue;
    }
    sum += std::fabs(std::log(r.predicted_tokens_per_s_per_gpu / r.run->measured_tokens_per_s_per_gpu));
  }
  double total = 0;
  for (const auto& [source, v] : per_source)
    total += v.first / static_cast<double>(v.second);
  return per_source.empty() ? 0 : total / static_cast<double>(per_source.size());
}

}  // namespace

StatusOr<CalibrationResult> Calibrate(const TrainingRunSet& runs, const HardwareDb& hw, const ClusterDb& clusters,
                                      const EfficiencyDb& start, const CalibrateOptions& options) {
  if (runs.runs.empty())
    return InvalidArgumentError("calibrate: no usable runs");
  if (options.sweeps < 1 || options.sweeps > 100)
    return InvalidArgumentError("calibrate: sweeps must be in [1, 100]");
  for (const std::string& name : options.fixed) {
    const auto infos = EfficiencyParamInfos();
    if (std::none_of(infos.begin(), infos.end(), [&](const EfficiencyParamInfo& i) { return name == i.name; }))
      return InvalidArgumentError("calibrate: '" + name + "' is not an efficiency parameter");
  }
  MFU_ASSIGN_OR_RETURN(RunSet set, RunSet::Prepare(runs, hw, clusters, start));
  CalibrationResult result;
  result.fitted = start;
  result.before = set.Evaluate(start);
  std::map<std::string, std::vector<std::string>> fixed_by_family;
  if (options.operators != nullptr) {
    MFU_ASSIGN_OR_RETURN(result.operator_fits, FitOperatorProfiles(*options.operators, hw, clusters, result.fitted));
    for (const OperatorFamilyFit& f : result.operator_fits)
      fixed_by_family[f.family] = f.fitted;
  }
  // Each run's family, by position.
  std::vector<std::string> families;
  for (const RunPrediction& r : result.before.runs) {
    StatusOr<const Accelerator*> gpu = hw.Find(r.run->accelerator);
    families.push_back(gpu.ok() ? start.For((*gpu)->id).family : "");
    if (gpu.ok() &&
        std::find(result.families.begin(), result.families.end(), families.back()) == result.families.end()) {
      result.families.push_back(families.back());
    }
  }
  const auto infos = EfficiencyParamInfos();
  for (const std::string& family : result.families) {
    EfficiencyParams* p = result.fitted.Mutable(family);
    if (p == nullptr)
      continue;
    double best = Objective(set.Evaluate(result.fitted), family, families);
    for (int sweep = 0; sweep < options.sweeps; ++sweep) {
      // Search each parameter over a grid around its value that narrows with
      // every sweep, keeping the best (the others fixed).
      const double width = 0.5 / static_cast<double>(1 << sweep);
      for (const EfficiencyParamInfo& info : infos) {
        const std::vector<std::string>& by_profile = fixed_by_family[family];
        if (std::find(options.fixed.begin(), options.fixed.end(), info.name) != options.fixed.end() ||
            std::find(by_profile.begin(), by_profile.end(), info.name) != by_profile.end()) {
          continue;
        }
        const double current = (*p).*info.field;
        const double range = (info.max - info.min) * width;
        double chosen = current;
        for (int k = -8; k <= 8; ++k) {
          const double candidate = std::clamp(current + range * k / 8.0, info.min, info.max);
          if (std::fabs(candidate - chosen) < 1e-15)
            continue;
          (*p).*info.field = candidate;
          const double value = Objective(set.Evaluate(result.fitted), family, families);
          if (value < best - 1e-12) {
            best = value;
            chosen = candidate;
          }
        }
        (*p).*info.field = chosen;
      }
    }
    p->source = "fitted by mfu calibrate to " + std::to_string(std::count(families.begin(), families.end(), family)) +
                " measured runs";
    if (!fixed_by_family[family].empty())
      p->source += "; " + base::Join(fixed_by_family[family], ", ") + " from operator profiles";
  }
  result.after = set.Evaluate(result.fitted);
  return result;
}

}  // namespace mfu
