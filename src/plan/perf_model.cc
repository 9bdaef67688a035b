// The training performance model (perf_model.h; formulas in docs/plan.md).
//
// One step on the slowest GPU = the pipeline's micro-batches on the most
// loaded stage (forward + backward + recompute, each layer's compute by
// roofline plus its exposed tensor/context/expert-parallel communication),
// the pipeline bubble, the exposed data-parallel (or FSDP) communication and
// the optimizer. Create() computes the per-layer work once; Evaluate() is
// arithmetic only.

#include "mfu/perf_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "mfu/memory.h"
#include "mfu/vector_kernels.h"

namespace mfu {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kActivationBytes = 2;      // bf16/fp16 activations and communicated tensors
constexpr double kWeightBytes = 2;          // 16-bit working weights
constexpr double kMainGradBytes = 4;        // fp32 main gradients (Megatron; FSDP mixed precision)
constexpr double kOptimizerBytes = 12;      // fp32 master weights + two Adam moments
constexpr double kReduceGradBytes = 2;      // gradients are reduced in 16-bit
constexpr double kAdamBytesPerParam = 30;   // grad read, master/m/v read+write, 16-bit param write
constexpr double kAttentionBackward = 2.5;  // flash attention: 5 GEMMs backward vs 2 forward
constexpr double kKernelsPerLayer = 12;     // forward kernels of one layer (backward twice as many)
constexpr int64_t kMaxTensorParallel = 1024;

// Latency steps: NCCL's all-gather and reduce-scatter are rings (n - 1
// steps); all-reduce switches to a tree (2 log2 n) at scale.
double RingSteps(double n) {
  return n > 1 ? n - 1 : 0;
}
double TreeSteps(double n) {
  return n > 1 ? std::min(n - 1, 2 * std::ceil(std::log2(n))) : 0;
}

// A link as a collective sees it.
struct Link {
  double bw = 0;       // bytes/s, achieved
  double latency = 0;  // seconds per step
};

// `pieces` collectives of bytes / pieces each (per-layer FSDP gathers, ...).
double AllGatherTime(double n, double bytes, const Link& l, double pieces = 1) {
  if (n <= 1 || bytes <= 0)
    return 0;
  return (n - 1) / n * bytes / l.bw + pieces * RingSteps(n) * l.latency;
}
double AllReduceTime(double n, double bytes, const Link& l) {
  if (n <= 1 || bytes <= 0)
    return 0;
  return 2 * (n - 1) / n * bytes / l.bw + 2 * TreeSteps(n) * l.latency;
}
double AllToAllTime(double n, double bytes, const Link& l) {
  return AllGatherTime(n, bytes, l);
}

// Training frameworks' norms (Apex's and Transformer Engine's fused
// LayerNorm, PyTorch's layer_norm) are not the kernel Vidur profiled for the
// `norm` row (vLLM/Sarathi's RMSNorm, one thread block per token row, 30-36%
// of HBM bandwidth at 4096 tokens). Timed with that row, the measured runs
// get worse where norms weigh most (tensor parallelism without sequence
// parallelism: korthikanti2022 4.0% -> 5.2% MAPE, vtrain 13.7% -> 15.1%), and
// no slower norm improves them; so a training step streams its norms at
// vector_bw_fraction, like its other unprofiled traffic. Residual adds and
// activations use the family's kernels.
VectorKernelTable TrainingVectorKernels(const EfficiencyParams& e) {
  VectorKernelTable k = e.vector_kernels;
  VectorKernelParams& norm = k[static_cast<size_t>(VectorKernel::kNorm)];
  norm.min_us = 0;
  norm.row_ns_per_kib = 0;
  norm.bw_fraction = e.vector_bw_fraction;
  return k;
}

double Gemm(double d, double half) {
  return d / (d + half);
}

// GEMMs totalling `flops` with `rows` rows (tokens), a representative width
// `cols` and inner dimension `inner`: the roofline of compute at the shape's
// efficiency and 16-bit operand traffic (weights flops/rows, inputs
// rows x inner, outputs flops / inner) at `bw` bytes/s.
double GemmTime(double flops, double rows, double cols, double inner, double peak, double bw,
                const EfficiencyParams& e) {
  if (flops <= 0)
    return 0;
  const double bytes = flops / rows + 2 * rows * inner + flops / inner;
  return std::max(flops / (peak * GemmEfficiency(e, rows, cols, inner)), bytes / bw);
}

}  // namespace

