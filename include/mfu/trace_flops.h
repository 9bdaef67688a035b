#pragma once

// FLOPs and bytes of the matrix ops a PyTorch profiler trace recorded with
// record_shapes=True (GEMMs, attention, convolutions), linked to the GPU
// kernels those ops launched and summed per kernel class: executed FLOPs,
// kernel time, achieved FLOP/s and the share of the device's dense peak for
// each op's dtype.
//
// Counting conventions (every figure below follows them):
//  * One fused multiply-add is 2 FLOPs. Only the matrix products are counted:
//    a GEMM is 2*M*N*K whatever its epilogue (bias, alpha/beta, activation),
//    because the epilogue does not run on the matrix units that the dense
//    peak describes. (TraceLens adds M*N for the bias of addmm.)
//  * Attention forward is 2*B*Hq*Nq*Nkv*(d_qk + d_v) (QK^T and PV); softmax
//    and masking are not counted. A causal mask with Nq == Nkv counts half,
//    as Megatron-LM and TraceLens do (the exact triangle is (N+1)/2N); with
//    Nq != Nkv the unmasked fraction of the mask's own alignment is used
//    (top-left for aten SDPA, bottom-right for flash_attn and
//    custom_mask_type 2).
//  * Attention backward is 2.5x its forward: flash, memory-efficient and
//    cuDNN backward kernels recompute QK^T and then run dV, dP, dQ and dK,
//    five products against the forward's two (TraceLens counts the same).
//  * Convolution forward is 2 * numel(output) * numel(weight[1:]) (2 *
//    numel(input) * numel(weight[1:]) when transposed); its backward
//    (aten::convolution_backward) is one forward per gradient that
//    `output_mask` asks for among input and weight (2x when absent); the bias
//    gradient is a reduction and is not counted.
//    These are algorithmic (direct-convolution) FLOPs: cuDNN's Winograd and
//    FFT algorithms do fewer multiplies, so a 3x3 convolution can show more
//    than 100% of the peak (seen on V100 ResNet-50 backward).
//  * Autograd's GEMM backward is not estimated: MmBackward0 / AddmmBackward0
//    run aten::mm ops whose own shapes are recorded and counted.
//  * Bytes are compulsory traffic: every tensor input read once and every
//    output written once, at the element size of its recorded dtype.
//  * The dtype selecting the peak is the first matrix operand's recorded
//    "Input type". float is FP32 (PyTorch's default
//    torch.backends.cuda.matmul.allow_tf32 is False) unless a kernel the op
//    launched says TF32 ("tf32" in cuBLAS/cuDNN names, CUTLASS
//    "tensorop_s...") or OpFlopsOptions says so; TF32 falls back to the
//    FP32 peak on devices without TF32.
//
// Linking (docs: shared/reference/trace-anchors.md section 4.5): a GPU event
// belongs to the cpu_op whose External id it carries, else to the op whose id
// its runtime event (same correlation) carries, else to the innermost cpu_op
// that encloses the runtime event on its thread (ROCm kernels carry no
// External id). Ops nest (aten::linear > aten::addmm; aten::matmul >
// aten::mm; SDPA > _scaled_dot_product_flash_attention >
// _flash_attention_forward); the innermost op with a formula is counted and
// the ops around it are not, so no FLOP is counted twice. An op's FLOPs are
// spread over the matrix-class kernels it launched in proportion to their
// durations (over all its kernels when none is matrix-class; never over
// memcpys or memsets).

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/hwdb.h"
#include "mfu/status.h"
#include "mfu/trace.h"
#include "mfu/trace_classify.h"

