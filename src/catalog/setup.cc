#include "mfu/setup.h"

#include <string>
#include <vector>

#include "base/param.h"
#include "base/strings.h"

namespace mfu {

std::string Param(const std::string& name) {
  return base::Param(name);
}

namespace {

StatusOr<int64_t> ResolveGpuCount(const HardwareRequest& r, ResolvedHardware& out) {
  int64_t gpus = r.gpus;
  if (r.nodes < 0 || gpus < 0)
    return InvalidArgumentError(Param("gpus") + " and " + Param("nodes") + " must be positive");
  if (r.nodes > 0) {
    if (out.cluster == nullptr)
      return InvalidArgumentError(Param("nodes") + " needs " + Param("cluster") + " (GPUs per node)");
    const int64_t per_node = out.cluster->gpus_per_node;
    const int64_t from_nodes = r.nodes * per_node;
    if (gpus > 0 && gpus != from_nodes) {
      return InvalidArgumentError(Param("gpus") + " " + std::to_string(gpus) + " contradicts " + Param("nodes") + " " +
                                  std::to_string(r.nodes) + " x " + std::to_string(per_node) + " GPUs per node");
    }
    gpus = from_nodes;
    out.derived.push_back("gpus = nodes x " + std::to_string(per_node) + " = " + std::to_string(gpus));
  }
  if (gpus == 0)
    return InvalidArgumentError("give " + Param("gpus") + " (or " + Param("nodes") + " with " + Param("cluster") + ")");
  return gpus;
}

// The cluster a multi-node job on `gpu` runs on when none is named: the one
// row marked reference for it. Clusters name accelerators by id or alias, so
// rows are compared through the hardware database.
StatusOr<const Cluster*> ReferenceCluster(const Catalog& catalog, const Accelerator* gpu, const std::string& why) {
  const Cluster* reference = nullptr;
  std::vector<std::string> of_gpu;
  for (const Cluster& c : catalog.clusters.all()) {
    StatusOr<const Accelerator*> a = catalog.hardware.Find(c.accelerator);
    if (!a.ok() || *a != gpu)
      continue;
    of_gpu.push_back(c.id);
    if (!c.reference)
      continue;
    if (reference != nullptr) {
      return InvalidArgumentError("clusters " + reference->id + " and " + c.id + " are both marked reference for " +
                                  gpu->id + "; give " + Param("cluster"));
    }
    reference = &c;
  }
  if (reference != nullptr)
    return reference;
  if (of_gpu.empty()) {
    return InvalidArgumentError(why + " needs " + Param("cluster") +
                                " (its scale-out network), and no cluster preset has " + gpu->id +
                                ": add one in a clusters CSV (data/clusters/README.md)");
  }
  return InvalidArgumentError(why + " needs " + Param("cluster") + " (its scale-out network); " + gpu->id +
                              " has no reference cluster; its clusters: " + base::Join(of_gpu, ", "));
}

}  // namespace

StatusOr<ResolvedHardware> ResolveHardware(const Catalog& catalog, const HardwareRequest& r) {
  ResolvedHardware out;
  if (r.cluster.empty() && r.gpu.empty())
    return InvalidArgumentError("give " + Param("gpu") + " or " + Param("cluster"));
  if (!r.cluster.empty()) {
    MFU_ASSIGN_OR_RETURN(out.cluster, catalog.clusters.Find(r.cluster));
    MFU_ASSIGN_OR_RETURN(out.gpu, catalog.hardware.Find(out.cluster->accelerator));
    if (!r.gpu.empty()) {
      MFU_ASSIGN_OR_RETURN(const Accelerator* named, catalog.hardware.Find(r.gpu));
      if (named != out.gpu) {
        return InvalidArgumentError(Param("gpu") + " " + r.gpu + " contradicts " + Param("cluster") + " " + r.cluster +
                                    " (built from " + out.gpu->id + "); drop one");
      }
    }
  } else {
    MFU_ASSIGN_OR_RETURN(out.gpu, catalog.hardware.Find(r.gpu));
    if (r.nodes > 0 || r.gpus > r.max_gpus_without_cluster) {
      std::string why = r.nodes > 0 ? Param("nodes") + " " + std::to_string(r.nodes)
                                    : Param("gpus") + " " + std::to_string(r.gpus) + ": more than one " +
                                          std::to_string(r.max_gpus_without_cluster) + "-GPU node";
      MFU_ASSIGN_OR_RETURN(out.cluster, ReferenceCluster(catalog, out.gpu, why));
      out.notes.push_back(
          {NoteKind::kAssumption, "default_cluster",
           "no cluster given: " + std::to_string(r.nodes > 0 ? r.nodes * out.cluster->gpus_per_node : r.gpus) + " " +
               out.gpu->id + " GPUs run on " + out.cluster->id + " (" + out.cluster->name +
               "), the reference cluster of " + out.gpu->id + "; give " + Param("cluster") + " for another fabric"});
    }
  }
  MFU_ASSIGN_OR_RETURN(out.gpus, ResolveGpuCount(r, out));
  if (out.cluster != nullptr && out.cluster->max_gpus > 0 && out.gpus > out.cluster->max_gpus) {
    return InvalidArgumentError(Param("gpus") + " " + std::to_string(out.gpus) + " exceeds the " + out.cluster->id +
                                " limit of " + std::to_string(out.cluster->max_gpus));
  }
  if (out.cluster == nullptr && out.gpus > r.max_gpus_without_cluster) {
    return InvalidArgumentError(Param("gpus") + " " + std::to_string(out.gpus) + ": more than one " +
                                std::to_string(r.max_gpus_without_cluster) + "-GPU node needs " + Param("cluster") +
                                " (its scale-out network)");
  }
  return out;
}

}  // namespace mfu
