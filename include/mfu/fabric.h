#pragma once

// The network a job's collectives run on, one rule for training, inference
// and the kernel figures: a scale-up domain (NVLink) of domain_gpus GPUs and,
// between domains, the scale-out network (each GPU drives its own NIC). Built
// from a cluster, or from a lone accelerator (one 8-GPU domain from its
// NVLink figure, no scale-out).

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "mfu/cluster.h"
#include "mfu/hwdb.h"

namespace mfu {

struct EfficiencyParams;

struct LinkSpec {
  double bandwidth_bytes_per_s = 0;  // achieved bus bandwidth
  double latency_s = 0;              // per step
};

class Fabric {
 public:
  // Defaults of a lone accelerator: one domain of 8 GPUs, 3 us per step on
  // NVLink (10 us across domains, unused without a scale-out network).
  static constexpr double kLoneDomainGpus = 8;
  static constexpr double kScaleupLatencyS = 3e-6;
  static constexpr double kScaleoutLatencyS = 10e-6;

  Fabric() = default;
  // Bandwidths at the family's scaleup_bw_fraction / scaleout_bw_fraction.
  static Fabric Of(const Accelerator& gpu, const Cluster* cluster, const EfficiencyParams& e);
  static Fabric Of(const Cluster& cluster, const EfficiencyParams& e);

  // A group of `members` ranks `stride` GPUs apart: inside one domain the
  // scale-up link; across domains min(members per domain x NIC, scale-up).
  // Without a scale-out network a spanning group gets the scale-up link and
  // Reaches() is false.
  LinkSpec Link(double members, double stride) const {
    if (!Spans(members, stride) || !(out_.bandwidth_bytes_per_s > 0))
      return up_;
    const double per_domain = std::clamp(std::floor(domain_ / stride), 1.0, members);
    return {std::min(per_domain * out_.bandwidth_bytes_per_s, up_.bandwidth_bytes_per_s), out_.latency_s};
  }
  bool Reaches(double members, double stride) const {
    return !Spans(members, stride) || out_.bandwidth_bytes_per_s > 0;
  }
  // An all-to-all sends (n - local) / n of its bytes off the domain, each GPU
  // over its own NIC at alltoall_nic_ratio of its bandwidth, the rest over
  // NVLink: bus bandwidth min(NIC x ratio x (n - 1) / (n - local), scale-up)
  // for a group that spans domains, Link() otherwise. The one rule for
  // training's and inference's expert all-to-all and the kernel figures.
  LinkSpec AllToAllLink(double members, double stride) const;

  const LinkSpec& scale_up() const { return up_; }
  const LinkSpec& scale_out() const { return out_; }
  double domain_gpus() const { return domain_; }

 private:
  bool Spans(double members, double stride) const { return members * stride > domain_ && members > 1; }
  double domain_ = kLoneDomainGpus;
  LinkSpec up_;
  LinkSpec out_;
  double alltoall_nic_bw_ = 0;  // NIC bandwidth x alltoall_nic_ratio, bytes/s
};

}  // namespace mfu
