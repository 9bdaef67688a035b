#include "mfu/hwdb.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <span>
#include <utility>

#include "base/csv.h"
#include "base/embedded_file.h"
#include "base/file_system.h"
#include "base/strings.h"
#include "hwdb/name_match.h"

namespace mfu::base {
// Generated from data/hardware/ by mfu_embed_files (src/hwdb/CMakeLists.txt).
std::span<const EmbeddedFile> HardwareDataFiles();
}  // namespace mfu::base

namespace mfu {

namespace {

constexpr std::string_view kBuiltinPath = "hardware/accelerators.csv";
constexpr std::string_view kBuiltinOrigin = "data/hardware/accelerators.csv";
// No accelerator is within two orders of magnitude of this (B300 FP4 is
// 13,500 dense TFLOP/s); a larger value is a unit mistake (FLOP/s, GFLOP/s).
constexpr double kMaxPeakTflops = 1e5;
constexpr int kMaxCount = 1000000;  // sm_or_cu_count

enum class ColumnKind { kText, kAliases, kPeak, kNumber, kCount };

// One CSV column and where its value lives in an Accelerator.
struct ColumnSpec {
  const char* name;
  ColumnKind kind;
  std::string Accelerator::*text;
  double Accelerator::*number;
  int Accelerator::*count;
  DType dtype;
};

constexpr ColumnSpec Text(const char* name, std::string Accelerator::*field) {
  return {name, ColumnKind::kText, field, nullptr, nullptr, DType::kFp64};
}
constexpr ColumnSpec Aliases(const char* name) {
  return {name, ColumnKind::kAliases, nullptr, nullptr, nullptr, DType::kFp64};
}
constexpr ColumnSpec Peak(const char* name, DType dtype) {
  return {name, ColumnKind::kPeak, nullptr, nullptr, nullptr, dtype};
}
constexpr ColumnSpec Number(const char* name, double Accelerator::*field) {
  return {name, ColumnKind::kNumber, nullptr, field, nullptr, DType::kFp64};
}
constexpr ColumnSpec Count(const char* name, int Accelerator::*field) {
  return {name, ColumnKind::kCount, nullptr, nullptr, field, DType::kFp64};
}

// The columns of data/hardware/accelerators.csv, in file order.
const ColumnSpec kColumns[] = {
    Text("id", &Accelerator::id),
    Aliases("aliases"),
    Text("vendor", &Accelerator::vendor),
    Text("accelerator", &Accelerator::name),
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
    Number("memory_gb", &Accelerator::memory_gb),
    Text("memory_type", &Accelerator::memory_type),
    Number("mem_bw_tbps", &Accelerator::memory_bw_tbps),
    Number("l2_or_onchip_mb", &Accelerator::l2_mb),
    Count("sm_or_cu_count", &Accelerator::sm_count),
    Number("boost_clock_mhz", &Accelerator::boost_clock_mhz),
    Number("tdp_w", &Accelerator::tdp_w),
    Number("power_cap_clock_fraction", &Accelerator::power_cap_clock_fraction),
    Text("scaleup_interconnect", &Accelerator::scaleup_interconnect),
    Number("scaleup_bw_per_direction_gbs", &Accelerator::scaleup_bw_per_direction_gbs),
    Number("scaleup_bw_total_bidir_gbs", &Accelerator::scaleup_bw_bidir_gbs),
    Text("typical_scaleout_nic", &Accelerator::scaleout_nic),
    Text("confidence", &Accelerator::confidence),
    Text("source", &Accelerator::source),
    Text("notes", &Accelerator::notes),
};

// A CSV row: the values it sets and which columns were non-empty (an override
// row changes only those).
struct ParsedRow {
  Accelerator value;
  std::vector<const ColumnSpec*> set_columns;
  int line = 0;
  std::string where;  // "origin:line", the prefix of errors about this row
};

Status FieldError(const std::string& where, const ColumnSpec& column, const std::string& what) {
  return ParseError(where + ": column '" + column.name + "': " + what);
}

// Parses a finite number >= 0. Peaks must also be below kMaxPeakTflops.
StatusOr<double> ParseNumber(const std::string& where, const ColumnSpec& column, std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return FieldError(where, column, "'" + std::string(text) + "' is not a number");
  }
  std::string prefix = where + ": column '" + column.name + "': ";
  if (value < 0) {
    return OutOfRangeError(prefix + std::string(text) + " must not be negative");
  }
  if (column.kind == ColumnKind::kPeak && value >= kMaxPeakTflops) {
    return OutOfRangeError(prefix + std::string(text) + " is not below 1e5 (the unit is dense TFLOP/s)");
  }
  return value;
}

Status ParseAliases(const std::string& where, const ColumnSpec& column, std::string_view text,
                    std::vector<std::string>& aliases) {
  for (const std::string& part : base::Split(text, ';')) {
    std::string alias(base::Trim(part));
    if (alias.empty())
      continue;
    if (hwdb::NameTokens(alias).empty()) {
      return FieldError(where, column, "alias '" + alias + "' has nothing but vendor words");
    }
    aliases.push_back(std::move(alias));
  }
  return Status::Ok();
}

// Stores the (trimmed, non-empty) `text` of `column` into `a`.
Status SetField(const std::string& where, const ColumnSpec& column, std::string_view text, Accelerator& a) {
  switch (column.kind) {
    case ColumnKind::kText:
      a.*column.text = std::string(text);
      return Status::Ok();
    case ColumnKind::kAliases:
      return ParseAliases(where, column, text, a.aliases);
    case ColumnKind::kPeak: {
      MFU_ASSIGN_OR_RETURN(double value, ParseNumber(where, column, text));
      a.peak_tflops[static_cast<size_t>(column.dtype)] = value;
      return Status::Ok();
    }
    case ColumnKind::kNumber: {
      MFU_ASSIGN_OR_RETURN(a.*column.number, ParseNumber(where, column, text));
      return Status::Ok();
    }
    case ColumnKind::kCount: {
      int value = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > kMaxCount) {
        return FieldError(where, column, "'" + std::string(text) + "' is not a count");
      }
      a.*column.count = value;
      return Status::Ok();
    }
  }
  return InternalError("unhandled column kind");
}

