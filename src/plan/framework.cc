// Framework profiles (framework.h): data/frameworks/frameworks.csv and user
// override files.

#include "mfu/framework.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/csv.h"
#include "base/embedded_file.h"
#include "base/file_system.h"
#include "base/strings.h"
#include "mfu_embedded/plan_data.h"

namespace mfu {
namespace {

constexpr std::string_view kBuiltinPath = "frameworks/frameworks.csv";

// One numeric column: member, bounds.
struct NumberColumn {
  const char* name;
  double FrameworkProfile::*field;
  double min;
  double max;
};
constexpr NumberColumn kNumbers[] = {
    {"dp_grad_overlap", &FrameworkProfile::dp_grad_overlap, 0, 1},
    {"dp_param_overlap", &FrameworkProfile::dp_param_overlap, 0, 1},
    {"fsdp_prefetch", &FrameworkProfile::fsdp_prefetch, 0, 1},
    {"cp_overlap", &FrameworkProfile::cp_overlap, 0, 1},
    {"ep_overlap", &FrameworkProfile::ep_overlap, 0, 1},
    {"fp8_cast_bytes", &FrameworkProfile::fp8_cast_bytes, 0, 32},
    {"moe_sync_us", &FrameworkProfile::moe_sync_us, 0, 10000},
};
struct BoolColumn {
  const char* name;
  bool FrameworkProfile::*field;
};
constexpr BoolColumn kBools[] = {
    {"tp_overlap_supported", &FrameworkProfile::tp_overlap_supported},
    {"tp_overlap_default", &FrameworkProfile::tp_overlap_default},
    {"sequence_parallel", &FrameworkProfile::sequence_parallel},
    {"fused_norm_residual", &FrameworkProfile::fused_norm_residual},
    {"zero3_per_tensor", &FrameworkProfile::zero3_per_tensor},
};
constexpr const char* kTexts[] = {"name", "kind", "summary", "cp_mode", "attention", "fp8_recipe", "source"};
constexpr const char* kRecipes[] = {"", "delayed", "tensorwise", "rowwise", "blockwise", "mxfp8", "nvfp4"};

bool KnownColumn(const std::string& name) {
  return std::any_of(std::begin(kNumbers), std::end(kNumbers), [&](const NumberColumn& c) { return name == c.name; }) ||
         std::any_of(std::begin(kBools), std::end(kBools), [&](const BoolColumn& c) { return name == c.name; }) ||
         std::any_of(std::begin(kTexts), std::end(kTexts), [&](const char* c) { return name == c; });
}

StatusOr<CpMode> ParseCpMode(std::string_view v, const std::string& where) {
  if (v == "ring" || v == "p2p")
    return CpMode::kRing;
  if (v == "allgather" || v == "all-gather")
    return CpMode::kAllGather;
  if (v == "alltoall" || v == "a2a" || v == "ulysses")
    return CpMode::kAllToAll;
  return ParseError(where + ": column 'cp_mode': '" + std::string(v) + "' is not ring, allgather or alltoall");
}

// A text field (name, kind, modes) of `row` into `p`.
Status SetText(FrameworkProfile& p, const std::string& column, std::string_view field, const std::string& where) {
  const std::string v = base::ToLower(field);
  if (column == "summary") {
    p.summary = std::string(field);
  } else if (column == "source") {
    p.source = std::string(field);
  } else if (column == "kind") {
    if (v != "training" && v != "serving")
      return ParseError(where + ": column 'kind': '" + v + "' is not training or serving");
    p.kind = v;
  } else if (column == "cp_mode") {
    MFU_ASSIGN_OR_RETURN(p.cp_mode, ParseCpMode(v, where));
  } else if (column == "attention") {
    StatusOr<AttentionKernel> k = ParseAttentionKernel(v);
    if (!k.ok())
      return ParseError(where + ": column 'attention': " + k.status().message());
    p.attention = *k;
  } else if (column == "fp8_recipe") {
    if (std::none_of(std::begin(kRecipes), std::end(kRecipes), [&](const char* r) { return v == r; }))
      return ParseError(where + ": column 'fp8_recipe': '" + v +
                        "' is not delayed, tensorwise, rowwise, blockwise, mxfp8 or nvfp4");
    p.fp8_recipe = v;
  }
  return Status::Ok();
}

Status SetField(FrameworkProfile& p, const std::string& column, std::string_view field, const std::string& where) {
  for (const NumberColumn& c : kNumbers) {
    if (column != c.name)
      continue;
    double value = 0;
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (field.empty() || ec != std::errc() || end != field.data() + field.size() || !std::isfinite(value))
      return ParseError(where + ": column '" + column + "': '" + std::string(field) + "' is not a number");
    if (value < c.min || value > c.max) {
      return OutOfRangeError(where + ": column '" + column + "': " + std::string(field) + " is not in [" +
                             base::FormatNumber(c.min) + ", " + base::FormatNumber(c.max) + "]");
    }
    p.*c.field = value;
    return Status::Ok();
  }
  for (const BoolColumn& c : kBools) {
    if (column != c.name)
      continue;
    if (field != "0" && field != "1")
      return ParseError(where + ": column '" + column + "': '" + std::string(field) + "' is not 0 or 1");
    p.*c.field = field == "1";
    return Status::Ok();
  }
  return SetText(p, column, field, where);
}

}  // namespace

const char* AttentionKernelName(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::kBest:
      return "best";
    case AttentionKernel::kFa2:
      return "fa2";
    case AttentionKernel::kTriton:
      return "triton";
    case AttentionKernel::kUnfused:
      return "unfused";
  }
  return "?";
}

