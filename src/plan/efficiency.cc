// The efficiency database (data/efficiency/efficiency.csv): a few fitted
// fractions per accelerator family, matched by accelerator-id prefix, and the
// vector kernel parameters of each family (data/efficiency/vector_kernels.csv).

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/csv.h"
#include "base/embedded_file.h"
#include "base/file_system.h"
#include "base/strings.h"
#include "mfu/perf_model.h"
#include "mfu_embedded/plan_data.h"

namespace mfu {
namespace {

constexpr std::string_view kBuiltinPath = "efficiency/efficiency.csv";
constexpr std::string_view kBuiltinKernelsPath = "efficiency/vector_kernels.csv";

const base::EmbeddedFile* FindBuiltin(std::string_view path) {
  for (const base::EmbeddedFile& file : base::PlanDataFiles()) {
    if (file.path == path)
      return &file;
  }
  return nullptr;
}

// A number field of a CSV row: kParse unless the whole field is a finite
// number, kOutOfRange outside [min, max].
StatusOr<double> BoundedNumber(std::string_view field, const std::string& where, const std::string& name, double min,
                               double max) {
  double value = 0;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || ec != std::errc() || end != field.data() + field.size() || !std::isfinite(value))
    return ParseError(where + ": column '" + name + "': '" + std::string(field) + "' is not a number");
  if (value < min || value > max) {
    return OutOfRangeError(where + ": column '" + name + "': " + std::string(field) + " is not in [" +
                           base::FormatNumber(min) + ", " + base::FormatNumber(max) + "]");
  }
  return value;
}

std::string Quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

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
      {"fp8_matmul_peak_fraction", &EfficiencyParams::fp8_matmul_peak_fraction, 0.1, 0.98},
      {"fp4_matmul_peak_fraction", &EfficiencyParams::fp4_matmul_peak_fraction, 0.1, 0.98},
      {"attention_peak_fraction", &EfficiencyParams::attention_peak_fraction, 0.1, 0.95},
      {"attention_half_seq", &EfficiencyParams::attention_half_seq, 0, 8192},
      {"attention_bwd_fraction", &EfficiencyParams::attention_bwd_fraction, 0.1, 0.95},
      {"attention_bwd_half_seq", &EfficiencyParams::attention_bwd_half_seq, 0, 8192},
      {"attention_fa2_ratio", &EfficiencyParams::attention_fa2_ratio, 0.1, 1},
      {"attention_triton_ratio", &EfficiencyParams::attention_triton_ratio, 0.1, 1},
      {"vector_bw_fraction", &EfficiencyParams::vector_bw_fraction, 0.1, 0.98},
      {"scaleup_bw_fraction", &EfficiencyParams::scaleup_bw_fraction, 0.1, 0.98},
      {"scaleout_bw_fraction", &EfficiencyParams::scaleout_bw_fraction, 0.1, 0.98},
      {"overlap_efficiency", &EfficiencyParams::overlap_efficiency, 0, 1},
      {"kernel_overhead_us", &EfficiencyParams::kernel_overhead_us, 0, 100},
  }};
}

StatusOr<EfficiencyDb> EfficiencyDb::LoadBuiltin() {
  const base::EmbeddedFile* table = FindBuiltin(kBuiltinPath);
  const base::EmbeddedFile* kernels = FindBuiltin(kBuiltinKernelsPath);
  if (table == nullptr || kernels == nullptr)
    return InternalError("built-in efficiency tables missing from the binary");
  EfficiencyDb db;
  Status s = db.AddCsv(table->bytes, "data/efficiency/efficiency.csv");
  if (!s.ok())
    return InternalError("built-in efficiency table is invalid: " + s.message());
  if (db.Mutable("default") == nullptr)
    return InternalError("built-in efficiency table has no 'default' family");
  const base::EmbeddedFile* validation = FindBuiltin("efficiency/validation.csv");
  if (validation == nullptr)
    return InternalError("built-in validation table missing from the binary");
  s = db.ApplyValidation(validation->bytes, "data/efficiency/validation.csv");
  if (!s.ok())
    return InternalError("built-in validation table is invalid: " + s.message());
  s = db.AddCsv(kernels->bytes, "data/efficiency/vector_kernels.csv");
  if (!s.ok())
    return InternalError("built-in vector kernel table is invalid: " + s.message());
  // Every family has a row, with its source, for every kernel.
  for (const EfficiencyParams& p : db.families_) {
    for (size_t k = 0; k < kNumVectorKernels; ++k) {
      if (p.vector_kernels[k].source.empty()) {
        return InternalError("built-in vector kernel table has no '" +
                             std::string(VectorKernelName(static_cast<VectorKernel>(k))) + "' row for family '" +
                             p.family + "'");
      }
    }
  }
  return db;
}

StatusOr<EfficiencyDb> EfficiencyDb::LoadBuiltinPrior() {
  MFU_ASSIGN_OR_RETURN(EfficiencyDb db, LoadBuiltin());
  const base::EmbeddedFile* prior = FindBuiltin("efficiency/kernel_grounded.csv");
  if (prior == nullptr)
    return InternalError("built-in kernel-grounded table missing from the binary");
  Status s = db.AddCsv(prior->bytes, "data/efficiency/kernel_grounded.csv");
  if (!s.ok())
    return InternalError("built-in kernel-grounded table is invalid: " + s.message());
  return db;
}

