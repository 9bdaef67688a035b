// Terminal text of `mfu calibrate` (report_calibrate.h).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "mfu/report_calibrate.h"
#include "report/table.h"

namespace mfu::report {
namespace {

std::string Signed(double fraction) {
  return (fraction >= 0 ? "+" : "") + Percent(fraction);
}

std::string RunsCell(const SourceAccuracy& a) {
  return std::to_string(a.runs) + (a.not_predicted > 0 ? fmt::format(" (+{} n/a)", a.not_predicted) : "");
}

// One table; with `fitted`, the MAPE before the fit is a column too.
// Sources in `held_out` are marked, and pooled below the overall row.
void PrintReport(std::ostream& out, const CalibrationResult& result, bool fitted,
                 const std::vector<std::string>& held_out, int width) {
  std::vector<std::string> header = {"source", "runs"};
  if (fitted)
    header.push_back("MAPE before");
  for (const char* h : {"MAPE", "max APE", "bias", "Spearman"})
    header.push_back(h);
  Table t(header);
  auto row = [&](const SourceAccuracy* b, const SourceAccuracy& a, const std::string& name) {
    std::vector<std::string> r = {name, RunsCell(a)};
    if (fitted)
      r.push_back(b != nullptr ? Percent(b->mape) : "");
    r.push_back(Percent(a.mape));
    r.push_back(Percent(a.max_ape));
    r.push_back(Signed(a.bias));
    r.push_back(std::isfinite(a.spearman) ? Fixed(a.spearman, 3) : "-");
    t.AddRow(r);
  };
  for (size_t i = 0; i < result.after.by_source.size(); ++i) {
    const SourceAccuracy& a = result.after.by_source[i];
    const bool out_of_fit = std::find(held_out.begin(), held_out.end(), a.source) != held_out.end();
    row(&result.before.by_source[i], a, out_of_fit ? a.source + " (held out)" : a.source);
  }
  t.AddSeparator();
  row(&result.before.overall, result.after.overall, "overall");
  if (!held_out.empty()) {
    row(nullptr, result.fitted_on, "fitted sources");
    row(nullptr, result.held_out, "held-out sources");
  }
  t.Print(out, width);
}

// Per family and parameter: the prior, the fitted value and the move in
// units of a tenth of the parameter's bounds; then each search.
void PrintParameters(std::ostream& out, const CalibrationResult& result, double regularization, int width) {
  out << fmt::format("\nfitted parameters (move: (fitted - prior) / (a tenth of the bounds); regularization {})\n",
                     regularization);
  Table t({"family", "parameter", "prior", "fitted", "move", "from"});
  std::string family;
  for (const ParameterFit& p : result.parameters) {
    if (!family.empty() && p.family != family)
      t.AddSeparator();
    family = p.family;
    t.AddRow({p.family, p.name, Fixed(p.prior, 4), Fixed(p.fitted, 4), fmt::format("{:+.2f}", p.move), p.how});
  }
  t.Print(out, width);
  for (const FamilySearch& s : result.searches) {
    out << fmt::format("{}: {} runs, {} passes{}, error {:.4f} + penalty {:.4f}\n", s.family, s.runs, s.passes,
                       s.converged ? "" : " (sweeps ran out before convergence)", s.error, s.penalty);
  }
}

void PrintOperatorFits(std::ostream& out, const std::vector<OperatorFamilyFit>& fits, const std::string& dir,
                       int width) {
  out << "\noperator profiles (" << dir << "): error of predicted kernel time\n";
  Table t({"family", "GEMMs", "MAPE before", "after", "vector ops", "before", "after", "collectives", "before", "after",
           "fitted"});
  for (const OperatorFamilyFit& f : fits) {
    t.AddRow({f.family, std::to_string(f.gemms), Percent(f.gemm_mape_before), Percent(f.gemm_mape_after),
              std::to_string(f.vectors), Percent(f.vector_mape_before), Percent(f.vector_mape_after),
              std::to_string(f.collectives), Percent(f.collective_mape_before), Percent(f.collective_mape_after),
              base::Join(f.fitted, " ")});
  }
  t.Print(out, width);
  out << "\nvector kernels: max(min_us + row KiB x row_ns_per_kib, bytes / (HBM x bw_fraction)); median error\n";
  Table k({"family", "kernel", "samples", "median before", "after", "min_us", "row_ns_per_kib", "bw_fraction"});
  for (const OperatorFamilyFit& f : fits) {
    for (const VectorKernelFit& v : f.kernels) {
      k.AddRow({f.family, VectorKernelName(v.kernel), std::to_string(v.samples), Percent(v.median_before),
                Percent(v.median_after), Fixed(v.params.min_us, 2), Fixed(v.params.row_ns_per_kib, 1),
                Fixed(v.params.bw_fraction, 3)});
    }
  }
  k.Print(out, width);
}

void PrintRunsTable(std::ostream& out, const AccuracyReport& report, int width) {
  out << "\n";
  Table t({"row", "source", "model", "gpus", "config", "measured tok/s/GPU", "predicted", "error"});
  for (const RunPrediction& r : report.runs) {
    t.AddRow(
        {std::to_string(r.run->row_id), r.run->source, r.run->model_name, std::to_string(r.run->gpus),
         fmt::format("tp{} pp{} dp{} mbs{}", r.run->tp, r.run->pp, r.prediction.config.dp,
                     r.prediction.config.micro_batch),
         Fixed(r.run->measured_tokens_per_s_per_gpu, 1),
         r.problem.empty() ? Fixed(r.predicted_tokens_per_s_per_gpu, 1) : r.problem,
         r.problem.empty() ? Signed(r.predicted_tokens_per_s_per_gpu / r.run->measured_tokens_per_s_per_gpu - 1) : ""});
  }
  t.Print(out, width);
}

// Per source: the in-sample error (fit to every source) and the error when
// the source is left out of the fit; then both means.
void PrintCrossValidation(std::ostream& out, const CrossValidation& cv, int width) {
  out << "leave-one-source-out cross-validation: each source predicted by a fit (from the prior) to the others\n\n";
  Table t({"source", "runs", "in-sample MAPE", "bias", "held-out MAPE", "bias", "max APE", "Spearman"});
  auto row = [&](const std::string& name, const std::string& runs, const SourceAccuracy& in,
                 const SourceAccuracy& held) {
    t.AddRow({name, runs, Percent(in.mape), Signed(in.bias), Percent(held.mape), Signed(held.bias),
              Percent(held.max_ape), std::isfinite(held.spearman) ? Fixed(held.spearman, 3) : "-"});
  };
  for (size_t i = 0; i < cv.held_out.by_source.size(); ++i)
    row(cv.held_out.by_source[i].source, RunsCell(cv.held_out.by_source[i]), cv.in_sample.by_source[i],
        cv.held_out.by_source[i]);
  t.AddSeparator();
  row("mean over runs", RunsCell(cv.held_out.overall), cv.in_sample.overall, cv.held_out.overall);
  t.AddRow({"mean over sources", std::to_string(cv.held_out.by_source.size()), Percent(cv.in_sample_source_mape), "",
            Percent(cv.held_out_source_mape), "", "", ""});
  t.Print(out, width);
}

}  // namespace
}  // namespace mfu::report

namespace mfu {
using namespace report;  // this file's helpers and the shared JSON shapes

std::string RenderCalibrationText(const TrainingRunSet& runs, const CrossValidation& cv, const CalibrationView& v,
                                  const TextOptions& text_options) {
  std::ostringstream out;
  const CalibrationResult& result = cv.fit;
  out << fmt::format("runs        {} usable, {} skipped ({})\n", runs.runs.size(), runs.skipped.size(), v.runs_path);
  for (const SkippedRun& s : runs.skipped)
    out << "  skipped " << s.reason << "\n";
  out << "error of predicted tokens/s per GPU (= TFLOP/s per GPU in the source's convention, or step time)\n\n";
  if (v.cross_validated)
    PrintCrossValidation(out, cv, text_options.width);
  else
    PrintReport(out, result, v.fitted, v.hold_out, text_options.width);
  if (!result.operator_fits.empty())
    PrintOperatorFits(out, result.operator_fits, v.operators_dir, text_options.width);
  if (v.fitted)
    PrintParameters(out, result, v.regularization, text_options.width);
  if (v.runs_table)
    PrintRunsTable(out, result.after, text_options.width);
  return out.str();
}

}  // namespace mfu