const char* ConfigIssueName(ConfigIssue issue) {
  switch (issue) {
    case ConfigIssue::kOk:
      return "ok";
    case ConfigIssue::kGpusNotDivisible:
      return "gpus not divisible by tp*pp*cp (or dp inconsistent)";
    case ConfigIssue::kLayersNotDivisible:
      return "fewer layers than pp*vpp stages";
    case ConfigIssue::kHeadsNotDivisible:
      return "heads, kv heads or ffn not divisible by tp";
    case ConfigIssue::kExpertsNotDivisible:
      return "experts not divisible by ep, or ep*etp does not divide dp*cp*tp";
    case ConfigIssue::kBatchNotDivisible:
      return "global batch not a multiple of dp * micro-batch";
    case ConfigIssue::kSequenceNotDivisible:
      return "sequence not divisible by 2*cp";
    case ConfigIssue::kTopology:
      return "a parallel group does not fit the cluster";
    case ConfigIssue::kOutOfMemory:
      return "does not fit in memory";
    case ConfigIssue::kBadValue:
      return "invalid value";
  }
  return "?";
}

double StepBreakdown::total() const {
  return matrix_s + attention_s + vector_s + recompute_s + overhead_s + optimizer_s + tp_comm_s + cp_comm_s +
         ep_comm_s + pp_comm_s + dp_comm_s + bubble_s;
}

StatusOr<PerfModel> PerfModel::Create(const TrainingSetup& setup) {
  if (setup.model == nullptr)
    return InvalidArgumentError("performance model: no model");
  if (setup.gpu == nullptr)
    return InvalidArgumentError("performance model: no accelerator");
  const ModelSpec& m = *setup.model;
  if (m.arch != ArchKind::kDecoder)
    return InvalidArgumentError("performance model: " + m.name +
                                " is not a decoder LLM (diffusion models are not modelled)");
  if (setup.seq_len < 1 || setup.seq_len > (int64_t{1} << 24))
    return InvalidArgumentError("performance model: sequence length must be in [1, 2^24]");
  if (setup.gpus < 1 || setup.gpus > (int64_t{1} << 24))
    return InvalidArgumentError("performance model: GPU count must be in [1, 2^24]");
  if (!(setup.gpu->peak_flops(DType::kBf16) > 0) && !(setup.gpu->peak_flops(DType::kFp16) > 0))
    return InvalidArgumentError("performance model: " + setup.gpu->id + " has no dense bf16/fp16 peak");
  if (!(setup.gpu->memory_bw_tbps > 0) || !(setup.gpu->memory_gb > 0))
    return InvalidArgumentError("performance model: " + setup.gpu->id + " has no memory size or bandwidth");
  if (setup.cluster == nullptr && !(setup.gpu->scaleup_bw_per_direction_gbs > 0) && setup.gpus > 1)
    return InvalidArgumentError("performance model: " + setup.gpu->id +
                                " has no scale-up bandwidth in the database; pass a cluster");

  PerfModel p;
  p.setup_ = setup;
  p.vector_kernels_ = TrainingVectorKernels(setup.efficiency);
  // Executed work: exact GEMMs, causal attention halved, sliding windows
  // exact (the MaxText convention's forward counts).
  MFU_ASSIGN_OR_RETURN(TrainingFlops executed,
                       ComputeTrainingFlops(m, Convention::kMaxtext, setup.seq_len, Recompute::kNone));
  const FlopsBreakdown& f = executed.forward;
  const auto layers = static_cast<double>(m.num_layers);
  p.attn_proj_flops_ =
      (f[FlopsComponent::kQProj] + f[FlopsComponent::kKProj] + f[FlopsComponent::kVProj] + f[FlopsComponent::kOProj]) /
      layers;
  p.attn_core_flops_ = (f[FlopsComponent::kAttnScores] + f[FlopsComponent::kAttnContext]) / layers;
  p.mlp_flops_ = f[FlopsComponent::kDenseMlp] / layers;
  p.expert_flops_ = f[FlopsComponent::kRoutedExperts] / layers;
  p.shared_flops_ = (f[FlopsComponent::kSharedExperts] + f[FlopsComponent::kRouter]) / layers;
  p.lm_head_flops_ = f[FlopsComponent::kLmHead] + f[FlopsComponent::kMtp];

  const ParamCounts params = CountParams(m);
  p.expert_layer_params_ = params.routed_experts / layers;
  p.dense_layer_params_ =
      (params.attention + params.dense_mlp + params.shared_experts + params.router + params.norms) / layers;
  p.embedding_params_ = params.embedding + params.position_embedding;
  p.lm_head_params_ = m.tied_embeddings ? params.embedding : params.lm_head;
  p.moe_layer_share_ = m.is_moe() ? static_cast<double>(m.num_moe_layers()) / layers : 0;

  // Activations (Korthikanti et al., EstimateTrainingMemory) for each tp
  // that divides the heads, per recompute mode and sequence parallelism.
  const int64_t max_tp = std::min<int64_t>(m.heads, kMaxTensorParallel);
  p.activations_.assign(ActivationKey(max_tp + 1, false, Recompute::kNone, false), {0, 0});
  for (int64_t tp = 1; tp <= max_tp; ++tp) {
    if (m.heads % tp != 0)
      continue;
    for (bool sp : {false, true}) {
      for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kSelectiveLiteral, Recompute::kFull}) {
        for (bool flash : {false, true}) {
          TrainingMemoryOptions o;
          o.seq_len = setup.seq_len;
          o.micro_batch = 1;
          o.recompute = r;
          o.flash_attention = flash;
          o.tensor_parallel = tp;
          o.sequence_parallel = sp;
          MFU_ASSIGN_OR_RETURN(TrainingMemory mem, EstimateTrainingMemory(m, o));
          p.activations_[ActivationKey(tp, sp, r, flash)] = {mem.activations_per_layer_bytes,
                                                             mem.output_layer_activations_bytes};
        }
      }
    }
  }

  MFU_ASSIGN_OR_RETURN(TrainingFlops model_flops,
                       ComputeTrainingFlops(m, setup.convention, setup.seq_len, Recompute::kNone));
  p.model_flops_per_token_ = model_flops.model_per_token;
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kSelectiveLiteral, Recompute::kFull}) {
    MFU_ASSIGN_OR_RETURN(TrainingFlops t, ComputeTrainingFlops(m, setup.convention, setup.seq_len, r));
    p.hardware_flops_per_token_[static_cast<size_t>(r)] = t.hardware_per_token;
  }
  return p;
}