Status EfficiencyDb::AddCsv(std::string_view text, std::string_view origin) {
  MFU_ASSIGN_OR_RETURN(base::CsvTable table, base::ParseCsv(text, origin));
  if (table.Column("kernel") >= 0)
    return AddVectorKernelCsv(text, origin);
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
      if (name == "memory_reserved_gib") {
        MFU_ASSIGN_OR_RETURN(p.memory_reserved_gib, BoundedNumber(field, where, name, 0, 1024));
        continue;
      }
      for (const EfficiencyParamInfo& info : params) {
        if (name == info.name) {
          MFU_ASSIGN_OR_RETURN(p.*info.field, BoundedNumber(field, where, name, info.min, info.max));
        }
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

Status EfficiencyDb::ApplyValidation(std::string_view text, std::string_view origin) {
  MFU_ASSIGN_OR_RETURN(base::CsvTable table, base::ParseCsv(text, origin));
  const int family = table.Column("family"), training = table.Column("training"), inference = table.Column("inference");
  if (family < 0 || training < 0 || inference < 0)
    return ParseError(std::string(origin) + ": needs columns family, training, inference");
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const std::vector<std::string>& row = table.rows[r];
    const std::string where = std::string(origin) + ":" + std::to_string(table.line_numbers[r]);
    EfficiencyParams* p = Mutable(base::ToLower(base::Trim(row[static_cast<size_t>(family)])));
    if (p == nullptr)
      return ParseError(where + ": column 'family': not a family of the efficiency table");
    p->training_validation = std::string(base::Trim(row[static_cast<size_t>(training)]));
    p->inference_validation = std::string(base::Trim(row[static_cast<size_t>(inference)]));
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
      out.append(",").append(Short(p.*info.field));
    out.append(",").append(Short(p.memory_reserved_gib)).append(",").append(Quoted(p.source)).append("\n");
  }
  return out;
}

Status EfficiencyDb::AddVectorKernelCsv(std::string_view text, std::string_view origin) {
  MFU_ASSIGN_OR_RETURN(base::CsvTable table, base::ParseCsv(text, origin));
  const auto params = VectorKernelParamInfos();
  const std::string header_where = std::string(origin) + ":" + std::to_string(table.header_line);
  for (const std::string& name : table.header) {
    const bool known =
        name == "family" || name == "kernel" || name == "source" ||
        std::any_of(params.begin(), params.end(), [&](const VectorKernelParamInfo& p) { return name == p.name; });
    if (!known)
      return ParseError(header_where + ": unknown column '" + name + "'");
  }
  const int family_col = table.Column("family");
  const int kernel_col = table.Column("kernel");
  if (family_col < 0)
    return ParseError(header_where + ": no 'family' column");
  // Rows apply to a copy: nothing changes unless all are valid.
  std::vector<EfficiencyParams> updated = families_;
  std::vector<std::pair<std::string, size_t>> seen;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const std::vector<std::string>& row = table.rows[r];
    const std::string where = std::string(origin) + ":" + std::to_string(table.line_numbers[r]);
    const std::string family = base::ToLower(base::Trim(row[static_cast<size_t>(family_col)]));
    auto it =
        std::find_if(updated.begin(), updated.end(), [&](const EfficiencyParams& p) { return p.family == family; });
    if (it == updated.end())
      return ParseError(where + ": column 'family': '" + family + "' is not a family of the efficiency table");
    const std::string kernel = base::ToLower(base::Trim(row[static_cast<size_t>(kernel_col)]));
    size_t k = 0;
    while (k < kNumVectorKernels && kernel != VectorKernelName(static_cast<VectorKernel>(k)))
      ++k;
    if (k == kNumVectorKernels)
      return ParseError(where + ": column 'kernel': '" + kernel + "' is not norm, residual_add or activation");
    if (std::find(seen.begin(), seen.end(), std::make_pair(family, k)) != seen.end())
      return ParseError(where + ": column 'kernel': '" + family + "' '" + kernel + "' appears twice");
    seen.emplace_back(family, k);
    VectorKernelParams& v = it->vector_kernels[k];
    for (size_t c = 0; c < table.header.size(); ++c) {
      const std::string& name = table.header[c];
      const std::string_view field = base::Trim(row[c]);
      if (name == "source") {
        v.source = std::string(field);
        continue;
      }
      for (const VectorKernelParamInfo& info : params) {
        if (name == info.name) {
          MFU_ASSIGN_OR_RETURN(v.*info.field, BoundedNumber(field, where, name, info.min, info.max));
        }
      }
    }
  }
  families_ = std::move(updated);
  return Status::Ok();
}

std::string EfficiencyDb::VectorKernelsToCsv() const {
  std::string out = "family,kernel";
  for (const VectorKernelParamInfo& info : VectorKernelParamInfos())
    out += std::string(",") + info.name;
  out += ",source\n";
  for (const EfficiencyParams& p : families_) {
    for (size_t k = 0; k < kNumVectorKernels; ++k) {
      out.append(p.family).append(",").append(VectorKernelName(static_cast<VectorKernel>(k)));
      for (const VectorKernelParamInfo& info : VectorKernelParamInfos())
        out.append(",").append(Short(p.vector_kernels[k].*info.field));
      out.append(",").append(Quoted(p.vector_kernels[k].source)).append("\n");
    }
  }
  return out;
}

}  // namespace mfu