StatusOr<AttentionKernel> ParseAttentionKernel(std::string_view name) {
  const std::string v = base::ToLower(name);
  if (v == "best" || v == "cudnn" || v == "fa3" || v == "fa4" || v == "te")
    return AttentionKernel::kBest;
  if (v == "fa2" || v == "sdpa" || v == "flash")
    return AttentionKernel::kFa2;
  if (v == "triton")
    return AttentionKernel::kTriton;
  if (v == "unfused" || v == "eager" || v == "math")
    return AttentionKernel::kUnfused;
  return InvalidArgumentError("attention kernel '" + v + "' is not best (cudnn, fa3, fa4), fa2, triton or unfused");
}

const char* CpModeName(CpMode mode) {
  switch (mode) {
    case CpMode::kRing:
      return "ring";
    case CpMode::kAllGather:
      return "allgather";
    case CpMode::kAllToAll:
      return "alltoall";
  }
  return "?";
}

StatusOr<FrameworkDb> FrameworkDb::LoadBuiltin() {
  for (const base::EmbeddedFile& file : base::PlanDataFiles()) {
    if (file.path != kBuiltinPath)
      continue;
    FrameworkDb db;
    Status s = db.AddCsv(file.bytes, "data/frameworks/frameworks.csv");
    if (!s.ok())
      return InternalError("built-in framework table is invalid: " + s.message());
    return db;
  }
  return InternalError("built-in framework table missing from the binary");
}

StatusOr<const FrameworkDb*> FrameworkDb::Builtin() {
  static const StatusOr<FrameworkDb> db = LoadBuiltin();
  if (!db.ok())
    return db.status();
  return &*db;
}

Status FrameworkDb::AddCsv(std::string_view text, std::string_view origin) {
  MFU_ASSIGN_OR_RETURN(base::CsvTable table, base::ParseCsv(text, origin));
  const std::string header_where = std::string(origin) + ":" + std::to_string(table.header_line);
  for (const std::string& name : table.header) {
    if (!KnownColumn(name))
      return ParseError(header_where + ": unknown column '" + name + "'");
  }
  const int name_col = table.Column("name");
  if (name_col < 0)
    return ParseError(header_where + ": no 'name' column");
  std::vector<FrameworkProfile> updated = profiles_;
  std::vector<std::string> seen;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const std::vector<std::string>& row = table.rows[r];
    const std::string where = std::string(origin) + ":" + std::to_string(table.line_numbers[r]);
    const std::string name = base::ToLower(base::Trim(row[static_cast<size_t>(name_col)]));
    if (name.empty())
      return ParseError(where + ": column 'name': empty");
    if (std::find(seen.begin(), seen.end(), name) != seen.end())
      return ParseError(where + ": column 'name': '" + name + "' appears twice");
    seen.push_back(name);
    auto it = std::find_if(updated.begin(), updated.end(), [&](const FrameworkProfile& p) { return p.name == name; });
    if (it == updated.end()) {
      FrameworkProfile fresh;
      fresh.name = name;
      fresh.kind = "training";
      updated.push_back(fresh);
      it = updated.end() - 1;
    }
    for (size_t c = 0; c < table.header.size(); ++c) {
      if (table.header[c] != "name")
        MFU_RETURN_IF_ERROR(SetField(*it, table.header[c], base::Trim(row[c]), where));
    }
  }
  profiles_ = std::move(updated);
  return Status::Ok();
}

Status FrameworkDb::AddFile(const std::string& path) {
  base::RealFileSystem fs;
  MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  return AddCsv(text, path);
}

StatusOr<const FrameworkProfile*> FrameworkDb::Find(std::string_view name) const {
  const std::string key = base::ToLower(base::Trim(name));
  std::vector<std::string> names;
  for (const FrameworkProfile& p : profiles_) {
    if (p.name == key)
      return &p;
    names.push_back(p.name);
  }
  const std::string closest = base::ClosestMatch(key, names);
  return InvalidArgumentError("unknown framework '" + key + "'" +
                              (closest.empty() ? std::string() : " (did you mean '" + closest + "'?)") +
                              "; known: " + base::Join(names, ", "));
}

}  // namespace mfu