namespace mfu {

// The recorded arguments of one cpu_op, with strings resolved. Views point
// into the RankTrace (or the caller's storage) and live as long as it.
struct OpShapeView {
  std::span<const std::vector<int64_t>> dims;  // "Input Dims"
  std::vector<std::string_view> types;         // "Input type"
  std::vector<std::string_view> concrete;      // "Concrete Inputs" (may be empty)
};

// Resolves `trace.op_shapes[shapes_index]`. Precondition: a valid index.
OpShapeView ViewOpShapes(const RankTrace& trace, uint32_t shapes_index);

struct OpFlopsOptions {
  // float GEMMs run as TF32 (torch.backends.cuda.matmul.allow_tf32 = True or
  // torch.set_float32_matmul_precision("high")).
  bool fp32_matmul_uses_tf32 = false;
};

// What shapes say about one op.
struct OpCost {
  KernelClass cls = KernelClass::kGemm;  // kGemm, kAttention or kConvolution
  double flops = 0;                      // executed FLOPs (FMA = 2)
  double bytes = 0;                      // compulsory bytes, see above
  DType dtype = DType::kBf16;            // selects the dense peak
  bool backward = false;
  // The shapes do not fix the count exactly (variable-length attention:
  // one sequence of the recorded maximum length, the rest sharing the
  // remaining tokens equally, as TraceLens estimates).
  bool estimated = false;
};

// True when `op_name` (e.g. "aten::mm") has a formula in ComputeOpCost.
bool HasOpCostFormula(std::string_view op_name);

// FLOPs and bytes of op `op_name` from its recorded arguments. Errors:
// kUnsupported when the op has no formula (see HasOpCostFormula) or its
// dtype is not a matrix dtype (int64, bool...); kInvalidArgument when the
// shapes do not fit the op's signature (missing operands, mismatched inner
// dimensions, missing Concrete Inputs a convolution needs), with the reason.
StatusOr<OpCost> ComputeOpCost(std::string_view op_name, const OpShapeView& shapes, const OpFlopsOptions& options = {});

// Per-event attribution of shape FLOPs to GPU events (kernels, memcpys,
// memsets). The vectors are parallel to the trace's event columns; entries of
// non-GPU events are kNoIndex / 0.
struct FlopsAttribution {
  struct Op {
    uint32_t event = kNoIndex;  // the cpu_op event
    OpCost cost;
    uint32_t gpu_events = 0;  // GPU events it launched (memsets included)
    uint32_t carriers = 0;    // those carrying a share of its FLOPs
  };
  std::vector<Op> ops;              // counted ops, in event order
  std::vector<uint32_t> launch_op;  // the cpu_op event that launched a GPU event
  std::vector<uint32_t> cost_op;    // index into `ops` of the counted op this event is part of
  std::vector<double> flops;        // FLOPs carried by this GPU event (0 for memsets beside a GEMM)
  std::vector<double> bytes;

  // Diagnostics.
  uint64_t gpu_events_total = 0;
  uint64_t linked_by_external_id = 0;
  uint64_t linked_by_correlation = 0;   // via the runtime event's External id
  uint64_t linked_by_enclosing_op = 0;  // via the op around the runtime event
  uint64_t unlinked = 0;                // no launching op found
  uint64_t ops_with_formula = 0;        // cpu_ops named in the formula table
  uint64_t ops_nested = 0;              // costed ops inside another costed op (not counted)
  uint64_t ops_bad_shapes = 0;          // formula known, shapes unusable
  uint64_t ops_without_kernels = 0;     // counted ops with no kernel in the trace to carry their FLOPs
  double flops_without_kernels = 0;
  std::vector<std::string> bad_shape_examples;  // the first few "name: reason"

