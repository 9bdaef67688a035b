// PerfModel::Evaluate's phases (perf_model.h; formulas in docs/plan.md):
// the shape is checked, the groups' links resolved, one layer's forward
// compute (GEMMs, attention, vector work) and its exposed tensor, context
// and expert communication timed, the most loaded stage's forward and
// backward summed, the data-parallel (or FSDP) communication overlapped,
// the step, the throughput and the memory filled. Each phase reads what the
// earlier ones left in the evaluation's context; all of it is arithmetic on
// the stack (the planner runs it millions of times).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "mfu/memory.h"
#include "mfu/perf_model.h"
#include "mfu/vector_kernels.h"
#include "plan/perf_model_internal.h"

namespace mfu {

using namespace perf_internal;  // NOLINT: the model's own helpers

// One evaluation's quantities, in the order the phases fill them. Times are
// seconds of one micro-batch on one GPU (_f forward, _b backward) unless
// said otherwise.
struct PerfModel::Eval {
  // Only the references and the accumulators are initialized: every other
  // field is written by its phase before a later one reads it (an early
  // issue returns before any is read), which keeps a rejected
  // configuration's cost to its checks.
  Eval(TrainingConfig& config, const ModelSpec& model, const Accelerator& accelerator,
       const EfficiencyParams& efficiency, const FrameworkProfile& framework)
      : c(config), m(model), gpu(accelerator), e(efficiency), fw(framework) {}
  TrainingConfig& c;
  const ModelSpec& m;
  const Accelerator& gpu;
  const EfficiencyParams& e;
  const FrameworkProfile& fw;
  // Shape.
  int64_t dp, kv;  // kv: KV heads
  bool sp, fused_attention;
  double tp, pp, cp, ep, etp, vpp, dpd, mbs;
  // Links of the parallel groups.
  LinkSpec tp_link, cp_link, ep_link, dp_link, expert_dp_link, pp_link;
  // One layer's forward compute.
  double peak16, hbm, seq, tokens, h, q_width, mlp_width, imbalance, head_dim;
  double quant_f = 0, quant_b = 0, gemm_f;
  double core_f, core_b, core_vec_f = 0;
  double vec_f, overhead_f;
  // One layer's exposed communication.
  double act_bytes;
  double tp_f_exp, tp_b_exp, cp_f_exp = 0, cp_b_exp = 0, ep_f_exp = 0, ep_b_exp = 0;
  // The most loaded stage, one micro-batch.
  double layers_per_stage, layer_rc = 0, layer_rc_comm = 0, head_gemm, head_f, t_f, t_b;
  // Its parameters and their shard groups.
  double stage_dense_params, stage_expert_params, shard, expert_shard, chunk_share;
  // The step.
  int64_t micro_batches;
  double mb, fsdp_exposed_per_mb = 0, bubble, pp_comm = 0, dp_comm = 0, optimizer;
};

namespace {

// `share` of `comm` is issued behind `compute`; overlap_efficiency of that
// hides, never more than the compute.
double Exposed(const EfficiencyParams& e, double comm, double compute, double share) {
  return comm - std::min(std::clamp(share, 0.0, 1.0) * e.overlap_efficiency * comm, e.overlap_efficiency * compute);
}

}  // namespace

void PerfModel::EvaluateStep(const TrainingConfig& in, Prediction& out) const {
  out = Prediction{};
  out.config = in;
  Eval x(out.config, *setup_.model, *setup_.gpu, setup_.efficiency, setup_.framework);
  out.issue = CheckShape(x);
  if (out.issue == ConfigIssue::kOk)
    out.issue = ResolveLinks(x);
  if (out.issue != ConfigIssue::kOk)
    return;
  LayerGemms(x);
  LayerAttention(x);
  LayerVector(x);
  LayerCommunication(x);
  StageTimes(x);
  StageParameters(x);
  DataParallel(x);
  Totals(x, out);
  Memory(x, out);
}

inline ConfigIssue PerfModel::CheckShape(Eval& x) const {
  TrainingConfig& c = x.c;
  const ModelSpec& m = x.m;
  const ValueCheck failed = FirstFailedValueCheck(c, setup_.gpus);
  if (failed != ValueCheck::kOk)
    return failed < ValueCheck::kGpusNotDivisible ? ConfigIssue::kBadValue : ConfigIssue::kGpusNotDivisible;
  if (c.fsdp)
    c.zero_stage = 3;
  const int64_t dp = setup_.gpus / (c.tp * c.pp * c.cp);
  c.dp = dp;
  // Stages may hold unequal layer counts (Megatron's first/last-stage
  // options): the most loaded one holds ceil(layers / (pp * vpp)) per chunk.
  if (m.num_layers < c.pp * c.vpp)
    return ConfigIssue::kLayersNotDivisible;
  const int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  const int64_t ffn = m.is_moe() && m.ffn == 0 ? m.moe.expert_ffn : m.ffn;
  if (c.tp > kMaxTensorParallel || m.heads % c.tp != 0 || (kv % c.tp != 0 && c.tp % kv != 0) ||
      (ffn > 0 && ffn % c.tp != 0))
    return ConfigIssue::kHeadsNotDivisible;
  if (m.is_moe()) {
    if (m.moe.num_experts % c.ep != 0 || (dp * c.cp * c.tp) % (c.ep * c.etp) != 0 ||
        (c.etp > 1 && m.moe.expert_ffn % c.etp != 0)) {
      return ConfigIssue::kExpertsNotDivisible;
    }
  } else if (c.ep != 1 || c.etp != 1) {
    return ConfigIssue::kExpertsNotDivisible;
  }
  if (c.global_batch == 0)
    c.global_batch = dp * c.micro_batch;
  if (c.global_batch % (dp * c.micro_batch) != 0)
    return ConfigIssue::kBatchNotDivisible;
  if (c.cp > 1 && setup_.seq_len % (2 * c.cp) != 0)
    return ConfigIssue::kSequenceNotDivisible;
  c.sequence_parallel = c.sequence_parallel && c.tp > 1;
  // The framework.
  if (c.tp_comm_overlap && !x.fw.tp_overlap_supported)
    return ConfigIssue::kBadValue;
  if (!(c.moe_imbalance >= 1 && c.moe_imbalance <= 64))
    return ConfigIssue::kBadValue;
  c.flash_attention = c.flash_attention && x.fw.attention != AttentionKernel::kUnfused;
  x.dp = dp;
  x.kv = kv;
  x.sp = c.sequence_parallel;
  x.fused_attention = c.flash_attention;
  return ConfigIssue::kOk;
}

inline ConfigIssue PerfModel::ResolveLinks(Eval& x) const {
  const TrainingConfig& c = x.c;
  x.tp = static_cast<double>(c.tp);
  x.pp = static_cast<double>(c.pp);
  x.cp = static_cast<double>(c.cp);
  x.ep = static_cast<double>(c.ep);
  x.etp = static_cast<double>(c.etp);
  x.vpp = static_cast<double>(c.vpp);
  x.dpd = static_cast<double>(x.dp);
  x.mbs = static_cast<double>(c.micro_batch);
  const double tp = x.tp, cp = x.cp, ep = x.ep, etp = x.etp, dpd = x.dpd;
  const Fabric& fabric = fabric_;
  x.tp_link = fabric.Link(tp, 1);
  x.cp_link = fabric.Link(cp, tp);
  x.ep_link = fabric.AllToAllLink(ep * etp, tp * cp / etp);
  x.dp_link = fabric.Link(dpd * cp, tp);
  // Megatron places expert TP x EP innermost over the dp x cp x tp ranks:
  // the expert-data-parallel group's members sit ep x etp GPUs apart (one
  // per node when EP fills the node).
  const double expert_dp = std::max(1.0, dpd * cp * tp / (ep * etp));
  x.expert_dp_link = fabric.Link(expert_dp, ep * etp);
  const double pp_members = c.pp > 1 ? 2 : 1, pp_stride = tp * cp * dpd;
  x.pp_link = fabric.Link(pp_members, pp_stride);
  const bool reaches = fabric.Reaches(tp, 1) && fabric.Reaches(cp, tp) && fabric.Reaches(ep * etp, tp * cp / etp) &&
                       fabric.Reaches(dpd * cp, tp) && fabric.Reaches(expert_dp, ep * etp) &&
                       fabric.Reaches(pp_members, pp_stride);
  return reaches ? ConfigIssue::kOk : ConfigIssue::kTopology;
}

// Linear layers run at the precision's dense peak (a device without it,
// fp8 on A100, at its 16-bit peak); attention and the LM head in 16-bit.
inline void PerfModel::LayerGemms(Eval& x) const {
  const TrainingConfig& c = x.c;
  const ModelSpec& m = x.m;
  const double peak = ComputePeakFlops(x.gpu, c.precision);
  x.peak16 = ComputePeakFlops(x.gpu, DType::kBf16);
  const bool low_precision =
      (c.precision == DType::kFp8 || c.precision == DType::kFp4) && x.gpu.peak_flops(c.precision) > 0;
  const DType gemm_dtype = low_precision ? c.precision : DType::kBf16;
  x.hbm = x.gpu.memory_bw_tbps * 1e12 * x.e.vector_bw_fraction;
  x.seq = static_cast<double>(setup_.seq_len);
  x.tokens = x.mbs * x.seq / x.cp;  // tokens of one micro-batch on one GPU
  x.h = static_cast<double>(m.hidden);
  const double tp = x.tp, tokens = x.tokens, h = x.h;
  // Quantization of FP8/FP4 operands, fp8_cast_bytes per element
  // (framework.h: amax, cast, transposed copy) at the vector bandwidth:
  // each GEMM's input and weight once in forward (their transposes serve
  // backward), the output gradient once in backward.
  auto gemm_time = [&](double flops, double rows, double cols, double inner) {
    if (low_precision && flops > 0) {
      x.quant_f += x.fw.fp8_cast_bytes * (flops / (2 * cols) + flops / (2 * rows)) / x.hbm;
      x.quant_b += x.fw.fp8_cast_bytes * flops / (2 * inner) / x.hbm;
    }
    return GemmTime(flops, rows, cols, inner, peak, x.hbm, x.e, gemm_dtype);
  };
  x.q_width = static_cast<double>(m.heads) * static_cast<double>(m.qk_head_dim());
  const double attn_proj_s = gemm_time(tokens * attn_proj_flops_ / tp, tokens, std::max(x.q_width / tp, 1.0), h);
  x.mlp_width = static_cast<double>(std::max<int64_t>(m.ffn, 1));
  const double mlp_s = gemm_time(tokens * mlp_flops_ / tp, tokens, x.mlp_width / tp, h);
  double expert_s = 0;
  x.imbalance = m.is_moe() ? c.moe_imbalance : 1.0;
  if (expert_flops_ > 0) {
    // The tp ranks that share a micro-batch split its routed tokens (the
    // dispatcher works on the sequence-parallel shard), so each GPU does
    // tokens / tp of the expert work (x the imbalance on the busiest rank).
    // An expert's rows come from the whole job over its expert-DP replicas:
    // tokens x topk x ep x etp / (tp x E) per etp-sharded copy, each
    // expert_ffn / etp wide: a grouped GEMM whose rows shrink as experts
    // multiply.
    const double experts = static_cast<double>(m.moe.num_experts);
    const double rows =
        std::max(1.0, x.imbalance * tokens * static_cast<double>(m.moe.top_k) * x.ep * x.etp / (tp * experts));
    expert_s =
        gemm_time(x.imbalance * tokens * expert_flops_ / tp, rows, static_cast<double>(m.moe.expert_ffn) / x.etp, h);
  }
  const double shared_s = gemm_time(tokens * shared_flops_ / tp, tokens,
                                    static_cast<double>(std::max<int64_t>(m.moe.shared_ffn, 1)) / tp, h);
  x.gemm_f = attn_proj_s + mlp_s + expert_s + shared_s;
}

// Fused attention: each rank's queries against seq / cp keys per block
// (causal at cp = 1; with context parallelism the ring's blocks are full
// except the diagonal one).
inline void PerfModel::LayerAttention(Eval& x) const {
  const TrainingConfig& c = x.c;
  x.head_dim = static_cast<double>(x.m.qk_head_dim());
  const double attn_flops = x.tokens * attn_core_flops_ / x.tp;
  const double kv_len = c.cp > 1 ? x.seq / x.cp : x.seq;
  const bool causal_blocks = c.cp == 1;
  if (x.fused_attention) {
    x.core_f = AttentionSeconds(x.gpu, x.e, x.fw.attention, false, attn_flops, kv_len, causal_blocks, x.head_dim);
    x.core_b = AttentionSeconds(x.gpu, x.e, x.fw.attention, true, kAttentionBackward * attn_flops, kv_len,
                                causal_blocks, x.head_dim);
    return;
  }
  // The full score matrix (causal blocks are not skipped) as two batched
  // GEMMs with the head dim as the short side, and ~6 passes of 16-bit
  // elements over heads/tp x s x s per sequence: scores written, masked
  // softmax read and written, dropout read and written, read by A.V.
  x.core_f = GemmTime(2 * attn_flops, x.tokens, x.seq, x.head_dim, x.peak16, x.hbm, x.e, DType::kBf16);
  x.core_b = kAttentionBackward * x.core_f;
  const double elements = x.mbs / x.cp * static_cast<double>(x.m.heads) / x.tp * x.seq * x.seq;
  x.core_vec_f = 6 * kActivationBytes * elements / x.hbm;  // unfused: softmax, mask, dropout traffic
}

// Vector kernels (vector_kernels.h): norms and residual adds on the hidden
// state (split by tp under sequence parallelism), the MLP activation (the
// routed experts' over the dispatched rows); rope streams q/k at the vector
// bandwidth.
inline void PerfModel::LayerVector(Eval& x) const {
  const ModelSpec& m = x.m;
  const double tp = x.tp, tokens = x.tokens;
  LayerVectorWork vec;
  vec.hidden_rows = x.sp ? tokens / tp : tokens;
  vec.hidden = x.h;
  vec.dense_act_rows = tokens;
  vec.dense_act_width = x.mlp_width / tp;
  if (m.is_moe()) {
    vec.expert_act_rows = x.imbalance * tokens * static_cast<double>(m.moe.top_k) * x.etp / tp;
    vec.expert_act_width = static_cast<double>(m.moe.expert_ffn) / x.etp;
    vec.moe_share = moe_layer_share_;
  }
  vec.gated = m.gated_mlp;
  vec.element_bytes = kActivationBytes;
  vec.fused_norm_residual = x.fw.fused_norm_residual;
  const double rope_s = kActivationBytes * 4 * tokens * x.q_width / tp / x.hbm;
  // MoE token permutation and unpermutation (gather to expert-contiguous
  // rows and back: read one and write top-k rows each way), and the
  // framework's host synchronisation on the token counts.
  double moe_f = 0;
  if (m.is_moe() && x.c.ep * x.c.etp > 1) {
    const double topk = static_cast<double>(m.moe.top_k);
    moe_f = moe_layer_share_ *
            (2 * (1 + topk) * x.imbalance * tokens * x.h * kActivationBytes / x.hbm + x.fw.moe_sync_us * 1e-6);
  }
  x.vec_f = LayerVectorSeconds(vector_kernels_, x.gpu.memory_bw_tbps * 1e12, vec) + rope_s + x.core_vec_f + moe_f;
  x.overhead_f = kKernelsPerLayer * x.e.kernel_overhead_us * 1e-6;
}

// The communication of one micro-batch, one layer: tensor parallel (forward
// 2 all-reduces, or 2 all-gathers + 2 reduce-scatters; backward the same),
// context parallel (by the framework's mode), expert all-to-all.
inline void PerfModel::LayerCommunication(Eval& x) const {
  const TrainingConfig& c = x.c;
  const EfficiencyParams& e = x.e;
  const FrameworkProfile& fw = x.fw;
  const double tp = x.tp, cp = x.cp, tokens = x.tokens;
  x.act_bytes = tokens * x.h * kActivationBytes;
  const double tp_f = c.tp > 1 ? 2 * AllReduceTime(tp, x.act_bytes, x.tp_link) : 0;
  const double tp_share = c.tp_comm_overlap ? 1.0 : 0.0;
  x.tp_f_exp = Exposed(e, tp_f, x.gemm_f, tp_share);
  x.tp_b_exp = Exposed(e, tp_f, 2 * x.gemm_f, tp_share);
  if (c.cp > 1) {
    const double kv_bytes = tokens * 2 * static_cast<double>(x.kv) * x.head_dim / tp * kActivationBytes;
    if (fw.cp_mode == CpMode::kRing) {
      // cp - 1 steps, each sending this rank's K/V block while the previous
      // block's attention runs; backward also returns dK, dV.
      const double step = kv_bytes / x.cp_link.bandwidth_bytes_per_s + x.cp_link.latency_s;
      x.cp_f_exp = (cp - 1) * Exposed(e, step, x.core_f / cp, fw.cp_overlap);
      x.cp_b_exp = (cp - 1) * Exposed(e, 2 * step, x.core_b / cp, fw.cp_overlap);
    } else if (fw.cp_mode == CpMode::kAllGather) {
      // K/V gathered before attention (and again in backward, with dK/dV
      // reduce-scattered after it).
      const double gather = AllGatherTime(cp, cp * kv_bytes, x.cp_link);
      x.cp_f_exp = Exposed(e, gather, 0, 0);
      x.cp_b_exp = 2 * gather;
    } else {
      // Ulysses: q, k, v and the output re-sharded heads <-> sequence by
      // all-to-all, each way in backward too.
      const double q_bytes = tokens * x.q_width / tp * kActivationBytes;
      const double a2a = AllToAllTime(cp, 2 * q_bytes + kv_bytes, x.cp_link);
      x.cp_f_exp = a2a;
      x.cp_b_exp = a2a;
    }
  }
  if (x.m.is_moe() && c.ep * c.etp > 1) {
    // Dispatch and combine: every token's hidden state to its top-k experts;
    // the busiest rank receives `imbalance` times the mean.
    const double a2a_bytes =
        x.imbalance * tokens * static_cast<double>(x.m.moe.top_k) * x.h * kActivationBytes / (x.sp ? tp : 1.0);
    const double a2a = 2 * AllToAllTime(x.ep * x.etp, a2a_bytes, x.ep_link) * moe_layer_share_;
    x.ep_f_exp = Exposed(e, a2a, x.gemm_f, fw.ep_overlap);
    x.ep_b_exp = Exposed(e, a2a, 2 * x.gemm_f, fw.ep_overlap);
  }
}

// One micro-batch on the most loaded stage. Layers are split as evenly as
// the stages allow (Megatron's and torchtitan's uneven first/last stages):
// ceil(L / pp) on the busiest.
inline void PerfModel::StageTimes(Eval& x) const {
  const TrainingConfig& c = x.c;
  const double tp = x.tp, tokens = x.tokens, h = x.h;
  x.layers_per_stage = std::ceil(static_cast<double>(x.m.num_layers) / x.pp);
  const double layer_f = x.gemm_f + x.core_f + x.vec_f + x.quant_f + x.overhead_f;
  const double layer_b = 2 * x.gemm_f + x.core_b + 2 * x.vec_f + x.quant_b + 2 * x.overhead_f;
  if (c.recompute == Recompute::kFull) {
    x.layer_rc = layer_f;
    x.layer_rc_comm = x.tp_f_exp + x.cp_f_exp + x.ep_f_exp;
  } else if (c.recompute == Recompute::kSelective || c.recompute == Recompute::kSelectiveLiteral) {
    x.layer_rc = x.core_f + x.core_vec_f;
  }
  const double vocab = static_cast<double>(x.m.vocab);
  x.head_gemm = GemmTime(tokens * lm_head_flops_ / tp, tokens, vocab / tp, h, x.peak16, x.hbm, x.e, DType::kBf16);
  x.head_f = x.head_gemm + tokens * vocab / tp * 4 * 3 / x.hbm;  // fp32 logits: write, softmax read/write
  const double head_b = 2 * x.head_f;
  x.t_f = x.layers_per_stage * (layer_f + x.tp_f_exp + x.cp_f_exp + x.ep_f_exp) + x.head_f;
  x.t_b = x.layers_per_stage * (layer_b + x.layer_rc + x.layer_rc_comm + x.tp_b_exp + x.cp_b_exp + x.ep_b_exp) + head_b;
}

// Dense parameters are replicated over dp x cp ranks; an expert's over the
// dp x cp x tp / (ep x etp) ranks that hold the same experts.
inline void PerfModel::StageParameters(Eval& x) const {
  const double tp = x.tp, cp = x.cp, ep = x.ep, etp = x.etp, dpd = x.dpd;
  x.stage_expert_params = x.layers_per_stage * expert_layer_params_ / (ep * etp);
  const double first = embedding_params_ / tp + (x.c.pp == 1 && !x.m.tied_embeddings ? lm_head_params_ / tp : 0);
  const double last = x.c.pp == 1 ? first : lm_head_params_ / tp;
  x.stage_dense_params = x.layers_per_stage * dense_layer_params_ / tp + std::max(first, last);
  x.shard = dpd * cp;  // the distributed optimizer / FSDP shard group
  x.expert_shard = std::max(1.0, dpd * cp * tp / (ep * etp));
  // Shares of the DP collectives the framework issues behind compute: all
  // but the last of its per-layer chunks (Megatron-Core's buckets, FSDP's
  // units), none with dp_overlap off.
  x.chunk_share = x.c.dp_overlap ? 1 - 1 / std::max(1.0, x.layers_per_stage) : 0.0;
}

// The data-parallel (or FSDP) communication and its overlap, the pipeline's
// send/recv and bubble, the optimizer.
inline void PerfModel::DataParallel(Eval& x) const {
  const TrainingConfig& c = x.c;
  const FrameworkProfile& fw = x.fw;
  const EfficiencyParams& e = x.e;
  // A collective over each group (dense and expert), of `bytes_per_param`.
  auto group_gather = [&x](double bytes_per_param, double pieces) {
    return AllGatherTime(x.shard, x.stage_dense_params * bytes_per_param, x.dp_link, pieces) +
           AllGatherTime(x.expert_shard, x.stage_expert_params * bytes_per_param, x.expert_dp_link, pieces);
  };
  x.micro_batches = c.global_batch / (x.dp * c.micro_batch);
  x.mb = static_cast<double>(x.micro_batches);
  const bool sharded_group = x.shard > 1 || x.expert_shard > 1;
  if (c.zero_stage == 3 && sharded_group) {
    // FSDP / ZeRO-3: one gather and one reduce-scatter per layer (FSDP's
    // unit) and micro-batch, or per parameter tensor (DeepSpeed: 4 weights,
    // 4 biases, 4 norm tensors of a GPT layer; 6 without biases).
    const double per_layer = fw.zero3_per_tensor ? (x.m.qkv_bias ? 12.0 : 6.0) : 1.0;
    const double pieces = x.layers_per_stage * per_layer;
    const double gather = group_gather(kWeightBytes, pieces);
    const double reduce = group_gather(kReduceGradBytes, pieces);
    const double prefetch = c.dp_overlap ? fw.fsdp_prefetch * x.chunk_share : 0.0;
    x.fsdp_exposed_per_mb = Exposed(e, gather, x.t_f, prefetch) + Exposed(e, gather + reduce, x.t_b, prefetch);
  }
  x.bubble = (x.pp - 1) / x.vpp * (x.t_f + x.t_b);
  if (c.pp > 1) {
    const double p2p = x.act_bytes / (x.sp ? x.tp : 1.0) / x.pp_link.bandwidth_bytes_per_s + x.pp_link.latency_s;
    x.pp_comm = 2 * (x.vpp * x.mb + x.pp - 1) * p2p;
  }
  if (c.zero_stage < 3 && sharded_group) {
    // All-reduce (ZeRO-0) or reduce-scatter + all-gather (ZeRO-1/2): the same
    // bytes. DDP's bucketed all-reduce hides behind the last micro-batch's
    // backward; with a distributed optimizer the reduce-scatter does, and the
    // parameter gather behind the first micro-batch's forward.
    const double half_comm = group_gather(kReduceGradBytes, 1);
    const double grad_share = fw.dp_grad_overlap * x.chunk_share;
    x.dp_comm = c.zero_stage == 0 ? Exposed(e, 2 * half_comm, x.t_b, grad_share)
                                  : Exposed(e, half_comm, x.t_b, grad_share) +
                                        Exposed(e, half_comm, x.t_f, fw.dp_param_overlap * x.chunk_share);
  }
  const double optimizer_params = c.zero_stage >= 1
                                      ? x.stage_dense_params / x.shard + x.stage_expert_params / x.expert_shard
                                      : x.stage_dense_params + x.stage_expert_params;
  x.optimizer = optimizer_params * kAdamBytesPerParam / x.hbm;
}

// The breakdown, the throughput and the utilization of the step.
inline void PerfModel::Totals(const Eval& x, Prediction& out) const {
  const TrainingConfig& c = x.c;
  const double mb = x.mb, lps = x.layers_per_stage, tp = x.tp;
  StepBreakdown& b = out.breakdown;
  b.matrix_s = mb * (lps * 3 * x.gemm_f + 3 * x.head_gemm);
  b.attention_s = mb * lps * (x.core_f + x.core_b);
  b.vector_s = mb * (lps * (3 * x.vec_f + x.quant_f + x.quant_b) + 3 * (x.head_f - x.head_gemm));
  b.overhead_s = mb * lps * 3 * x.overhead_f;
  b.recompute_s = mb * lps * (x.layer_rc + x.layer_rc_comm);
  b.tp_comm_s = mb * lps * (x.tp_f_exp + x.tp_b_exp);
  b.cp_comm_s = mb * lps * (x.cp_f_exp + x.cp_b_exp);
  b.ep_comm_s = mb * lps * (x.ep_f_exp + x.ep_b_exp);
  b.pp_comm_s = x.pp_comm;
  b.dp_comm_s = x.dp_comm + mb * x.fsdp_exposed_per_mb;
  b.bubble_s = x.bubble;
  b.optimizer_s = x.optimizer;
  out.step_s = b.total();
  out.micro_batches = x.micro_batches;

  const double step_tokens = static_cast<double>(c.global_batch) * x.seq;
  const auto gpus = static_cast<double>(setup_.gpus);
  out.tokens_per_s = step_tokens / out.step_s;
  out.model_flops_per_token = model_flops_per_token_;
  out.hardware_flops_per_token = hardware_flops_per_token_[static_cast<size_t>(c.recompute)];
  out.tflops_per_gpu = model_flops_per_token_ * out.tokens_per_s / gpus / 1e12;
  // MFU against the datasheet dense peak, whatever the sustained clock.
  double nominal_peak = x.gpu.peak_flops(c.precision);
  if (!(nominal_peak > 0))
    nominal_peak = DensePeakFlops(x.gpu, DType::kBf16);
  out.peak_flops = nominal_peak;
  out.mfu = model_flops_per_token_ * out.tokens_per_s / gpus / nominal_peak;
  out.hfu = out.hardware_flops_per_token * out.tokens_per_s / gpus / nominal_peak;
  out.matrix_flops_per_step =
      mb * x.tokens *
      (lps * 3 * (attn_proj_flops_ / tp + mlp_flops_ / tp + expert_flops_ / tp + shared_flops_ / tp) +
       lps * (1 + kAttentionBackward) * attn_core_flops_ / tp + 3 * lm_head_flops_ / tp);
}

// Weights, gradients, optimizer: memory.h's TrainingStateBytes, the function
// `mfu memory` calls (EstimateTrainingMemoryPerGpu), over the same shard
// groups as the communication; activations of the micro-batches in flight.
inline void PerfModel::Memory(const Eval& x, Prediction& out) const {
  const TrainingConfig& c = x.c;
  MemoryPerGpu& mem = out.memory;
  StateSharding state_shards;
  state_shards.dense_params = x.stage_dense_params;
  state_shards.expert_params = x.stage_expert_params;
  state_shards.dense_shard = x.shard;
  state_shards.expert_shard = x.expert_shard;
  // ZeRO-3: the gathered working copy of two layers (one prefetched).
  state_shards.gathered_params = 2 * (dense_layer_params_ / x.tp + expert_layer_params_ / (x.ep * x.etp));
  const TrainingState state = TrainingStateBytes(c.state, c.zero_stage, state_shards);
  mem.weights = state.weights_bytes;
  mem.gradients = state.gradients_bytes;
  mem.optimizer = state.optimizer_bytes;
  const std::array<double, 2>& act = activations_[ActivationKey(c.tp, x.sp, c.recompute, c.flash_attention)];
  const double per_layer = act[0] * x.mbs / x.cp;
  const double output_layer = act[1] * x.mbs / x.cp;
  // 1F1B: the first stage holds min(m, pp) micro-batches in flight;
  // interleaving adds (pp-1)/(pp*vpp) of that.
  const double pp = x.pp, vpp = x.vpp;
  const double in_flight = c.pp == 1 ? 1 : std::min(x.mb, pp) * (c.vpp > 1 ? 1 + (pp - 1) / (pp * vpp) : 1.0);
  mem.activations = per_layer * x.layers_per_stage * in_flight + (c.pp == 1 ? output_layer : 0);
  mem.reserved = x.e.memory_reserved_gib * kGiB;
  mem.capacity = x.gpu.memory_gb * kGiB;
  if (!mem.fits())
    out.issue = ConfigIssue::kOutOfMemory;
}

}  // namespace mfu
