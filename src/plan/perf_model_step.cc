// PerfModel::EvaluateStep (perf_model.h; formulas in docs/plan.md): the
// shape checked, the groups' links, one layer's compute and exposed
// communication, the most loaded stage, the data-parallel communication and
// overlap, the step, the memory; each phase marked by a `// ---` comment.
//
// One function of ~370 lines on purpose: split into named phases over an
// evaluation context (member functions, the context's fields in memory) it
// ran 15-20% slower per configuration in bench/plan_benchmark (the planner
// calls it for every candidate), so the phases stay sections of one body
// whose locals live in registers. The split version is in this file's git
// history (commit "perf: Fabric::Link/Reaches ... inline").

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

void PerfModel::EvaluateStep(const TrainingConfig& in, Prediction& out) const {
  out = Prediction{};
  out.config = in;
  TrainingConfig& c = out.config;
  const ModelSpec& m = *setup_.model;
  const Accelerator& gpu = *setup_.gpu;
  const EfficiencyParams& e = setup_.efficiency;
  auto fail = [&out](ConfigIssue issue) { out.issue = issue; };

  // --- validity ---
  const ValueCheck failed = FirstFailedValueCheck(c, setup_.gpus);
  if (failed != ValueCheck::kOk)
    return fail(failed < ValueCheck::kGpusNotDivisible ? ConfigIssue::kBadValue : ConfigIssue::kGpusNotDivisible);
  if (c.fsdp)
    c.zero_stage = 3;
  const int64_t dp = setup_.gpus / (c.tp * c.pp * c.cp);
  c.dp = dp;
  // Stages may hold unequal layer counts (Megatron's first/last-stage
  // options): the most loaded one holds ceil(layers / (pp * vpp)) per chunk.
  if (m.num_layers < c.pp * c.vpp)
    return fail(ConfigIssue::kLayersNotDivisible);
  const int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  const int64_t ffn = m.is_moe() && m.ffn == 0 ? m.moe.expert_ffn : m.ffn;
  if (c.tp > kMaxTensorParallel || m.heads % c.tp != 0 || (kv % c.tp != 0 && c.tp % kv != 0) ||
      (ffn > 0 && ffn % c.tp != 0))
    return fail(ConfigIssue::kHeadsNotDivisible);
  if (m.is_moe()) {
    if (m.moe.num_experts % c.ep != 0 || (dp * c.cp * c.tp) % (c.ep * c.etp) != 0 ||
        (c.etp > 1 && m.moe.expert_ffn % c.etp != 0)) {
      return fail(ConfigIssue::kExpertsNotDivisible);
    }
  } else if (c.ep != 1 || c.etp != 1) {
    return fail(ConfigIssue::kExpertsNotDivisible);
  }
  if (c.global_batch == 0)
    c.global_batch = dp * c.micro_batch;
  if (c.global_batch % (dp * c.micro_batch) != 0)
    return fail(ConfigIssue::kBatchNotDivisible);
  if (c.cp > 1 && setup_.seq_len % (2 * c.cp) != 0)
    return fail(ConfigIssue::kSequenceNotDivisible);
  const bool sp = c.sequence_parallel && c.tp > 1;
  c.sequence_parallel = sp;

  // --- the framework ---
  const FrameworkProfile& fw = setup_.framework;
  if (c.tp_comm_overlap && !fw.tp_overlap_supported)
    return fail(ConfigIssue::kBadValue);
  if (!(c.moe_imbalance >= 1 && c.moe_imbalance <= 64))
    return fail(ConfigIssue::kBadValue);
  const bool fused_attention = c.flash_attention && fw.attention != AttentionKernel::kUnfused;
  c.flash_attention = fused_attention;

  // --- the fabric ---
  const auto tp = static_cast<double>(c.tp), pp = static_cast<double>(c.pp), cp = static_cast<double>(c.cp),
             ep = static_cast<double>(c.ep), etp = static_cast<double>(c.etp), vpp = static_cast<double>(c.vpp),
             dpd = static_cast<double>(dp), mbs = static_cast<double>(c.micro_batch);
  const Fabric& fabric = fabric_;
  const LinkSpec tp_link = fabric.Link(tp, 1);
  const LinkSpec cp_link = fabric.Link(cp, tp);
  const LinkSpec ep_link = fabric.AllToAllLink(ep * etp, tp * cp / etp);
  const LinkSpec dp_link = fabric.Link(dpd * cp, tp);
  // Megatron places expert TP x EP innermost over the dp x cp x tp ranks:
  // the expert-data-parallel group's members sit ep x etp GPUs apart (one
  // per node when EP fills the node).
  const double expert_dp = std::max(1.0, dpd * cp * tp / (ep * etp));
  const LinkSpec expert_dp_link = fabric.Link(expert_dp, ep * etp);
  const double pp_members = c.pp > 1 ? 2 : 1, pp_stride = tp * cp * dpd;
  const LinkSpec pp_link = fabric.Link(pp_members, pp_stride);
  const bool topology_ok = fabric.Reaches(tp, 1) && fabric.Reaches(cp, tp) && fabric.Reaches(ep * etp, tp * cp / etp) &&
                           fabric.Reaches(dpd * cp, tp) && fabric.Reaches(expert_dp, ep * etp) &&
                           fabric.Reaches(pp_members, pp_stride);
  if (!topology_ok)
    return fail(ConfigIssue::kTopology);

  // --- compute of one micro-batch, one layer, forward ---
  // Linear layers run at the precision's dense peak (a device without it,
  // fp8 on A100, at its 16-bit peak); attention and the LM head in 16-bit.
  // Both at the clock a whole step sustains (sustained_clock_fraction).
  const double clock = e.sustained_clock_fraction;
  const double peak = clock * ComputePeakFlops(gpu, c.precision);
  const double peak16 = clock * ComputePeakFlops(gpu, DType::kBf16);
  const bool low_precision =
      (c.precision == DType::kFp8 || c.precision == DType::kFp4) && gpu.peak_flops(c.precision) > 0;
  const DType gemm_dtype = low_precision ? c.precision : DType::kBf16;
  const double hbm = gpu.memory_bw_tbps * 1e12 * e.vector_bw_fraction;
  const double seq = static_cast<double>(setup_.seq_len);
  const double tokens = mbs * seq / cp;  // tokens of one micro-batch on one GPU
  const double h = static_cast<double>(m.hidden);
  // Quantization of FP8/FP4 operands, fp8_cast_bytes per element
  // (framework.h: amax, cast, transposed copy) at the vector bandwidth:
  // each GEMM's input and weight once in forward (their transposes serve
  // backward), the output gradient once in backward.
  double quant_f = 0, quant_b = 0;
  auto gemm_time = [&](double flops, double rows, double cols, double inner, double rate = 1) {
    if (low_precision && flops > 0) {
      quant_f += fw.fp8_cast_bytes * (flops / (2 * cols) + flops / (2 * rows)) / hbm;
      quant_b += fw.fp8_cast_bytes * flops / (2 * inner) / hbm;
    }
    return GemmTime(flops, rows, cols, inner, rate * peak, hbm, e, gemm_dtype);
  };
  const double q_width = static_cast<double>(m.heads) * static_cast<double>(m.qk_head_dim());
  const double attn_proj_s = gemm_time(tokens * attn_proj_flops_ / tp, tokens, std::max(q_width / tp, 1.0), h);
  const double mlp_width = static_cast<double>(std::max<int64_t>(m.ffn, 1));
  const double mlp_s = gemm_time(tokens * mlp_flops_ / tp, tokens, mlp_width / tp, h);
  double expert_s = 0, expert_b = 0;
  const double imbalance = m.is_moe() ? c.moe_imbalance : 1.0;
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
        std::max(1.0, imbalance * tokens * static_cast<double>(m.moe.top_k) * ep * etp / (tp * experts));
    // Forward and data gradient run at grouped_gemm_fraction of the dense
    // rate at that shape, the k-grouped weight gradient (inner dim = rows;
    // the dense curve is symmetric in m, n, k) at grouped_wgrad_fraction.
    // Operand traffic as the forward's, as for the dense layers' backward.
    const double flops = imbalance * tokens * expert_flops_ / tp, width = static_cast<double>(m.moe.expert_ffn) / etp;
    expert_s = gemm_time(flops, rows, width, h, e.grouped_gemm_fraction);
    expert_b = expert_s + GemmTime(flops, rows, width, h, e.grouped_wgrad_fraction * peak, hbm, e, gemm_dtype);
  }
  const double shared_s = gemm_time(tokens * shared_flops_ / tp, tokens,
                                    static_cast<double>(std::max<int64_t>(m.moe.shared_ffn, 1)) / tp, h);
  const double gemm_f = attn_proj_s + mlp_s + expert_s + shared_s;
  const double gemm_b = 2 * (attn_proj_s + mlp_s + shared_s) + expert_b;  // data + weight gradients
  const double head_dim = static_cast<double>(m.qk_head_dim());
  // Fused attention: each rank's queries against seq / cp keys per block
  // (causal at cp = 1; with context parallelism the ring's blocks are full
  // except the diagonal one).
  const double attn_flops = tokens * attn_core_flops_ / tp;
  const double kv_len = c.cp > 1 ? seq / cp : seq;
  const bool causal_blocks = c.cp == 1;
  double core_f = 0, core_b = 0;
  double core_vec_f = 0;  // unfused attention: softmax, mask, dropout traffic
  if (fused_attention) {
    core_f = AttentionSeconds(gpu, e, fw.attention, false, attn_flops, kv_len, causal_blocks, head_dim) / clock;
    core_b =
        AttentionSeconds(gpu, e, fw.attention, true, kAttentionBackward * attn_flops, kv_len, causal_blocks, head_dim) /
        clock;
  } else {
    // The full score matrix (causal blocks are not skipped) as two batched
    // GEMMs with the head dim as the short side, and ~6 passes of 16-bit
    // elements over heads/tp x s x s per sequence: scores written, masked
    // softmax read and written, dropout read and written, read by A.V.
    core_f = GemmTime(2 * attn_flops, tokens, seq, head_dim, peak16, hbm, e, DType::kBf16);
    core_b = kAttentionBackward * core_f;
    const double elements = mbs / cp * static_cast<double>(m.heads) / tp * seq * seq;
    core_vec_f = 6 * kActivationBytes * elements / hbm;
  }
  // Vector kernels (vector_kernels.h): norms and residual adds on the hidden
  // state (split by tp under sequence parallelism), the MLP activation (the
  // routed experts' over the dispatched rows); rope streams q/k at the
  // vector bandwidth.
  LayerVectorWork vec;
  vec.hidden_rows = sp ? tokens / tp : tokens;
  vec.hidden = h;
  vec.dense_act_rows = tokens;
  vec.dense_act_width = mlp_width / tp;
  if (m.is_moe()) {
    vec.expert_act_rows = imbalance * tokens * static_cast<double>(m.moe.top_k) * etp / tp;
    vec.expert_act_width = static_cast<double>(m.moe.expert_ffn) / etp;
    vec.moe_share = moe_layer_share_;
  }
  vec.gated = m.gated_mlp;
  vec.element_bytes = kActivationBytes;
  vec.fused_norm_residual = fw.fused_norm_residual;
  const double rope_s = kActivationBytes * 4 * tokens * q_width / tp / hbm;
  // MoE token permutation and unpermutation (gather to expert-contiguous
  // rows and back: read one and write top-k rows each way), and the
  // framework's host synchronisation on the token counts.
  double moe_f = 0;
  if (m.is_moe() && c.ep * c.etp > 1) {
    const double topk = static_cast<double>(m.moe.top_k);
    moe_f =
        moe_layer_share_ * (2 * (1 + topk) * imbalance * tokens * h * kActivationBytes / hbm + fw.moe_sync_us * 1e-6);
  }
  const double vec_f =
      LayerVectorSeconds(vector_kernels_, gpu.memory_bw_tbps * 1e12, vec) + rope_s + core_vec_f + moe_f;
  const double overhead_f = kKernelsPerLayer * e.kernel_overhead_us * 1e-6;

  // --- communication of one micro-batch, one layer ---
  // `share` of `comm` is issued behind `compute`; overlap_efficiency of that
  // hides, never more than the compute.
  auto exposed = [&](double comm, double compute, double share) {
    return comm - std::min(std::clamp(share, 0.0, 1.0) * e.overlap_efficiency * comm, e.overlap_efficiency * compute);
  };
  const double act_bytes = tokens * h * kActivationBytes;
  // Forward: 2 all-reduces (or 2 all-gathers + 2 reduce-scatters); backward the same.
  const double tp_f = c.tp > 1 ? 2 * AllReduceTime(tp, act_bytes, tp_link) : 0;
  const double tp_share = c.tp_comm_overlap ? 1.0 : 0.0;
  const double tp_f_exp = exposed(tp_f, gemm_f, tp_share);
  const double tp_b_exp = exposed(tp_f, gemm_b, tp_share);
  double cp_f_exp = 0, cp_b_exp = 0;
  if (c.cp > 1) {
    const double kv_bytes = tokens * 2 * static_cast<double>(kv) * head_dim / tp * kActivationBytes;
    if (fw.cp_mode == CpMode::kRing) {
      // cp - 1 steps, each sending this rank's K/V block while the previous
      // block's attention runs; backward also returns dK, dV.
      const double step = kv_bytes / cp_link.bandwidth_bytes_per_s + cp_link.latency_s;
      cp_f_exp = (cp - 1) * exposed(step, core_f / cp, fw.cp_overlap);
      cp_b_exp = (cp - 1) * exposed(2 * step, core_b / cp, fw.cp_overlap);
    } else if (fw.cp_mode == CpMode::kAllGather) {
      // K/V gathered before attention (and again in backward, with dK/dV
      // reduce-scattered after it).
      const double gather = AllGatherTime(cp, cp * kv_bytes, cp_link);
      cp_f_exp = exposed(gather, 0, 0);
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
  double ep_f_exp = 0, ep_b_exp = 0;
  if (m.is_moe() && c.ep * c.etp > 1) {
    // Dispatch and combine: every token's hidden state to its top-k experts;
    // the busiest rank receives `imbalance` times the mean.
    const double a2a_bytes =
        imbalance * tokens * static_cast<double>(m.moe.top_k) * h * kActivationBytes / (sp ? tp : 1.0);
    const double a2a = 2 * AllToAllTime(ep * etp, a2a_bytes, ep_link) * moe_layer_share_;
    ep_f_exp = exposed(a2a, gemm_f, fw.ep_overlap);
    ep_b_exp = exposed(a2a, gemm_b, fw.ep_overlap);
  }

  // --- one micro-batch on the most loaded stage ---
  // Layers are split as evenly as the stages allow (Megatron's and
  // torchtitan's uneven first/last stages): ceil(L / pp) on the busiest.
  const double layers_per_stage = std::ceil(static_cast<double>(m.num_layers) / pp);
  const double layer_f = gemm_f + core_f + vec_f + quant_f + overhead_f;
  const double layer_b = gemm_b + core_b + 2 * vec_f + quant_b + 2 * overhead_f;
  double layer_rc = 0, layer_rc_comm = 0;
  if (c.recompute == Recompute::kFull) {
    layer_rc = layer_f;
    layer_rc_comm = tp_f_exp + cp_f_exp + ep_f_exp;
  } else if (c.recompute == Recompute::kSelective || c.recompute == Recompute::kSelectiveLiteral) {
    layer_rc = core_f + core_vec_f;
  }
  const double vocab = static_cast<double>(m.vocab);
  const double head_gemm = GemmTime(tokens * lm_head_flops_ / tp, tokens, vocab / tp, h, peak16, hbm, e, DType::kBf16);
  const double head_f = head_gemm + tokens * vocab / tp * 4 * 3 / hbm;  // fp32 logits: write, softmax read/write
  const double head_b = 2 * head_f;
  const double t_f = layers_per_stage * (layer_f + tp_f_exp + cp_f_exp + ep_f_exp) + head_f;
  const double t_b = layers_per_stage * (layer_b + layer_rc + layer_rc_comm + tp_b_exp + cp_b_exp + ep_b_exp) + head_b;

  // --- parameters of the most loaded stage ---
  // Dense parameters are replicated over dp x cp ranks; an expert's over the
  // dp x cp x tp / (ep x etp) ranks that hold the same experts.
  const double stage_expert_params = layers_per_stage * expert_layer_params_ / (ep * etp);
  const double first = embedding_params_ / tp + (c.pp == 1 && !m.tied_embeddings ? lm_head_params_ / tp : 0);
  const double last = c.pp == 1 ? first : lm_head_params_ / tp;
  const double stage_dense_params = layers_per_stage * dense_layer_params_ / tp + std::max(first, last);
  const double stage_params = stage_dense_params + stage_expert_params;
  const double shard = dpd * cp;  // the distributed optimizer / FSDP shard group
  const double expert_shard = std::max(1.0, dpd * cp * tp / (ep * etp));
  // Parameters left on this GPU when `n`-way sharding applies to each group.
  auto sharded = [&](bool on) {
    return on ? stage_dense_params / shard + stage_expert_params / expert_shard : stage_params;
  };
  // A collective over each group (dense and expert), of `bytes_per_param`.
  auto group_gather = [&](double bytes_per_param, double pieces) {
    return AllGatherTime(shard, stage_dense_params * bytes_per_param, dp_link, pieces) +
           AllGatherTime(expert_shard, stage_expert_params * bytes_per_param, expert_dp_link, pieces);
  };
  // Shares of the DP collectives the framework issues behind compute: all
  // but the last of its per-layer chunks (Megatron-Core's buckets, FSDP's
  // units), none with dp_overlap off.
  const double chunk_share = c.dp_overlap ? 1 - 1 / std::max(1.0, layers_per_stage) : 0.0;

  // --- FSDP / ZeRO-3: gather parameters and reduce gradients per micro-batch ---
  const int64_t micro_batches = c.global_batch / (dp * c.micro_batch);
  const auto mb = static_cast<double>(micro_batches);
  double fsdp_exposed_per_mb = 0;
  if (c.zero_stage == 3 && (shard > 1 || expert_shard > 1)) {
    // One gather and one reduce-scatter per layer (FSDP's unit), or per
    // parameter tensor (DeepSpeed: 4 weights, 4 biases, 4 norm tensors of a
    // GPT layer; 6 without biases).
    const double per_layer = setup_.framework.zero3_per_tensor ? (m.qkv_bias ? 12.0 : 6.0) : 1.0;
    const double pieces = layers_per_stage * per_layer;
    const double gather = group_gather(kWeightBytes, pieces);
    const double reduce = group_gather(kReduceGradBytes, pieces);
    const double prefetch = c.dp_overlap ? fw.fsdp_prefetch * chunk_share : 0.0;
    // Full recompute under DeepSpeed's hooks gathers again before backward.
    const double backward_gathers = c.recompute == Recompute::kFull && fw.zero3_recompute_gather ? 2 : 1;
    fsdp_exposed_per_mb = exposed(gather, t_f, prefetch) + exposed(backward_gathers * gather + reduce, t_b, prefetch);
  }

  // --- the step ---
  const double bubble = (pp - 1) / vpp * (t_f + t_b);
  double pp_comm = 0;
  if (c.pp > 1) {
    const double p2p = act_bytes / (sp ? tp : 1.0) / pp_link.bandwidth_bytes_per_s + pp_link.latency_s;
    pp_comm = 2 * (vpp * mb + pp - 1) * p2p;
  }
  double dp_comm = 0;
  if (c.zero_stage < 3 && (shard > 1 || expert_shard > 1)) {
    // All-reduce (ZeRO-0) or reduce-scatter + all-gather (ZeRO-1/2): the same
    // bytes. DDP's bucketed all-reduce hides behind the last micro-batch's
    // backward; with a distributed optimizer the reduce-scatter does, and the
    // parameter gather behind the first micro-batch's forward.
    const double half_comm = group_gather(kReduceGradBytes, 1);
    const double grad_share = fw.dp_grad_overlap * chunk_share;
    if (c.zero_stage == 0) {
      dp_comm = exposed(2 * half_comm, t_b, grad_share);
    } else {
      dp_comm = exposed(half_comm, t_b, grad_share) + exposed(half_comm, t_f, fw.dp_param_overlap * chunk_share);
    }
  }
  const double optimizer_params = sharded(c.zero_stage >= 1);
  const double optimizer = optimizer_params * kAdamBytesPerParam / hbm;

  StepBreakdown& b = out.breakdown;
  // Three passes of the dense GEMMs; the experts' backward apart (0 for a
  // dense model, whose sum stays bit for bit 3 x forward).
  b.matrix_s = mb * (layers_per_stage * (3 * gemm_f + (expert_b - 2 * expert_s)) + 3 * head_gemm);
  b.attention_s = mb * layers_per_stage * (core_f + core_b);
  b.vector_s = mb * (layers_per_stage * (3 * vec_f + quant_f + quant_b) + 3 * (head_f - head_gemm));
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
  const auto gpus = static_cast<double>(setup_.gpus);
  out.tokens_per_s = step_tokens / out.step_s;
  out.model_flops_per_token = model_flops_per_token_;
  out.hardware_flops_per_token = hardware_flops_per_token_[static_cast<size_t>(c.recompute)];
  out.tflops_per_gpu = model_flops_per_token_ * out.tokens_per_s / gpus / 1e12;
  // MFU against the datasheet dense peak, whatever the sustained clock.
  double nominal_peak = gpu.peak_flops(c.precision);
  if (!(nominal_peak > 0))
    nominal_peak = DensePeakFlops(gpu, DType::kBf16);
  out.peak_flops = nominal_peak;
  out.mfu = model_flops_per_token_ * out.tokens_per_s / gpus / nominal_peak;
  out.hfu = out.hardware_flops_per_token * out.tokens_per_s / gpus / nominal_peak;
  out.matrix_flops_per_step =
      mb * tokens *
      (layers_per_stage * 3 * (attn_proj_flops_ / tp + mlp_flops_ / tp + expert_flops_ / tp + shared_flops_ / tp) +
       layers_per_stage * (1 + kAttentionBackward) * attn_core_flops_ / tp + 3 * lm_head_flops_ / tp);

  // --- memory per GPU ---
  // Weights, gradients, optimizer: memory.h's TrainingStateBytes, the
  // function `mfu memory` calls (EstimateTrainingMemoryPerGpu), over the
  // same shard groups as the communication above.
  MemoryPerGpu& mem = out.memory;
  StateSharding state_shards;
  state_shards.dense_params = stage_dense_params;
  state_shards.expert_params = stage_expert_params;
  state_shards.dense_shard = shard;
  state_shards.expert_shard = expert_shard;
  // ZeRO-3: the gathered working copy of two layers (one prefetched).
  state_shards.gathered_params = 2 * (dense_layer_params_ / tp + expert_layer_params_ / (ep * etp));
  const TrainingState state = TrainingStateBytes(c.state, c.zero_stage, state_shards);
  mem.weights = state.weights_bytes;
  mem.gradients = state.gradients_bytes;
  mem.optimizer = state.optimizer_bytes;
  const std::array<double, 2>& act = activations_[ActivationKey(c.tp, sp, c.recompute, c.flash_attention)];
  const double per_layer = act[0] * mbs / cp;
  const double output_layer = act[1] * mbs / cp;
  // 1F1B: the first stage holds min(m, pp) micro-batches in flight;
  // interleaving adds (pp-1)/(pp*vpp) of that.
  const double in_flight = c.pp == 1 ? 1 : std::min(mb, pp) * (c.vpp > 1 ? 1 + (pp - 1) / (pp * vpp) : 1.0);
  mem.activations = per_layer * layers_per_stage * in_flight + (c.pp == 1 ? output_layer : 0);
  mem.reserved = e.memory_reserved_gib * kGiB;
  mem.capacity = gpu.memory_gb * kGiB;
  if (!mem.fits())
    out.issue = ConfigIssue::kOutOfMemory;
}

}  // namespace mfu
