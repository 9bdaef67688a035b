#include "mfu/setup.h"

#include <string>

namespace mfu {

std::string Param(const std::string& name) {
  return "parameter '" + name + "'";
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
