#include "mfu/cluster.h"

#include <string>
#include <vector>

#include "base/embedded_file.h"
#include "base/strings.h"
#include "base/table.h"
#include "mfu_embedded/hwdb_data.h"

namespace mfu {

namespace {

constexpr std::string_view kBuiltinClustersPath = "clusters/clusters.csv";
constexpr std::string_view kBuiltinClustersOrigin = "data/clusters/clusters.csv";

// Sanity limits, in the CSV's units. Nothing shipping is within two orders of
// magnitude of them; a larger value is a unit mistake (bytes for GB, Mb/s...).
constexpr double kMaxScaleupGBs = 1e5;    // 100 TB/s per GPU
constexpr double kMaxScaleoutGbps = 8e5;  // 100 TB/s per GPU
constexpr double kMaxLatencyUs = 1e6;     // 1 s
constexpr double kMaxDomainGpus = 1e6;
constexpr double kMaxClusterGpus = 1e9;

using ClusterCol = base::Column<Cluster>;

// Zero is out of range too when `positive`.
base::Bounds AtLeastZero(bool positive) {
  return positive ? base::Bounds().Min(0, "{} must be positive", true)
                  : base::Bounds().Min(0, "{} must be non-negative");
}

// A count of GPUs: "{} is absurd (more than 1M)" above `max`.
template <typename T>
ClusterCol Count(const char* name, T Cluster::*field, double max, bool positive) {
  return base::IntegerColumn(name, field,
                             AtLeastZero(positive).Max(max, "{} is absurd (more than " + base::FormatSi(max) + ")"));
}

// Stored as `scale` x the CSV value; `max` bounds the CSV value (0: none).
ClusterCol Number(const char* name, double Cluster::*field, double scale, double max, bool positive, const char* unit) {
  base::Bounds bounds = AtLeastZero(positive);
  if (max > 0)
    bounds.Max(max, "{} is absurd (the limit is " + base::FormatSi(max) + "; check the unit)");
  return base::NumberColumn(name, field, bounds, scale).Unit(unit);
}

// Checks what no single column can: the NVLink domain is a whole number of
// nodes, or a node holds a whole number of domains (NVL72: 18 trays of 4; a
// PCIe box with NVLink pairs: 4 domains of 2).
Status CheckCluster(const Cluster& c, const std::string& where) {
  int node = c.gpus_per_node;
  int domain = c.nvlink_domain_gpus;
  if (domain % node != 0 && node % domain != 0) {
    return OutOfRangeError(where + ": column 'nvlink_domain_gpus': " + std::to_string(domain) +
                           " is neither a multiple nor a divisor of gpus_per_node " + std::to_string(node));
  }
  return Status::Ok();
}

// The table of data/clusters/clusters.csv, columns in file order. An id or
// alias (case-insensitively) names one cluster, so Find does not depend on
// file order.
const base::TableSchema<Cluster>& ClusterSchema() {
  static const base::TableSchema<Cluster> schema = [] {
    base::TableSchema<Cluster> s = base::KeyedSchema("cluster", "id", &Cluster::id);
    s.check_id = base::CheckSlugId;
    s.keys = [](const Cluster& c) {
      std::vector<std::string> keys = {c.id};
      keys.insert(keys.end(), c.aliases.begin(), c.aliases.end());
      return keys;
    };
    s.validate = CheckCluster;
    s.columns = {
        base::TextColumn("id", &Cluster::id),
        base::ListColumn<Cluster>("aliases", &Cluster::aliases),
        base::TextColumn("name", &Cluster::name),
        base::TextColumn("accelerator", &Cluster::accelerator).Required(),
        base::BoolColumn("reference", &Cluster::reference),
        Count("gpus_per_node", &Cluster::gpus_per_node, kMaxDomainGpus, true).Required(),
        Count("nvlink_domain_gpus", &Cluster::nvlink_domain_gpus, kMaxDomainGpus, true).Required(),
        Number("scaleup_gbs_per_gpu", &Cluster::scaleup_bw_bytes_per_s, 1e9, kMaxScaleupGBs, true, "GB/s").Required(),
        Number("scaleout_gbps_per_gpu", &Cluster::scaleout_bw_bytes_per_s, 1e9 / 8, kMaxScaleoutGbps, true, "Gb/s")
            .Required(),
        Number("scaleup_latency_us", &Cluster::scaleup_latency_s, 1e-6, kMaxLatencyUs, false, "us"),
        Number("scaleout_latency_us", &Cluster::scaleout_latency_s, 1e-6, kMaxLatencyUs, false, "us"),
        Count("max_gpus", &Cluster::max_gpus, kMaxClusterGpus, false),
        Number("price_per_gpu_hour", &Cluster::price_per_gpu_hour, 1, 0, false, "USD"),
        base::TextColumn("source", &Cluster::source),
        base::TextColumn("notes", &Cluster::notes),
    };
    return s;
  }();
  return schema;
}

}  // namespace

StatusOr<ClusterDb> ClusterDb::LoadBuiltin() {
  for (const base::EmbeddedFile& file : base::HardwareDataFiles()) {
    if (file.path != kBuiltinClustersPath)
      continue;
    ClusterDb db;
    Status status = db.AddCsv(file.bytes, kBuiltinClustersOrigin);
    if (!status.ok())
      return InternalError("built-in cluster table is broken: " + status.message());
    return db;
  }
  return InternalError(std::string(kBuiltinClustersOrigin) + " is not compiled in");
}

Status ClusterDb::AddFile(const FileSystem& fs, const std::string& path) {
  MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  return AddCsv(text, path);
}

Status ClusterDb::AddCsv(std::string_view text, std::string_view origin) {
  return base::MergeTableCsv(ClusterSchema(), clusters_, text, origin);
}

std::string ClusterDb::ToCsv() const {
  return base::WriteTableCsv(ClusterSchema(), clusters_);
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
