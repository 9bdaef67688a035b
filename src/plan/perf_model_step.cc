// PerfModel::EvaluateStep (perf_model.h; formulas in docs/plan.md) in named
// phases over one evaluation's context (StepEval): the shape checked, the
// groups' links resolved, one layer's forward compute (GEMMs, attention,
// vector work) and its exposed tensor, context and expert communication
// timed, the most loaded stage's forward and backward summed, its
// parameters sharded, the data-parallel (or FSDP) communication overlapped,
// the step and its throughput, the memory.
//
// The planner runs this for every candidate (bench/plan_benchmark). The
// context is a local of EvaluateStep and every phase is always_inline, so
// the compiler keeps its fields in registers as it did the locals of the
// one-body version; an earlier split into out-of-line-able member phases
// (commit 9002900) cost 15-20% per configuration.

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
// said otherwise. Every field is written by its phase before a later one
// reads it (an early issue returns before any is read).
struct PerfModel::StepEval {
  StepEval(const PerfModel& model, Prediction& prediction)
      : pm(model),
        out(prediction),
        c(prediction.config),
        m(*model.setup_.model),
        gpu(*model.setup_.gpu),
        e(model.setup_.efficiency),
        fw(model.setup_.framework) {}
  const PerfModel& pm;
  Prediction& out;
  TrainingConfig& c;
  const ModelSpec& m;
  const Accelerator& gpu;
  const EfficiencyParams& e;
  const FrameworkProfile& fw;
  // Shape.
  int64_t dp = 0, kv = 0;  // kv: KV heads
  bool sp = false, fused_attention = false;
  double tp = 0, pp = 0, cp = 0, ep = 0, etp = 0, vpp = 0, dpd = 0, mbs = 0;
  // Links of the parallel groups.
  LinkSpec tp_link, cp_link, ep_link, dp_link, expert_dp_link, pp_link;
  // Rates.
  double clock = 0, peak = 0, peak16 = 0, hbm = 0, quant_hbm = 0, permute_hbm = 0;
  bool low_precision = false;
  DType gemm_dtype = DType::kBf16;
  // One layer's forward compute.
  double seq = 0, tokens = 0, h = 0, q_width = 0, mlp_width = 0, imbalance = 1, head_dim = 0;
  double quant_f = 0, quant_b = 0;  // FP8/FP4 operand quantization
  double attn_proj_s = 0, mlp_s = 0, expert_s = 0, expert_b = 0, shared_s = 0, router_s = 0, gemm_f = 0, gemm_b = 0;
  double core_f = 0, core_b = 0, core_vec_f = 0;
  double vec_f = 0, overhead_f = 0, moe_vec_f = 0;
  LayerVectorTimes vec_parts;
  double eager_f = 0, eager_b = 0;  // an eager framework's extra elementwise traffic, forward and backward
  // One layer's exposed communication.
  double act_bytes = 0;
  double tp_f_exp = 0, tp_b_exp = 0, cp_f_exp = 0, cp_b_exp = 0, ep_f_exp = 0, ep_b_exp = 0;
  // The most loaded stage, one micro-batch.
  double layers_per_stage = 0, layer_rc = 0, layer_rc_comm = 0, head_gemm = 0, head_f = 0, t_f = 0, t_b = 0;
  // Its parameters and their shard groups.
  double stage_dense_params = 0, stage_expert_params = 0, shard = 0, expert_shard = 0, chunk_share = 0;
  // The step.
  int64_t micro_batches = 0;
  double mb = 0, fsdp_exposed_per_mb = 0, bubble = 0, pp_comm = 0, dp_comm = 0, optimizer = 0;

  [[gnu::always_inline]] inline ConfigIssue CheckShape();
  [[gnu::always_inline]] inline ConfigIssue ResolveLinks();
  [[gnu::always_inline]] inline void Rates();
  [[gnu::always_inline]] inline void LayerGemms();
  [[gnu::always_inline]] inline void ExpertGemms();
  [[gnu::always_inline]] inline void LayerAttention();
  [[gnu::always_inline]] inline void LayerVector();
  [[gnu::always_inline]] inline void LayerCommunication();
  [[gnu::always_inline]] inline void ContextParallelExchange();
  [[gnu::always_inline]] inline void StageTimes();
  [[gnu::always_inline]] inline void OpPolicyRecompute(double layer_f);
  [[gnu::always_inline]] inline void StageParameters();
  [[gnu::always_inline]] inline void Fsdp();
  [[gnu::always_inline]] inline void DataParallel();
  [[gnu::always_inline]] inline void Totals();
  [[gnu::always_inline]] inline void Memory();
  [[gnu::always_inline]] inline void ModuleRecompute();

