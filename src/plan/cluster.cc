#include "mfu/cluster.h"

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

namespace mfu::base {
// Generated from data/clusters/ and data/efficiency/ by mfu_embed_files
// (src/plan/CMakeLists.txt).
std::span<const EmbeddedFile> PlanDataFiles();
}  // namespace mfu::base

namespace mfu {

namespace {

constexpr std::string_view kBuiltinPath = "clusters/clusters.csv";
constexpr std::string_view kBuiltinOrigin = "data/clusters/clusters.csv";

// Sanity limits, in the CSV's units. Nothing shipping is within two orders of
// magnitude of them; a larger value is a unit mistake (bytes for GB, Mb/s...).
constexpr double kMaxScaleupGBs = 1e5;    // 100 TB/s per GPU
constexpr double kMaxScaleoutGbps = 8e5;  // 100 TB/s per GPU
constexpr double kMaxLatencyUs = 1e6;     // 1 s
constexpr int64_t kMaxDomainGpus = 1000000;
constexpr int64_t kMaxClusterGpus = 1000000000;

enum class ColumnKind { kText, kAliases, kCount, kBigCount, kNumber };

// One CSV column and where its value lives in a Cluster. Numbers are stored
// as `scale` x the CSV value; `max` bounds the CSV value; `positive` rejects
// zero as well as negatives.
struct ColumnSpec {
  const char* name;
  ColumnKind kind;
  std::string Cluster::*text;
  int Cluster::*count;
  int64_t Cluster::*big_count;
  double Cluster::*number;
  double scale;
  double max;
  bool positive;
};

constexpr ColumnSpec Text(const char* name, std::string Cluster::*field) {
  return {name, ColumnKind::kText, field, nullptr, nullptr, nullptr, 1, 0, false};
}
constexpr ColumnSpec Aliases(const char* name) {
  return {name, ColumnKind::kAliases, nullptr, nullptr, nullptr, nullptr, 1, 0, false};
}
constexpr ColumnSpec Count(const char* name, int Cluster::*field, int64_t max) {
  return {name, ColumnKind::kCount, nullptr, field, nullptr, nullptr, 1, static_cast<double>(max), true};
}
constexpr ColumnSpec BigCount(const char* name, int64_t Cluster::*field, int64_t max) {
  return {name, ColumnKind::kBigCount, nullptr, nullptr, field, nullptr, 1, static_cast<double>(max), false};
}
constexpr ColumnSpec Number(const char* name, double Cluster::*field, double scale, double max, bool positive) {
  return {name, ColumnKind::kNumber, nullptr, nullptr, nullptr, field, scale, max, positive};
}

// The columns of data/clusters/clusters.csv, in file order.
const ColumnSpec kColumns[] = {
    Text("id", &Cluster::id),
    Aliases("aliases"),
    Text("name", &Cluster::name),
    Text("accelerator", &Cluster::accelerator),
    Count("gpus_per_node", &Cluster::gpus_per_node, kMaxDomainGpus),
    Count("nvlink_domain_gpus", &Cluster::nvlink_domain_gpus, kMaxDomainGpus),
    Number("scaleup_gbs_per_gpu", &Cluster::scaleup_bw_bytes_per_s, 1e9, kMaxScaleupGBs, true),
    Number("scaleout_gbps_per_gpu", &Cluster::scaleout_bw_bytes_per_s, 1e9 / 8, kMaxScaleoutGbps, true),
    Number("scaleup_latency_us", &Cluster::scaleup_latency_s, 1e-6, kMaxLatencyUs, false),
    Number("scaleout_latency_us", &Cluster::scaleout_latency_s, 1e-6, kMaxLatencyUs, false),
    BigCount("max_gpus", &Cluster::max_gpus, kMaxClusterGpus),
    Number("price_per_gpu_hour", &Cluster::price_per_gpu_hour, 1, 0, false),
    Text("source", &Cluster::source),
    Text("notes", &Cluster::notes),
};

// Columns a row must set when it adds a cluster rather than overriding one.
constexpr const char* kRequiredForNew[] = {"accelerator", "gpus_per_node", "nvlink_domain_gpus", "scaleup_gbs_per_gpu",
                                           "scaleout_gbps_per_gpu"};

// A CSV row: the values it sets and which columns were non-empty (an override
// row changes only those).
struct ParsedRow {
  Cluster value;
  std::vector<const ColumnSpec*> set_columns;
  int line = 0;
  std::string where;  // "origin:line", the prefix of errors about this row

