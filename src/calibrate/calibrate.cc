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

#include "base/check.h"
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

StatusOr<const FrameworkProfile*> FindRunFramework(const TrainingRun& run, const FrameworkDb* frameworks) {
  const FrameworkDb* db = frameworks;
  if (db == nullptr) {
    MFU_ASSIGN_OR_RETURN(db, FrameworkDb::Builtin());
  }
  MFU_ASSIGN_OR_RETURN(const FrameworkProfile* p, db->Find(run.framework_profile));
  if (!run.attention.empty()) {
    StatusOr<AttentionKernel> k = ParseAttentionKernel(run.attention);
    if (!k.ok())
      return InvalidArgumentError("row " + std::to_string(run.row_id) +
                                  ": column 'attention': " + k.status().message());
  }
  StatusOr<Elementwise> compiled = ApplyCompile(*p, run.compile, "column 'compile'");
  if (!compiled.ok())
    return InvalidArgumentError("row " + std::to_string(run.row_id) + ": " + compiled.status().message());
  return p;
}

// The run's parallel sizes and the configuration fields they set.
constexpr std::pair<int64_t TrainingRun::*, int64_t TrainingConfig::*> kRunSizes[] = {
    {&TrainingRun::tp, &TrainingConfig::tp}, {&TrainingRun::pp, &TrainingConfig::pp},
    {&TrainingRun::dp, &TrainingConfig::dp}, {&TrainingRun::cp, &TrainingConfig::cp},
    {&TrainingRun::ep, &TrainingConfig::ep}, {&TrainingRun::vpp, &TrainingConfig::vpp}};

TrainingConfig ConfigOfRun(const TrainingRun& run, const FrameworkProfile& framework) {
  TrainingConfig c;
  for (const auto& [from, to] : kRunSizes)
    c.*to = run.*from;
  // Everything the row does not state is the framework's (frameworks.csv).
  c.sequence_parallel = run.sequence_parallel || framework.sequence_parallel;
  c.zero_stage = run.zero_stage.value_or(framework.DefaultZeroStage(run.pp));
  c.fsdp = run.fsdp;
  c.micro_batch = run.micro_batch > 0 ? run.micro_batch : 1;
  c.global_batch = run.global_batch;
  c.recompute = run.recompute;
  c.precision = run.precision;
  c.tp_comm_overlap =
      run.tp_comm_overlap.value_or(framework.tp_overlap_supported && framework.tp_overlap_default) && run.tp > 1;
  c.flash_attention = run.attention != "unfused" && framework.attention != AttentionKernel::kUnfused;
  return c;
}