  // A GEMM at `rate` of the precision's peak, its FP8/FP4 operand
  // quantization added to quant_f/quant_b.
  [[gnu::always_inline]] inline double QuantizedGemm(double flops, double rows, double cols, double inner,
                                                     double rate = 1);
  // `share` of `comm` is issued behind `compute`; overlap_efficiency of that
  // hides, never more than the compute.
  [[gnu::always_inline]] inline double Exposed(double comm, double compute, double share) const {
    return comm - std::min(std::clamp(share, 0.0, 1.0) * e.overlap_efficiency * comm, e.overlap_efficiency * compute);
  }
  // A collective over each parameter group (dense and expert) of
  // `bytes_per_param`, in `pieces`.
  [[gnu::always_inline]] inline double GroupGather(double bytes_per_param, double pieces) const {
    return AllGatherTime(shard, stage_dense_params * bytes_per_param, dp_link, pieces) +
           AllGatherTime(expert_shard, stage_expert_params * bytes_per_param, expert_dp_link, pieces);
  }
};

void PerfModel::EvaluateStep(const TrainingConfig& in, Prediction& out) const {
  out = Prediction{};
  out.config = in;
  StepEval x(*this, out);
  out.issue = x.CheckShape();
  if (out.issue == ConfigIssue::kOk)
    out.issue = x.ResolveLinks();
  if (out.issue != ConfigIssue::kOk)
    return;
  x.Rates();
  x.LayerGemms();
  x.ExpertGemms();
  x.LayerAttention();
  x.LayerVector();
  x.LayerCommunication();
  x.StageTimes();
  x.StageParameters();
  x.Fsdp();
  x.DataParallel();
  x.Totals();
  x.Memory();
}

// The value checks Validate shares, then the model's divisibility, the
// framework's abilities and the MoE imbalance's range.
inline ConfigIssue PerfModel::StepEval::CheckShape() {
  const ValueCheck failed = FirstFailedValueCheck(c, pm.setup_.gpus);
  if (failed != ValueCheck::kOk)
    return failed < ValueCheck::kGpusNotDivisible ? ConfigIssue::kBadValue : ConfigIssue::kGpusNotDivisible;
  if (c.fsdp)
    c.zero_stage = fw.FsdpStage(c.pp);
  dp = pm.setup_.gpus / (c.tp * c.pp * c.cp);
  c.dp = dp;
  // Stages may hold unequal layer counts (Megatron's first/last-stage
  // options): the most loaded one holds ceil(layers / pp).
  if (m.num_layers < c.pp * c.vpp)
    return ConfigIssue::kLayersNotDivisible;
  kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
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
  if (c.cp > 1 && pm.setup_.seq_len % (2 * c.cp) != 0)
    return ConfigIssue::kSequenceNotDivisible;
  sp = c.sequence_parallel && c.tp > 1;
  c.sequence_parallel = sp;
  if ((c.tp_comm_overlap && !fw.tp_overlap_supported) || !fw.Implements(c.zero_stage, c.pp))
    return ConfigIssue::kBadValue;
  if (!(c.moe_imbalance >= 1 && c.moe_imbalance <= 64))
    return ConfigIssue::kBadValue;
  fused_attention = c.flash_attention && fw.attention != AttentionKernel::kUnfused;
  c.flash_attention = fused_attention;
  c.recompute = fw.RecomputeOf(c.recompute);  // what `selective` keeps in this framework
  return ConfigIssue::kOk;
}

// Each parallel group's link on the fabric; kTopology when one cannot be
// reached.
inline ConfigIssue PerfModel::StepEval::ResolveLinks() {
  tp = static_cast<double>(c.tp);
  pp = static_cast<double>(c.pp);
  cp = static_cast<double>(c.cp);
  ep = static_cast<double>(c.ep);
  etp = static_cast<double>(c.etp);
  vpp = static_cast<double>(c.vpp);
  dpd = static_cast<double>(dp);
  mbs = static_cast<double>(c.micro_batch);
  const Fabric& fabric = pm.fabric_;
  tp_link = fabric.Link(tp, 1);
  cp_link = fabric.Link(cp, tp);
  ep_link = fabric.AllToAllLink(ep * etp, tp * cp / etp);
  dp_link = fabric.Link(dpd * cp, tp);
  // Megatron places expert TP x EP innermost over the dp x cp x tp ranks:
  // the expert-data-parallel group's members sit ep x etp GPUs apart (one
  // per node when EP fills the node).
  const double expert_dp = std::max(1.0, dpd * cp * tp / (ep * etp));
  expert_dp_link = fabric.Link(expert_dp, ep * etp);
  const double pp_members = c.pp > 1 ? 2 : 1, pp_stride = tp * cp * dpd;
  pp_link = fabric.Link(pp_members, pp_stride);
  const bool topology_ok = fabric.Reaches(tp, 1) && fabric.Reaches(cp, tp) && fabric.Reaches(ep * etp, tp * cp / etp) &&
                           fabric.Reaches(dpd * cp, tp) && fabric.Reaches(expert_dp, ep * etp) &&
                           fabric.Reaches(pp_members, pp_stride);
  return topology_ok ? ConfigIssue::kOk : ConfigIssue::kTopology;
}