  const OpCost* cost_of(size_t event) const { return cost_op[event] == kNoIndex ? nullptr : &ops[cost_op[event]].cost; }
};

// Computes the attribution for `trace`. `classes` holds the class of every
// event (ClassifyEvents); it decides which of an op's kernels carry its
// FLOPs. `launches` (LinkLaunches in trace_breakdown.h) gives the runtime
// event of every GPU event. Preconditions: both have trace.num_events()
// entries.
FlopsAttribution AttributeOpFlops(const RankTrace& trace, std::span<const KernelClass> classes,
                                  std::span<const uint32_t> launches, const OpFlopsOptions& options = {});

// Time and FLOPs of one kernel class inside a window. Kernels crossing the
// window's edges count their clipped part, with FLOPs prorated.
struct ClassFlops {
  int64_t events = 0;
  int64_t sum_ns = 0;             // sum of (clipped) durations
  int64_t union_ns = 0;           // union over all streams
  int64_t with_flops_sum_ns = 0;  // sum of durations of events carrying FLOPs
  double flops = 0;               // executed FLOPs from shapes
  double bytes = 0;
  // Time the FLOPs would take at the dense peak of their dtype,
  // sum(flops / peak(dtype)), in ns; 0 without an accelerator. FLOPs whose
  // dtype has no peak on the device are left out and counted below.
  double at_peak_ns = 0;
  double flops_without_peak = 0;

  // flops / with_flops time; 0 when nothing carries FLOPs.
  double achieved_flops_per_s() const {
    return with_flops_sum_ns > 0 ? flops / (static_cast<double>(with_flops_sum_ns) * 1e-9) : 0;
  }
  // Fraction (not percent) of the dense peak over the time of the events
  // that carry FLOPs.
  double peak_fraction() const {
    return with_flops_sum_ns > 0 ? at_peak_ns / static_cast<double>(with_flops_sum_ns) : 0;
  }
};

// Ops with the same name, input dims and input types (TraceLens's "unique
// args" rows).
struct OpGroupFlops {
  std::string name;
  std::string dims;   // "[[8944, 1024], [1024, 2816]]"
  std::string types;  // "[c10::BFloat16, c10::BFloat16]"
  KernelClass cls = KernelClass::kGemm;
  DType dtype = DType::kBf16;
  bool backward = false;
  int64_t ops = 0;   // ops with GPU events in the window
  double flops = 0;  // their FLOPs in the window
  double bytes = 0;
  int64_t gpu_sum_ns = 0;  // every GPU event they launched (memsets included)
  double at_peak_ns = 0;
  double flops_per_op() const { return ops > 0 ? flops / static_cast<double>(ops) : 0; }
};

struct TraceFlopsSummary {
  int64_t window_start_ns = 0;
  int64_t window_end_ns = 0;
  std::string accelerator;  // Accelerator::id, "" when none was given
  std::array<ClassFlops, kNumKernelClasses> by_class{};
  ClassFlops matrix;                    // kGemm + kAttention + kConvolution (union over the three)
  std::vector<OpGroupFlops> op_groups;  // by GPU time, descending

  // Share of matrix-kernel time whose FLOPs the shapes give.
  double coverage() const {
    return matrix.sum_ns > 0 ? static_cast<double>(matrix.with_flops_sum_ns) / static_cast<double>(matrix.sum_ns) : 0;
  }
  const ClassFlops& operator[](KernelClass c) const { return by_class[static_cast<size_t>(c)]; }
};

// Sums `attribution` per kernel class over the GPU events overlapping
// [window_start_ns, window_end_ns). `gpu` (may be null) gives the peaks.
TraceFlopsSummary SummarizeFlops(const RankTrace& trace, std::span<const KernelClass> classes,
                                 const FlopsAttribution& attribution, const Accelerator* gpu,
                                 int64_t window_start_ns = std::numeric_limits<int64_t>::min(),
                                 int64_t window_end_ns = std::numeric_limits<int64_t>::max());

// The accelerator a trace ran on: `gpu_override` (a --gpu flag) when
// non-empty, else RankTrace::device_name(). Errors: kNotFound when the trace
// names no device and there is no override; HardwareDb::Find's errors
// (kInvalidArgument: unknown or ambiguous name) otherwise. The pointer lives
// as long as `db` is neither destroyed nor merged into.
StatusOr<const Accelerator*> ResolveTraceAccelerator(const RankTrace& trace, const HardwareDb& db,
                                                     std::string_view gpu_override);

}  // namespace mfu
