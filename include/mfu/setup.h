#pragma once

// Resolution of what a job runs on, shared by training (predict, plan,
// calibrate) and inference (infer): the accelerator, the cluster, the GPU
// count, with what was derived stated. Errors name the request's parameters
// as `parameter 'name'`; a front end maps them to its own spelling (the CLI:
// --name with dashes).

#include <cstdint>
#include <string>
#include <vector>

#include "mfu/catalog.h"
#include "mfu/cluster.h"
#include "mfu/hwdb.h"
#include "mfu/result.h"
#include "mfu/status.h"

namespace mfu {

struct HardwareRequest {
  std::string gpu;      // an accelerator name ("h100"); "" when the cluster names it
  std::string cluster;  // a cluster id ("dgx-h100"); "" for one node of `gpu`
  int64_t gpus = 0;     // 0: from nodes
  int64_t nodes = 0;    // 0: from gpus; needs a cluster
  // GPUs one node holds when no cluster is given (more need a scale-out
  // network, so a cluster).
  int64_t max_gpus_without_cluster = 8;
};

struct ResolvedHardware {
  const Accelerator* gpu = nullptr;  // points into the catalog
  const Cluster* cluster = nullptr;  // nullptr: a single node of `gpu`
  int64_t gpus = 0;
  std::vector<std::string> derived;  // "gpus = nodes x 8 = 64"
  std::vector<Note> notes;
};

// kInvalidArgument: neither gpu nor cluster; a gpu that contradicts the
// cluster's accelerator; negative counts; nodes without a cluster; gpus that
// contradict nodes; no count at all; more GPUs than the cluster allows, or
// than max_gpus_without_cluster without a cluster; names the catalog does not
// know (with its suggestions).
StatusOr<ResolvedHardware> ResolveHardware(const Catalog& catalog, const HardwareRequest& request);

// "parameter 'seq_len'" -> "'seq_len'" formatting helper for library
// messages: Param("seq_len") == "parameter 'seq_len'".
std::string Param(const std::string& name);

}  // namespace mfu
