// The efficiency database (data/efficiency/efficiency.csv): a few fitted
// fractions per accelerator family, matched by accelerator-id prefix, and the
// vector kernel parameters of each family (data/efficiency/vector_kernels.csv).

#include "mfu/efficiency.h"

#include <algorithm>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/csv.h"
#include "base/embedded_file.h"
#include "base/strings.h"
#include "base/table.h"
#include "mfu_embedded/perf_data.h"

namespace mfu {
namespace {

constexpr std::string_view kBuiltinPath = "efficiency/efficiency.csv";
constexpr std::string_view kBuiltinKernelsPath = "efficiency/vector_kernels.csv";

const base::EmbeddedFile* FindBuiltin(std::string_view path) {
  for (const base::EmbeddedFile& file : base::PerfDataFiles()) {
    if (file.path == path)
      return &file;
  }
  return nullptr;
}

// Four significant digits: what a fitted parameter means to a reader.
std::string Short(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

// A fitted parameter within [min, max], written back with four digits.
template <typename Row>
base::Column<Row> Param(const char* name, double Row::*field, double min, double max) {
  base::Column<Row> c = base::NumberColumn(name, field, base::Bounds::Interval(min, max));
  c.write = [field](const Row& row) { return Short(row.*field); };
  return c;
}

// data/efficiency/efficiency.csv: one row per family. Every cell of a row is
// read (an empty number is an error). A new family starts from the "default"
// family's values as they were before the file (not its accelerators or
// source); `accelerators` replaces the list of an override.
const base::TableSchema<EfficiencyParams>& FamilySchema() {
  static const base::TableSchema<EfficiencyParams> schema = [] {
    base::TableSchema<EfficiencyParams> s = base::KeyedSchema("family", "family", &EfficiencyParams::family);
    s.lowercase_id = true;
    s.skip_empty_cells = false;
    s.new_row = [](const std::vector<EfficiencyParams>& rows) {
      auto def =
          std::find_if(rows.begin(), rows.end(), [](const EfficiencyParams& p) { return p.family == "default"; });
      EfficiencyParams p;
      if (def != rows.end()) {
        p = *def;
        p.accelerators.clear();
        p.source.clear();
      }
      return p;
    };
    base::Column<EfficiencyParams> accelerators =
        base::ListColumn<EfficiencyParams>("accelerators", &EfficiencyParams::accelerators);
    accelerators.parse = [](std::string_view text, EfficiencyParams& p) {
      for (const std::string& id : base::ParseListCell(text))
        p.accelerators.push_back(base::ToLower(id));
      return Status::Ok();
    };
    accelerators.merge = [](const EfficiencyParams& from, EfficiencyParams& to) {
      to.accelerators = from.accelerators;
    };
    s.columns = {base::TextColumn("family", &EfficiencyParams::family), accelerators};
    for (const EfficiencyParamInfo& info : EfficiencyParamInfos())
      s.columns.push_back(Param(info.name, info.field, info.min, info.max));
    s.columns.push_back(Param("memory_reserved_gib", &EfficiencyParams::memory_reserved_gib, 0, 1024).Unit("GiB"));
    s.columns.push_back(Param("sustained_clock_fraction", &EfficiencyParams::sustained_clock_fraction, 0.3, 1));
    // Kernel-figure values, not fitted (no calibration run is MoE).
    s.columns.push_back(Param("grouped_gemm_fraction", &EfficiencyParams::grouped_gemm_fraction, 0.05, 1));
    s.columns.push_back(Param("grouped_wgrad_fraction", &EfficiencyParams::grouped_wgrad_fraction, 0.05, 1));
    s.columns.push_back(Param("alltoall_nic_ratio", &EfficiencyParams::alltoall_nic_ratio, 0.05, 1));
    s.columns.push_back(Param("fp4_matmul_half_dim", &EfficiencyParams::fp4_matmul_half_dim, 0, 4096));
    s.columns.push_back(Param("quant_bw_fraction", &EfficiencyParams::quant_bw_fraction, 0.05, 0.98));
    s.columns.push_back(Param("permute_bw_fraction", &EfficiencyParams::permute_bw_fraction, 0.05, 0.98));
    s.columns.push_back(base::TextColumn("source", &EfficiencyParams::source).Quoted());
    return s;
  }();
  return schema;
}

// One row of data/efficiency/vector_kernels.csv: a family's parameters of
// one kernel.
struct VectorKernelRow {
  std::string family;
  VectorKernel kernel = VectorKernel::kNorm;
  VectorKernelParams params;
};

StatusOr<VectorKernel> ParseVectorKernel(std::string_view text) {
  const std::string name = base::ToLower(text);
  for (size_t k = 0; k < kNumVectorKernels; ++k) {
    if (name == VectorKernelName(static_cast<VectorKernel>(k)))
      return static_cast<VectorKernel>(k);
  }
  return ParseError("'" + name + "' is not norm, residual_add or activation");
}

// An ordered table: each row updates one kernel of an existing family
// (EfficiencyDb::AddVectorKernelCsv joins them).
const base::TableSchema<VectorKernelRow>& VectorKernelSchema() {
  static const base::TableSchema<VectorKernelRow> schema = [] {
    base::TableSchema<VectorKernelRow> s;
    s.noun = "vector kernel";
    s.skip_empty_cells = false;
    s.columns = {
        base::WordColumn("family", &VectorKernelRow::family).Required(),
        base::EnumColumn<VectorKernelRow, VectorKernel>("kernel", &VectorKernelRow::kernel, ParseVectorKernel,
                                                        [](VectorKernel k) { return std::string(VectorKernelName(k)); })
            .Required(),
    };
    for (const VectorKernelParamInfo& info : VectorKernelParamInfos()) {
      base::Column<VectorKernelRow> c = base::NumberColumn<VectorKernelRow>(
          info.name, [field = info.field](VectorKernelRow& r) -> double& { return r.params.*field; },
          base::Bounds::Interval(info.min, info.max));
      c.write = [field = info.field](const VectorKernelRow& r) { return Short(r.params.*field); };
      s.columns.push_back(std::move(c));
    }
    base::Column<VectorKernelRow> source = base::TextColumn("source", &VectorKernelRow::family);
    source.parse = [](std::string_view text, VectorKernelRow& r) {
      r.params.source = std::string(text);
      return Status::Ok();
    };
    source.merge = [](const VectorKernelRow& from, VectorKernelRow& to) { to.params.source = from.params.source; };
    source.write = [](const VectorKernelRow& r) { return r.params.source; };
    s.columns.push_back(source.Quoted());
    return s;
  }();
  return schema;
}

}  // namespace

std::array<EfficiencyParamInfo, kNumEfficiencyParams> EfficiencyParamInfos() {
  return {{
      {"matmul_peak_fraction", &EfficiencyParams::matmul_peak_fraction, 0.2, 0.98},
      {"matmul_half_dim", &EfficiencyParams::matmul_half_dim, 0, 1024},
      {"fp8_matmul_peak_fraction", &EfficiencyParams::fp8_matmul_peak_fraction, 0.1, 0.98},
      {"fp4_matmul_peak_fraction", &EfficiencyParams::fp4_matmul_peak_fraction, 0.1, 0.98},
      {"attention_peak_fraction", &EfficiencyParams::attention_peak_fraction, 0.1, 0.95},
      {"attention_half_seq", &EfficiencyParams::attention_half_seq, 0, 2048},
      {"attention_bwd_fraction", &EfficiencyParams::attention_bwd_fraction, 0.1, 0.95},
      {"attention_bwd_half_seq", &EfficiencyParams::attention_bwd_half_seq, 0, 2048},
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
  return base::MergeTableCsv(FamilySchema(), families_, text, origin);
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

Status EfficiencyDb::AddFile(const FileSystem& fs, const std::string& path) {
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

StatusOr<const EfficiencyParams*> EfficiencyDb::Find(std::string_view family) const {
  if (const EfficiencyParams* p = base::FindTableRow(FamilySchema(), families_, family))
    return p;
  std::vector<std::string> names;
  for (const EfficiencyParams& p : families_)
    names.push_back(p.family);
  const std::string guess = base::ClosestMatch(base::ToLower(base::Trim(family)), names);
  return InvalidArgumentError("unknown efficiency family '" + std::string(family) + "'" +
                              (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                              "; known: " + base::Join(names, ", "));
}

std::string EfficiencyDb::ToCsv() const {
  return base::WriteTableCsv(FamilySchema(), families_);
}

Status EfficiencyDb::AddVectorKernelCsv(std::string_view text, std::string_view origin) {
  const base::TableSchema<VectorKernelRow>& schema = VectorKernelSchema();
  MFU_ASSIGN_OR_RETURN(std::vector<base::TableRow<VectorKernelRow>> rows, base::ParseTableRows(schema, text, origin));
  // Rows apply to a copy: nothing changes unless all are valid.
  std::vector<EfficiencyParams> updated = families_;
  std::vector<std::pair<std::string, VectorKernel>> seen;
  for (const base::TableRow<VectorKernelRow>& row : rows) {
    const std::string& family = row.value.family;
    auto it =
        std::find_if(updated.begin(), updated.end(), [&](const EfficiencyParams& p) { return p.family == family; });
    if (it == updated.end())
      return ParseError(row.where + ": column 'family': '" + family + "' is not a family of the efficiency table");
    const std::pair<std::string, VectorKernel> key(family, row.value.kernel);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return ParseError(row.where + ": column 'kernel': '" + family + "' '" + VectorKernelName(row.value.kernel) +
                        "' appears twice");
    }
    seen.push_back(key);
    VectorKernelParams& params = it->vector_kernels[static_cast<size_t>(row.value.kernel)];
    VectorKernelRow target{family, row.value.kernel, params};
    row.MergeInto(schema, target);
    params = target.params;
  }
  families_ = std::move(updated);
  return Status::Ok();
}

std::string EfficiencyDb::VectorKernelsToCsv() const {
  std::vector<VectorKernelRow> rows;
  for (const EfficiencyParams& p : families_) {
    for (size_t k = 0; k < kNumVectorKernels; ++k)
      rows.push_back({p.family, static_cast<VectorKernel>(k), p.vector_kernels[k]});
  }
  return base::WriteTableCsv(VectorKernelSchema(), rows);
}

}  // namespace mfu
