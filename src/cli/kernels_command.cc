// mfu kernels: the performance model's kernel-level predictions against
// published kernel figures (GEMM, grouped GEMM, attention, collectives,
// memory-bound kernels), with the median error per accelerator family and
// kind (docs/plan.md, "Kernel-level validation").

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "mfu/catalog.h"
#include "mfu/kernel_figures.h"
#include "mfu/report_kernels.h"

namespace mfu::cli {
namespace {

constexpr const char* kDefaultFigures = "data/efficiency/kernel_figures.csv";

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
    const RealFileSystem fs{};
    MFU_ASSIGN_OR_RETURN(std::vector<KernelFigure> figures, ReadKernelFigures(fs, figures_path_));
    CatalogFiles files;
    if (!cluster_file_.empty())
      files.clusters.push_back(cluster_file_);
    files.efficiency = efficiency_files_;
    files.efficiency_base = fitted_ ? EfficiencyBase::kFitted : EfficiencyBase::kKernelGrounded;
    MFU_ASSIGN_OR_RETURN(Catalog catalog, Catalog::Load(fs, files));
    MFU_ASSIGN_OR_RETURN(KernelValidation v,
                         ValidateKernelFigures(figures, catalog.hardware, catalog.clusters, catalog.efficiency));
    ctx.out << ctx.reporter(json_).Report(figures, v, figures_path_, summary_only_);
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