// Linear layers run at the precision's dense peak (a device without it,
// fp8 on A100, at its 16-bit peak); attention and the LM head in 16-bit.
// Both at the clock a whole step sustains (sustained_clock_fraction).
inline void PerfModel::StepEval::Rates() {
  clock = e.sustained_clock_fraction;
  peak = clock * ComputePeakFlops(gpu, c.precision);
  peak16 = clock * ComputePeakFlops(gpu, DType::kBf16);
  low_precision = (c.precision == DType::kFp8 || c.precision == DType::kFp4) && gpu.peak_flops(c.precision) > 0;
  gemm_dtype = low_precision ? c.precision : DType::kBf16;
  hbm = gpu.memory_bw_tbps * 1e12 * e.vector_bw_fraction;
  quant_hbm = gpu.memory_bw_tbps * 1e12 * e.quant_bw_fraction;
  permute_hbm = gpu.memory_bw_tbps * 1e12 * e.permute_bw_fraction;
  seq = static_cast<double>(pm.setup_.seq_len);
  tokens = mbs * seq / cp;  // tokens of one micro-batch on one GPU
  h = static_cast<double>(m.hidden);
}

// Quantization of FP8/FP4 operands, fp8_cast_bytes per element
// (framework.h: amax, cast, transposed copy) at the quantization kernels'
// bandwidth (quant_bw_fraction of HBM): each
// GEMM's input and weight once in forward (their transposes serve
// backward), the output gradient once in backward.
inline double PerfModel::StepEval::QuantizedGemm(double flops, double rows, double cols, double inner, double rate) {
  if (low_precision && flops > 0) {
    quant_f += fw.fp8_cast_bytes * (flops / (2 * cols) + flops / (2 * rows)) / quant_hbm;
    quant_b += fw.fp8_cast_bytes * flops / (2 * inner) / quant_hbm;
  }
  return GemmTime(flops, rows, cols, inner, rate * peak, hbm, e, gemm_dtype);
}

// The attention projections, the dense MLP and the shared experts.
inline void PerfModel::StepEval::LayerGemms() {
  q_width = static_cast<double>(m.heads) * static_cast<double>(m.qk_head_dim());
  attn_proj_s = QuantizedGemm(tokens * pm.attn_proj_flops_ / tp, tokens, std::max(q_width / tp, 1.0), h);
  mlp_width = static_cast<double>(std::max<int64_t>(m.ffn, 1));
  mlp_s = QuantizedGemm(tokens * pm.mlp_flops_ / tp, tokens, mlp_width / tp, h);
  imbalance = m.is_moe() ? c.moe_imbalance : 1.0;
}

