// The collectives' network (fabric.h).

#include "mfu/fabric.h"

#include <algorithm>
#include <cmath>

#include "mfu/roofline.h"

namespace mfu {

Fabric Fabric::Of(const Cluster& cluster, const EfficiencyParams& e) {
  Fabric f;
  f.domain_ = static_cast<double>(cluster.nvlink_domain_gpus);
  f.up_ = {cluster.scaleup_bw_bytes_per_s * e.scaleup_bw_fraction, cluster.scaleup_latency_s};
  f.out_ = {cluster.scaleout_bw_bytes_per_s * e.scaleout_bw_fraction, cluster.scaleout_latency_s};
  f.alltoall_nic_bw_ = cluster.scaleout_bw_bytes_per_s * e.alltoall_nic_ratio;
  return f;
}

Fabric Fabric::Of(const Accelerator& gpu, const Cluster* cluster, const EfficiencyParams& e) {
  if (cluster != nullptr)
    return Of(*cluster, e);
  Fabric f;
  f.up_ = {gpu.scaleup_bw_per_direction_gbs * 1e9 * e.scaleup_bw_fraction, kScaleupLatencyS};
  f.out_ = {0, kScaleoutLatencyS};
  return f;
}

LinkSpec Fabric::AllToAllLink(double members, double stride) const {
  LinkSpec l = Link(members, stride);
  if (Spans(members, stride) && out_.bandwidth_bytes_per_s > 0) {
    const double local = std::clamp(std::floor(domain_ / stride), 1.0, members);
    l.bandwidth_bytes_per_s =
        std::min(alltoall_nic_bw_ * (members - 1) / std::max(members - local, 1.0), up_.bandwidth_bytes_per_s);
  }
  return l;
}

}  // namespace mfu
