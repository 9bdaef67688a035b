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
#include <utility>

#include "mfu/memory.h"
#include "mfu/vector_kernels.h"
#include "plan/param.h"

namespace mfu {
namespace {

using plan_internal::Param;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kActivationBytes = 2;      // bf16/fp16 activations and communicated tensors
constexpr double kWeightBytes = 2;          // 16-bit working weights (what ZeRO-3 gathers; stored bytes: memory.h)
constexpr double kReduceGradBytes = 2;      // gradients are reduced in 16-bit
constexpr double kAdamBytesPerParam = 30;   // grad read, master/m/v read+write, 16-bit param write
constexpr double kAttentionBackward = 2.5;  // flash attention: 5 GEMMs backward vs 2 forward
constexpr double kKernelsPerLayer = 12;     // forward kernels of one layer (backward twice as many)
constexpr int64_t kMaxTensorParallel = 1024;
// Fused attention: query/key tile of FlashAttention-2/3 and cuDNN (the
// causal diagonal's half-empty tiles are computed whole), and the head dim
// at which the kernel reaches half its rate (FlashAttention-3 on H100 at
// 16k: hd64 497, hd128 648, hd256 756 TFLOP/s, arXiv 2407.08608 fig. 5).
constexpr double kAttentionTile = 128;
constexpr double kAttentionHalfHeadDim = 51;

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
// efficiency for `dtype` and operand traffic (weights flops/rows, inputs
// rows x inner, outputs flops / inner; weights and inputs in the dtype's
// bytes, outputs 16-bit) at `bw` bytes/s.
double GemmTime(double flops, double rows, double cols, double inner, double peak, double bw, const EfficiencyParams& e,
                DType dtype) {
  if (flops <= 0)
    return 0;
  const double operand = dtype == DType::kFp8 ? 1.0 : dtype == DType::kFp4 ? 0.5 : 2.0;
  const double bytes = operand / 2 * (flops / rows + 2 * rows * inner) + flops / inner;
  return std::max(flops / (peak * GemmEfficiency(e, dtype, rows, cols, inner)), bytes / bw);
}


// The checks Validate and Evaluate share, in order; the ones before
// kGpusNotDivisible are ConfigIssue::kBadValue. Allocation-free: Validate
// alone builds the message.
enum class ValueCheck {
  kOk,
  kSizeBelowOne,
  kSizeAbsurd,
  kNegativeDpOrBatch,
  kZeroStage,
  kVppWithoutPp,
  kGpusNotDivisible,
  kDpContradicts,
};
constexpr int64_t kAbsurdSize = int64_t{1} << 24;

// The sizes of `c` with their parameter names (mfu/setup.h Param).
std::array<std::pair<const char*, int64_t>, 7> Sizes(const TrainingConfig& c) {
  return {{{"tp", c.tp}, {"pp", c.pp}, {"cp", c.cp}, {"ep", c.ep}, {"etp", c.etp}, {"vpp", c.vpp}, {"mbs", c.micro_batch}}};
}

ValueCheck FirstFailedValueCheck(const TrainingConfig& c, int64_t gpus) {
  for (const auto& [name, v] : Sizes(c)) {
    if (v < 1)
      return ValueCheck::kSizeBelowOne;
    if (v > kAbsurdSize)
      return ValueCheck::kSizeAbsurd;
  }
  if (c.dp < 0 || c.global_batch < 0)
    return ValueCheck::kNegativeDpOrBatch;
  if (c.zero_stage < 0 || c.zero_stage > 3)
    return ValueCheck::kZeroStage;
  if (c.vpp > 1 && c.pp == 1)
    return ValueCheck::kVppWithoutPp;
  const int64_t model_parallel = c.tp * c.pp * c.cp;
  if (gpus % model_parallel != 0)
    return ValueCheck::kGpusNotDivisible;
  if (c.dp != 0 && c.dp * model_parallel != gpus)
    return ValueCheck::kDpContradicts;
  return ValueCheck::kOk;
}

// Validate's message for a failed check.
std::string ValueCheckMessage(ValueCheck check, const TrainingConfig& c, int64_t gpus) {
  const int64_t model_parallel = c.tp * c.pp * c.cp;
  switch (check) {
    case ValueCheck::kOk:
      break;
    case ValueCheck::kSizeBelowOne:
    case ValueCheck::kSizeAbsurd:
      for (const auto& [name, v] : Sizes(c)) {
        if (v < 1)
          return Param(name) + " must be >= 1 (got " + std::to_string(v) + ")";
        if (v > kAbsurdSize)
          return Param(name) + " " + std::to_string(v) + " is absurd";
      }
      break;
    case ValueCheck::kNegativeDpOrBatch:
      return Param("dp") + " and " + Param("gbs") + " must be positive";
    case ValueCheck::kZeroStage:
      return Param("zero") + " must be 0, 1, 2 or 3";
    case ValueCheck::kVppWithoutPp:
      return Param("vpp") + " needs " + Param("pp") + " > 1";
    case ValueCheck::kGpusNotDivisible:
      return "tp x pp x cp = " + std::to_string(model_parallel) + " does not divide " + std::to_string(gpus) + " GPUs";
    case ValueCheck::kDpContradicts:
      return "dp x tp x pp x cp = " + std::to_string(c.dp * model_parallel) + " but there are " +
             std::to_string(gpus) + " GPUs";
  }
  return "";
}

}  // namespace

Status PerfModel::Validate(const TrainingConfig& c) const {
  const ValueCheck failed = FirstFailedValueCheck(c, setup_.gpus);
  if (failed != ValueCheck::kOk)
    return InvalidArgumentError(ValueCheckMessage(failed, c, setup_.gpus));
  if (!setup_.model->is_moe() && (c.ep > 1 || c.etp > 1))
    return InvalidArgumentError(Param("ep") + "/" + Param("etp") + " need a mixture-of-experts model");
  const FrameworkProfile& fw = setup_.framework;
  if (c.tp_comm_overlap && !fw.tp_overlap_supported) {
    return InvalidArgumentError(Param("tp_comm_overlap") + ": framework " + fw.name +
                                " cannot overlap tensor-parallel communication (data/frameworks/frameworks.csv)");
  }
  if (!(c.moe_imbalance >= 1 && c.moe_imbalance <= 64))
    return InvalidArgumentError(Param("moe_imbalance") + " must be in [1, 64] (busiest expert rank / mean)");
  return Status::Ok();
}

void PerfModel::Evaluate(const TrainingConfig& config, Prediction& out) const {
  EvaluateStep(config, out);
  if (out.issue == ConfigIssue::kOk || out.issue == ConfigIssue::kOutOfMemory)
    FinishPrediction(setup_.convention, out);
}

void FinishPrediction(Convention convention, Prediction& p) {
  const StepBreakdown& b = p.breakdown;
  const double matrix = b.matrix_s + b.attention_s + b.recompute_s;
  const double at_peak = p.peak_flops > 0 ? std::min(matrix, p.matrix_flops_per_step / p.peak_flops) : 0;
  std::array<double, kNumWaterfallBuckets> s{};
  auto at = [&s](WaterfallBucket bucket) -> double& { return s[static_cast<size_t>(bucket)]; };
  at(WaterfallBucket::kIdle) = b.bubble_s + b.overhead_s;
  at(WaterfallBucket::kExposedCommunication) = b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.pp_comm_s + b.dp_comm_s;
  at(WaterfallBucket::kNonMatrixKernels) = b.vector_s + b.optimizer_s;
  at(WaterfallBucket::kMatrixBelowPeak) = matrix - at_peak;
  at(WaterfallBucket::kMatrixAtPeak) = at_peak;
  p.waterfall = WaterfallFromSeconds(s);
  const double model_flops_per_s = p.tflops_per_gpu * 1e12;
  const double hardware_flops_per_s =
      p.model_flops_per_token > 0 ? model_flops_per_s * p.hardware_flops_per_token / p.model_flops_per_token : 0;
  p.utilization =
      MakeUtilization(convention, p.config.precision, model_flops_per_s, hardware_flops_per_s, p.peak_flops);
}

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

const char* ConfigIssueCode(ConfigIssue issue) {
  static constexpr const char* kCodes[] = {
      "ok",          "gpus_not_divisible", "layers_not_divisible", "heads_not_divisible", "experts_not_divisible",
      "batch_not_divisible", "sequence_not_divisible", "topology", "oom", "bad_value"};
  const auto i = static_cast<size_t>(issue);
  return i < std::size(kCodes) ? kCodes[i] : "?";
}

std::string ConfigText(const TrainingConfig& c) {
  auto n = [](int64_t v) { return std::to_string(v); };
  std::string s = "tp=" + n(c.tp) + " pp=" + n(c.pp) + " dp=" + n(c.dp) + " cp=" + n(c.cp);
  if (c.ep > 1 || c.etp > 1)
    s += " ep=" + n(c.ep) + " etp=" + n(c.etp);
  if (c.vpp > 1)
    s += " vpp=" + n(c.vpp);
  s += " mbs=" + n(c.micro_batch) + " gbs=" + n(c.global_batch) + " recompute=" + RecomputeName(c.recompute) + " " +
       (c.fsdp ? std::string("fsdp") : "zero=" + n(c.zero_stage));
  if (c.tp > 1)
    s += c.sequence_parallel ? " sp" : " no-sp";
  if (c.tp_comm_overlap)
    s += " tp-overlap";
  if (!c.dp_overlap)
    s += " no-dp-overlap";
  return s;
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
  // An all-to-all sends (n - local) / n of its bytes off the scale-up
  // domain, each GPU over its own NIC (NCCL's 8x400G all-to-all on 32 H100:
  // 48 of 50 GB/s per GPU), the rest over NVLink.
  auto a2a_link = [&](double n, double stride) {
    Link l = link(n, stride);
    if (n * stride > domain && n > 1 && out_bw > 0) {
      const double local = std::clamp(std::floor(domain / stride), 1.0, n);
      l.bw = std::min(out_bw * (n - 1) / std::max(n - local, 1.0), up_bw);
    }
    return l;
  };
  const Link ep_link = a2a_link(ep * etp, tp * cp / etp);
  const Link dp_link = link(dpd * cp, tp);
  // Megatron places expert TP x EP innermost over the dp x cp x tp ranks:
  // the expert-data-parallel group's members sit ep x etp GPUs apart (one
  // per node when EP fills the node).
  const double expert_dp = std::max(1.0, dpd * cp * tp / (ep * etp));
  const Link expert_dp_link = link(expert_dp, ep * etp);
  const Link pp_link = link(c.pp > 1 ? 2 : 1, tp * cp * dpd);
  if (!topology_ok)
    return fail(ConfigIssue::kTopology);

  // --- compute of one micro-batch, one layer, forward ---
  // Linear layers run at the precision's dense peak (a device without it,
  // fp8 on A100, at its 16-bit peak); attention and the LM head in 16-bit.
  const double peak = ComputePeakFlops(gpu, c.precision);
  const double peak16 = ComputePeakFlops(gpu, DType::kBf16);
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
  auto gemm_time = [&](double flops, double rows, double cols, double inner) {
    if (low_precision && flops > 0) {
      quant_f += fw.fp8_cast_bytes * (flops / (2 * cols) + flops / (2 * rows)) / hbm;
      quant_b += fw.fp8_cast_bytes * flops / (2 * inner) / hbm;
    }
    return GemmTime(flops, rows, cols, inner, peak, hbm, e, gemm_dtype);
  };
  const double q_width = static_cast<double>(m.heads) * static_cast<double>(m.qk_head_dim());
  const double attn_proj_s = gemm_time(tokens * attn_proj_flops_ / tp, tokens, std::max(q_width / tp, 1.0), h);
  const double mlp_width = static_cast<double>(std::max<int64_t>(m.ffn, 1));
  const double mlp_s = gemm_time(tokens * mlp_flops_ / tp, tokens, mlp_width / tp, h);
  double expert_s = 0;
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
    expert_s = gemm_time(imbalance * tokens * expert_flops_ / tp, rows, static_cast<double>(m.moe.expert_ffn) / etp, h);
  }
  const double shared_s = gemm_time(tokens * shared_flops_ / tp, tokens,
                                    static_cast<double>(std::max<int64_t>(m.moe.shared_ffn, 1)) / tp, h);
  const double gemm_f = attn_proj_s + mlp_s + expert_s + shared_s;
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
    core_f = AttentionSeconds(gpu, e, fw.attention, false, attn_flops, kv_len, causal_blocks, head_dim);
    core_b =
        AttentionSeconds(gpu, e, fw.attention, true, kAttentionBackward * attn_flops, kv_len, causal_blocks, head_dim);
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
  const double tp_b_exp = exposed(tp_f, 2 * gemm_f, tp_share);
  double cp_f_exp = 0, cp_b_exp = 0;
  if (c.cp > 1) {
    const double kv_bytes = tokens * 2 * static_cast<double>(kv) * head_dim / tp * kActivationBytes;
    if (fw.cp_mode == CpMode::kRing) {
      // cp - 1 steps, each sending this rank's K/V block while the previous
      // block's attention runs; backward also returns dK, dV.
      const double step = kv_bytes / cp_link.bw + cp_link.latency;
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
    ep_b_exp = exposed(a2a, 2 * gemm_f, fw.ep_overlap);
  }

  // --- one micro-batch on the most loaded stage ---
  // Layers are split as evenly as the stages allow (Megatron's and
  // torchtitan's uneven first/last stages): ceil(L / pp) on the busiest.
  const double layers_per_stage = std::ceil(static_cast<double>(m.num_layers) / pp);
  const double layer_f = gemm_f + core_f + vec_f + quant_f + overhead_f;
  const double layer_b = 2 * gemm_f + core_b + 2 * vec_f + quant_b + 2 * overhead_f;
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
    fsdp_exposed_per_mb = exposed(gather, t_f, prefetch) + exposed(gather + reduce, t_b, prefetch);
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
  b.matrix_s = mb * (layers_per_stage * 3 * gemm_f + 3 * head_gemm);
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

double MatmulPeakFraction(const EfficiencyParams& e, DType dtype) {
  switch (dtype) {
    case DType::kFp8:
      return e.fp8_matmul_peak_fraction;
    case DType::kFp4:
      return e.fp4_matmul_peak_fraction;
    default:
      return e.matmul_peak_fraction;
  }
}

double GemmEfficiency(const EfficiencyParams& e, DType dtype, double m, double n, double k) {
  const double half = e.matmul_half_dim;
  return MatmulPeakFraction(e, dtype) * Gemm(m, half) * Gemm(n, half) * Gemm(k, half);
}

double ComputePeakFlops(const Accelerator& gpu, DType dtype) {
  double peak = gpu.peak_flops(dtype);
  if (!(peak > 0))
    peak = DensePeakFlops(gpu, DType::kBf16);
  const double clock = gpu.power_cap_clock_fraction > 0 ? gpu.power_cap_clock_fraction : 1.0;
  return peak > 0 ? peak * clock : 0;
}

double GemmSeconds(const Accelerator& gpu, const EfficiencyParams& e, DType dtype, double m, double n, double k) {
  const bool has_peak = gpu.peak_flops(dtype) > 0;
  const DType run_as = has_peak ? dtype : DType::kBf16;
  const double peak = ComputePeakFlops(gpu, dtype);
  if (!(peak > 0) || m <= 0 || n <= 0 || k <= 0)
    return 0;
  return GemmTime(2 * m * n * k, m, n, k, peak, gpu.memory_bw_tbps * 1e12 * e.vector_bw_fraction, e, run_as);
}

double AttentionEfficiency(const EfficiencyParams& e, AttentionKernel kernel, bool backward, double seq_kv, bool causal,
                           double head_dim) {
  if (kernel == AttentionKernel::kUnfused || !(seq_kv > 0) || !(head_dim > 0))
    return 0;
  const double fraction = backward ? e.attention_bwd_fraction : e.attention_peak_fraction;
  const double half = backward ? e.attention_bwd_half_seq : e.attention_half_seq;
  double eff = fraction;
  if (causal) {
    const double tiles = std::max(1.0, seq_kv / kAttentionTile);
    eff *= Gemm(seq_kv / 2, half) * tiles / (tiles + 1);
  } else {
    eff *= Gemm(seq_kv, half);
  }
  eff *= Gemm(head_dim, kAttentionHalfHeadDim) / Gemm(128, kAttentionHalfHeadDim);
  if (kernel == AttentionKernel::kFa2 || kernel == AttentionKernel::kTriton)
    eff *= e.attention_fa2_ratio;
  if (kernel == AttentionKernel::kTriton)
    eff *= e.attention_triton_ratio;
  return std::min(eff, 0.98);
}

double AttentionSeconds(const Accelerator& gpu, const EfficiencyParams& e, AttentionKernel kernel, bool backward,
                        double flops, double seq_kv, bool causal, double head_dim) {
  const double eff = AttentionEfficiency(e, kernel, backward, seq_kv, causal, head_dim);
  const double peak = ComputePeakFlops(gpu, DType::kBf16);
  if (!(flops > 0) || !(eff > 0) || !(peak > 0))
    return 0;
  return flops / (peak * eff);
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