// The routed experts as grouped GEMMs, then the layer's GEMM totals. The tp
// ranks that share a micro-batch split its routed tokens (the dispatcher
// works on the sequence-parallel shard), so each GPU does tokens / tp of
// the expert work (x the imbalance on the busiest rank). An expert's rows
// come from the whole job over its expert-DP replicas: tokens x topk x ep x
// etp / (tp x E) per etp-sharded copy, each expert_ffn / etp wide: a grouped
// GEMM whose rows shrink as experts multiply.
inline void PerfModel::StepEval::ExpertGemms() {
  if (pm.expert_flops_ > 0) {
    const double experts = static_cast<double>(m.moe.num_experts);
    const double rows =
        std::max(1.0, imbalance * tokens * static_cast<double>(m.moe.top_k) * ep * etp / (tp * experts));
    // Forward and data gradient run at grouped_gemm_fraction of the dense
    // rate at that shape, the k-grouped weight gradient (inner dim = rows;
    // the dense curve is symmetric in m, n, k) at grouped_wgrad_fraction.
    // Operand traffic as the forward's, as for the dense layers' backward.
    const double flops = imbalance * tokens * pm.expert_flops_ / tp,
                 width = static_cast<double>(m.moe.expert_ffn) / etp;
    expert_s = QuantizedGemm(flops, rows, width, h, e.grouped_gemm_fraction);
    expert_b = expert_s + GemmTime(flops, rows, width, h, e.grouped_wgrad_fraction * peak, hbm, e, gemm_dtype);
  }
  if (pm.shared_flops_ > 0) {
    shared_s = QuantizedGemm(tokens * pm.shared_flops_ / tp, tokens,
                             static_cast<double>(std::max<int64_t>(m.moe.shared_ffn, 1)) / tp, h);
  }
  // The router's gate: each TP rank scores its tokens / tp (sequence-
  // parallel MoE input) against all experts, outside the FP8/FP4 autocast
  // (Megatron-Core's TopKRouter and torchtitan's gate are plain 16-bit
  // linears): a GEMM E wide, as narrow as its expert count makes it.
  if (pm.router_flops_ > 0) {
    router_s = GemmTime(tokens * pm.router_flops_ / tp, tokens / tp, static_cast<double>(m.moe.num_experts), h, peak16,
                        hbm, e, DType::kBf16);
    shared_s += router_s;
  }
  gemm_f = attn_proj_s + mlp_s + expert_s + shared_s;
  gemm_b = 2 * (attn_proj_s + mlp_s + shared_s) + expert_b;  // data + weight gradients
}

// Fused attention: each rank's queries against seq / cp keys per block
// (causal at cp = 1; with context parallelism the ring's blocks are full
// except the diagonal one). Unfused: the full score matrix (causal blocks
// are not skipped) as two batched GEMMs with the head dim as the short side,
// and ~6 passes of 16-bit elements over heads/tp x s x s per sequence:
// scores written, masked softmax read and written, dropout read and
// written, read by A.V.
inline void PerfModel::StepEval::LayerAttention() {
  head_dim = static_cast<double>(m.qk_head_dim());
  const double attn_flops = tokens * pm.attn_core_flops_ / tp;
  const double kv_len = c.cp > 1 ? seq / cp : seq;
  const bool causal_blocks = c.cp == 1;
  if (fused_attention) {
    core_f = AttentionSeconds(gpu, e, fw.attention, false, attn_flops, kv_len, causal_blocks, head_dim) / clock;
    core_b =
        AttentionSeconds(gpu, e, fw.attention, true, kAttentionBackward * attn_flops, kv_len, causal_blocks, head_dim) /
        clock;
  } else {
    core_f = GemmTime(2 * attn_flops, tokens, seq, head_dim, peak16, hbm, e, DType::kBf16);
    core_b = kAttentionBackward * core_f;
    const double elements = mbs / cp * static_cast<double>(m.heads) / tp * seq * seq;
    core_vec_f = 6 * kActivationBytes * elements / hbm;
  }
}

// Vector kernels (vector_kernels.h): norms and residual adds on the hidden
// state (split by tp under sequence parallelism), the MLP activation (the
// routed experts' over the dispatched rows); rope streams q/k at the vector
// bandwidth. MoE token permutation and unpermutation (gather to
// expert-contiguous rows and back: read one and write top-k rows each way,
// at the permutation kernels' permute_bw_fraction of HBM),
// and the framework's host synchronisation on the token counts.
inline void PerfModel::StepEval::LayerVector() {
  LayerVectorWork vec;
  vec.hidden_rows = sp ? tokens / tp : tokens;
  vec.hidden = h;
  vec.dense_act_rows = tokens;
  vec.dense_act_width = mlp_width / tp;
  if (m.is_moe()) {
    vec.expert_act_rows = imbalance * tokens * static_cast<double>(m.moe.top_k) * etp / tp;
    vec.expert_act_width = static_cast<double>(m.moe.expert_ffn) / etp;
    vec.moe_share = pm.moe_layer_share_;
  }
  vec.gated = m.gated_mlp;
  vec.element_bytes = kActivationBytes;
  vec.fused_norm_residual = fw.fused_norm_residual;
  const double rope_s = kActivationBytes * 4 * tokens * q_width / tp / hbm;
  double moe_f = 0;
  if (m.is_moe() && c.ep * c.etp > 1) {
    const double topk = static_cast<double>(m.moe.top_k);
    moe_f = pm.moe_layer_share_ *
            (2 * (1 + topk) * imbalance * tokens * h * kActivationBytes / permute_hbm + fw.moe_sync_us * 1e-6);
  }
  vec_parts = LayerVectorParts(pm.vector_kernels_, gpu.memory_bw_tbps * 1e12, vec);
  moe_vec_f = moe_f;
  vec_f = vec_parts.total() + rope_s + core_vec_f + moe_f;
  if (fw.elementwise == Elementwise::kEager) {
    // Eager PyTorch modules: each composite op's aten kernels stream the
    // tensor again (framework.h EagerTraffic), at the streaming bandwidth.
    const double k_width = std::max(static_cast<double>(kv) / tp, 1.0) * head_dim;
    const EagerBytes extra = LayerEagerBytes(vec, fw.eager, tokens * (q_width / tp + k_width));
    eager_f = extra.forward / hbm;
    eager_b = extra.backward / hbm;
  }
  overhead_f = kKernelsPerLayer * e.kernel_overhead_us * 1e-6;
}

