// The `mfu hw` and `mfu models` reports (mfu/report_count.h).

#include <fmt/format.h>

#include <sstream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "mfu/report_count.h"
#include "report/json_common.h"
#include "report/table.h"

namespace mfu {
namespace {

constexpr const char* kDenseNote = "peaks are dense TFLOP/s (int8: TOPS), without 2:4 sparsity";

// "989.4", "13500", "1.6384"; "-" for 0 (unknown or unsupported).
std::string Num(double value) {
  return value > 0 ? fmt::format("{:g}", value) : "-";
}

// A number for JSON, or null when unknown (0 in the database).
nlohmann::json JsonNum(double value) {
  return value > 0 ? nlohmann::json(value) : nlohmann::json(nullptr);
}

nlohmann::json JsonTextOrNull(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

// Bytes/s from the database's decimal unit (GB/s, TB/s) as an integer (2.039
// TB/s is 2039000000000, not 2039000000000.0002), or null when unknown.
nlohmann::json JsonRate(double value, double unit) {
  return value > 0 ? nlohmann::json(report::JsonInt(value * unit)) : nlohmann::json(nullptr);
}

// The JSON is in the units every command writes (FLOP/s, bytes, bytes/s);
// the database's own units (TFLOP/s, GB, TB/s) stay in the text.
nlohmann::json AcceleratorJson(const Accelerator& a) {
  nlohmann::json peaks = nlohmann::json::object();
  for (size_t i = 0; i < kNumDTypes; ++i) {
    const DType dtype = static_cast<DType>(i);
    if (a.peak_tflops[i] > 0)
      peaks[DTypeName(dtype)] = a.peak_flops(dtype);
  }
  // Device memory is GiB-sized: the capacity every prediction uses
  // (`capacity_bytes` of predict, plan and infer).
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const nlohmann::json memory = a.memory_gb > 0 ? nlohmann::json(report::JsonInt(a.memory_gb * kGiB)) : nullptr;
  return {{"id", a.id},
          {"vendor", a.vendor},
          {"name", a.name},
          {"form_factor", a.form_factor},
          {"display_name", a.display_name()},
          {"aliases", a.aliases},
          {"peak_flops_per_s", peaks},
          {"memory_bytes", memory},
          {"memory_type", JsonTextOrNull(a.memory_type)},
          {"memory_bw_bytes_per_s", JsonRate(a.memory_bw_tbps, 1e12)},
          {"l2_mb", JsonNum(a.l2_mb)},
          {"sm_count", a.sm_count > 0 ? nlohmann::json(a.sm_count) : nlohmann::json(nullptr)},
          {"boost_clock_mhz", JsonNum(a.boost_clock_mhz)},
          {"tdp_w", JsonNum(a.tdp_w)},
          {"scaleup_interconnect", JsonTextOrNull(a.scaleup_interconnect)},
          {"scaleup_bw_per_direction_bytes_per_s", JsonRate(a.scaleup_bw_per_direction_gbs, 1e9)},
          {"scaleup_bw_bidir_bytes_per_s", JsonRate(a.scaleup_bw_bidir_gbs, 1e9)},
          {"scaleout_nic", JsonTextOrNull(a.scaleout_nic)},
          {"sparse_note", JsonTextOrNull(a.sparse_note)},
          {"confidence", JsonTextOrNull(a.confidence)},
          {"source", JsonTextOrNull(a.source)},
          {"notes", JsonTextOrNull(a.notes)}};
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

void PrintShow(std::ostream& out, const Accelerator& a, int width) {
  auto field = [&out, width](const char* label, const std::string& value) {
    const size_t room = width > 37 ? static_cast<size_t>(width) - 17 : 0;
    std::vector<std::string> lines = report::WrapText(value.empty() ? "-" : value, room);
    for (size_t i = 0; i < lines.size(); ++i)
      out << fmt::format("{:<17}{}\n", i == 0 ? label : "", lines[i]);
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

}  // namespace

std::string RenderAcceleratorListText(const std::vector<const Accelerator*>& selected,
                                      const TextOptions& text_options) {
  std::ostringstream out;
  report::Table table({"id", "name", "bf16", "fp16", "fp8", "fp4", "mem GB", "TB/s"});
  for (const Accelerator* a : selected) {
    auto peak = [a](DType d) { return Num(a->peak_tflops[static_cast<size_t>(d)]); };
    table.AddRow({a->id, a->vendor + " " + a->name + ", " + a->form_factor, peak(DType::kBf16), peak(DType::kFp16),
                  peak(DType::kFp8), peak(DType::kFp4), Num(a->memory_gb), Num(a->memory_bw_tbps)});
  }
  table.Print(out, text_options.width);
  out << base::Join(report::WrapText(fmt::format("{} accelerators; {}; '-' = not supported or unknown. {} for every "
                                                 "field.",
                                                 selected.size(), kDenseNote, text_options.Command("hw show ID")),
                                     text_options.width > 0 ? static_cast<size_t>(text_options.width) : 0),
                    "\n")
      << "\n";
  return out.str();
}

std::string RenderAcceleratorListJson(const std::vector<const Accelerator*>& selected) {
  nlohmann::json j = report::JsonEnvelope();
  j["accelerators"] = nlohmann::json::array();
  for (const Accelerator* a : selected)
    j["accelerators"].push_back(AcceleratorJson(*a));
  return report::JsonText(j);
}

std::string RenderAcceleratorText(const Accelerator& a, const TextOptions& text_options) {
  std::ostringstream out;
  PrintShow(out, a, text_options.width);
  return out.str();
}

std::string RenderAcceleratorJson(const Accelerator& a) {
  // The entry's fields at the top level: `peak_flops_per_s.<dtype>` is the path
  // scripts rely on (docs/cli.md).
  nlohmann::json j = report::JsonEnvelope();
  j.update(AcceleratorJson(a));
  return report::JsonText(j);
}

std::string RenderPresetListText(const std::vector<PresetCount>& presets, const TextOptions& text_options) {
  std::ostringstream out;
  report::Table table({"preset", "family", "parameters", "active", "origin"});
  for (const PresetCount& p : presets) {
    table.AddRow({p.preset.name, p.preset.family, base::FormatSi(p.params.total, 4), base::FormatSi(p.params.active, 4),
                  p.preset.origin.substr(0, 60)});
  }
  table.Print(out, text_options.width);
  return out.str();
}

std::string RenderPresetListJson(const std::vector<PresetCount>& presets) {
  nlohmann::json list = nlohmann::json::array();
  for (const PresetCount& p : presets) {
    list.push_back(
        {{"name", p.preset.name},
         {"family", p.preset.family},
         {"origin", p.preset.origin},
         {"params", {{"total", report::JsonInt(p.params.total)}, {"active", report::JsonInt(p.params.active)}}}});
  }
  nlohmann::json j = report::JsonEnvelope();
  j["models"] = list;
  return report::JsonText(j);
}

}  // namespace mfu