void PerfModel::SetEfficiency(const EfficiencyParams& efficiency) {
  setup_.efficiency = efficiency;
  vector_kernels_ = TrainingVectorKernels(efficiency);
}

size_t PerfModel::ActivationKey(int64_t tp, bool sp, Recompute recompute, bool flash) {
  return ((static_cast<size_t>(tp) * 2 + (sp ? 1 : 0)) * 4 + static_cast<size_t>(recompute)) * 2 + (flash ? 1 : 0);
}

void PerfModel::Evaluate(const TrainingConfig& in, Prediction& out) const {
  out = Prediction{};
  out.config = in;
  TrainingConfig& c = out.config;
  const ModelSpec& m = *setup_.model;
  const Accelerator& gpu = *setup_.gpu;
  const EfficiencyParams& e = setup_.efficiency;
  auto fail = [&out](ConfigIssue issue) { out.issue = issue; };

  // --- validity ---
  if (c.tp < 1 || c.pp < 1 || c.cp < 1 || c.ep < 1 || c.etp < 1 || c.vpp < 1 || c.micro_batch < 1 || c.dp < 0 ||
      c.global_batch < 0 || c.zero_stage < 0 || c.zero_stage > 3 || (c.vpp > 1 && c.pp == 1)) {
    return fail(ConfigIssue::kBadValue);
  }
  if (c.fsdp)
    c.zero_stage = 3;
  const int64_t model_parallel = c.tp * c.pp * c.cp;
  if (setup_.gpus % model_parallel != 0)
    return fail(ConfigIssue::kGpusNotDivisible);
  const int64_t dp = setup_.gpus / model_parallel;
  if (c.dp != 0 && c.dp != dp)
    return fail(ConfigIssue::kGpusNotDivisible);
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

  // --- the fabric ---
  const Cluster* cl = setup_.cluster;
  const double domain =
      cl != nullptr ? static_cast<double>(cl->nvlink_domain_gpus) : static_cast<double>(std::max<int64_t>(8, 1));
  const double up_bw =
      (cl != nullptr ? cl->scaleup_bw_bytes_per_s : gpu.scaleup_bw_per_direction_gbs * 1e9) * e.scaleup_bw_fraction;
  const double out_bw = (cl != nullptr ? cl->scaleout_bw_bytes_per_s : 0) * e.scaleout_bw_fraction;
  const double up_lat = cl != nullptr ? cl->scaleup_latency_s : 3e-6;
  const double out_lat = cl != nullptr ? cl->scaleout_latency_s : 10e-6;
  bool topology_ok = true;
  // A group of `n` ranks `stride` GPUs apart: inside one scale-up domain, or
  // across domains with `per_domain` members each driving its own NIC.
  auto link = [&](double n, double stride) {
    Link l;
    if (n * stride <= domain || n <= 1) {
      l.bw = up_bw;
      l.latency = up_lat;
      return l;
    }
    if (!(out_bw > 0)) {
      topology_ok = false;
      l.bw = up_bw;
      l.latency = up_lat;
      return l;
    }
    const double per_domain = std::clamp(std::floor(domain / stride), 1.0, n);
    l.bw = std::min(per_domain * out_bw, up_bw);
    l.latency = out_lat;
    return l;
  };
  const auto tp = static_cast<double>(c.tp), pp = static_cast<double>(c.pp), cp = static_cast<double>(c.cp),
             ep = static_cast<double>(c.ep), etp = static_cast<double>(c.etp), vpp = static_cast<double>(c.vpp),
             dpd = static_cast<double>(dp), mbs = static_cast<double>(c.micro_batch);
  const Link tp_link = link(tp, 1);
  const Link cp_link = link(cp, tp);
  const Link ep_link = link(ep * etp, tp * cp / etp);
  const Link dp_link = link(dpd * cp, tp);
  const Link pp_link = link(c.pp > 1 ? 2 : 1, tp * cp * dpd);
  if (!topology_ok)
    return fail(ConfigIssue::kTopology);

  // --- compute of one micro-batch, one layer, forward ---
  // The precision's dense peak; a device without it (fp8 on A100, bf16 on
  // V100) runs the GEMMs at its 16-bit peak.
  double peak = gpu.peak_flops(c.precision);
  if (!(peak > 0))
    peak = gpu.peak_flops(DType::kBf16) > 0 ? gpu.peak_flops(DType::kBf16) : gpu.peak_flops(DType::kFp16);
  const double hbm = gpu.memory_bw_tbps * 1e12 * e.vector_bw_fraction;
  const double seq = static_cast<double>(setup_.seq_len);
  const double tokens = mbs * seq / cp;  // tokens of one micro-batch on one GPU
  const double h = static_cast<double>(m.hidden);
  auto gemm_time = [&](double flops, double rows, double cols, double inner) {
    return GemmTime(flops, rows, cols, inner, peak, hbm, e);
  };
  const double q_width = static_cast<double>(m.heads) * static_cast<double>(m.qk_head_dim());
  const double attn_proj_s = gemm_time(tokens * attn_proj_flops_ / tp, tokens, std::max(q_width / tp, 1.0), h);
  const double mlp_width = static_cast<double>(std::max<int64_t>(m.ffn, 1));
  const double mlp_s = gemm_time(tokens * mlp_flops_ / tp, tokens, mlp_width / tp, h);
  double expert_s = 0;
  if (expert_flops_ > 0) {
    // Balanced routing: the EP group keeps every GPU's work at its own
    // tokens x top-k; each local expert sees tokens*topk*ep/E rows.
    const double experts = static_cast<double>(m.moe.num_experts);
    const double rows = std::max(1.0, tokens * static_cast<double>(m.moe.top_k) * ep / experts);
    expert_s = gemm_time(tokens * expert_flops_ / etp, rows, static_cast<double>(m.moe.expert_ffn) / etp, h);
  }
  const double shared_s = gemm_time(tokens * shared_flops_ / tp, tokens,
                                    static_cast<double>(std::max<int64_t>(m.moe.shared_ffn, 1)) / tp, h);
  const double gemm_f = attn_proj_s + mlp_s + expert_s + shared_s;
  double core_f = tokens * attn_core_flops_ / tp / (peak * e.attention_peak_fraction);
  double core_vec_f = 0;  // unfused attention: softmax, mask, dropout traffic
  if (!c.flash_attention) {
    // The full score matrix (causal blocks are not skipped) as two batched
    // GEMMs with the head dim as the short side, and ~6 passes of 16-bit
    // elements over heads/tp x s x s per sequence: scores written, masked
    // softmax read and written, dropout read and written, read by A.V.
    const double head_dim = static_cast<double>(m.qk_head_dim());
    core_f = gemm_time(2 * tokens * attn_core_flops_ / tp, tokens, seq, head_dim);
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
    vec.expert_act_rows = tokens * static_cast<double>(m.moe.top_k);
    vec.expert_act_width = static_cast<double>(m.moe.expert_ffn) / etp;
    vec.moe_share = moe_layer_share_;
  }
  vec.gated = m.gated_mlp;
  vec.element_bytes = kActivationBytes;
  const double rope_s = kActivationBytes * 4 * tokens * q_width / tp / hbm;
  const double vec_f = LayerVectorSeconds(vector_kernels_, gpu.memory_bw_tbps * 1e12, vec) + rope_s + core_vec_f;
  const double overhead_f = kKernelsPerLayer * e.kernel_overhead_us * 1e-6;

  // --- communication of one micro-batch, one layer ---
  const double act_bytes = tokens * h * kActivationBytes;
  // Forward: 2 all-reduces (or 2 all-gathers + 2 reduce-scatters); backward the same.
  const double tp_f = c.tp > 1 ? 2 * AllReduceTime(tp, act_bytes, tp_link) : 0;
  auto exposed = [&](double comm, double compute, bool overlappable) {
    if (!overlappable)
      return comm;
    return std::max(comm * (1 - e.overlap_efficiency), comm - e.overlap_efficiency * compute);
  };
  const double tp_f_exp = exposed(tp_f, gemm_f, c.tp_comm_overlap);
  const double tp_b_exp = exposed(tp_f, 2 * gemm_f, c.tp_comm_overlap);
  double cp_f_exp = 0, cp_b_exp = 0;
  if (c.cp > 1) {
    // Ring attention: cp-1 exchanges of this rank's K and V, hidden behind the
    // attention core; backward also returns dK, dV.
    const double kv_bytes =
        tokens * 2 * static_cast<double>(kv) * static_cast<double>(m.qk_head_dim()) / tp * kActivationBytes;
    const double ring = (cp - 1) * (kv_bytes / cp_link.bw + cp_link.latency);
    cp_f_exp = exposed(ring, core_f, true);
    cp_b_exp = exposed(2 * ring, kAttentionBackward * core_f, true);
  }
  double ep_f_exp = 0, ep_b_exp = 0;
  if (m.is_moe() && c.ep * c.etp > 1) {
    // Dispatch and combine: every token's hidden state to its top-k experts.
    const double a2a_bytes = tokens * static_cast<double>(m.moe.top_k) * h * kActivationBytes / (sp ? tp : 1.0);
    const double a2a = 2 * AllToAllTime(ep * etp, a2a_bytes, ep_link) * moe_layer_share_;
    ep_f_exp = a2a;
    ep_b_exp = a2a;
  }

  // --- one micro-batch on the most loaded stage ---
  const double layers_per_stage =
      vpp * std::ceil(static_cast<double>(m.num_layers) / static_cast<double>(c.pp * c.vpp));
  const double layer_f = gemm_f + core_f + vec_f + overhead_f;
  const double layer_b = 2 * gemm_f + kAttentionBackward * core_f + 2 * vec_f + 2 * overhead_f;
  double layer_rc = 0, layer_rc_comm = 0;
  if (c.recompute == Recompute::kFull) {
    layer_rc = layer_f;
    layer_rc_comm = tp_f_exp + cp_f_exp + ep_f_exp;
  } else if (c.recompute == Recompute::kSelective || c.recompute == Recompute::kSelectiveLiteral) {
    layer_rc = core_f + core_vec_f;
  }
  const double vocab = static_cast<double>(m.vocab);
  const double head_gemm = gemm_time(tokens * lm_head_flops_ / tp, tokens, vocab / tp, h);
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
           AllGatherTime(expert_shard, stage_expert_params * bytes_per_param, dp_link, pieces);
  };

  // --- FSDP / ZeRO-3: gather parameters and reduce gradients per micro-batch ---
  const int64_t micro_batches = c.global_batch / (dp * c.micro_batch);
  const auto mb = static_cast<double>(micro_batches);
  double fsdp_exposed_per_mb = 0;
  if (c.zero_stage == 3 && (shard > 1 || expert_shard > 1)) {
    // One gather and one reduce-scatter per layer (FSDP's unit).
    const double pieces = layers_per_stage * static_cast<double>(std::max<int64_t>(1, c.zero3_collectives_per_layer));
    const double gather = group_gather(kWeightBytes, pieces);
    const double reduce = group_gather(kReduceGradBytes, pieces);
    fsdp_exposed_per_mb = exposed(gather, t_f, true) + exposed(gather + reduce, t_b, true);
  }

  // --- the step ---
  const double bubble = (pp - 1) / vpp * (t_f + t_b);
  double pp_comm = 0;
  if (c.pp > 1) {
    const double p2p = act_bytes / (sp ? tp : 1.0) / pp_link.bw + pp_link.latency;
    pp_comm = 2 * (vpp * mb + pp - 1) * p2p;
  }
  double dp_comm = 0;
  if (c.zero_stage < 3 && (shard > 1 || expert_shard > 1)) {
    // All-reduce (ZeRO-0) or reduce-scatter + all-gather (ZeRO-1/2): the same
    // bytes. DDP's bucketed all-reduce hides behind the last micro-batch's
    // backward; with a distributed optimizer the reduce-scatter does, and the
    // parameter gather behind the first micro-batch's forward.
    const double half_comm = group_gather(kReduceGradBytes, 1);
    if (c.zero_stage == 0) {
      dp_comm = exposed(2 * half_comm, t_b, c.dp_overlap);
    } else {
      dp_comm = exposed(half_comm, t_b, c.dp_overlap) + exposed(half_comm, t_f, c.dp_overlap);
    }
  }
  const double optimizer_params = sharded(c.zero_stage >= 1);
  const double optimizer = optimizer_params * kAdamBytesPerParam / hbm;

  StepBreakdown& b = out.breakdown;
  b.matrix_s = mb * (layers_per_stage * 3 * gemm_f + 3 * head_gemm);
  b.attention_s = mb * layers_per_stage * (1 + kAttentionBackward) * core_f;
  b.vector_s = mb * (layers_per_stage * 3 * vec_f + 3 * (head_f - head_gemm));
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
  out.peak_flops = peak;
  out.mfu = model_flops_per_token_ * out.tokens_per_s / gpus / peak;
  out.hfu = out.hardware_flops_per_token * out.tokens_per_s / gpus / peak;
  out.matrix_flops_per_step =
      mb * tokens *
      (layers_per_stage * 3 * (attn_proj_flops_ / tp + mlp_flops_ / tp + expert_flops_ / etp + shared_flops_ / tp) +
       layers_per_stage * (1 + kAttentionBackward) * attn_core_flops_ / tp + 3 * lm_head_flops_ / tp);

  // --- memory per GPU ---
  MemoryPerGpu& mem = out.memory;
  mem.weights = sharded(c.zero_stage >= 3) * kWeightBytes;
  mem.gradients = sharded(c.zero_stage >= 2) * kMainGradBytes;
  mem.optimizer = sharded(c.zero_stage >= 1) * kOptimizerBytes;
  if (c.zero_stage >= 3) {
    // The gathered working copy of two layers (prefetch).
    mem.weights += 2 * kWeightBytes * (dense_layer_params_ / tp + expert_layer_params_ / (ep * etp));
  }
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