// One micro-batch, one layer: tensor-parallel (forward 2 all-reduces, or 2
// all-gathers + 2 reduce-scatters; backward the same), context-parallel and
// expert dispatch/combine (fewer copies with a DeepEP-style dispatch:
// DedupCopyFactor), each less what the framework hides.
inline void PerfModel::StepEval::LayerCommunication() {
  act_bytes = tokens * h * kActivationBytes;
  const double tp_f = c.tp > 1 ? 2 * AllReduceTime(tp, act_bytes, tp_link) : 0;
  const double tp_share = c.tp_comm_overlap ? 1.0 : 0.0;
  tp_f_exp = Exposed(tp_f, gemm_f, tp_share);
  tp_b_exp = Exposed(tp_f, gemm_b, tp_share);
  if (c.cp > 1)
    ContextParallelExchange();
  if (m.is_moe() && c.ep * c.etp > 1) {
    // Every token's hidden state to its top-k experts; the busiest rank
    // receives `imbalance` times the mean.
    double a2a_bytes = imbalance * tokens * static_cast<double>(m.moe.top_k) * h * kActivationBytes / (sp ? tp : 1.0);
    if (fw.ep_dispatch == EpDispatch::kDeepEp) {
      // Expert-holding groups of etp GPUs per scale-up domain (the group's
      // members sit tp x cp / etp apart: Fabric::AllToAllLink's stride).
      const double members = std::clamp(std::floor(pm.fabric_.domain_gpus() * etp / (tp * cp)), 1.0, ep * etp);
      a2a_bytes *= DedupCopyFactor(m.moe, ep, std::max(1.0, members / etp));
    }
    const double a2a = 2 * AllToAllTime(ep * etp, a2a_bytes, ep_link) * pm.moe_layer_share_;
    ep_f_exp = Exposed(a2a, gemm_f, fw.ep_overlap);
    ep_b_exp = Exposed(a2a, gemm_b, fw.ep_overlap);
  }
}

// K/V exchange of context parallelism as the framework does it.
inline void PerfModel::StepEval::ContextParallelExchange() {
  const double kv_bytes = tokens * 2 * static_cast<double>(kv) * head_dim / tp * kActivationBytes;
  if (fw.cp_mode == CpMode::kRing) {
    // cp - 1 steps, each sending this rank's K/V block while the previous
    // block's attention runs; backward also returns dK, dV.
    const double step = kv_bytes / cp_link.bandwidth_bytes_per_s + cp_link.latency_s;
    cp_f_exp = (cp - 1) * Exposed(step, core_f / cp, fw.cp_overlap);
    cp_b_exp = (cp - 1) * Exposed(2 * step, core_b / cp, fw.cp_overlap);
  } else if (fw.cp_mode == CpMode::kAllGather) {
    // K/V gathered before attention (and again in backward, with dK/dV
    // reduce-scattered after it).
    const double gather = AllGatherTime(cp, cp * kv_bytes, cp_link);
    cp_f_exp = Exposed(gather, 0, 0);
    cp_b_exp = 2 * gather;
  } else {
    // Ulysses: q, k, v and the output re-sharded heads <-> sequence by
    // all-to-all, each way in backward too.
    const double q_bytes = tokens * q_width / tp * kActivationBytes;
    const double a2a = AllToAllTime(cp, 2 * q_bytes + kv_bytes, cp_link);
    cp_f_exp = a2a;
    cp_b_exp = a2a;
  }
}