bool IsValidId(std::string_view id) {
  if (id.empty())
    return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

// Maps header names to column specs; unknown names are an error.
StatusOr<std::vector<const ColumnSpec*>> MapHeader(const base::CsvTable& table, const std::string& where) {
  std::vector<const ColumnSpec*> specs;
  std::vector<std::string> unknown;
  std::vector<std::string> known;
  for (const ColumnSpec& spec : kColumns)
    known.emplace_back(spec.name);
  for (const std::string& name : table.header) {
    auto it =
        std::find_if(std::begin(kColumns), std::end(kColumns), [&](const ColumnSpec& s) { return name == s.name; });
    specs.push_back(it == std::end(kColumns) ? nullptr : &*it);
    if (it == std::end(kColumns))
      unknown.push_back("'" + name + "'");
  }
  if (!unknown.empty()) {
    std::string message = where + ": unknown column" + (unknown.size() > 1 ? "s " : " ") + base::Join(unknown, ", ");
    std::string first = unknown[0].substr(1, unknown[0].size() - 2);
    std::string guess = base::ClosestMatch(first, known);
    if (!guess.empty())
      message += " (did you mean '" + guess + "'?)";
    return ParseError(message);
  }
  if (table.Column("id") < 0)
    return ParseError(where + ": missing column 'id'");
  return specs;
}

StatusOr<ParsedRow> ParseRow(const std::vector<const ColumnSpec*>& specs, const std::vector<std::string>& fields,
                             std::string_view origin, int line) {
  ParsedRow row;
  row.line = line;
  row.where = std::string(origin) + ":" + std::to_string(line);
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string_view text = base::Trim(fields[i]);
    if (text.empty())
      continue;
    MFU_RETURN_IF_ERROR(SetField(row.where, *specs[i], text, row.value));
    row.set_columns.push_back(specs[i]);
  }
  const std::string& id = row.value.id;
  if (id.empty())
    return ParseError(row.where + ": column 'id' is empty");
  if (!IsValidId(id)) {
    return ParseError(row.where + ": column 'id': '" + id + "' must be lowercase letters, digits, '-', '_' or '.'");
  }
  return row;
}