double GemmEfficiency(const EfficiencyParams& e, double m, double n, double k) {
  const double half = e.matmul_half_dim;
  return e.matmul_peak_fraction * Gemm(m, half) * Gemm(n, half) * Gemm(k, half);
}

double GemmSeconds(const Accelerator& gpu, const EfficiencyParams& e, DType dtype, double m, double n, double k) {
  double peak = gpu.peak_flops(dtype);
  if (!(peak > 0))
    peak = gpu.peak_flops(DType::kBf16) > 0 ? gpu.peak_flops(DType::kBf16) : gpu.peak_flops(DType::kFp16);
  if (!(peak > 0) || m <= 0 || n <= 0 || k <= 0)
    return 0;
  return GemmTime(2 * m * n * k, m, n, k, peak, gpu.memory_bw_tbps * 1e12 * e.vector_bw_fraction, e);
}

double CollectiveSeconds(Collective kind, double ranks, double bytes, const LinkSpec& link) {
  if (!(link.bandwidth_bytes_per_s > 0))
    return 0;
  const Link l{link.bandwidth_bytes_per_s, link.latency_s};
  switch (kind) {
    case Collective::kAllReduce:
      return AllReduceTime(ranks, bytes, l);
    case Collective::kAllGather:
    case Collective::kReduceScatter:
      return AllGatherTime(ranks, bytes, l);
    case Collective::kAllToAll:
      return AllToAllTime(ranks, bytes, l);
    case Collective::kSendRecv:
      return bytes > 0 ? bytes / l.bw + l.latency : 0;
  }
  return 0;
}

}  // namespace mfu
