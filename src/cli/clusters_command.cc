// mfu clusters: the cluster presets of the performance model. `mfu clusters
// list` prints one line per cluster, `mfu clusters show NAME` every field of
// one (the same shape as `mfu hw list|show`).

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "mfu/cluster.h"
#include "mfu/file_system.h"
#include "mfu/report_cli.h"

namespace mfu::cli {
namespace {

class ClustersCommand final : public Command {
 public:
  const char* name() const override { return "clusters"; }
  const char* summary() const override {
    return "List or show cluster presets: GPUs per node, NVLink domain, network bandwidths";
  }

  void Register(CLI::App& app) override {
    app.require_subcommand(1);
    list_ = app.add_subcommand("list", "One line per cluster preset (data/clusters/clusters.csv)");
    AddCommonFlags(*list_);
    show_ = app.add_subcommand("show", "Every field of one cluster, with its source");
    show_->add_option("name", name_, "Id or alias, e.g. dgx-h100, gb200-nvl72")->required();
    AddCommonFlags(*show_);
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(ClusterDb db, ClusterDb::LoadBuiltin());
    if (!cluster_file_.empty())
      MFU_RETURN_IF_ERROR(db.AddFile(RealFileSystem(), cluster_file_));
    if (show_->parsed()) {
      MFU_ASSIGN_OR_RETURN(const Cluster* c, db.Find(name_));
      ctx.out << ctx.reporter(json_).Report(*c);
      return Status::Ok();
    }
    std::vector<const Cluster*> all;
    for (const Cluster& c : db.all())
      all.push_back(&c);
    ctx.out << ctx.reporter(json_).Report(all);
    return Status::Ok();
  }

 private:
  void AddCommonFlags(CLI::App& sub) {
    sub.add_flag("--json", json_, "Machine-readable output (docs/cli.md)");
    sub.add_option("--cluster-file", cluster_file_, "CSV adding or overriding clusters (data/clusters/README.md)");
  }

  std::string name_;
  std::string cluster_file_;
  bool json_ = false;
  CLI::App* list_ = nullptr;
  CLI::App* show_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> MakeClustersCommand() {
  return std::make_unique<ClustersCommand>();
}

}  // namespace mfu::cli
