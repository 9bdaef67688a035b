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
  // Assumptions made while resolving: "default_cluster" when a multi-node
  // job named only the GPU and its reference cluster was used.
  std::vector<Note> notes;
};

// A job of more GPUs than max_gpus_without_cluster, or with nodes, that names
// a GPU but no cluster runs on the GPU's reference cluster (the row marked
// `reference` in the cluster table) and says so in `notes`
// (Note{kAssumption, "default_cluster", ...}).
// kInvalidArgument: neither gpu nor cluster; a gpu that contradicts the
// cluster's accelerator; negative counts; gpus that contradict nodes; no
// count at all; more GPUs than the cluster allows; a multi-node job on a GPU
// without a reference cluster (the message lists the GPU's clusters, or says
// there are none and how to add one); two reference clusters for one GPU;
// names the catalog does not know (with its suggestions).
StatusOr<ResolvedHardware> ResolveHardware(const Catalog& catalog, const HardwareRequest& request);

// "parameter 'seq_len'" -> "'seq_len'" formatting helper for library
// messages: Param("seq_len") == "parameter 'seq_len'".
std::string Param(const std::string& name);

}  // namespace mfu