StatusOr<RunSet> RunSet::Prepare(const TrainingRunSet& runs, const HardwareDb& hw, const ClusterDb& clusters,
                                 const EfficiencyDb& efficiency, const FrameworkDb* frameworks) {
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
      StatusOr<const FrameworkProfile*> framework = FindRunFramework(run, frameworks);
      if (!framework.ok()) {
        e.problem = framework.status().message();
        set.entries_.push_back(std::move(e));
        continue;
      }
      setup.framework = **framework;
      if (!run.attention.empty())
        setup.framework.attention = *ParseAttentionKernel(run.attention);         // checked by FindRunFramework
      setup.framework.elementwise = *ApplyCompile(**framework, run.compile, "");  // checked by FindRunFramework
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

RunPrediction RunSet::Predict(size_t i, const EfficiencyParams& params) {
  Entry& e = entries_[i];
  RunPrediction r;
  r.run = e.run;
  r.problem = e.problem;
  if (!r.problem.empty())
    return r;
  PerfModel& model = e.model.front();
  model.SetEfficiency(params);
  // A measured run ran: memory is reported, not a reason to refuse it.
  model.EvaluateStep(ConfigOfRun(*e.run, *e.framework), r.prediction);
  if (r.prediction.issue != ConfigIssue::kOk && r.prediction.issue != ConfigIssue::kOutOfMemory) {
    r.problem = std::string("configuration: ") + ConfigIssueName(r.prediction.issue);
  } else {
    r.predicted_tokens_per_s_per_gpu = r.prediction.tokens_per_s / static_cast<double>(e.run->gpus);
    r.ape = std::fabs(r.predicted_tokens_per_s_per_gpu / e.run->measured_tokens_per_s_per_gpu - 1);
  }
  return r;
}

AccuracyReport RunSet::Evaluate(const EfficiencyDb& efficiency) {
  return Evaluate(efficiency, std::vector<bool>(entries_.size(), true));
}

AccuracyReport RunSet::Evaluate(const EfficiencyDb& efficiency, const std::vector<bool>& mask) {
  MFU_CHECK(mask.size() == entries_.size());
  std::vector<RunPrediction> runs;
  runs.reserve(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (!mask[i])
      continue;
    const Entry& e = entries_[i];
    runs.push_back(e.model.empty() ? Predict(i, EfficiencyParams{})
                                   : Predict(i, efficiency.For(e.model.front().setup().gpu->id)));
  }
  return SummarizeRuns(std::move(runs));
}

AccuracyReport SummarizeRuns(std::vector<RunPrediction> runs) {
  AccuracyReport report;
  report.runs = std::move(runs);
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

constexpr int kGrid = 4;            // candidates each side of a parameter's value
constexpr double kNarrow = 4;       // the step shrinks by this after a pass without a move
constexpr double kMinGain = 1e-12;  // an objective decrease smaller than this is no move

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A tenth of a parameter's bounds: the unit of the pull towards the prior
// and of the search's step.
double Scale(const EfficiencyParamInfo& info) {
  return (info.max - info.min) * 0.1;
}

// A parameter the end-to-end search moves.
struct FitParam {
  EfficiencyParamInfo info;
  double prior = 0;
};

// One family's objective: the mean over sources of each source's mean
// |log(predicted / measured)| over the family's runs to fit, plus the
// regularization term.
class FamilyObjective {
 public:
  FamilyObjective(RunSet& set, std::vector<std::vector<size_t>> by_source, std::vector<FitParam> params,
                  double regularization)
      : set_(set), by_source_(std::move(by_source)), params_(std::move(params)), regularization_(regularization) {}

  double Error(const EfficiencyParams& p) {
    double total = 0;
    for (const std::vector<size_t>& runs : by_source_) {
      double sum = 0;
      for (size_t i : runs) {
        const RunPrediction r = set_.Predict(i, p);
        if (!r.problem.empty() || !(r.predicted_tokens_per_s_per_gpu > 0)) {
          sum += 1;  // unpredictable under these parameters: a large, finite penalty
          continue;
        }
        sum += std::fabs(std::log(r.predicted_tokens_per_s_per_gpu / r.run->measured_tokens_per_s_per_gpu));
      }
      total += sum / static_cast<double>(runs.size());
    }
    return by_source_.empty() ? 0 : total / static_cast<double>(by_source_.size());
  }

  double Penalty(const EfficiencyParams& p) const {
    double sum = 0;
    for (const FitParam& f : params_) {
      const double z = (p.*(f.info.field) - f.prior) / Scale(f.info);
      sum += z * z;
    }
    return params_.empty() ? 0 : regularization_ * sum / static_cast<double>(params_.size());
  }

  double operator()(const EfficiencyParams& p) { return Error(p) + Penalty(p); }
  const std::vector<FitParam>& params() const { return params_; }

 private:
  RunSet& set_;
  std::vector<std::vector<size_t>> by_source_;  // run indices
  std::vector<FitParam> params_;
  double regularization_;
};

// Coordinate descent from `p`: each parameter in turn moves to the best of
// kGrid steps either side (within its bounds) when that lowers the
// objective; the step, in units of Scale, starts at 1 and shrinks only
// after a whole pass without a move, until it is below the tolerance or the
// passes run out. Deterministic: the same start gives the same result.
FamilySearch Search(FamilyObjective& objective, EfficiencyParams& p, const CalibrateOptions& options) {
  FamilySearch s;
  double best = objective(p);
  double step = 1;
  while (s.passes < options.sweeps && step >= options.tolerance) {
    ++s.passes;
    bool moved = false;
    for (const FitParam& f : objective.params()) {
      double& value = p.*(f.info.field);
      const double current = value;
      double chosen = current;
      for (int k = -kGrid; k <= kGrid; ++k) {
        const double candidate = std::clamp(current + k * step * Scale(f.info), f.info.min, f.info.max);
        if (std::fabs(candidate - current) < 1e-15)
          continue;
        value = candidate;
        const double v = objective(p);
        if (v < best - kMinGain) {
          best = v;
          chosen = candidate;
          moved = true;
        }
      }
      value = chosen;
    }
    if (!moved)
      step /= kNarrow;
  }
  s.converged = step < options.tolerance;
  s.error = objective.Error(p);
  s.penalty = objective.Penalty(p);
  return s;
}

Status CheckOptions(const CalibrateOptions& options, const std::vector<std::string>& sources) {
  if (options.sweeps < 1 || options.sweeps > 1000)
    return InvalidArgumentError("calibrate: sweeps must be in [1, 1000]");
  if (!(options.regularization >= 0) || !std::isfinite(options.regularization))
    return InvalidArgumentError("calibrate: regularization must be a finite number >= 0");
  if (!(options.tolerance > 0))
    return InvalidArgumentError("calibrate: tolerance must be > 0");
  const auto infos = EfficiencyParamInfos();
  for (const std::string& name : options.fixed) {
    if (std::none_of(infos.begin(), infos.end(), [&](const EfficiencyParamInfo& i) { return name == i.name; }))
      return InvalidArgumentError("calibrate: '" + name + "' is not an efficiency parameter");
  }
  for (const std::string& source : options.hold_out) {
    if (!Contains(sources, source)) {
      return InvalidArgumentError("calibrate: no run has source '" + source +
                                  "' to hold out (sources: " + base::Join(sources, ", ") + ")");
    }
  }
  if (std::all_of(sources.begin(), sources.end(), [&](const std::string& s) { return Contains(options.hold_out, s); }))
    return InvalidArgumentError("calibrate: every source is held out, nothing is left to fit");
  return Status::Ok();
}

const EfficiencyParams* FindFamily(const EfficiencyDb& db, const std::string& family) {
  for (const EfficiencyParams& p : db.all()) {
    if (p.family == family)
      return &p;
  }
  return nullptr;
}

// Copies what the operator profiles measured (`fitted`, FitOperatorProfiles'
// table) into `table`, except options.fixed: the parameters and each fitted
// vector kernel.
void ApplyOperatorFits(const std::vector<OperatorFamilyFit>& fits, const EfficiencyDb& fitted,
                       const std::vector<std::string>& fixed, EfficiencyDb& table) {
  for (const OperatorFamilyFit& f : fits) {
    EfficiencyParams* p = table.Mutable(f.family);
    const EfficiencyParams* q = FindFamily(fitted, f.family);
    if (p == nullptr || q == nullptr)
      continue;
    for (const EfficiencyParamInfo& info : EfficiencyParamInfos()) {
      if (Contains(f.fitted, info.name) && !Contains(fixed, info.name))
        (*p).*info.field = (*q).*info.field;
    }
    for (const VectorKernelFit& k : f.kernels)
      p->vector_kernels[static_cast<size_t>(k.kernel)] = k.params;
  }
}

// What the fit does with one family and the runs it is fitted to.
struct FamilyPlan {
  std::string family;
  std::vector<std::vector<size_t>> by_source;  // runs to fit, by source
  std::vector<std::string> by_operators;       // parameters the profiles measured
  size_t runs = 0;
};

// Every family with runs, in first-appearance order, with its runs to fit
// (`train`) grouped by source.
std::vector<FamilyPlan> PlanFamilies(const RunSet& set, const std::vector<bool>& train,
                                     const std::vector<OperatorFamilyFit>& operator_fits) {
  std::vector<FamilyPlan> plans;
  std::map<std::pair<std::string, std::string>, size_t> groups;  // (family, source) -> by_source index
  for (size_t i = 0; i < set.size(); ++i) {
    const std::string& family = set.family(i);
    if (family.empty())
      continue;
    auto plan = std::find_if(plans.begin(), plans.end(), [&](const FamilyPlan& p) { return p.family == family; });
    if (plan == plans.end()) {
      plans.push_back({family, {}, {}, 0});
      plan = plans.end() - 1;
      for (const OperatorFamilyFit& f : operator_fits) {
        if (f.family == family)
          plan->by_operators = f.fitted;
      }
    }
    if (!train[i])
      continue;
    const auto [group, added] = groups.try_emplace({family, set.run(i).source}, plan->by_source.size());
    if (added)
      plan->by_source.emplace_back();
    plan->by_source[group->second].push_back(i);
    ++plan->runs;
  }
  return plans;
}

// Fits one family of `result.fitted` from `prior` (its parameters outside
// options.fixed and the profiles' start from the prior's values) and
// records each parameter's move.
void FitFamily(const FamilyPlan& plan, const EfficiencyParams& prior, RunSet& set, const CalibrateOptions& options,
               CalibrationResult& result) {
  EfficiencyParams& p = *result.fitted.Mutable(plan.family);
  std::vector<FitParam> params;
  std::vector<std::string> how;
  for (const EfficiencyParamInfo& info : EfficiencyParamInfos()) {
    if (Contains(options.fixed, info.name)) {
      how.emplace_back("fixed");
    } else if (Contains(plan.by_operators, info.name)) {
      how.emplace_back("operators");
    } else {
      how.emplace_back(plan.runs > 0 ? "runs" : "prior");
      p.*info.field = std::clamp(prior.*info.field, info.min, info.max);
      if (plan.runs > 0)
        params.push_back({info, p.*info.field});
    }
  }
  if (plan.runs > 0) {
    FamilyObjective objective(set, plan.by_source, params, options.regularization);
    result.searches.push_back(Search(objective, p, options));
    result.searches.back().family = plan.family;
    result.searches.back().runs = plan.runs;
    result.families.push_back(plan.family);
  }
  size_t k = 0;
  for (const EfficiencyParamInfo& info : EfficiencyParamInfos()) {
    const double from = prior.*info.field, to = p.*info.field;
    result.parameters.push_back({plan.family, info.name, from, to, (to - from) / Scale(info), how[k++]});
  }
}

std::string SourceText(const FamilyPlan& plan, const CalibrateOptions& options) {
  std::string text = "fitted by mfu calibrate to " + std::to_string(plan.runs) + " measured runs";
  if (!options.hold_out.empty())
    text += " (held out: " + base::Join(options.hold_out, ", ") + ")";
  if (!plan.by_operators.empty())
    text += "; " + base::Join(plan.by_operators, ", ") + " from operator profiles";
  return text;
}

// `report`'s runs whose source is in `sources` (`in`) or not, pooled.
SourceAccuracy Pool(const AccuracyReport& report, const std::vector<std::string>& sources, bool in, const char* name) {
  std::vector<const RunPrediction*> runs;
  for (const RunPrediction& r : report.runs) {
    if (Contains(sources, r.run->source) == in)
      runs.push_back(&r);
  }
  SourceAccuracy a;
  a.source = name;
  Summarize(runs, a);
  return a;
}

}  // namespace

StatusOr<CalibrationResult> AssessAccuracy(const TrainingRunSet& runs, const HardwareDb& hw, const ClusterDb& clusters,
                                           const EfficiencyDb& start, const FrameworkDb* frameworks) {
  MFU_ASSIGN_OR_RETURN(RunSet set, RunSet::Prepare(runs, hw, clusters, start, frameworks));
  CalibrationResult result;
  result.fitted = start;
  result.before = set.Evaluate(start);
  result.after = result.before;
  return result;
}

StatusOr<CalibrationResult> Calibrate(const TrainingRunSet& runs, const HardwareDb& hw, const ClusterDb& clusters,
                                      const EfficiencyDb& start, const CalibrateOptions& options) {
  if (runs.runs.empty())
    return InvalidArgumentError("calibrate: no usable runs");
  MFU_RETURN_IF_ERROR(CheckOptions(options, runs.Sources()));
  const EfficiencyDb& prior = options.prior != nullptr ? *options.prior : start;
  MFU_ASSIGN_OR_RETURN(RunSet set, RunSet::Prepare(runs, hw, clusters, start, options.frameworks));
  CalibrationResult result;
  result.fitted = start;
  result.before = set.Evaluate(start);
  if (options.operators != nullptr) {
    EfficiencyDb measured = prior;
    MFU_ASSIGN_OR_RETURN(result.operator_fits, FitOperatorProfiles(*options.operators, hw, clusters, measured));
    ApplyOperatorFits(result.operator_fits, measured, options.fixed, result.fitted);
  }
  std::vector<bool> train(set.size());
  for (size_t i = 0; i < set.size(); ++i)
    train[i] = !Contains(options.hold_out, set.run(i).source);
  for (const FamilyPlan& plan : PlanFamilies(set, train, result.operator_fits)) {
    EfficiencyParams* p = result.fitted.Mutable(plan.family);
    if (p == nullptr)
      continue;
    const EfficiencyParams* from = FindFamily(prior, plan.family);
    const EfficiencyParams own = *p;  // a family the prior lacks starts from its own values
    FitFamily(plan, from != nullptr ? *from : own, set, options, result);
    if (plan.runs > 0)
      p->source = SourceText(plan, options);
  }
  result.after = set.Evaluate(result.fitted);
  if (!options.hold_out.empty()) {
    result.held_out = Pool(result.after, options.hold_out, true, "held out");
    result.fitted_on = Pool(result.after, options.hold_out, false, "fitted");
  }
  return result;
}

}  // namespace mfu
