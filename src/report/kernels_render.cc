// Text and JSON of `mfu kernels` (report_kernels.h).

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "mfu/report_kernels.h"
#include "report/json_common.h"
#include "report/table.h"

namespace mfu::report {
namespace {

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

void PrintGroups(std::ostream& out, const KernelValidation& v, int width) {
  Table t({"family", "kind", "figures", "median |error|", "max |error|"});
  for (const FigureGroupStats& g : v.groups) {
    t.AddRow({g.family, KernelFigureKindName(g.kind), std::to_string(g.count), Percent(g.median_abs_error),
              Percent(g.max_abs_error)});
  }
  t.Print(out, width);
  out << "\nunvalidated (no modelled figure):\n";
  for (const auto& [family, kinds] : v.unvalidated) {
    std::vector<std::string> names;
    for (KernelFigureKind k : kinds)
      names.emplace_back(KernelFigureKindName(k));
    out << fmt::format("  {:<12} {}\n", family, names.empty() ? "-" : base::Join(names, ", "));
  }
}

void PrintFigures(std::ostream& out, const KernelValidation& v, int width) {
  Table t({"id", "family", "kind", "unit", "measured", "predicted", "error", ""});
  for (const FigurePrediction& p : v.figures) {
    const KernelFigure& f = *p.figure;
    t.AddRow({f.id, p.family, KernelFigureKindName(f.kind), FigureUnitName(f.unit), Value(f.measured),
              Value(p.predicted), (p.error >= 0 ? "+" : "") + Percent(p.error), f.modelled ? "" : "not modelled"});
  }
  t.Print(out, width);
}

}  // namespace
}  // namespace mfu::report

namespace mfu {
using namespace report;  // this file's helpers and the shared JSON shapes

std::string RenderKernelValidationJson(const KernelValidation& v, const std::string& figures_path) {
  nlohmann::json j = JsonEnvelope();
  j["figures_file"] = figures_path;
  j["groups"] = GroupsJson(v);
  j["unvalidated"] = nlohmann::json::object();
  for (const auto& [family, kinds] : v.unvalidated) {
    j["unvalidated"][family] = nlohmann::json::array();
    for (KernelFigureKind k : kinds)
      j["unvalidated"][family].push_back(KernelFigureKindName(k));
  }
  j["figures"] = FiguresJson(v);
  return JsonText(j);
}

std::string RenderKernelValidationText(const std::vector<KernelFigure>& figures, const KernelValidation& v,
                                       const std::string& figures_path, bool summary_only,
                                       const TextOptions& text_options) {
  std::ostringstream out;
  size_t modelled = 0;
  for (const KernelFigure& f : figures)
    modelled += f.modelled ? 1 : 0;
  out << fmt::format("figures     {} ({} modelled) from {}\n", figures.size(), modelled, figures_path);
  out << "error = predicted / measured - 1 in the figure's unit; statistics over modelled figures\n\n";
  PrintGroups(out, v, text_options.width);
  if (!summary_only) {
    out << "\n";
    PrintFigures(out, v, text_options.width);
  }
  return out.str();
}

}  // namespace mfu
