// The performance model's value of one kernel figure (kernel_figures.h
// PredictKernelFigure), from the building blocks of roofline.h only, so
// that the figures test what the training and inference models compute.
// (PredictKernelFigure is declared in mfu/kernel_figures.h with the rest.)

#include <algorithm>
#include <cmath>
#include <string>

#include "mfu/kernel_figures.h"

namespace mfu {
namespace {

// The message a bandwidth plateau is evaluated at: latency terms vanish.
constexpr double kPlateauBytes = 1099511627776.0;  // 1 TiB
// Flash attention's backward executes 2.5x the forward FLOPs (perf_model.cc).
constexpr double kAttentionBackward = 2.5;

// `seconds` for `work` (FLOPs, bytes) in the figure's unit.
double InUnit(FigureUnit unit, double work, double seconds) {
  switch (unit) {
    case FigureUnit::kTflops:
    case FigureUnit::kTbs:
      return work / seconds / 1e12;
    case FigureUnit::kGbs:
      return work / seconds / 1e9;
    case FigureUnit::kUs:
      return seconds * 1e6;
  }
  return 0;
}

// Each GEMM one kernel: GemmSeconds (x groups in a grouped kernel, at the
// family's grouped-GEMM or weight-gradient fraction: GroupedGemmSeconds)
// plus the per-kernel overhead. TB/s figures are weight bytes streamed.
StatusOr<double> PredictGemm(const KernelFigure& f, const Accelerator& gpu, const EfficiencyParams& e) {
  double seconds = 0, flops = 0, weight_bytes = 0;
  for (size_t i = 0; i < f.gemms.size(); ++i) {
    const auto& [m, n, k] = f.gemms[i];
    const double s = f.kind == KernelFigureKind::kGroupedGemm
                         ? GroupedGemmSeconds(gpu, e, f.dtype, m, n, k, i < f.wgrad.size() && f.wgrad[i])
                         : GemmSeconds(gpu, e, f.dtype, m, n, k);
    if (!(s > 0))
      return InvalidArgumentError(std::string("no GEMM time: ") + gpu.id + " has no " + DTypeName(f.dtype) +
                                  " or 16-bit peak");
    seconds += f.groups * s + e.kernel_overhead_us * 1e-6;
    flops += f.groups * 2 * m * n * k;
    weight_bytes += f.groups * n * k * DTypeBytes(f.dtype);
  }
  return InUnit(f.unit, f.unit == FigureUnit::kTbs ? weight_bytes : flops, seconds);
}

// The rate of a nominal amount of work through AttentionSeconds: the
// forward executes F, the backward 2.5 F.
StatusOr<double> PredictAttention(const KernelFigure& f, const Accelerator& gpu, const EfficiencyParams& e) {
  constexpr double kFlops = 1e15;
  const double fwd = AttentionSeconds(gpu, e, f.kernel, false, kFlops, f.seq, f.causal, f.head_dim);
  const double bwd = AttentionSeconds(gpu, e, f.kernel, true, kAttentionBackward * kFlops, f.seq, f.causal, f.head_dim);
  if (!(fwd > 0) || !(bwd > 0))
    return InvalidArgumentError("no attention time: " + gpu.id + " has no 16-bit peak");
  double flops = kFlops, seconds = fwd;
  if (f.pass == AttentionPass::kBackward) {
    flops = kAttentionBackward * kFlops;
    seconds = bwd;
  } else if (f.pass == AttentionPass::kForwardBackward) {
    flops = (1 + kAttentionBackward) * kFlops;
    seconds = fwd + bwd;
  }
  // A source that counts the whole causal matrix quotes twice the rate.
  if (f.causal && f.full_causal_flops)
    flops *= 2;
  return InUnit(f.unit, flops, seconds);
}

// NVLink at scaleup_bw_fraction; across scale-up domains the training
// model's rules for groups that span domains (over domains of ranks /
// nodes GPUs): an all-reduce's ring Fabric::Link, an all-to-all
// Fabric::AllToAllLink (NIC-bound at alltoall_nic_ratio).
StatusOr<LinkSpec> FigureLink(const KernelFigure& f, const Accelerator& gpu, const Cluster* cluster,
                              const EfficiencyParams& e) {
  if (!(gpu.scaleup_bw_per_direction_gbs * 1e9 * e.scaleup_bw_fraction > 0))
    return InvalidArgumentError("no link: " + gpu.id + " has no scale-up bandwidth in the database");
  if (f.fabric == FigureFabric::kNvlink) {
    // The accelerator's NVLink figure, the cluster's latency.
    LinkSpec up = Fabric::Of(gpu, nullptr, e).scale_up();
    if (cluster != nullptr)
      up.latency_s = cluster->scaleup_latency_s;
    return up;
  }
  if (cluster == nullptr)
    return InvalidArgumentError("a scale-out figure needs a cluster (its NIC)");
  Cluster nodes = *cluster;
  nodes.scaleup_bw_bytes_per_s = gpu.scaleup_bw_per_direction_gbs * 1e9;
  nodes.nvlink_domain_gpus = static_cast<int>(std::max(1.0, std::floor(f.ranks / f.nodes)));
  const Fabric fabric = Fabric::Of(gpu, &nodes, e);
  if (f.kind == KernelFigureKind::kAllToAll)
    return fabric.AllToAllLink(f.ranks, 1);
  return fabric.Link(f.ranks, 1);
}

// nccl-tests' bus bandwidth (or algbw) of CollectiveSeconds at the
// figure's message size.
StatusOr<double> PredictCollective(const KernelFigure& f, const Accelerator& gpu, const Cluster* cluster,
                                   const EfficiencyParams& e) {
  MFU_ASSIGN_OR_RETURN(LinkSpec link, FigureLink(f, gpu, cluster, e));
  const CollectiveKind kind =
      f.kind == KernelFigureKind::kAllReduce ? CollectiveKind::kAllReduce : CollectiveKind::kAllToAll;
  const double bytes = f.message_bytes > 0 ? f.message_bytes : kPlateauBytes;
  const double seconds = CollectiveSeconds(kind, f.ranks, bytes, link);
  const double bus = BusBandwidthFactor(kind, std::llround(f.ranks));
  return InUnit(f.unit, f.algbw ? bytes : bytes * bus, seconds);
}

// Streaming at vector_bw_fraction of HBM (a quantization kernel at
// quant_bw_fraction, an MoE permutation at permute_bw_fraction); a kernel
// of known bytes adds the per-kernel overhead.
StatusOr<double> PredictMemory(const KernelFigure& f, const Accelerator& gpu, const EfficiencyParams& e) {
  double fraction = e.vector_bw_fraction;
  if (f.kind == KernelFigureKind::kQuantize)
    fraction = e.quant_bw_fraction;
  else if (f.kind == KernelFigureKind::kPermute)
    fraction = e.permute_bw_fraction;
  const double bw = gpu.memory_bw_tbps * 1e12 * fraction;
  if (!(bw > 0))
    return InvalidArgumentError("no HBM bandwidth: " + gpu.id);
  if (!(f.bytes > 0))
    return InUnit(f.unit, bw, 1);
  return InUnit(f.unit, f.bytes, f.bytes / bw + e.kernel_overhead_us * 1e-6);
}

}  // namespace

StatusOr<double> PredictKernelFigure(const KernelFigure& figure, const Accelerator& gpu, const Cluster* cluster,
                                     const EfficiencyParams& e) {
  switch (figure.kind) {
    case KernelFigureKind::kGemm:
    case KernelFigureKind::kGroupedGemm:
      return PredictGemm(figure, gpu, e);
    case KernelFigureKind::kAttention:
      return PredictAttention(figure, gpu, e);
    case KernelFigureKind::kAllReduce:
    case KernelFigureKind::kAllToAll:
      return PredictCollective(figure, gpu, cluster, e);
    case KernelFigureKind::kMemory:
    case KernelFigureKind::kQuantize:
    case KernelFigureKind::kPermute:
      return PredictMemory(figure, gpu, e);
  }
  return InternalError("unknown kernel figure kind");
}

}  // namespace mfu