// Parses and validates every row of `csv`; ids are unique within the file.
StatusOr<std::vector<ParsedRow>> ParseRows(std::string_view csv, std::string_view origin) {
  MFU_ASSIGN_OR_RETURN(base::CsvTable table, base::ParseCsv(csv, origin));
  MFU_ASSIGN_OR_RETURN(std::vector<const ColumnSpec*> specs,
                       MapHeader(table, std::string(origin) + ":" + std::to_string(table.header_line)));
  std::vector<ParsedRow> rows;
  std::map<std::string, int> first_line;  // id -> line
  for (size_t r = 0; r < table.rows.size(); ++r) {
    MFU_ASSIGN_OR_RETURN(ParsedRow row, ParseRow(specs, table.rows[r], origin, table.line_numbers[r]));
    auto [it, inserted] = first_line.emplace(row.value.id, row.line);
    if (!inserted) {
      return ParseError(row.where + ": duplicate id '" + row.value.id + "' (first on line " +
                        std::to_string(it->second) + ")");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// Copies the columns `row` set into `target`. Aliases are added, not replaced,
// so an override can teach a new device name without losing the built-in ones.
void ApplyOverride(const ParsedRow& row, Accelerator& target) {
  const Accelerator& v = row.value;
  for (const ColumnSpec* column : row.set_columns) {
    switch (column->kind) {
      case ColumnKind::kText:
        target.*column->text = v.*column->text;
        break;
      case ColumnKind::kAliases:
        for (const std::string& alias : v.aliases) {
          if (std::find(target.aliases.begin(), target.aliases.end(), alias) == target.aliases.end()) {
            target.aliases.push_back(alias);
          }
        }
        break;
      case ColumnKind::kPeak: {
        size_t i = static_cast<size_t>(column->dtype);
        target.peak_tflops[i] = v.peak_tflops[i];
        break;
      }
      case ColumnKind::kNumber:
        target.*column->number = v.*column->number;
        break;
      case ColumnKind::kCount:
        target.*column->count = v.*column->count;
        break;
    }
  }
}

// Fails when one id, alias or display name names two entries, which would
// make Find depend on file order. `where[i]` locates entry i ("" for entries
// already validated); the error names the located one.
Status CheckUniqueNames(const std::vector<Accelerator>& entries, const std::vector<std::string>& where) {
  std::map<std::string, size_t> owner;
  for (size_t i = 0; i < entries.size(); ++i) {
    for (const std::string& key : hwdb::ExactKeys(entries[i])) {
      auto [it, inserted] = owner.emplace(key, i);
      if (inserted || it->second == i)
        continue;
      size_t first = it->second;
      const std::string& location = where[i].empty() ? where[first] : where[i];
      return ParseError(location + ": '" + key + "' names both '" + entries[first].id + "' and '" + entries[i].id +
                        "'");
    }
  }
  return Status::Ok();
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
  MFU_ASSIGN_OR_RETURN(std::vector<ParsedRow> rows, ParseRows(csv, origin));
  HardwareDb db;
  std::vector<std::string> where;
  for (ParsedRow& row : rows) {
    db.accelerators_.push_back(std::move(row.value));
    where.push_back(std::move(row.where));
  }
  MFU_RETURN_IF_ERROR(CheckUniqueNames(db.accelerators_, where));
  return db;
}

Status HardwareDb::LoadOverrideFile(const std::string& path) {
  base::RealFileSystem fs;
  MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  return MergeCsv(text, path);
}

Status HardwareDb::MergeCsv(std::string_view csv, std::string_view origin) {
  MFU_ASSIGN_OR_RETURN(std::vector<ParsedRow> rows, ParseRows(csv, origin));
  // Merge into a copy so that a failed merge leaves this database unchanged.
  std::vector<Accelerator> merged = accelerators_;
  std::vector<std::string> where(merged.size());
  std::vector<std::string> ids;
  for (const Accelerator& a : merged)
    ids.push_back(a.id);
  for (ParsedRow& row : rows) {
    auto it = std::find_if(merged.begin(), merged.end(), [&](const Accelerator& a) { return a.id == row.value.id; });
    if (it != merged.end()) {
      ApplyOverride(row, *it);
      where[static_cast<size_t>(it - merged.begin())] = row.where;
      continue;
    }
    if (row.value.name.empty()) {
      std::string guess = base::ClosestMatch(row.value.id, ids);
      return ParseError(row.where + ": id '" + row.value.id + "' is not in the database" +
                        (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                        "; a new entry needs a non-empty 'accelerator' column");
    }
    merged.push_back(std::move(row.value));
    where.push_back(std::move(row.where));
  }
  MFU_RETURN_IF_ERROR(CheckUniqueNames(merged, where));
  accelerators_ = std::move(merged);
  return Status::Ok();
}

StatusOr<const Accelerator*> HardwareDb::Find(std::string_view name) const {
  MFU_ASSIGN_OR_RETURN(size_t index, hwdb::FindAccelerator(accelerators_, name));
  return &accelerators_[index];
}

}  // namespace mfu
