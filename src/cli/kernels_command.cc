// mfu kernels: the performance model's kernel-level predictions against
// published kernel figures (GEMM, grouped GEMM, attention, collectives,
// memory-bound kernels), with the median error per accelerator family and
// kind (docs/plan.md, "Kernel-level validation").

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "cli/command.h"
#include "report/json_common.h"
#include "mfu/kernel_figures.h"
#include "report/table.h"

namespace mfu::cli {
namespace {

constexpr const char* kDefaultFigures = "data/efficiency/kernel_figures.csv";

// Four significant digits: the figures quote three or four.
std::string Value(double v) {
  return fmt::format("{:.4g}", v);
}

nlohmann::json GroupsJson(const KernelValidation& v) {
  nlohmann::json groups = nlohmann::json::array();
  for (const FigureGroupStats& g : v.groups) {
    groups.push_back({{"family", g.family},
                      {"kind", KernelFigureKindName(g.kind)},
                      {"count", g.count},
                      {"median_abs_error", g.median_abs_error},
                      {"max_abs_error", g.max_abs_error}});
  }
  return groups;
}

nlohmann::json FiguresJson(const KernelValidation& v) {
  nlohmann::json figures = nlohmann::json::array();
  for (const FigurePrediction& p : v.figures) {
    const KernelFigure& f = *p.figure;
    figures.push_back({{"id", f.id},
                       {"kind", KernelFigureKindName(f.kind)},
                       {"accelerator", f.accelerator},
                       {"family", p.family},
                       {"unit", FigureUnitName(f.unit)},
                       {"measured", f.measured},
                       {"predicted", p.predicted},
                       {"error", p.error},
                       {"modelled", f.modelled},
                       {"source", f.source},
                       {"notes", f.notes}});
  }
  return figures;
}

void PrintGroups(std::ostream& out, const KernelValidation& v) {
  report::Table t({"family", "kind", "figures", "median |error|", "max |error|"});
  for (const FigureGroupStats& g : v.groups) {
    t.AddRow({g.family, KernelFigureKindName(g.kind), std::to_string(g.count), report::Percent(g.median_abs_error),
              report::Percent(g.max_abs_error)});
  }
  t.Print(out);
  out << "\nunvalidated (no modelled figure):\n";
  for (const auto& [family, kinds] : v.unvalidated) {
    std::vector<std::string> names;
    for (KernelFigureKind k : kinds)
      names.emplace_back(KernelFigureKindName(k));
    out << fmt::format("  {:<12} {}\n", family, names.empty() ? "-" : base::Join(names, ", "));
  }
}

void PrintFigures(std::ostream& out, const KernelValidation& v) {
  report::Table t({"id", "family", "kind", "unit", "measured", "predicted", "error", ""});
  for (const FigurePrediction& p : v.figures) {
    const KernelFigure& f = *p.figure;
    t.AddRow({f.id, p.family, KernelFigureKindName(f.kind), FigureUnitName(f.unit), Value(f.measured),
              Value(p.predicted), (p.error >= 0 ? "+" : "") + report::Percent(p.error),
              f.modelled ? "" : "not modelled"});
  }
  t.Print(out);
}

class KernelsCommand final : public Command {
 public:
  const char* name() const override { return "kernels"; }
  const char* summary() const override {
    return "Check the performance model's kernel-level predictions against published kernel figures";
  }

  void Register(CLI::App& app) override {
    app.add_option("figures", figures_path_,
                   "CSV of kernel figures (the columns of data/efficiency/kernel_figures.csv)")
        ->capture_default_str();
    app.add_option("--efficiency-file", efficiency_files_,
                   "Override the built-in efficiency or vector kernel tables with this CSV (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--cluster-file", cluster_file_, "CSV adding or overriding clusters");
    app.add_flag("--summary", summary_only_, "Only the median error per family and kind");
    app.add_flag("--fitted", fitted_,
                 "Validate the shipped (fitted) efficiency table instead of the kernel-grounded values "
                 "(data/efficiency/kernel_grounded.csv)");
    app.add_flag("--json", json_, "Machine-readable output: groups, unvalidated, figures");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(std::vector<KernelFigure> figures, ReadKernelFigures(figures_path_));
    MFU_ASSIGN_OR_RETURN(HardwareDb hw, HardwareDb::LoadBuiltin());
    MFU_ASSIGN_OR_RETURN(ClusterDb clusters, ClusterDb::LoadBuiltin());
    if (!cluster_file_.empty())
      MFU_RETURN_IF_ERROR(clusters.AddFile(cluster_file_));
    MFU_ASSIGN_OR_RETURN(EfficiencyDb efficiency,
                         fitted_ ? EfficiencyDb::LoadBuiltin() : EfficiencyDb::LoadBuiltinPrior());
    for (const std::string& file : efficiency_files_)
      MFU_RETURN_IF_ERROR(efficiency.AddFile(file));
    MFU_ASSIGN_OR_RETURN(KernelValidation v, ValidateKernelFigures(figures, hw, clusters, efficiency));
    if (json_) {
      nlohmann::json j = report::JsonEnvelope();
      j["figures_file"] = figures_path_;
      j["groups"] = GroupsJson(v);
      j["unvalidated"] = nlohmann::json::object();
      for (const auto& [family, kinds] : v.unvalidated) {
        j["unvalidated"][family] = nlohmann::json::array();
        for (KernelFigureKind k : kinds)
          j["unvalidated"][family].push_back(KernelFigureKindName(k));
      }
      j["figures"] = FiguresJson(v);
      report::PrintJson(ctx.out, j);
      return Status::Ok();
    }
    size_t modelled = 0;
    for (const KernelFigure& f : figures)
      modelled += f.modelled ? 1 : 0;
    ctx.out << fmt::format("figures     {} ({} modelled) from {}\n", figures.size(), modelled, figures_path_);
    ctx.out << "error = predicted / measured - 1 in the figure's unit; statistics over modelled figures\n\n";
    PrintGroups(ctx.out, v);
    if (!summary_only_) {
      ctx.out << "\n";
      PrintFigures(ctx.out, v);
    }
    return Status::Ok();
  }

 private:
  std::string figures_path_ = kDefaultFigures;
  std::string cluster_file_;
  std::vector<std::string> efficiency_files_;
  bool summary_only_ = false, json_ = false, fitted_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeKernelsCommand() {
  return std::make_unique<KernelsCommand>();
}

}  // namespace mfu::cli