// One micro-batch on the most loaded stage. Layers are split as evenly as
// the stages allow (Megatron's and torchtitan's uneven first/last stages):
// ceil(L / pp) on the busiest. The LM head writes fp32 logits, softmax
// reads and writes them.
inline void PerfModel::StepEval::StageTimes() {
  layers_per_stage = std::ceil(static_cast<double>(m.num_layers) / pp);
  const double layer_f = gemm_f + core_f + vec_f + eager_f + quant_f + overhead_f;
  const double layer_b = gemm_b + core_b + 2 * vec_f + eager_b + quant_b + 2 * overhead_f;
  if (c.recompute == Recompute::kFull) {
    layer_rc = layer_f;
    layer_rc_comm = tp_f_exp + cp_f_exp + ep_f_exp;
  } else if (c.recompute == Recompute::kSelective) {
    ModuleRecompute();
  } else if (c.recompute == Recompute::kSelectiveLiteral) {
    layer_rc = core_f + core_vec_f;
  } else if (c.recompute == Recompute::kSelectiveOp) {
    OpPolicyRecompute(layer_f);
  }
  const double vocab = static_cast<double>(m.vocab);
  head_gemm = GemmTime(tokens * pm.lm_head_flops_ / tp, tokens, vocab / tp, h, peak16, hbm, e, DType::kBf16);
  head_f = head_gemm + tokens * vocab / tp * 4 * 3 / hbm;
  const double head_b = 2 * head_f;
  t_f = layers_per_stage * (layer_f + tp_f_exp + cp_f_exp + ep_f_exp) + head_f;
  t_b = layers_per_stage * (layer_b + layer_rc + layer_rc_comm + tp_b_exp + cp_b_exp + ep_b_exp) + head_b;
}

// Parameters of the most loaded stage. Dense parameters are replicated over
// dp x cp ranks; an expert's over the dp x cp x tp / (ep x etp) ranks that
// hold the same experts. The framework issues all but the last of its
// per-layer chunks of DP collectives behind compute (Megatron-Core's
// buckets, FSDP's units), none with dp_overlap off.
inline void PerfModel::StepEval::StageParameters() {
  stage_expert_params = layers_per_stage * pm.expert_layer_params_ / (ep * etp);
  const double first = pm.embedding_params_ / tp + (c.pp == 1 && !m.tied_embeddings ? pm.lm_head_params_ / tp : 0);
  const double last = c.pp == 1 ? first : pm.lm_head_params_ / tp;
  stage_dense_params = layers_per_stage * pm.dense_layer_params_ / tp + std::max(first, last);
  shard = dpd * cp;  // the distributed optimizer / FSDP shard group
  expert_shard = std::max(1.0, dpd * cp * tp / (ep * etp));
  chunk_share = c.dp_overlap ? 1 - 1 / std::max(1.0, layers_per_stage) : 0.0;
  micro_batches = c.global_batch / (dp * c.micro_batch);
  mb = static_cast<double>(micro_batches);
}

// FSDP / ZeRO-3: one gather and one reduce-scatter per layer (FSDP's unit),
// or per parameter tensor (DeepSpeed: 4 weights, 4 biases, 4 norm tensors
// of a GPT layer; 6 without biases), every micro-batch. Collectives in
// torch.distributed's list form (zero3_list_collectives) copy one tensor
// per rank of the group through a flat buffer: a kernel each.
inline void PerfModel::StepEval::Fsdp() {
  if (c.zero_stage != 3 || !(shard > 1 || expert_shard > 1))
    return;
  const double per_layer = fw.zero3_per_tensor ? (m.qkv_bias ? 12.0 : 6.0) : 1.0;
  const double pieces = layers_per_stage * per_layer;
  const double ranks = (shard > 1 ? shard : 0) + (expert_shard > 1 && stage_expert_params > 0 ? expert_shard : 0);
  const double copies = fw.zero3_list_collectives ? pieces * ranks * e.kernel_overhead_us * 1e-6 : 0.0;
  const double gather = GroupGather(kWeightBytes, pieces) + copies;
  const double reduce = GroupGather(kReduceGradBytes, pieces) + copies;
  const double prefetch = c.dp_overlap ? fw.fsdp_prefetch * chunk_share : 0.0;
  // Full recompute under DeepSpeed's hooks gathers again before backward.
  const double backward_gathers = c.recompute == Recompute::kFull && fw.zero3_recompute_gather ? 2 : 1;
  fsdp_exposed_per_mb = Exposed(gather, t_f, prefetch) + Exposed(backward_gathers * gather + reduce, t_b, prefetch);
}

