#pragma once

// Clusters for the performance model: which accelerator, how many GPUs share
// a node and an NVLink (scale-up) domain, and the per-GPU bandwidths and
// latencies of the scale-up and scale-out networks. Presets ship in
// data/clusters/clusters.csv (each row cites its source); users add or
// override rows with their own CSV of the same columns.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/status.h"

namespace mfu {

struct Cluster {
  std::string id;           // unique, lowercase, e.g. "dgx-h100"
  std::string name;         // "NVIDIA DGX H100"
  std::string accelerator;  // an accelerator id or alias of the hardware database
  // The cluster a multi-node job on `accelerator` uses when none is named
  // (ResolveHardware); at most one per accelerator.
  bool reference = false;
  std::vector<std::string> aliases;
  int gpus_per_node = 8;
  int nvlink_domain_gpus = 8;  // GPUs reachable over the scale-up fabric (NVL72: 72)
  // Per GPU, one direction, bytes/s.
  double scaleup_bw_bytes_per_s = 0;
  double scaleout_bw_bytes_per_s = 0;
  // One-hop latency of a collective step, seconds.
  double scaleup_latency_s = 0;
  double scaleout_latency_s = 0;
  int64_t max_gpus = 0;           // 0: no limit
  double price_per_gpu_hour = 0;  // USD, 0 when unknown (a flag overrides)
  std::string source;
  std::string notes;
};

class ClusterDb {
 public:
  // data/clusters/clusters.csv compiled into the binary; kInternal if broken.
  static StatusOr<ClusterDb> LoadBuiltin();
  // Adds or overrides rows from CSV text with the same columns (a subset is
  // fine for an override: id plus the columns to set). `origin` names the
  // file in errors: "my.csv:3: column 'scaleout_gbps': 'x' is not a number".
  // kParse for malformed CSV, unknown columns, text in numeric columns,
  // duplicate ids; kOutOfRange for non-positive sizes or bandwidths, absurd
  // values (bandwidth > 100 TB/s, latency > 1 s, > 1e6 GPUs per domain), or
  // nvlink_domain_gpus not a multiple or divisor of gpus_per_node.
  // Also kParse for a new id lacking accelerator, gpus_per_node,
  // nvlink_domain_gpus or either bandwidth, and for an id or alias (compared
  // case-insensitively) naming two clusters. Aliases of an override are
  // appended. All or nothing: on error the database is unchanged.
  // Invalidates pointers returned by Find.
  Status AddCsv(std::string_view text, std::string_view origin);
  // As AddCsv for the file at `path` read through `fs`; kNotFound if it
  // cannot be read.
  Status AddFile(const FileSystem& fs, const std::string& path);
  // The table as CSV with every column (AddCsv into an empty ClusterDb reads
  // it back equal).
  std::string ToCsv() const;
  // Finds by id or alias, case-insensitively; kInvalidArgument lists the ids
  // when nothing matches.
  StatusOr<const Cluster*> Find(std::string_view name) const;
  const std::vector<Cluster>& all() const { return clusters_; }

 private:
  std::vector<Cluster> clusters_;
};

}  // namespace mfu
