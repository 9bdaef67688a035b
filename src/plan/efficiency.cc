// The efficiency database (data/efficiency/efficiency.csv): a few fitted
// fractions per accelerator family, matched by accelerator-id prefix.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/csv.h"
#include "base/embedded_file.h"
#include "base/file_system.h"
#include "base/strings.h"
#include "mfu/perf_model.h"

namespace mfu::base {
// Generated from data/clusters and data/efficiency (src/plan/CMakeLists.txt).
std::span<const EmbeddedFile> PlanDataFiles();
}  // namespace mfu::base

namespace mfu {
namespace {

constexpr std::string_view kBuiltinPath = "efficiency/efficiency.csv";

// Four significant digits: what a fitted parameter means to a reader.
std::string Short(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

}  // namespace

std::array<EfficiencyParamInfo, kNumEfficiencyParams> EfficiencyParamInfos() {
  return {{
      {"matmul_peak_fraction", &EfficiencyParams::matmul_peak_fraction, 0.2, 0.98},
      {"matmul_half_dim", &EfficiencyParams::matmul_half_dim, 0, 1024},
      {"attention_peak_fraction", &EfficiencyParams::attention_peak_fraction, 0.1, 0.95},
      {"vector_bw_fraction", &EfficiencyParams::vector_bw_fraction, 0.1, 0.98},
      {"scaleup_bw_fraction", &EfficiencyParams::scaleup_bw_fraction, 0.1, 0.98},
      {"scaleout_bw_fraction", &EfficiencyParams::scaleout_bw_fraction, 0.1, 0.98},
      {"overlap_efficiency", &EfficiencyParams::overlap_efficiency, 0, 1},
      {"kernel_overhead_us", &EfficiencyParams::kernel_overhead_us, 0, 100},
  }};
}

StatusOr<EfficiencyDb> EfficiencyDb::LoadBuiltin() {
  for (const base::EmbeddedFile& file : base::PlanDataFiles()) {
    if (file.path == kBuiltinPath) {
      EfficiencyDb db;
      Status s = db.AddCsv(file.bytes, "data/efficiency/efficiency.csv");
      if (!s.ok())
        return InternalError("built-in efficiency table is invalid: " + s.message());
      if (db.Mutable("default") == nullptr)
        return InternalError("built-in efficiency table has no 'default' family");
      return db;
    }
  }
  return InternalError("built-in efficiency table missing from the binary");
}

Status EfficiencyDb::AddCsv(std::string_view text, std::string_view origin) {
  MFU_ASSIGN_OR_RETURN(base::CsvTable table, base::ParseCsv(text, origin));
  const auto params = EfficiencyParamInfos();
  const std::vector<std::string> other = {"family", "accelerators", "memory_reserved_gib", "source"};
  for (const std::string& name : table.header) {
    const bool known =
        std::find(other.begin(), other.end(), name) != other.end() ||
        std::any_of(params.begin(), params.end(), [&](const EfficiencyParamInfo& p) { return name == p.name; });
    if (!known) {
      return ParseError(std::string(origin) + ":" + std::to_string(table.header_line) + ": unknown column '" + name +
                        "'");
    }
  }
  const int family_col = table.Column("family");
  if (family_col < 0)
    return ParseError(std::string(origin) + ":" + std::to_string(table.header_line) + ": no 'family' column");
  std::vector<EfficiencyParams> added;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const std::vector<std::string>& row = table.rows[r];
    const std::string where = std::string(origin) + ":" + std::to_string(table.line_numbers[r]);
    const std::string family = base::ToLower(base::Trim(row[static_cast<size_t>(family_col)]));
    if (family.empty())
      return ParseError(where + ": column 'family': empty");
    for (const EfficiencyParams& a : added) {
      if (a.family == family)
        return ParseError(where + ": column 'family': '" + family + "' appears twice");
    }
    // An existing family is updated column by column; a new one starts from
    // the default family's values.
    EfficiencyParams p;
    if (const EfficiencyParams* old = Mutable(family)) {
      p = *old;
    } else if (const EfficiencyParams* def = Mutable("default")) {
      p = *def;
      p.accelerators.clear();
      p.source.clear();
    }
    p.family = family;
    for (size_t c = 0; c < table.header.size(); ++c) {
      const std::string& name = table.header[c];
      const std::string_view field = base::Trim(row[c]);
      if (name == "family")
        continue;
      if (name == "source") {
        p.source = std::string(field);
        continue;
      }
      if (name == "accelerators") {
        p.accelerators.clear();
        for (const std::string& a : base::Split(field, ';')) {
          std::string id = base::ToLower(base::Trim(a));
          if (!id.empty())
            p.accelerators.push_back(std::move(id));
        }
        continue;
      }
      double value = 0;
      auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
      if (field.empty() || ec != std::errc() || end != field.data() + field.size() || !std::isfinite(value)) {
        return ParseError(where + ": column '" + name + "': '" + std::string(field) + "' is not a number");
      }
      if (name == "memory_reserved_gib") {
        if (value < 0 || value > 1024)
          return OutOfRangeError(where + ": column '" + name + "': " + std::string(field) + " is not in [0, 1024]");
        p.memory_reserved_gib = value;
        continue;
      }
      for (const EfficiencyParamInfo& info : params) {
        if (name != info.name)
          continue;
        if (value < info.min || value > info.max) {
          return OutOfRangeError(where + ": column '" + name + "': " + std::string(field) + " is not in [" +
                                 base::FormatNumber(info.min) + ", " + base::FormatNumber(info.max) + "]");
        }
        p.*info.field = value;
      }
    }
    added.push_back(std::move(p));
  }
  for (EfficiencyParams& p : added) {
    if (EfficiencyParams* old = Mutable(p.family)) {
      *old = std::move(p);
    } else {
      families_.push_back(std::move(p));
    }
  }
  return Status::Ok();
}

Status EfficiencyDb::AddFile(const std::string& path) {
  base::RealFileSystem fs;
  MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  return AddCsv(text, path);
}

EfficiencyParams* EfficiencyDb::Mutable(std::string_view family) {
  for (EfficiencyParams& p : families_) {
    if (p.family == family)
      return &p;
  }
  return nullptr;
}

const EfficiencyParams& EfficiencyDb::For(std::string_view accelerator_id) const {
  const std::string id = base::ToLower(accelerator_id);
  const EfficiencyParams* best = nullptr;
  size_t best_len = 0;
  for (const EfficiencyParams& p : families_) {
    for (const std::string& prefix : p.accelerators) {
      if (prefix.size() > best_len && id.compare(0, prefix.size(), prefix) == 0) {
        best = &p;
        best_len = prefix.size();
      }
    }
  }
  if (best != nullptr)
    return *best;
  for (const EfficiencyParams& p : families_) {
    if (p.family == "default")
      return p;
  }
  return families_.front();
}

std::string EfficiencyDb::ToCsv() const {
  std::string out = "family,accelerators";
  for (const EfficiencyParamInfo& info : EfficiencyParamInfos())
    out += std::string(",") + info.name;
  out += ",memory_reserved_gib,source\n";
  for (const EfficiencyParams& p : families_) {
    out += p.family + ",";
    for (size_t i = 0; i < p.accelerators.size(); ++i)
      out += (i > 0 ? ";" : "") + p.accelerators[i];
    for (const EfficiencyParamInfo& info : EfficiencyParamInfos())
      out += "," + Short(p.*info.field);
    out += "," + Short(p.memory_reserved_gib) + ",\"";
    for (char c : p.source)
      out += c == '"' ? std::string("\"\"") : std::string(1, c);
    out += "\"\n";
  }
  return out;
}

}  // namespace mfu