// torchtitan's op-level policy (flops.h Recompute::kSelectiveOp) runs again
// everything of the layer's forward but the saved kernels: its
// elementwise work (norms, activation, rope, FP8 casts; eager or
// compiled), the even-numbered linears (pm.op_rc_attn_share_ of the
// projections', op_rc_mlp_share_ of the MLP's and shared experts' GEMM
// time), the routed experts and, with unfused attention, the attention
// core; the saved flash kernel is not. Of the communication, the TP
// all-gathers (reduce-scatters are saved; all-reduces are not) and the
// expert all-to-alls.
// Megatron's selective recompute runs its --recompute-modules' forwards
// again in the backward (TrainingSetup::recompute_modules): core_attn the
// attention core; layernorm the MoE layer's pre-MLP norm (one of the
// layer's two norms); moe_act the experts' activation; mlp a dense MLP's
// GEMMs and activation; moe the router, dispatch, experts and combine;
// shared_experts their GEMMs. Per-layer times are averages over dense and
// MoE layers, as the forward's are. mla_up_proj runs MLA's up-projection
// GEMMs again (their share of the attention projections' time).
inline void PerfModel::StepEval::ModuleRecompute() {
  const uint32_t modules = pm.setup_.recompute_modules;
  layer_rc = 0;
  if ((modules & kRecomputeCoreAttn) != 0)
    layer_rc += core_f + core_vec_f;
  if ((modules & kRecomputeLayernorm) != 0)
    layer_rc += pm.moe_layer_share_ * vec_parts.norms / 2;
  if ((modules & kRecomputeMlaUpProj) != 0)
    layer_rc += pm.mla_up_share_ * attn_proj_s;
  if ((modules & kRecomputeMlp) != 0)
    layer_rc += mlp_s + vec_parts.dense_act;
  if ((modules & kRecomputeMoe) != 0) {
    layer_rc += expert_s + shared_s + vec_parts.expert_act + moe_vec_f;
    layer_rc_comm = ep_f_exp;
  } else {
    if ((modules & kRecomputeMoeAct) != 0)
      layer_rc += vec_parts.expert_act;
    if ((modules & kRecomputeSharedExperts) != 0)
      layer_rc += shared_s - router_s;
  }
}

inline void PerfModel::StepEval::OpPolicyRecompute(double layer_f) {
  const double gemm_rc = pm.op_rc_attn_share_ * attn_proj_s + pm.op_rc_mlp_share_ * (mlp_s + shared_s) + expert_s;
  layer_rc = layer_f - gemm_f + gemm_rc - (fused_attention ? core_f : 0);
  layer_rc_comm = (sp ? 0.5 : 1.0) * tp_f_exp + ep_f_exp;
}

// The pipeline bubble and p2p sends; ZeRO-0-2's gradient reduction: an
// all-reduce (ZeRO-0) or reduce-scatter + all-gather (ZeRO-1/2), the same
// bytes. DDP's bucketed all-reduce hides behind the last micro-batch's
// backward; with a distributed optimizer the reduce-scatter does, and the
// parameter gather behind the first micro-batch's forward. The optimizer
// step streams its (sharded) state.
inline void PerfModel::StepEval::DataParallel() {
  bubble = (pp - 1) / vpp * (t_f + t_b);
  if (c.pp > 1) {
    // Under sequence parallelism each TP rank sends its own shard; a
    // scatter-gather framework sends 1/tp slices of the whole activation and
    // all-gathers them over TP (NVLink) on the receiving stage.
    const bool scatter = fw.pp_scatter_gather && !sp && c.tp > 1;
    const double sent = act_bytes / (sp || scatter ? tp : 1.0);
    const double gather = scatter ? AllGatherTime(tp, act_bytes, tp_link) : 0.0;
    const double p2p = sent / pp_link.bandwidth_bytes_per_s + pp_link.latency_s + gather;
    pp_comm = 2 * (vpp * mb + pp - 1) * p2p;
  }
  if (c.zero_stage < 3 && (shard > 1 || expert_shard > 1)) {
    const double half_comm = GroupGather(kReduceGradBytes, 1);
    const double grad_share = fw.dp_grad_overlap * chunk_share;
    if (c.zero_stage == 0) {
      dp_comm = Exposed(2 * half_comm, t_b, grad_share);
    } else {
      dp_comm = Exposed(half_comm, t_b, grad_share) + Exposed(half_comm, t_f, fw.dp_param_overlap * chunk_share);
    }
  }
  const double optimizer_params = c.zero_stage >= 1 ? stage_dense_params / shard + stage_expert_params / expert_shard
                                                    : stage_dense_params + stage_expert_params;
  optimizer = optimizer_params * kAdamBytesPerParam / hbm;
}

