// mfu hw: the accelerator database. `mfu hw list` prints one line per
// accelerator, `mfu hw show NAME` every field of one. Peaks are dense.

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "mfu/hardware_query.h"
#include "mfu/hwdb.h"
#include "mfu/report_count.h"

namespace mfu::cli {
namespace {

class HwCommand final : public Command {
 public:
  const char* name() const override { return "hw"; }
  const char* summary() const override { return "List or show accelerators and their dense peak FLOP/s"; }

  void Register(CLI::App& app) override {
    app.require_subcommand(1);
    list_ = app.add_subcommand("list", "One line per accelerator: dense peaks, memory, bandwidth");
    list_->add_option("--vendor", vendor_, "Only this vendor (NVIDIA, AMD, Intel, Google, Huawei, AWS)");
    AddCommonFlags(*list_);
    show_ = app.add_subcommand("show", "Every field of one accelerator");
    show_->add_option("name", name_, "Id, alias or name, e.g. h100, mi300x, 'NVIDIA H100 80GB HBM3'")->required();
    AddCommonFlags(*show_);
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(HardwareDb db, HardwareDb::LoadBuiltin());
    if (!hardware_file_.empty())
      MFU_RETURN_IF_ERROR(db.AddFile(RealFileSystem(), hardware_file_));
    if (list_ != nullptr && list_->parsed()) {
      MFU_ASSIGN_OR_RETURN(std::vector<const Accelerator*> selected, SelectAccelerators(db, vendor_));
      ctx.out << ctx.reporter(json_).Report(selected);
      return Status::Ok();
    }
    if (show_ != nullptr && show_->parsed()) {
      MFU_ASSIGN_OR_RETURN(const Accelerator* a, db.Find(name_));
      ctx.out << ctx.reporter(json_).Report(*a);
      return Status::Ok();
    }
    return InvalidArgumentError("hw: expected a subcommand: list or show");
  }

 private:
  void AddCommonFlags(CLI::App& sub) {
    sub.add_flag("--json", json_, "Machine-readable output (docs/cli.md)");
    sub.add_option("--hardware-file", hardware_file_,
                   "CSV adding or overriding accelerators (data/hardware/README.md)");
  }

  std::string vendor_;         // hw list --vendor
  std::string name_;           // hw show NAME
  std::string hardware_file_;  // --hardware-file
  bool json_ = false;
  CLI::App* list_ = nullptr;
  CLI::App* show_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> MakeHwCommand() {
  return std::make_unique<HwCommand>();
}

}  // namespace mfu::cli
