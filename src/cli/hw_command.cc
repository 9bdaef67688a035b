// mfu hw: the accelerator database. `mfu hw list` prints one line per
// accelerator, `mfu hw show NAME` every field of one. Peaks are dense.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "cli/command.h"
#include "report/json_common.h"
#include "mfu/hwdb.h"
#include "report/table.h"

namespace mfu::cli {
namespace {

constexpr const char* kDenseNote = "peaks are dense TFLOP/s (int8: TOPS), without 2:4 sparsity";

struct HwOptions {
  std::string vendor;         // hw list --vendor
  std::string name;           // hw show NAME
  std::string hardware_file;  // --hardware-file
  bool json = false;
};

// "989.4", "13500", "1.6384"; "-" for 0 (unknown or unsupported).
std::string Num(double value) {
  return value > 0 ? fmt::format("{:g}", value) : "-";
}

// A number for JSON, or null when unknown (0 in the database).
nlohmann::json JsonNum(double value) {
  return value > 0 ? nlohmann::json(value) : nlohmann::json(nullptr);
}

nlohmann::json JsonText(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

nlohmann::json AcceleratorJson(const Accelerator& a) {
  nlohmann::json peaks = nlohmann::json::object();
  for (size_t i = 0; i < kNumDTypes; ++i) {
    if (a.peak_tflops[i] > 0)
      peaks[DTypeName(static_cast<DType>(i))] = a.peak_tflops[i];
  }
  return {{"id", a.id},
          {"vendor", a.vendor},
          {"name", a.name},
          {"form_factor", a.form_factor},
          {"display_name", a.display_name()},
          {"aliases", a.aliases},
          {"peak_tflops", peaks},
          {"memory_gb", JsonNum(a.memory_gb)},
          {"memory_type", JsonText(a.memory_type)},
          {"memory_bw_tbps", JsonNum(a.memory_bw_tbps)},
          {"l2_mb", JsonNum(a.l2_mb)},
          {"sm_count", a.sm_count > 0 ? nlohmann::json(a.sm_count) : nlohmann::json(nullptr)},
          {"boost_clock_mhz", JsonNum(a.boost_clock_mhz)},
          {"tdp_w", JsonNum(a.tdp_w)},
          {"scaleup_interconnect", JsonText(a.scaleup_interconnect)},
          {"scaleup_bw_per_direction_gbs", JsonNum(a.scaleup_bw_per_direction_gbs)},
          {"scaleup_bw_bidir_gbs", JsonNum(a.scaleup_bw_bidir_gbs)},
          {"scaleout_nic", JsonText(a.scaleout_nic)},
          {"sparse_note", JsonText(a.sparse_note)},
          {"confidence", JsonText(a.confidence)},
          {"source", JsonText(a.source)},
          {"notes", JsonText(a.notes)}};
}

std::string PeakLine(const Accelerator& a, DType dtype) {
  double value = a.peak_tflops[static_cast<size_t>(dtype)];
  if (!(value > 0))
    return "-";
  return fmt::format("{:g} {}", value, dtype == DType::kInt8 ? "TOPS" : "TFLOP/s");
}

// "80 GB HBM3, 3.35 TB/s"
std::string MemoryLine(const Accelerator& a) {
  std::vector<std::string> parts;
  if (a.memory_gb > 0)
    parts.push_back(fmt::format("{:g} GB", a.memory_gb));
  if (!a.memory_type.empty())
    parts.push_back(a.memory_type);
  std::string line = base::Join(parts, " ");
  if (a.memory_bw_tbps > 0)
    line += fmt::format("{}{:g} TB/s", line.empty() ? "" : ", ", a.memory_bw_tbps);
  return line.empty() ? "-" : line;
}

// "NVLink 4 (18 links) + NVSwitch: 450 GB/s per direction, 900 GB/s bidirectional"
std::string ScaleUpLine(const Accelerator& a) {
  std::vector<std::string> rates;
  if (a.scaleup_bw_per_direction_gbs > 0) {
    rates.push_back(fmt::format("{:g} GB/s per direction", a.scaleup_bw_per_direction_gbs));
  }
  if (a.scaleup_bw_bidir_gbs > 0)
    rates.push_back(fmt::format("{:g} GB/s bidirectional", a.scaleup_bw_bidir_gbs));
  std::string line = a.scaleup_interconnect;
  if (!rates.empty())
    line += (line.empty() ? "" : ": ") + base::Join(rates, ", ");
  return line.empty() ? "-" : line;
}

std::string WithUnit(double value, const char* unit) {
  return value > 0 ? fmt::format("{:g} {}", value, unit) : std::string("-");
}

void PrintShow(std::ostream& out, const Accelerator& a) {
  auto field = [&out](const char* label, const std::string& value) {
    out << fmt::format("{:<17}{}\n", label, value.empty() ? "-" : value);
  };
  field("id", a.id);
  field("name", a.display_name());
  field("aliases", base::Join(a.aliases, "; "));
  field("dense peaks", "without 2:4 sparsity; '-' = not supported or unknown");
  for (size_t i = 0; i < kNumDTypes; ++i) {
    DType dtype = static_cast<DType>(i);
    out << fmt::format("  {:<15}{}\n", DTypeName(dtype), PeakLine(a, dtype));
  }
  field("sparse note", a.sparse_note);
  field("memory", MemoryLine(a));
  field("L2 / on-chip", WithUnit(a.l2_mb, "MB"));
  field("SMs / CUs", a.sm_count > 0 ? std::to_string(a.sm_count) : "-");
  field("boost clock", WithUnit(a.boost_clock_mhz, "MHz"));
  field("TDP", WithUnit(a.tdp_w, "W"));
  field("scale-up", ScaleUpLine(a));
  field("scale-out NIC", a.scaleout_nic);
  field("confidence", a.confidence);
  field("source", a.source);
  field("notes", a.notes);
}

class HwCommand final : public Command {
 public:
  const char* name() const override { return "hw"; }
  const char* summary() const override { return "List or show accelerators and their dense peak FLOP/s"; }

  void Register(CLI::App& app) override {
    app.require_subcommand(1);
    list_ = app.add_subcommand("list", "One line per accelerator: dense peaks, memory, bandwidth");
    list_->add_option("--vendor", o_.vendor, "Only this vendor (NVIDIA, AMD, Intel, Google, Huawei, AWS)");
    AddCommonFlags(*list_);
    show_ = app.add_subcommand("show", "Every field of one accelerator");
    show_->add_option("name", o_.name, "Id, alias or name, e.g. h100, mi300x, 'NVIDIA H100 80GB HBM3'")->required();
    AddCommonFlags(*show_);
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(HardwareDb db, HardwareDb::LoadBuiltin());
    if (!o_.hardware_file.empty())
      MFU_RETURN_IF_ERROR(db.LoadOverrideFile(o_.hardware_file));
    if (list_ != nullptr && list_->parsed())
      return RunList(ctx, db);
    if (show_ != nullptr && show_->parsed())
      return RunShow(ctx, db);
    return InvalidArgumentError("hw: expected a subcommand: list or show");
  }

 private:
  void AddCommonFlags(CLI::App& sub) {
    sub.add_flag("--json", o_.json, "Machine-readable output (docs/cli.md)");
    sub.add_option("--hardware-file", o_.hardware_file,
                   "CSV adding or overriding accelerators (data/hardware/README.md)");
  }

  Status RunList(const CommandContext& ctx, const HardwareDb& db) const {
    std::vector<const Accelerator*> selected;
    std::vector<std::string> vendors;
    for (const Accelerator& a : db.all()) {
      if (std::find(vendors.begin(), vendors.end(), a.vendor) == vendors.end())
        vendors.push_back(a.vendor);
      if (o_.vendor.empty() || base::ToLower(a.vendor) == base::ToLower(o_.vendor))
        selected.push_back(&a);
    }
    if (selected.empty() && !o_.vendor.empty()) {
      return InvalidArgumentError("--vendor '" + o_.vendor +
                                  "': no accelerators (vendors: " + base::Join(vendors, ", ") + ")");
    }
    if (o_.json) {
      nlohmann::json j = report::JsonEnvelope();
      j["accelerators"] = nlohmann::json::array();
      for (const Accelerator* a : selected)
        j["accelerators"].push_back(AcceleratorJson(*a));
      report::PrintJson(ctx.out, j);
      return Status::Ok();
    }
    report::Table table({"id", "vendor", "name", "form factor", "bf16", "fp16", "fp8", "fp4", "mem GB", "TB/s"});
    for (const Accelerator* a : selected) {
      auto peak = [a](DType d) { return Num(a->peak_tflops[static_cast<size_t>(d)]); };
      table.AddRow({a->id, a->vendor, a->name, a->form_factor, peak(DType::kBf16), peak(DType::kFp16),
                    peak(DType::kFp8), peak(DType::kFp4), Num(a->memory_gb), Num(a->memory_bw_tbps)});
    }
    table.Print(ctx.out);
    ctx.out << fmt::format("{} accelerators; {}; '-' = not supported or unknown. 'mfu hw show ID' for every field.\n",
                           selected.size(), kDenseNote);
    return Status::Ok();
  }

  Status RunShow(const CommandContext& ctx, const HardwareDb& db) const {
    MFU_ASSIGN_OR_RETURN(const Accelerator* a, db.Find(o_.name));
    if (o_.json) {
      // The entry's fields at the top level: `peak_tflops.<dtype>` is the
      // path scripts rely on (docs/cli.md).
      nlohmann::json j = report::JsonEnvelope();
      j.update(AcceleratorJson(*a));
      report::PrintJson(ctx.out, j);
    } else {
      PrintShow(ctx.out, *a);
    }
    return Status::Ok();
  }

  HwOptions o_;
  CLI::App* list_ = nullptr;
  CLI::App* show_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> MakeHwCommand() {
  return std::make_unique<HwCommand>();
}

}  // namespace mfu::cli