  bool Sets(std::string_view column) const {
    return std::any_of(set_columns.begin(), set_columns.end(), [&](const ColumnSpec* c) { return column == c->name; });
  }
};

std::string ColumnPrefix(const std::string& where, const char* column) {
  return where + ": column '" + column + "': ";
}

// Parses a finite number within the column's range.
StatusOr<double> ParseNumber(const std::string& where, const ColumnSpec& column, std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string prefix = ColumnPrefix(where, column.name);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return ParseError(prefix + "'" + std::string(text) + "' is not a number");
  }
  if (value < 0 || (column.positive && value <= 0)) {
    return OutOfRangeError(prefix + std::string(text) + " must be " + (column.positive ? "positive" : "non-negative"));
  }
  if (column.max > 0 && value > column.max) {
    return OutOfRangeError(prefix + std::string(text) + " is absurd (the limit is " + base::FormatSi(column.max) +
                           "; check the unit)");
  }
  return value;
}

// Parses an integer count within the column's range.
StatusOr<int64_t> ParseCount(const std::string& where, const ColumnSpec& column, std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string prefix = ColumnPrefix(where, column.name);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return ParseError(prefix + "'" + std::string(text) + "' is not an integer");
  }
  if (value < 0 || (column.positive && value == 0)) {
    return OutOfRangeError(prefix + std::string(text) + " must be " + (column.positive ? "positive" : "non-negative"));
  }
  if (static_cast<double>(value) > column.max) {
    return OutOfRangeError(prefix + std::string(text) + " is absurd (more than " + base::FormatSi(column.max) + ")");
  }
  return value;
}

