#include "mfu/hwdb.h"

#include <utility>

#include "base/embedded_file.h"
#include "base/strings.h"
#include "base/table.h"
#include "hwdb/name_match.h"
#include "mfu_embedded/hwdb_data.h"

namespace mfu {

namespace {

constexpr std::string_view kBuiltinPath = "hardware/accelerators.csv";
constexpr std::string_view kBuiltinOrigin = "data/hardware/accelerators.csv";
// No accelerator is within two orders of magnitude of this (B300 FP4 is
// 13,500 dense TFLOP/s); a larger value is a unit mistake (FLOP/s, GFLOP/s).
constexpr double kMaxPeakTflops = 1e5;
constexpr double kMaxCount = 1000000;  // sm_or_cu_count

using Col = base::Column<Accelerator>;

base::Bounds NonNegative() {
  return base::Bounds().Min(0, "{} must not be negative");
}

Col Text(const char* name, std::string Accelerator::*field) {
  return base::TextColumn(name, field);
}
Col Number(const char* name, double Accelerator::*field, const char* unit) {
  return base::NumberColumn(name, field, NonNegative()).Unit(unit);
}
// Dense peak TFLOP/s (TOP/s for int8) of `dtype`.
Col Peak(const char* name, DType dtype) {
  const size_t i = static_cast<size_t>(dtype);
  return base::NumberColumn<Accelerator>(
             name, [i](Accelerator& a) -> double& { return a.peak_tflops[i]; },
             NonNegative().Max(kMaxPeakTflops, "{} is not below 1e5 (the unit is dense TFLOP/s)", true))
      .Unit("TFLOP/s", "dense peak; 0 when unsupported");
}
Col Count(const char* name, int Accelerator::*field) {
  const std::string message = "'{}' is not a count";
  base::Bounds bounds;
  bounds.min = base::Bound{0, false, message, StatusCode::kParse};
  bounds.max = base::Bound{kMaxCount, false, message, StatusCode::kParse};
  return base::IntegerColumn(name, field, bounds, message);
}

Status CheckAlias(const std::string& alias) {
  if (hwdb::NameTokens(alias).empty())
    return ParseError("alias '" + alias + "' has nothing but vendor words");
  return Status::Ok();
}

// The table of data/hardware/accelerators.csv, columns in file order. One
// id, alias or display name names one entry (hwdb::ExactKeys), so that Find
// does not depend on file order.
const base::TableSchema<Accelerator>& Schema() {
  static const base::TableSchema<Accelerator> schema = [] {
    base::TableSchema<Accelerator> s = base::KeyedSchema("accelerator", "id", &Accelerator::id);
    s.check_id = base::CheckSlugId;
    s.keys = hwdb::ExactKeys;
    s.missing_required = [](const std::string& id, const std::string&, const std::vector<std::string>& ids) {
      std::string guess = base::ClosestMatch(id, ids);
      return "id '" + id + "' is not in the database" + (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
             "; a new entry needs a non-empty 'accelerator' column";
    };
    s.columns = {
        Text("id", &Accelerator::id),
        base::ListColumn<Accelerator>("aliases", &Accelerator::aliases, CheckAlias),
        Text("vendor", &Accelerator::vendor),
        Text("accelerator", &Accelerator::name).Required(),
        Text("form_factor", &Accelerator::form_factor),
        Peak("fp64_tflops", DType::kFp64),
        Peak("fp64_tensor_tflops", DType::kFp64Tensor),
        Peak("fp32_tflops", DType::kFp32),
        Peak("tf32_tflops", DType::kTf32),
        Peak("bf16_tflops", DType::kBf16),
        Peak("fp16_tflops", DType::kFp16),
        Peak("fp8_tflops", DType::kFp8),
        Peak("fp6_tflops", DType::kFp6),
        Peak("fp4_tflops", DType::kFp4),
        Peak("int8_tops", DType::kInt8),
        Text("vendor_sparse_multiplier", &Accelerator::sparse_note),
        Number("memory_gb", &Accelerator::memory_gb, "GB"),
        Text("memory_type", &Accelerator::memory_type),
        Number("mem_bw_tbps", &Accelerator::memory_bw_tbps, "TB/s"),
        Number("l2_or_onchip_mb", &Accelerator::l2_mb, "MB"),
        Count("sm_or_cu_count", &Accelerator::sm_count),
        Number("boost_clock_mhz", &Accelerator::boost_clock_mhz, "MHz"),
        Number("tdp_w", &Accelerator::tdp_w, "W"),
        Number("power_cap_clock_fraction", &Accelerator::power_cap_clock_fraction, ""),
        Text("scaleup_interconnect", &Accelerator::scaleup_interconnect),
        Number("scaleup_bw_per_direction_gbs", &Accelerator::scaleup_bw_per_direction_gbs, "GB/s"),
        Number("scaleup_bw_total_bidir_gbs", &Accelerator::scaleup_bw_bidir_gbs, "GB/s"),
        Text("typical_scaleout_nic", &Accelerator::scaleout_nic),
        Text("confidence", &Accelerator::confidence),
        Text("source", &Accelerator::source),
        Text("notes", &Accelerator::notes),
    };
    return s;
  }();
  return schema;
}

}  // namespace

std::string Accelerator::display_name() const {
  std::vector<std::string> parts;
  for (const std::string* part : {&vendor, &name, &form_factor}) {
    if (!part->empty())
      parts.push_back(*part);
  }
  return parts.empty() ? id : base::Join(parts, " ");
}

StatusOr<HardwareDb> HardwareDb::LoadBuiltin() {
  for (const base::EmbeddedFile& file : base::HardwareDataFiles()) {
    if (file.path == kBuiltinPath)
      return ParseCsv(file.bytes, kBuiltinOrigin);
  }
  return InternalError(std::string(kBuiltinOrigin) + " is not compiled in");
}

StatusOr<HardwareDb> HardwareDb::ParseCsv(std::string_view csv, std::string_view origin) {
  HardwareDb db;
  MFU_ASSIGN_OR_RETURN(db.accelerators_, base::ParseTableCsv(Schema(), csv, origin));
  return db;
}

Status HardwareDb::AddFile(const FileSystem& fs, const std::string& path) {
  MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  return AddCsv(text, path);
}

Status HardwareDb::AddCsv(std::string_view csv, std::string_view origin) {
  return base::MergeTableCsv(Schema(), accelerators_, csv, origin);
}

std::string HardwareDb::ToCsv() const {
  return base::WriteTableCsv(Schema(), accelerators_);
}

StatusOr<const Accelerator*> HardwareDb::Find(std::string_view name) const {
  MFU_ASSIGN_OR_RETURN(size_t index, hwdb::FindAccelerator(accelerators_, name));
  return &accelerators_[index];
}

}  // namespace mfu
