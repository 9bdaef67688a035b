// Timing of the memory-bound vector kernels (vector_kernels.h), shared by the
// training and the inference model.

#include "mfu/vector_kernels.h"

#include <algorithm>

namespace mfu {
namespace {

constexpr double kKiB = 1024;

double Kernel(const VectorKernelTable& kernels, VectorKernel kind, double hbm, double rows, double row_bytes) {
  return VectorKernelSeconds(kernels[static_cast<size_t>(kind)], hbm, rows, row_bytes);
}

}  // namespace

const char* VectorKernelName(VectorKernel kernel) {
  switch (kernel) {
    case VectorKernel::kNorm:
      return "norm";
    case VectorKernel::kResidualAdd:
      return "residual_add";
    case VectorKernel::kActivation:
      return "activation";
  }
  return "?";
}

std::array<VectorKernelParamInfo, kNumVectorKernelParams> VectorKernelParamInfos() {
  return {{
      {"min_us", &VectorKernelParams::min_us, 0, 1000},
      {"row_ns_per_kib", &VectorKernelParams::row_ns_per_kib, 0, 100000},
      {"bw_fraction", &VectorKernelParams::bw_fraction, 0.05, 1},
  }};
}

double VectorKernelSeconds(const VectorKernelParams& k, double hbm_bytes_per_s, double rows, double row_bytes) {
  if (!(rows > 0) || !(row_bytes > 0) || !(hbm_bytes_per_s > 0) || !(k.bw_fraction > 0))
    return 0;
  const double floor_s = (k.min_us * 1e3 + row_bytes / kKiB * k.row_ns_per_kib) * 1e-9;
  return std::max(floor_s, rows * row_bytes / (hbm_bytes_per_s * k.bw_fraction));
}

double LayerVectorSeconds(const VectorKernelTable& kernels, double hbm_bytes_per_s, const LayerVectorWork& w) {
  return LayerVectorParts(kernels, hbm_bytes_per_s, w).total();
}

LayerVectorTimes LayerVectorParts(const VectorKernelTable& kernels, double hbm_bytes_per_s, const LayerVectorWork& w) {
  const double b = w.element_bytes;
  const double act_passes = w.gated ? 3 : 2;
  const double hbm = hbm_bytes_per_s;
  const double norm_passes = w.fused_norm_residual ? 4 : 2;
  const double norms = 2 * Kernel(kernels, VectorKernel::kNorm, hbm, w.hidden_rows, norm_passes * w.hidden * b);
  const double adds =
      w.fused_norm_residual ? 0 : 2 * Kernel(kernels, VectorKernel::kResidualAdd, hbm, w.hidden_rows, 3 * w.hidden * b);
  const double dense =
      Kernel(kernels, VectorKernel::kActivation, hbm, w.dense_act_rows, act_passes * w.dense_act_width * b);
  const double expert =
      Kernel(kernels, VectorKernel::kActivation, hbm, w.expert_act_rows, act_passes * w.expert_act_width * b);
  return {norms, adds, (1 - w.moe_share) * dense, w.moe_share * expert};
}

double LayerVectorBytes(const LayerVectorWork& w) {
  const double act_passes = w.gated ? 3 : 2;
  return w.element_bytes * ((w.fused_norm_residual ? 8 : 10) * w.hidden_rows * w.hidden +
                            act_passes * ((1 - w.moe_share) * w.dense_act_rows * w.dense_act_width +
                                          w.moe_share * w.expert_act_rows * w.expert_act_width));
}

EagerBytes LayerEagerBytes(const LayerVectorWork& w, const EagerTraffic& t, double qk_elements) {
  const double norm = 2 * w.hidden_rows * w.hidden;
  const double act =
      (1 - w.moe_share) * w.dense_act_rows * w.dense_act_width + w.moe_share * w.expert_act_rows * w.expert_act_width;
  return {t.norm_fwd * norm + t.act_fwd * act + t.rope_fwd * qk_elements,
          t.norm_bwd * norm + t.act_bwd * act + t.rope_bwd * qk_elements};
}

}  // namespace mfu
