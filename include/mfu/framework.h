#pragma once

// Framework profiles (data/frameworks/frameworks.csv): what a training or
// serving framework overlaps, which attention kernel and FP8 recipe it runs
// and how it shards. These are properties of the software, not of the GPU:
// the performance model reads which communication can hide behind which
// compute from here, and how well hidden communication actually hides
// (overlap_efficiency) from the accelerator family. Every row is cited.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/flops.h"
#include "mfu/memory.h"
#include "mfu/status.h"
#include "mfu/vector_kernels.h"

namespace mfu {

// The fused attention kernel a framework calls. kBest is the family's
// fastest production kernel (cuDNN fused attention through Transformer
// Engine, FlashAttention-3 on Hopper, FlashAttention-4 / cuDNN on Blackwell,
// FlashAttention-2 on Ampere); kFa2 is FlashAttention-2 everywhere (PyTorch
// SDPA's flash backend); kTriton the 2022-23 Triton FlashAttention (MPT's
// `attn_impl: triton`, with ALiBi); kUnfused materialises the scores
// (pre-2022 Megatron).
enum class AttentionKernel { kBest, kFa2, kTriton, kUnfused };
const char* AttentionKernelName(AttentionKernel kernel);
// "best" (aliases "cudnn", "fa3", "fa4", "te"), "fa2" ("sdpa", "flash"),
// "triton", "unfused" ("eager", "math"); kInvalidArgument otherwise.
StatusOr<AttentionKernel> ParseAttentionKernel(std::string_view name);

// How context parallelism exchanges keys and values.
enum class CpMode {
  kRing,       // cp - 1 point-to-point steps, each overlappable with one block of attention
  kAllGather,  // all-gather K/V before attention, reduce-scatter dK/dV after (not overlapped)
  kAllToAll,   // Ulysses: heads <-> sequence all-to-alls of q, k, v and the output
};
const char* CpModeName(CpMode mode);

// How the expert-parallel dispatch moves a token to its top-k experts.
enum class EpDispatch {
  kAllToAll,  // one copy per routed expert (Megatron's alltoall dispatcher, torchtitan's all_to_all)
  // One copy per destination GPU within a node and per destination node
  // across nodes, forwarded over NVLink there (DeepEP normal kernels,
  // HybridEP: Megatron's flex dispatcher).
  kDeepEp,
};
const char* EpDispatchName(EpDispatch dispatch);
// "alltoall" ("a2a"), "deepep" ("hybridep", "flex"); kInvalidArgument otherwise.
StatusOr<EpDispatch> ParseEpDispatch(std::string_view text);

// How a framework runs a layer's elementwise work (norms, the MLP
// activation, rotary embeddings).
enum class Elementwise {
  kFused,     // its own fused kernels (Transformer Engine, Apex, Triton), one per op; torch.compile does not apply
  kEager,     // PyTorch eager modules: each composite op as separate aten kernels (the eager_* bytes on top)
  kCompiled,  // the same modules under torch.compile: Inductor fuses each op into one kernel
};
const char* ElementwiseName(Elementwise e);

// What a framework's selective activation checkpointing keeps (column
// `selective_ac`).
enum class SelectiveAc {
  kAttention,  // Megatron's: everything but the attention core (recomputed)
  kOp,         // torchtitan's op-level policy (flops.h Recompute::kSelectiveOp)
};
const char* SelectiveAcName(SelectiveAc s);

struct FrameworkProfile;
// How `framework` runs elementwise work under a torch.compile `setting`:
// "" its default; "on" (yes, 1, true) compiled; "off" (no, 0, false) eager.
// kInvalidArgument, starting with `what` (the parameter or column), for
// another word or a setting on a framework with its own fused kernels.
StatusOr<Elementwise> ApplyCompile(const FrameworkProfile& framework, std::string_view setting, std::string_view what);

struct FrameworkProfile {
  std::string name;  // "megatron-core", "torchtitan", ...
  // Other names Find accepts (the former `--state` presets: "megatron",
  // "torchtitan-fsdp"); each names one profile.
  std::vector<std::string> aliases;
  std::string kind;  // "training" or "serving"
  std::string summary;
  // Shares (0-1) of each collective that the framework issues while compute
  // it can hide behind is running; the rest runs alone.
  double dp_grad_overlap = 1;        // DP gradient all-reduce / reduce-scatter behind backward
  double dp_param_overlap = 1;       // distributed-optimizer parameter all-gather behind the next forward
  double fsdp_prefetch = 1;          // ZeRO-3 / FSDP per-layer gathers prefetched behind the previous layer
  bool tp_overlap_supported = true;  // TP collectives can be split and overlapped with GEMMs
  bool tp_overlap_default = false;   // ... and the framework's recipes turn it on
  CpMode cp_mode = CpMode::kRing;
  double cp_overlap = 1;  // ring: share of each step's K/V exchange issued behind the previous block
  double ep_overlap = 0;  // MoE dispatch/combine hidden behind other work (shared experts, other micro-batch)
  EpDispatch ep_dispatch = EpDispatch::kAllToAll;
  AttentionKernel attention = AttentionKernel::kBest;
  bool sequence_parallel = true;     // TP shards norms/dropout along the sequence by default
  bool fused_norm_residual = false;  // residual add fused into the norm (one pass fewer)
  // How it runs elementwise work by default (column `elementwise`), and
  // what its eager modules move beyond one fused kernel per op (columns
  // eager_norm_fwd_bytes ... eager_rope_bwd_bytes), charged when eager.
  // A run's `compile` setting turns an eager framework compiled and back;
  // a fused one has no such setting.
  Elementwise elementwise = Elementwise::kFused;
  EagerTraffic eager;
  SelectiveAc selective_ac = SelectiveAc::kAttention;
  // The mode `selective` means here: `asked`, or kSelectiveOp for "op".
  Recompute RecomputeOf(Recompute asked) const;
  std::string fp8_recipe = "delayed";  // "delayed", "tensorwise", "rowwise", "blockwise", "mxfp8" or ""
  // HBM bytes moved per element an FP8 GEMM operand is quantized: amax,
  // cast, transposed copy (e.g. 4 for delayed scaling: read 2, write 1 + 1).
  double fp8_cast_bytes = 4;
  // Bytes per element a linear layer keeps of its input for the weight
  // gradient under FP8: 1 where Transformer Engine keeps the column-wise FP8
  // copy (linear.py: update_usage(rowwise_usage=False), saved_inputmat =
  // inputmat), 2 where torchao keeps the 16-bit input (Float8Linear's
  // save_for_backward(input_hp, ...)).
  double fp8_saved_input_bytes = 2;
  bool zero3_per_tensor = false;  // ZeRO-3 gathers each parameter tensor (DeepSpeed), not each layer (FSDP)
  // Under full recompute, ZeRO-3 gathers each layer again for the recomputed
  // forward and once more for its backward (DeepSpeed's per-module hooks),
  // not once for both (FSDP's pre-backward gather, recompute inside the unit).
  bool zero3_recompute_gather = false;
  // ZeRO-3's collectives take torch.distributed's list form, one tensor per
  // rank (DeepSpeed 2021): ProcessGroupNCCL copies each rank's piece out of
  // (all-gather) or into (reduce-scatter) its flat buffer, a kernel per rank
  // and collective, each charged kernel_overhead_us.
  bool zero3_list_collectives = false;
  // Pipeline sends are split over the tensor-parallel group: each TP rank
  // sends 1/tp of the activation (or its gradient) and the receiver
  // all-gathers the slices over TP (DeepSpeed's PipelineEngine
  // pipe_partitioned / grad_partitioned). Without sequence parallelism only;
  // with it the sent tensor is already the rank's shard.
  bool pp_scatter_gather = false;
  double moe_sync_us = 0;  // host synchronisation per MoE layer and pass (dropless token counts)
  // The ZeRO stage its recipes run when none is given (Megatron-Core's
  // distributed optimizer: 1; FSDP FULL_SHARD: 3), and the stages it
  // implements at all, ascending (torchtitan: DDP 0, FSDP2 without
  // resharding after forward 2, FSDP2 3).
  int zero_stage = 1;
  std::vector<int> zero_stages = {0, 1, 2, 3};
  // With pipeline parallelism (pp > 1), the stages it implements there
  // (DeepSpeed's PipelineEngine refuses ZeRO-2 and 3: 0;1), empty when
  // the same as zero_stages; and the stage its FSDP runs at: 2 where the
  // pipeline keeps each stage's gathered weights across its micro-batches
  // and reduce-scatters after the last (torchtitan: reshard_after_forward
  // off under PP, torch.distributed.pipelining syncs gradients on the last
  // backward), else 3.
  std::vector<int> zero_stages_pp;
  int fsdp_stage_pp = 3;
  // Whether it runs ZeRO stage `stage` with `pp` pipeline stages.
  bool Implements(int stage, int64_t pp = 1) const;
  // The stage FSDP (`fsdp`) runs at with `pp` pipeline stages.
  int FsdpStage(int64_t pp) const;
  // The stage it runs when none is given: zero_stage, its FSDP's stage
  // under PP when that is 3, and under PP the highest stage it implements
  // there that is no higher.
  int DefaultZeroStage(int64_t pp) const;
  // What the framework keeps per parameter between steps (the columns
  // weights_dtype, compute_dtype, main_grads_dtype, fp32_master,
  // fp32_grad_copy, moments_dtype, moments): `mfu memory`, `predict` and
  // `plan` count weights, gradients and optimizer states from it. Serving
  // rows leave the cells empty (the defaults, Megatron-Core's, unused).
  TrainingStateDtypes state;
  std::string source;
};

// Ok when `framework` implements ZeRO `stage` with `pp` pipeline stages
// (or the stage is outside 0-3, which the layout checks report); else
// kInvalidArgument naming parameter 'zero' and the stages it runs.
Status CheckZeroStage(const FrameworkProfile& framework, int stage, int64_t pp = 1);

class FrameworkDb {
 public:
  // data/frameworks/frameworks.csv compiled into the binary; kInternal if
  // broken.
  static StatusOr<FrameworkDb> LoadBuiltin();
  // The built-in table, parsed once (never fails after the first success;
  // kInternal otherwise).
  static StatusOr<const FrameworkDb*> Builtin();
  // Adds or replaces rows (by name) from CSV text with the columns of
  // frameworks.csv (`name` plus any subset for an existing row). kParse for
  // malformed CSV, unknown columns or values, duplicate names; kOutOfRange
  // for shares outside [0, 1] or bytes/latencies out of bounds. All or
  // nothing: on error the table is unchanged.
  Status AddCsv(std::string_view text, std::string_view origin);
  // As AddCsv for the file at `path` read through `fs`; kNotFound if it
  // cannot be read.
  Status AddFile(const FileSystem& fs, const std::string& path);
  // The table as CSV with every column (AddCsv reads it back equal).
  std::string ToCsv() const;
  // By name or alias, case-insensitively; kInvalidArgument naming the
  // closest match and listing the names.
  StatusOr<const FrameworkProfile*> Find(std::string_view name) const;
  // As Find for a training framework; kInvalidArgument for an unknown or a
  // serving framework.
  StatusOr<const FrameworkProfile*> FindTraining(std::string_view name) const;
  const std::vector<FrameworkProfile>& all() const { return profiles_; }

 private:
  std::vector<FrameworkProfile> profiles_;
};

}  // namespace mfu
