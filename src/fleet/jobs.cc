// Jobs, nodes and the fleet: which job a GPU's series belongs to, each job's
// time-weighted estimate with its spread and stragglers, nodes by hostname,
// and the fleet's GPU-time weighted totals.
//
// A job is named, first match wins, by: a --jobs entry's `match` (an hpc_job
// value or a prefix of "namespace/pod"); the Slurm `hpc_job` label;
// dcgm-exporter's --hpc-job-mapping-dir file of the GPU index; the pod name
// without its generated suffixes (PodJobId).

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "fleet/fleet_internal.h"
#include "mfu/fleet.h"

namespace mfu::fleet {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool IsLowerAlnum(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}
bool HasDigit(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A suffix Kubernetes or a training operator adds to a job's pod names: an
// ordinal ("-3"), a ReplicaSet/Job pod hash ("-x2x7q", "-7d9f8c6b5") or a
// role ("-worker", "-master", "-launcher").
bool IsGeneratedSuffix(std::string_view segment) {
  static const std::set<std::string_view> kRoles = {"worker", "master", "launcher", "leader", "head", "trainer"};
  if (segment.empty())
    return false;
  if (std::all_of(segment.begin(), segment.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return true;
  if (kRoles.count(segment) != 0)
    return true;
  const size_t n = segment.size();
  return IsLowerAlnum(segment) && HasDigit(segment) && (n == 5 || (n >= 8 && n <= 10));
}

// sum(value x seconds x share) / sum(seconds x share) over the finite values.
struct Weighted {
  double sum = 0, weight = 0;
  void Add(double value, const GpuEstimate& g) {
    if (std::isnan(value))
      return;
    sum += value * g.seconds * g.gpu_share;
    weight += g.seconds * g.gpu_share;
  }
  double Get() const { return weight > 0 ? sum / weight : kNaN; }
};

// One physical GPU: host and uuid (or index when no uuid).
std::pair<std::string, std::string> PhysicalGpu(const TelemetryDevice& d) {
  return {d.hostname, d.uuid.empty() ? d.gpu : d.uuid};
}

}  // namespace

std::string PodJobId(std::string_view k8s_namespace, std::string_view pod) {
  std::vector<std::string> parts = base::Split(pod, '-');
  while (parts.size() > 1 && IsGeneratedSuffix(parts.back()))
    parts.pop_back();
  std::string name = base::Join(parts, "-");
  return k8s_namespace.empty() ? name : std::string(k8s_namespace) + "/" + name;
}

JobAssignment AssignJob(const TelemetryDevice& device, const std::vector<FleetJobReport>& reports,
                        const std::map<std::string, std::vector<std::string>>& mapping) {
  const std::string pod_path = device.k8s_namespace.empty() ? device.pod : device.k8s_namespace + "/" + device.pod;
  for (const FleetJobReport& r : reports) {
    if (r.match.empty())
      continue;
    if ((!device.hpc_job.empty() && device.hpc_job == r.match) ||
        (!device.pod.empty() && base::StartsWith(pod_path, r.match)))
      return {r.id, "jobs_file"};
  }
  if (!device.hpc_job.empty())
    return {device.hpc_job, "slurm"};
  if (auto it = mapping.find(device.gpu); it != mapping.end() && !it->second.empty())
    return {it->second.front(), "mapping_file"};
  if (!device.pod.empty())
    return {PodJobId(device.k8s_namespace, device.pod), "kubernetes"};
  return {};
}

std::vector<JobEstimate> GroupJobs(std::vector<GpuEstimate>& gpus, const std::vector<std::string>& sources,
                                   double straggler_fraction) {
  std::map<std::string, std::vector<size_t>> by_job;
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (!gpus[i].job_id.empty())
      by_job[gpus[i].job_id].push_back(i);
  }
  std::vector<JobEstimate> jobs;
  for (const auto& [id, members] : by_job) {
    JobEstimate job;
    job.id = id;
    job.source = sources[members.front()];
    Weighted mfu;
    std::vector<double> mfus, tensor;
    for (size_t i : members) {
      job.gpus.push_back(gpus[i].device.Key());
      mfu.Add(gpus[i].estimated_mfu, gpus[i]);
      mfus.push_back(gpus[i].estimated_mfu);
      tensor.push_back(gpus[i].tensor_active);
    }
    job.estimated_mfu = mfu.Get();
    job.mfu_median = Median(mfus);
    job.tensor_active_median = Median(tensor);
    job.mfu_min = job.mfu_max = kNaN;
    for (double m : mfus) {
      if (std::isnan(m))
        continue;
      job.mfu_min = std::isnan(job.mfu_min) ? m : std::min(job.mfu_min, m);
      job.mfu_max = std::isnan(job.mfu_max) ? m : std::max(job.mfu_max, m);
    }
    const double limit = straggler_fraction * job.tensor_active_median;
    for (size_t i : members) {
      GpuEstimate& g = gpus[i];
      if (members.size() < 2 || !(job.tensor_active_median > 0) || !(g.tensor_active < limit))
        continue;
      job.stragglers.push_back(g.device.Key());
      g.findings.push_back(
          {"straggler", fmt::format("tensor activity {:.1f}% against job {}'s median {:.1f}% (below {:g} x the "
                                    "median): a slow GPU, or one waiting on the others",
                                    g.tensor_active * 100, id, job.tensor_active_median * 100, straggler_fraction)});
    }
    if (!job.stragglers.empty())
      job.findings.push_back(
          {"straggler", fmt::format("{} of {} GPUs below {:g} x the median tensor activity: {}", job.stragglers.size(),
                                    members.size(), straggler_fraction, base::Join(job.stragglers, ", "))});
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<NodeEstimate> GroupNodes(const std::vector<GpuEstimate>& gpus) {
  std::map<std::string, std::vector<const GpuEstimate*>> by_host;
  for (const GpuEstimate& g : gpus)
    by_host[g.device.hostname].push_back(&g);
  std::vector<NodeEstimate> nodes;
  for (const auto& [host, members] : by_host) {
    NodeEstimate node;
    node.hostname = host;
    std::set<std::pair<std::string, std::string>> physical;
    Weighted mfu;
    for (const GpuEstimate* g : members) {
      physical.insert(PhysicalGpu(g->device));
      mfu.Add(g->estimated_mfu, *g);
      if (!std::isnan(g->power_watts) && g->device.mig_profile.empty())
        node.power_watts += g->power_watts * g->gpu_share;
    }
    // MIG instances all report their parent GPU's power: count it once.
    std::set<std::pair<std::string, std::string>> mig_counted;
    for (const GpuEstimate* g : members) {
      if (!g->device.mig_profile.empty() && !std::isnan(g->power_watts) &&
          mig_counted.insert(PhysicalGpu(g->device)).second)
        node.power_watts += g->power_watts;
    }
    node.gpus = static_cast<int>(physical.size());
    node.estimated_mfu = mfu.Get();
    nodes.push_back(std::move(node));
  }
  return nodes;
}

FleetTotals ComputeTotals(const std::vector<GpuEstimate>& gpus) {
  FleetTotals totals;
  std::set<std::pair<std::string, std::string>> physical;
  Weighted mfu;
  for (const GpuEstimate& g : gpus) {
    physical.insert(PhysicalGpu(g.device));
    mfu.Add(g.estimated_mfu, g);
    totals.gpu_hours += g.seconds * g.gpu_share / 3600.0;
    for (size_t b = 0; b < kNumMfuBands; ++b)
      totals.gpu_hours_by_band[b] += g.gpu_hours_by_band[b];
  }
  totals.gpus = static_cast<int>(physical.size());
  totals.estimated_mfu = mfu.Get();
  return totals;
}

}  // namespace mfu::fleet