// Stores the (trimmed, non-empty) `text` of `column` into `c`.
Status SetField(const std::string& where, const ColumnSpec& column, std::string_view text, Cluster& c) {
  switch (column.kind) {
    case ColumnKind::kText:
      c.*column.text = std::string(text);
      return Status::Ok();
    case ColumnKind::kAliases:
      for (const std::string& part : base::Split(text, ';')) {
        std::string alias(base::Trim(part));
        if (!alias.empty())
          c.aliases.push_back(std::move(alias));
      }
      return Status::Ok();
    case ColumnKind::kCount: {
      MFU_ASSIGN_OR_RETURN(int64_t value, ParseCount(where, column, text));
      c.*column.count = static_cast<int>(value);
      return Status::Ok();
    }
    case ColumnKind::kBigCount: {
      MFU_ASSIGN_OR_RETURN(c.*column.big_count, ParseCount(where, column, text));
      return Status::Ok();
    }
    case ColumnKind::kNumber: {
      MFU_ASSIGN_OR_RETURN(double value, ParseNumber(where, column, text));
      c.*column.number = value * column.scale;
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
// so an override can add a name without losing the built-in ones.
void ApplyOverride(const ParsedRow& row, Cluster& target) {
  const Cluster& v = row.value;
  for (const ColumnSpec* column : row.set_columns) {
    switch (column->kind) {
      case ColumnKind::kText:
        target.*column->text = v.*column->text;
        break;
      case ColumnKind::kAliases:
        for (const std::string& alias : v.aliases) {
          if (std::find(target.aliases.begin(), target.aliases.end(), alias) == target.aliases.end())
            target.aliases.push_back(alias);
        }
        break;
      case ColumnKind::kCount:
        target.*column->count = v.*column->count;
        break;
      case ColumnKind::kBigCount:
        target.*column->big_count = v.*column->big_count;
        break;
      case ColumnKind::kNumber:
        target.*column->number = v.*column->number;
        break;
    }
  }
}

// Checks what no single column can: the NVLink domain is a whole number of
// nodes, or a node holds a whole number of domains (NVL72: 18 trays of 4; a
// PCIe box with NVLink pairs: 4 domains of 2).
Status CheckCluster(const Cluster& c, const std::string& where) {
  int node = c.gpus_per_node;
  int domain = c.nvlink_domain_gpus;
  if (domain % node != 0 && node % domain != 0) {
    return OutOfRangeError(ColumnPrefix(where, "nvlink_domain_gpus") + std::to_string(domain) +
                           " is neither a multiple nor a divisor of gpus_per_node " + std::to_string(node));
  }
  return Status::Ok();
}

// Fails when one id or alias names two clusters, which would make Find depend
// on file order. `where[i]` locates entry i ("" for entries already
// validated); the error names the located one.
Status CheckUniqueNames(const std::vector<Cluster>& clusters, const std::vector<std::string>& where) {
  std::map<std::string, size_t> owner;
  for (size_t i = 0; i < clusters.size(); ++i) {
    std::vector<std::string> keys = {clusters[i].id};
    keys.insert(keys.end(), clusters[i].aliases.begin(), clusters[i].aliases.end());
    for (const std::string& name : keys) {
      auto [it, inserted] = owner.emplace(base::ToLower(name), i);
      if (inserted || it->second == i)
        continue;
      size_t first = it->second;
      const std::string& location = where[i].empty() ? where[first] : where[i];
      return ParseError(location + ": '" + name + "' names both '" + clusters[first].id + "' and '" + clusters[i].id +
                        "'");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ClusterDb> ClusterDb::LoadBuiltin() {
  for (const base::EmbeddedFile& file : base::PlanDataFiles()) {
    if (file.path != kBuiltinPath)
      continue;
    ClusterDb db;
    Status status = db.AddCsv(file.bytes, kBuiltinOrigin);
    if (!status.ok())
      return InternalError("built-in cluster table is broken: " + status.message());
    return db;
  }
  return InternalError(std::string(kBuiltinOrigin) + " is not compiled in");
}

Status ClusterDb::AddFile(const std::string& path) {
  base::RealFileSystem fs;
  MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  return AddCsv(text, path);
}

Status ClusterDb::AddCsv(std::string_view text, std::string_view origin) {
  MFU_ASSIGN_OR_RETURN(std::vector<ParsedRow> rows, ParseRows(text, origin));
  // Merge into a copy so that a failed merge leaves this database unchanged.
  std::vector<Cluster> merged = clusters_;
  std::vector<std::string> where(merged.size());
  for (ParsedRow& row : rows) {
    auto it = std::find_if(merged.begin(), merged.end(), [&](const Cluster& c) { return c.id == row.value.id; });
    if (it != merged.end()) {
      ApplyOverride(row, *it);
      MFU_RETURN_IF_ERROR(CheckCluster(*it, row.where));
      where[static_cast<size_t>(it - merged.begin())] = row.where;
      continue;
    }
    for (const char* column : kRequiredForNew) {
      if (!row.Sets(column)) {
        return ParseError(row.where + ": column '" + column + "': required for the new cluster '" + row.value.id +
                          "' (an override needs an existing id)");
      }
    }
    MFU_RETURN_IF_ERROR(CheckCluster(row.value, row.where));
    merged.push_back(std::move(row.value));
    where.push_back(std::move(row.where));
  }
  MFU_RETURN_IF_ERROR(CheckUniqueNames(merged, where));
  clusters_ = std::move(merged);
  return Status::Ok();
}

StatusOr<const Cluster*> ClusterDb::Find(std::string_view name) const {
  std::string key = base::ToLower(base::Trim(name));
  std::vector<std::string> ids;
  for (const Cluster& c : clusters_) {
    ids.push_back(c.id);
    if (base::ToLower(c.id) == key)
      return &c;
    for (const std::string& alias : c.aliases) {
      if (base::ToLower(alias) == key)
        return &c;
    }
  }
  std::string guess = base::ClosestMatch(key, ids);
  return InvalidArgumentError("unknown cluster '" + std::string(name) + "'" +
                              (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                              "; known clusters: " + base::Join(ids, ", "));
}

}  // namespace mfu
