#pragma once

// Memory-bound vector kernels of a transformer layer (norms, residual adds,
// the MLP activation), timed the same way by the training and the inference
// model. Each kind has its own parameters per accelerator family
// (data/efficiency/vector_kernels.csv, fitted to Vidur's measured kernel
// times by `mfu calibrate --operators`; docs/plan.md has the method):
//
//   time = max(min_us + row_bytes / 1 KiB x row_ns_per_kib,
//              rows x row_bytes / (HBM bandwidth x bw_fraction))
//
// The first term is the kernel's floor: launch and scheduling, plus the
// latency of one row, because these kernels give each token row to one
// thread block, so a one-token kernel still walks a whole row (a 70B model's
// norm takes longer at one token than an 8B model's). The second is the
// streaming time once enough rows run at once. The floor matters for decode
// steps of a few tokens; the bandwidth fraction at thousands of tokens.

#include <array>
#include <cstddef>
#include <string>

namespace mfu {

enum class VectorKernel {
  kNorm,         // RMSNorm / LayerNorm: reads and writes the hidden state
  kResidualAdd,  // residual add: reads two hidden states, writes one
  kActivation,   // MLP activation: gated (SwiGLU) reads gate and up, writes one; plain reads one, writes one
};
inline constexpr size_t kNumVectorKernels = 3;

// "norm", "residual_add", "activation": the `kernel` column's values.
const char* VectorKernelName(VectorKernel kernel);

struct VectorKernelParams {
  double min_us = 2;          // floor of any launch, microseconds
  double row_ns_per_kib = 0;  // added to the floor per KiB of one row's traffic
  double bw_fraction = 0.7;   // achieved / HBM bandwidth when many rows stream
  std::string source;         // how the values were obtained
};
using VectorKernelTable = std::array<VectorKernelParams, kNumVectorKernels>;

// name, pointer-to-member, and the bounds a file value must lie in.
struct VectorKernelParamInfo {
  const char* name;
  double VectorKernelParams::*field;
  double min;
  double max;
};
inline constexpr size_t kNumVectorKernelParams = 3;
std::array<VectorKernelParamInfo, kNumVectorKernelParams> VectorKernelParamInfos();

// One kernel over `rows` token rows of `row_bytes` bytes of HBM traffic each
// (reads plus writes) on a GPU of `hbm_bytes_per_s` peak bandwidth, seconds
// (the formula above). 0 when `rows` or `row_bytes` is not positive.
double VectorKernelSeconds(const VectorKernelParams& k, double hbm_bytes_per_s, double rows, double row_bytes);

// The vector kernels of one layer's forward pass on one GPU: two norms, two
// residual adds and the MLP activation. Rows and widths are what that GPU
// processes.
struct LayerVectorWork {
  double hidden_rows = 0;       // rows of the norms and adds (tokens; / tp under sequence parallelism)
  double hidden = 0;            // elements per such row
  double dense_act_rows = 0;    // dense MLP activation: rows (tokens)
  double dense_act_width = 0;   // elements per row (ffn / tp)
  double expert_act_rows = 0;   // routed experts' activation, one kernel over the dispatched rows (tokens x top-k)
  double expert_act_width = 0;  // elements per row (expert ffn per GPU)
  double moe_share = 0;         // share of layers that are MoE (the rest use the dense activation)
  bool gated = true;            // gated MLP: the activation reads two inputs
  double element_bytes = 2;     // 16-bit activations
  // The residual add runs inside the following norm (reads the stream and
  // the branch, writes the sum and the normalised rows: one kernel, one
  // pass fewer than add + norm).
  bool fused_norm_residual = false;
};

// HBM bytes per element that a framework's eager (uncompiled) PyTorch
// modules move beyond the one fused kernel per op that LayerVectorSeconds
// times: each composite op runs as its separate aten kernels, each reading
// and writing the whole tensor, some in fp32 (frameworks.csv eager_*
// columns, derived from the framework's module code). Forward and backward
// apart, because recompute repeats the forward.
struct EagerTraffic {
  double norm_fwd = 0, norm_bwd = 0;  // per hidden element of each of the layer's two norms
  double act_fwd = 0, act_bwd = 0;    // per MLP activation output element (ffn wide)
  double rope_fwd = 0, rope_bwd = 0;  // per query and key element (rotary embedding)
};

// The extra bytes of one layer, forward and backward, on one GPU: the norms
// over `hidden_rows` x `hidden`, the activation as LayerVectorBytes weighs
// dense and expert rows, rope over `qk_elements` (tokens x (q + k width)).
struct EagerBytes {
  double forward = 0;
  double backward = 0;
};
EagerBytes LayerEagerBytes(const LayerVectorWork& w, const EagerTraffic& t, double qk_elements);

// Seconds of the layer's vector kernels (VectorKernelSeconds per kernel):
// the two norms, the two residual adds (0 when fused into the norms), and
// the MLP activation weighted over dense and MoE layers (moe_share), whose
// sum is LayerVectorSeconds.
struct LayerVectorTimes {
  double norms = 0;
  double adds = 0;
  double dense_act = 0;   // already x (1 - moe_share)
  double expert_act = 0;  // already x moe_share
  double total() const { return norms + adds + dense_act + expert_act; }
};
LayerVectorTimes LayerVectorParts(const VectorKernelTable& kernels, double hbm_bytes_per_s, const LayerVectorWork& w);
double LayerVectorSeconds(const VectorKernelTable& kernels, double hbm_bytes_per_s, const LayerVectorWork& w);
// Their HBM traffic, bytes: 2 x 2 + 2 x 3 passes over the hidden state (2 x 4
// fused) and
// 3 (gated) or 2 over the activation.
double LayerVectorBytes(const LayerVectorWork& w);

}  // namespace mfu
