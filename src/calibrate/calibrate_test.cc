// Accuracy of the shipped performance model on the measured runs (the table
// in docs/plan.md) and the calibration machinery.

#include "mfu/calibrate.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

namespace mfu {
namespace {

const std::string kRuns = std::string(MFU_SOURCE_DIR) + "/tests/data/training-runs-calibration.csv";

// Leave-one-source-out cross-validation (CrossValidate with the operator
// profiles and the default options, from the built-in kernel-grounded
// prior): the largest held-out MAPE each source may have, a margin of
// about half a point to two points above the value measured on 2026-12-03
// with every mechanism of that day (DeepSpeed's ZeRO-3 re-gather for
// recompute and 2021 per-rank list copies, vTrain's cluster on NVLink 3,
// DeepSpeed's pipeline scatter-gather, NeMo on its distributed optimizer;
// in-sample / held-out MAPE): narayanan2021 6.3% / 6.5%, korthikanti2022
// 4.3% / 4.5%, nemo-24.07 3.6% / 12.2%, llm-foundry 6.5% / 7.0%,
// torchtitan 9.7% / 11.4%, vtrain 9.3% / 9.3%; held out, mean over runs
// 7.9%, over sources 8.5% (goal: 10% over runs, no source above 15%).
// Before them: narayanan2021 9.6% / 9.8% (14.3% / 14.5% before the
// re-gather), korthikanti2022 4.0% / 4.1%, nemo-24.07 2.8% / 9.7%, vtrain
// 14.3% / 15.0%, 9.3% over runs, 9.6% over sources; before the sustained
// clock: nemo 17.3%, torchtitan 16.4%. The test prints the measured values:
// re-set the bounds here when the model or the tables change.
struct CrossValidationBound {
  const char* source;
  double max_held_out_mape;
};
constexpr CrossValidationBound kCrossValidationBounds[] = {
    {"narayanan2021", 0.075}, {"korthikanti2022", 0.05}, {"nemo-24.07", 0.13},
    {"llm-foundry", 0.08},    {"torchtitan", 0.11},      {"vtrain", 0.10},
};
constexpr double kMaxHeldOutMapeOverRuns = 0.085;
constexpr double kMaxHeldOutMapeOverSources = 0.09;

struct Dbs {
  HardwareDb hw;
  ClusterDb clusters;
  EfficiencyDb efficiency;
};

Dbs LoadDbs() {
  Dbs d;
  auto hw = HardwareDb::LoadBuiltin();
  auto clusters = ClusterDb::LoadBuiltin();
  auto eff = EfficiencyDb::LoadBuiltin();
  EXPECT_TRUE(hw.ok() && clusters.ok() && eff.ok());
  d.hw = std::move(hw).value();
  d.clusters = std::move(clusters).value();
  d.efficiency = std::move(eff).value();
  return d;
}

TEST(Spearman, HandComputedValues) {
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Ties take the mean rank: ranks (1, 2.5, 2.5, 4) vs (1, 2, 3, 4):
  // cov 4.5, variances 4.5 and 5 -> 4.5 / sqrt(22.5).
  EXPECT_NEAR(SpearmanCorrelation({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(22.5), 1e-12);
  EXPECT_TRUE(std::isnan(SpearmanCorrelation({1, 2}, {1, 2})));
  EXPECT_TRUE(std::isnan(SpearmanCorrelation({1, 1, 1}, {1, 2, 3})));
}

TEST(ConfigOfRun, FrameworkDefaults) {
  auto db = FrameworkDb::Builtin();
  ASSERT_TRUE(db.ok()) << db.status().message();
  TrainingRun run;
  run.tp = 8;
  run.pp = 2;
  const FrameworkProfile& vtrain = **(*db)->Find("megatron-deepspeed");
  const FrameworkProfile& nemo = **(*db)->Find("nemo");
  EXPECT_FALSE(ConfigOfRun(run, vtrain).sequence_parallel);
  EXPECT_FALSE(ConfigOfRun(run, vtrain).flash_attention);  // Megatron-DeepSpeed materialises the scores
  EXPECT_EQ(vtrain.dp_grad_overlap, 0);                    // no gradient bucketing in vTrain's runs
  EXPECT_TRUE(ConfigOfRun(run, nemo).sequence_parallel);
  EXPECT_TRUE(ConfigOfRun(run, nemo).tp_comm_overlap);
  EXPECT_TRUE(ConfigOfRun(run, nemo).flash_attention);
  run.attention = "unfused";  // a row's own attention column wins
  EXPECT_FALSE(ConfigOfRun(run, nemo).flash_attention);
  run.micro_batch = 0;
  EXPECT_EQ(ConfigOfRun(run, nemo).micro_batch, 1);
  run.tp = 1;  // no TP, nothing to overlap
  EXPECT_FALSE(ConfigOfRun(run, nemo).tp_comm_overlap);
}

// The runs' framework profiles come from the table given (a Catalog's,
// with `--framework-file`), the built-in one only when none is: NeMo's
// rows without its data-parallel overlap predict slower steps.
TEST(Calibrate, RunsReadTheFrameworkTableGiven) {
  auto runs = ReadTrainingRuns(RealFileSystem(), kRuns);
  ASSERT_TRUE(runs.ok());
  auto builtin = FrameworkDb::LoadBuiltin();
  ASSERT_TRUE(builtin.ok());
  FrameworkDb user = *builtin;
  ASSERT_TRUE(user.AddCsv("name,dp_grad_overlap,dp_param_overlap\nnemo,0,0\n", "user.csv").ok());
  TrainingRun run;
  run.framework_profile = "nemo";
  EXPECT_GT((*FindRunFramework(run))->dp_grad_overlap, 0);
  EXPECT_EQ((*FindRunFramework(run, &user))->dp_grad_overlap, 0);
  Dbs d = LoadDbs();
  auto shipped = AssessAccuracy(*runs, d.hw, d.clusters, d.efficiency);
  auto changed = AssessAccuracy(*runs, d.hw, d.clusters, d.efficiency, &user);
  ASSERT_TRUE(shipped.ok() && changed.ok());
  auto nemo_bias = [](const AccuracyReport& r) {
    for (const SourceAccuracy& s : r.by_source) {
      if (s.source == "nemo-24.07")
        return s.bias;
    }
    return 0.0;
  };
  EXPECT_LT(nemo_bias(changed->before), nemo_bias(shipped->before));
}

// A row's compile column: checked against the framework (a fused one has
// no torch.compile setting), applied to the setup the run is predicted on.
TEST(Calibrate, CompileColumnIsCheckedPerRow) {
  TrainingRun run;
  run.row_id = 7;
  run.framework_profile = "megatron-core";
  run.compile = "yes";
  StatusOr<const FrameworkProfile*> fused = FindRunFramework(run);
  ASSERT_FALSE(fused.ok());
  EXPECT_EQ(fused.status().message().rfind("row 7: column 'compile' yes: framework megatron-core", 0), 0u)
      << fused.status().message();
  run.framework_profile = "torchtitan";
  run.compile = "perhaps";
  ASSERT_FALSE(FindRunFramework(run).ok());
  EXPECT_NE(FindRunFramework(run).status().message().find("'perhaps' is not on or off"), std::string::npos);
  run.compile = "no";
  EXPECT_TRUE(FindRunFramework(run).ok());
}

// The accuracy table of docs/plan.md. The bounds are the measured errors of
// the shipped parameters plus a small margin: this test fails when a change
// to the model or the data makes the predictions worse.
TEST(Accuracy, ShippedParametersOnTheCalibrationRuns) {
  auto runs = ReadTrainingRuns(RealFileSystem(), kRuns);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  Dbs d = LoadDbs();
  auto set = RunSet::Prepare(*runs, d.hw, d.clusters, d.efficiency);
  ASSERT_TRUE(set.ok());
  const AccuracyReport r = set->Evaluate(d.efficiency);
  EXPECT_EQ(r.overall.not_predicted, 0u);
  EXPECT_EQ(r.overall.runs, 253u);
  struct Bound {
    const char* source;
    double max_mape;
  };
  // Measured 2026-12-03 (kernel-grounded prior, framework profiles,
  // Hopper's sustained clock and the day's mechanisms: DeepSpeed's ZeRO-3
  // re-gather and 2021 list copies, vTrain on NVLink 3, DeepSpeed's pipeline
  // scatter-gather, NeMo on ZeRO-1): 6.3%, 4.3%, 3.6%, 6.5%, 9.7%, 9.3%;
  // overall 7.1% (before them: 9.6%, 4.0%, 2.8%, 6.5%, 9.6%, 14.3%; 8.4%;
  // 2026-12-01, without the re-gather: narayanan2021 14.3%, nemo 3.4%,
  // torchtitan 10.6%, 8.9%; before #10: 14.2%, 4.0%, 6.5%, 3.9%, 10.8%,
  // 13.7%; 7.5%). 2026-12-05, torchtitan's eager rows (324, 331) with
  // their modules' extra elementwise traffic: torchtitan 8.3% -> 7.1%,
  // nemo 3.7%, overall 6.9%. Bounds: these plus a margin of 0.7-1.5 points.
  const Bound bounds[] = {{"narayanan2021", 0.075}, {"korthikanti2022", 0.05}, {"nemo-24.07", 0.045},
                          {"llm-foundry", 0.075},   {"torchtitan", 0.085},     {"vtrain", 0.10}};
  for (const Bound& b : bounds) {
    bool found = false;
    for (const SourceAccuracy& a : r.by_source) {
      if (a.source != b.source)
        continue;
      found = true;
      EXPECT_LE(a.mape, b.max_mape) << a.source;
    }
    EXPECT_TRUE(found) << b.source;
  }
  EXPECT_LE(r.overall.mape, 0.078);
  // Ranking inside vTrain's grid, which includes deliberately slow layouts.
  for (const SourceAccuracy& a : r.by_source) {
    if (a.source == "vtrain") {
      EXPECT_GE(a.spearman, 0.9);
    }
  }
  EXPECT_GE(r.overall.spearman, 0.95);
}

// The fitter recovers a known parameter set: runs whose "measured"
// throughput is the model's own prediction under target parameters are fitted
// from perturbed starting values to a small error.
TEST(Calibrate, RecoversSyntheticTargets) {
  auto runs = ReadTrainingRuns(RealFileSystem(), kRuns);
  ASSERT_TRUE(runs.ok());
  Dbs d = LoadDbs();
  TrainingRunSet synthetic;
  for (const TrainingRun& run : runs->runs) {
    if (run.source == "llm-foundry" || run.source == "korthikanti2022")
      synthetic.runs.push_back(run);
  }
  EfficiencyDb target = d.efficiency;
  EfficiencyParams* a = target.Mutable("ampere");
  ASSERT_NE(a, nullptr);
  a->matmul_peak_fraction = 0.7;
  a->attention_peak_fraction = 0.5;
  a->vector_bw_fraction = 0.6;
  a->overlap_efficiency = 0.6;
  auto set = RunSet::Prepare(synthetic, d.hw, d.clusters, target);
  ASSERT_TRUE(set.ok());
  const AccuracyReport truth = set->Evaluate(target);
  for (size_t i = 0; i < synthetic.runs.size(); ++i) {
    ASSERT_TRUE(truth.runs[i].problem.empty()) << truth.runs[i].problem;
    synthetic.runs[i].measured_tokens_per_s_per_gpu = truth.runs[i].predicted_tokens_per_s_per_gpu;
  }
  EfficiencyDb start = target;
  EfficiencyParams* s = start.Mutable("ampere");
  s->matmul_peak_fraction = 0.85;
  s->attention_peak_fraction = 0.3;
  s->vector_bw_fraction = 0.9;
  CalibrateOptions free;
  free.regularization = 0;  // no pull towards the (perturbed) start
  auto fitted = Calibrate(synthetic, d.hw, d.clusters, start, free);
  ASSERT_TRUE(fitted.ok()) << fitted.status().message();
  EXPECT_GT(fitted->before.overall.mape, 0.05);
  EXPECT_LT(fitted->after.overall.mape, 0.02);
  EXPECT_EQ(fitted->families, std::vector<std::string>{"ampere"});
}

TEST(Calibrate, RejectsBadOptions) {
  Dbs d = LoadDbs();
  EXPECT_EQ(Calibrate({}, d.hw, d.clusters, d.efficiency).status().code(), StatusCode::kInvalidArgument);
  auto runs = ReadTrainingRuns(RealFileSystem(), kRuns);
  ASSERT_TRUE(runs.ok());
  auto code = [&](const CalibrateOptions& o) { return Calibrate(*runs, d.hw, d.clusters, d.efficiency, o).status(); };
  CalibrateOptions o;
  o.sweeps = 0;
  EXPECT_EQ(code(o).code(), StatusCode::kInvalidArgument);
  o = {};
  o.fixed = {"warp_speed"};
  EXPECT_EQ(code(o).code(), StatusCode::kInvalidArgument);
  for (double bad : {-0.1, std::nan(""), std::numeric_limits<double>::infinity()}) {
    o = {};
    o.regularization = bad;
    EXPECT_EQ(code(o).code(), StatusCode::kInvalidArgument) << bad;
  }
  o = {};
  o.tolerance = 0;
  EXPECT_EQ(code(o).code(), StatusCode::kInvalidArgument);
  // An unknown held-out source: one line listing the sources.
  o = {};
  o.hold_out = {"nemo"};
  const Status unknown = code(o);
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("'nemo'"), std::string::npos) << unknown.message();
  EXPECT_NE(unknown.message().find("narayanan2021, korthikanti2022, nemo-24.07"), std::string::npos)
      << unknown.message();
  EXPECT_EQ(unknown.message().find('\n'), std::string::npos);
  o.hold_out = {"narayanan2021", "korthikanti2022", "nemo-24.07", "llm-foundry", "torchtitan", "vtrain"};
  EXPECT_EQ(code(o).code(), StatusCode::kInvalidArgument);  // nothing left to fit
  o = {};
  o.hold_out = {"vtrain"};
  EXPECT_EQ(CrossValidate(*runs, d.hw, d.clusters, d.efficiency, o).status().code(), StatusCode::kInvalidArgument);
}

// Every fitted parameter of every family, bit for bit.
void ExpectSameParameters(const EfficiencyDb& a, const EfficiencyDb& b) {
  ASSERT_EQ(a.all().size(), b.all().size());
  for (size_t f = 0; f < a.all().size(); ++f) {
    for (const EfficiencyParamInfo& info : EfficiencyParamInfos()) {
      EXPECT_EQ(std::bit_cast<uint64_t>(a.all()[f].*info.field), std::bit_cast<uint64_t>(b.all()[f].*info.field))
          << a.all()[f].family << " " << info.name << ": " << a.all()[f].*info.field << " vs "
          << b.all()[f].*info.field;
    }
  }
}

// Running the fit again from its own result, with the same prior, gives the
// same parameters: the search starts from the prior, not from the table, so
// it cannot drift along a flat valley from run to run. Both stages, and
// also through the CSV the command writes.
TEST(Calibrate, RefitFromTheResultIsIdempotent) {
  auto runs = ReadTrainingRuns(RealFileSystem(), kRuns);
  ASSERT_TRUE(runs.ok());
  auto profiles = ReadOperatorProfiles(RealFileSystem(), std::string(MFU_SOURCE_DIR) + "/tests/data/vidur");
  ASSERT_TRUE(profiles.ok()) << profiles.status().message();
  Dbs d = LoadDbs();
  CalibrateOptions o;
  o.prior = &d.efficiency;
  o.operators = &*profiles;
  auto first = Calibrate(*runs, d.hw, d.clusters, d.efficiency, o);
  ASSERT_TRUE(first.ok()) << first.status().message();
  for (const FamilySearch& s : first->searches)
    EXPECT_TRUE(s.converged) << s.family << " after " << s.passes << " passes";
  auto second = Calibrate(*runs, d.hw, d.clusters, first->fitted, o);
  ASSERT_TRUE(second.ok());
  ExpectSameParameters(first->fitted, second->fitted);
  EfficiencyDb written = d.efficiency;
  ASSERT_TRUE(written.AddCsv(first->fitted.ToCsv(), "fitted.csv").ok());
  ASSERT_TRUE(written.AddCsv(first->fitted.VectorKernelsToCsv(), "kernels.csv").ok());
  auto third = Calibrate(*runs, d.hw, d.clusters, written, o);
  ASSERT_TRUE(third.ok());
  ExpectSameParameters(first->fitted, third->fitted);
  EXPECT_EQ(first->fitted.ToCsv(), third->fitted.ToCsv());
}

// The shipped tables are exactly what docs/plan.md's documented command
// writes (`mfu calibrate RUNS --operators tests/data/vidur --prior
// data/efficiency/kernel_grounded.csv --write ... --write-vector-kernels
// ...`): a parameter edited by hand in efficiency.csv or
// vector_kernels.csv, or a fit that no longer lands where it did, fails
// here, so the shipped values always have the documented provenance.
TEST(Calibrate, ShippedTablesAreWhatTheDocumentedCommandWrites) {
  auto runs = ReadTrainingRuns(RealFileSystem(), kRuns);
  ASSERT_TRUE(runs.ok());
  auto profiles = ReadOperatorProfiles(RealFileSystem(), std::string(MFU_SOURCE_DIR) + "/tests/data/vidur");
  ASSERT_TRUE(profiles.ok()) << profiles.status().message();
  auto prior = EfficiencyDb::LoadBuiltinPrior();
  ASSERT_TRUE(prior.ok()) << prior.status().message();
  Dbs d = LoadDbs();
  CalibrateOptions o;
  o.prior = &*prior;
  o.operators = &*profiles;
  auto fit = Calibrate(*runs, d.hw, d.clusters, d.efficiency, o);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  auto shipped = [](const char* name) {
    StatusOr<std::string> text = RealFileSystem().ReadFile(std::string(MFU_SOURCE_DIR) + "/data/efficiency/" + name);
    EXPECT_TRUE(text.ok()) << name;
    return text.ok() ? *text : std::string();
  };
  EXPECT_EQ(fit->fitted.ToCsv(), shipped("efficiency.csv"));
  // The sources name the profiles' directory as given: relative in the
  // documented command, absolute here.
  std::string kernels = fit->fitted.VectorKernelsToCsv();
  const std::string root = std::string(MFU_SOURCE_DIR) + "/";
  for (size_t at = kernels.find(root); at != std::string::npos; at = kernels.find(root, at))
    kernels.erase(at, root.size());
  EXPECT_EQ(kernels, shipped("vector_kernels.csv"));
}

// The report of how far the data moved each parameter, and the pull: a
// strong regularization keeps every parameter at its prior.
TEST(Calibrate, ReportsMovesAndRegularizationPullsToThePrior) {
  auto runs = ReadTrainingRuns(RealFileSystem(), kRuns);
  ASSERT_TRUE(runs.ok());
  Dbs d = LoadDbs();
  CalibrateOptions o;
  o.fixed = {EfficiencyParamInfos()[0].name};
  auto fit = Calibrate(*runs, d.hw, d.clusters, d.efficiency, o);
  ASSERT_TRUE(fit.ok());
  // Every parameter of every family with runs (ampere and hopper at least).
  ASSERT_EQ(fit->parameters.size(), fit->families.size() * EfficiencyParamInfos().size());
  ASSERT_GE(fit->families.size(), 2u);
  bool moved = false;
  const auto infos = EfficiencyParamInfos();
  for (const ParameterFit& p : fit->parameters) {
    const EfficiencyParamInfo* info = nullptr;
    for (const EfficiencyParamInfo& i : infos) {
      if (p.name == i.name)
        info = &i;
    }
    ASSERT_NE(info, nullptr) << p.name;
    EXPECT_NEAR(p.move, (p.fitted - p.prior) / ((info->max - info->min) * 0.1), 1e-12);
    EXPECT_DOUBLE_EQ(p.fitted, fit->fitted.Mutable(p.family)->*info->field) << p.family << " " << p.name;
    EXPECT_EQ(p.how, p.name == o.fixed[0] ? "fixed" : "runs");
    moved = moved || std::fabs(p.move) > 0.01;
  }
  EXPECT_TRUE(moved);  // the data moves something
  o.regularization = 1e6;
  auto held = Calibrate(*runs, d.hw, d.clusters, d.efficiency, o);
  ASSERT_TRUE(held.ok());
  for (const ParameterFit& p : held->parameters)
    EXPECT_LT(std::fabs(p.move), 0.01) << p.family << " " << p.name;
}

// A held-out source is predicted, not fitted: its runs leave the fit (the
// fit differs from the fit to all sources) and its error is pooled apart.
TEST(Calibrate, HoldOutLeavesASourceOutOfTheFit) {
  auto runs = ReadTrainingRuns(RealFileSystem(), kRuns);
  ASSERT_TRUE(runs.ok());
  Dbs d = LoadDbs();
  CalibrateOptions o;
  auto all = Calibrate(*runs, d.hw, d.clusters, d.efficiency, o);
  o.hold_out = {"torchtitan"};
  auto held = Calibrate(*runs, d.hw, d.clusters, d.efficiency, o);
  ASSERT_TRUE(all.ok() && held.ok());
  EXPECT_EQ(held->held_out.runs, 18u);
  EXPECT_EQ(held->fitted_on.runs, 253u - 18u);
  EXPECT_EQ(held->after.runs.size(), 253u);  // every run is still evaluated
  size_t fitted_runs = 0;                    // each run to fit is in one family's search
  for (const FamilySearch& s : held->searches)
    fitted_runs += s.runs;
  EXPECT_EQ(fitted_runs, 253u - 18u);
  EXPECT_NE(held->fitted.ToCsv(), all->fitted.ToCsv());
  EXPECT_NE(held->fitted.ToCsv().find("held out: torchtitan"), std::string::npos);
}

// Fails when the calibration generalizes worse: each source's error when it
// is left out of the fit must stay under kCrossValidationBounds. Also
// checks the folds' bookkeeping (held-out runs are predicted by a fit that
// did not see them, which makes their error no smaller in the mean).
TEST(CrossValidation, HeldOutErrorOfEachSourceStaysBounded) {
  auto runs = ReadTrainingRuns(RealFileSystem(), kRuns);
  ASSERT_TRUE(runs.ok());
  auto profiles = ReadOperatorProfiles(RealFileSystem(), std::string(MFU_SOURCE_DIR) + "/tests/data/vidur");
  ASSERT_TRUE(profiles.ok()) << profiles.status().message();
  Dbs d = LoadDbs();
  // From the kernel-grounded prior, as `mfu calibrate --cross-validate` does:
  // the shipped table was fitted to every source and would leak the
  // held-out one into its own prediction.
  auto prior = EfficiencyDb::LoadBuiltinPrior();
  ASSERT_TRUE(prior.ok()) << prior.status().message();
  CalibrateOptions o;
  o.operators = &*profiles;
  auto cv = CrossValidate(*runs, d.hw, d.clusters, *prior, o);
  ASSERT_TRUE(cv.ok()) << cv.status().message();
  ASSERT_EQ(cv->held_out.by_source.size(), std::size(kCrossValidationBounds));
  ASSERT_EQ(cv->in_sample.by_source.size(), cv->held_out.by_source.size());
  EXPECT_EQ(cv->held_out.overall.runs, 253u);
  for (size_t i = 0; i < cv->held_out.runs.size(); ++i)
    EXPECT_EQ(cv->held_out.runs[i].run, cv->in_sample.runs[i].run);
  for (const CrossValidationBound& b : kCrossValidationBounds) {
    const SourceAccuracy* in = nullptr;
    const SourceAccuracy* out = nullptr;
    for (size_t i = 0; i < cv->held_out.by_source.size(); ++i) {
      if (cv->held_out.by_source[i].source == b.source) {
        in = &cv->in_sample.by_source[i];
        out = &cv->held_out.by_source[i];
      }
    }
    ASSERT_NE(out, nullptr) << b.source;
    std::printf("cross-validation %-16s in-sample MAPE %5.2f%%  held-out MAPE %5.2f%%  bias %+6.2f%%  (bound %.1f%%)\n",
                b.source, 100 * in->mape, 100 * out->mape, 100 * out->bias, 100 * b.max_held_out_mape);
    EXPECT_LE(out->mape, b.max_held_out_mape) << b.source;
  }
  std::printf("cross-validation held-out MAPE: mean over runs %.2f%%, mean over sources %.2f%%\n",
              100 * cv->held_out.overall.mape, 100 * cv->held_out_source_mape);
  EXPECT_LE(cv->held_out.overall.mape, kMaxHeldOutMapeOverRuns);
  EXPECT_LE(cv->held_out_source_mape, kMaxHeldOutMapeOverSources);
  EXPECT_GE(cv->held_out_source_mape, cv->in_sample_source_mape - 0.005);
}

TEST(EfficiencyDb, BuiltinFamiliesAndErrors) {
  Dbs d = LoadDbs();
  EXPECT_EQ(d.efficiency.For("a100-sxm4-80gb").family, "ampere");
  EXPECT_EQ(d.efficiency.For("h100-sxm5-80gb").family, "hopper");
  EXPECT_EQ(d.efficiency.For("tpu-v5p").family, "default");
  EXPECT_EQ(*d.efficiency.Find("Hopper"), &d.efficiency.For("h100-sxm5-80gb"));
  EXPECT_EQ(d.efficiency.Find("hoper").status().message().rfind("unknown efficiency family 'hoper' (did you mean "
                                                                "'hopper'?); known: default, ",
                                                                0),
            0u);
  EfficiencyDb e = d.efficiency;
  Status bad = e.AddCsv("family,matmul_peak_fraction\nampere,abc\n", "x.csv");
  EXPECT_EQ(bad.code(), StatusCode::kParse);
  EXPECT_NE(bad.message().find("x.csv:2: column 'matmul_peak_fraction'"), std::string::npos) << bad.message();
  EXPECT_EQ(e.AddCsv("family,matmul_peak_fraction\nampere,1.5\n", "x.csv").code(), StatusCode::kOutOfRange);
  EXPECT_EQ(e.AddCsv("family,bogus\nampere,1\n", "x.csv").code(), StatusCode::kParse);
  EXPECT_EQ(e.AddCsv("family\nampere\nampere\n", "x.csv").code(), StatusCode::kParse);
  // An override changes only the given column; ToCsv round-trips.
  ASSERT_TRUE(e.AddCsv("family,overlap_efficiency\nampere,0.5\n", "x.csv").ok());
  EXPECT_DOUBLE_EQ(e.For("a100").overlap_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(e.For("a100").matmul_peak_fraction, d.efficiency.For("a100").matmul_peak_fraction);
  EfficiencyDb again;
  ASSERT_TRUE(again.AddCsv(e.ToCsv(), "round.csv").ok());
  EXPECT_NEAR(again.For("a100").overlap_efficiency, 0.5, 1e-9);
  EXPECT_EQ(again.all().size(), e.all().size());
}

// data/efficiency/vector_kernels.csv: one row per family and kernel, each
// with its source; overrides change only the given columns; bad input gives
// one-line errors naming the file, line and column, and changes nothing.
TEST(EfficiencyDb, VectorKernelTableAndErrors) {
  Dbs d = LoadDbs();
  for (const EfficiencyParams& p : d.efficiency.all()) {
    for (const VectorKernelParams& k : p.vector_kernels)
      EXPECT_FALSE(k.source.empty()) << p.family;
  }
  const auto norm = static_cast<size_t>(VectorKernel::kNorm);
  const auto act = static_cast<size_t>(VectorKernel::kActivation);
  EfficiencyDb e = d.efficiency;
  auto error = [&](const std::string& csv) {
    EfficiencyDb copy = e;
    Status s = copy.AddCsv(csv, "k.csv");
    EXPECT_EQ(copy.ToCsv() + copy.VectorKernelsToCsv(), e.ToCsv() + e.VectorKernelsToCsv()) << csv;
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
    return s;
  };
  Status bad = error("family,kernel,bw_fraction\nampere,norm,abc\n");
  EXPECT_EQ(bad.code(), StatusCode::kParse);
  EXPECT_NE(bad.message().find("k.csv:2: column 'bw_fraction': 'abc' is not a number"), std::string::npos)
      << bad.message();
  Status range = error("family,kernel,min_us\nampere,norm,0.5\nhopper,activation,-1\n");
  EXPECT_EQ(range.code(), StatusCode::kOutOfRange);
  EXPECT_NE(range.message().find("k.csv:3: column 'min_us': -1 is not in [0, 1000]"), std::string::npos)
      << range.message();
  Status kind = error("family,kernel\nampere,softmax\n");
  EXPECT_EQ(kind.code(), StatusCode::kParse);
  EXPECT_NE(kind.message().find("k.csv:2: column 'kernel': 'softmax' is not norm, residual_add or activation"),
            std::string::npos)
      << kind.message();
  Status family = error("family,kernel\ntpu,norm\n");
  EXPECT_NE(family.message().find("k.csv:2: column 'family': 'tpu'"), std::string::npos) << family.message();
  EXPECT_EQ(error("family,kernel\nampere,norm\nampere,norm\n").code(), StatusCode::kParse);
  EXPECT_EQ(error("family,kernel,bogus\nampere,norm,1\n").code(), StatusCode::kParse);
  EXPECT_EQ(error("kernel,min_us\nnorm,1\n").code(), StatusCode::kParse);

  // An override changes only the given kernel and column; the table round-trips.
  ASSERT_TRUE(e.AddCsv("family,kernel,bw_fraction\nhopper,activation,0.25\n", "k.csv").ok());
  EXPECT_DOUBLE_EQ(e.For("h100").vector_kernels[act].bw_fraction, 0.25);
  EXPECT_DOUBLE_EQ(e.For("h100").vector_kernels[act].min_us, d.efficiency.For("h100").vector_kernels[act].min_us);
  EXPECT_DOUBLE_EQ(e.For("h100").vector_kernels[norm].bw_fraction,
                   d.efficiency.For("h100").vector_kernels[norm].bw_fraction);
  EfficiencyDb again = d.efficiency;
  ASSERT_TRUE(again.AddCsv(e.VectorKernelsToCsv(), "round.csv").ok());
  EXPECT_NEAR(again.For("h100").vector_kernels[act].bw_fraction, 0.25, 1e-9);
  EXPECT_EQ(again.For("h100").vector_kernels[act].source, e.For("h100").vector_kernels[act].source);
  // A family added by an efficiency override starts from the default's kernels.
  ASSERT_TRUE(e.AddCsv("family,accelerators\ntpu,tpu-v5\n", "x.csv").ok());
  EXPECT_DOUBLE_EQ(e.For("tpu-v5p").vector_kernels[norm].min_us, e.For("default-id").vector_kernels[norm].min_us);
}

}  // namespace
}  // namespace mfu