// The step's breakdown, throughput and utilization. Three passes of the
// dense GEMMs; the experts' backward apart (0 for a dense model, whose sum
// stays bit for bit 3 x forward). MFU against the datasheet dense peak,
// whatever the sustained clock.
inline void PerfModel::StepEval::Totals() {
  StepBreakdown& b = out.breakdown;
  b.matrix_s = mb * (layers_per_stage * (3 * gemm_f + (expert_b - 2 * expert_s)) + 3 * head_gemm);
  b.attention_s = mb * layers_per_stage * (core_f + core_b);
  b.vector_s = mb * (layers_per_stage * (3 * vec_f + eager_f + eager_b + quant_f + quant_b) + 3 * (head_f - head_gemm));
  b.overhead_s = mb * layers_per_stage * 3 * overhead_f;
  b.recompute_s = mb * layers_per_stage * (layer_rc + layer_rc_comm);
  b.tp_comm_s = mb * layers_per_stage * (tp_f_exp + tp_b_exp);
  b.cp_comm_s = mb * layers_per_stage * (cp_f_exp + cp_b_exp);
  b.ep_comm_s = mb * layers_per_stage * (ep_f_exp + ep_b_exp);
  b.pp_comm_s = pp_comm;
  b.dp_comm_s = dp_comm + mb * fsdp_exposed_per_mb;
  b.bubble_s = bubble;
  b.optimizer_s = optimizer;
  out.step_s = b.total();
  out.micro_batches = micro_batches;

  const double step_tokens = static_cast<double>(c.global_batch) * seq;
  const auto gpus = static_cast<double>(pm.setup_.gpus);
  out.tokens_per_s = step_tokens / out.step_s;
  out.model_flops_per_token = pm.model_flops_per_token_;
  out.hardware_flops_per_token = pm.hardware_flops_per_token_[static_cast<size_t>(c.recompute)];
  out.tflops_per_gpu = pm.model_flops_per_token_ * out.tokens_per_s / gpus / 1e12;
  double nominal_peak = gpu.peak_flops(c.precision);
  if (!(nominal_peak > 0))
    nominal_peak = DensePeakFlops(gpu, DType::kBf16);
  out.peak_flops = nominal_peak;
  out.mfu = pm.model_flops_per_token_ * out.tokens_per_s / gpus / nominal_peak;
  out.hfu = out.hardware_flops_per_token * out.tokens_per_s / gpus / nominal_peak;
  out.matrix_flops_per_step =
      mb * tokens *
      (layers_per_stage * 3 *
           (pm.attn_proj_flops_ / tp + pm.mlp_flops_ / tp + pm.expert_flops_ / tp + pm.shared_flops_ / tp +
            pm.router_flops_ / tp) +
       layers_per_stage * (1 + kAttentionBackward) * pm.attn_core_flops_ / tp + 3 * pm.lm_head_flops_ / tp);
}

// Memory per GPU. Weights, gradients, optimizer: memory.h's
// TrainingStateBytes, the function `mfu memory` calls
// (EstimateTrainingMemoryPerGpu), over the same shard groups as the
// communication above; ZeRO-3 adds the gathered working copy of two layers
// (one prefetched). Activations: 1F1B's first stage holds min(m, pp)
// micro-batches in flight; interleaving adds (pp-1)/(pp*vpp) of that.
inline void PerfModel::StepEval::Memory() {
  MemoryPerGpu& mem = out.memory;
  StateSharding state_shards;
  state_shards.dense_params = stage_dense_params;
  state_shards.expert_params = stage_expert_params;
  state_shards.dense_shard = shard;
  state_shards.expert_shard = expert_shard;
  state_shards.gathered_params = 2 * (pm.dense_layer_params_ / tp + pm.expert_layer_params_ / (ep * etp));
  const TrainingState state = TrainingStateBytes(c.state, c.zero_stage, state_shards);
  mem.weights = state.weights_bytes;
  mem.gradients = state.gradients_bytes;
  mem.optimizer = state.optimizer_bytes;
  const std::array<double, 2>& act =
      pm.activations_[ActivationKey(c.tp, sp, c.recompute, c.flash_attention, low_precision)];
  const double per_layer = act[0] * mbs / cp;
  const double output_layer = act[1] * mbs / cp;
  const double in_flight = c.pp == 1 ? 1 : std::min(mb, pp) * (c.vpp > 1 ? 1 + (pp - 1) / (pp * vpp) : 1.0);
  mem.activations = per_layer * layers_per_stage * in_flight + (c.pp == 1 ? output_layer : 0);
  mem.reserved = e.memory_reserved_gib * kGiB;
  mem.capacity = gpu.memory_gb * kGiB;
  if (!mem.fits())
    out.issue = ConfigIssue::kOutOfMemory;
}

}  // namespace mfu
