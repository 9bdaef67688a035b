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

#include "base/param.h"
#include "mfu/memory.h"
#include "mfu/vector_kernels.h"
#include "plan/perf_model_internal.h"

namespace mfu {
namespace {

using namespace perf_internal;  // NOLINT: the model's own helpers
using base::Param;

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
          return Param(name) + " must be in [1, 2^24], got " + std::to_string(v);
      }
      break;
    case ValueCheck::kNegativeDpOrBatch:
      return Param(c.dp < 0 ? "dp" : "gbs") + " must be >= 1 (or 0: derived), got " +
             std::to_string(c.dp < 0 ? c.dp : c.global_batch);
    case ValueCheck::kZeroStage:
      return Param("zero") + " must be 0, 1, 2 or 3, got " + std::to_string(c.zero_stage);
    case ValueCheck::kVppWithoutPp:
      return Param("vpp") + " needs " + Param("pp") + " > 1";
    case ValueCheck::kGpusNotDivisible:
      return "tp x pp x cp = " + std::to_string(model_parallel) + " does not divide " + std::to_string(gpus) + " GPUs";
    case ValueCheck::kDpContradicts:
      return "dp x tp x pp x cp = " + std::to_string(c.dp * model_parallel) + " but there are " + std::to_string(gpus) +
             " GPUs";
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
  MFU_RETURN_IF_ERROR(CheckZeroStage(fw, c.zero_stage, c.pp));
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
  static constexpr const char* kCodes[] = {"ok",
                                           "gpus_not_divisible",
                                           "layers_not_divisible",
                                           "heads_not_divisible",
                                           "experts_not_divisible",
                                           "batch_not_divisible",
                                           "sequence_not_divisible",
                                           "topology",
                                           "oom",
                                           "bad_value"};
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
  if (setup.seq_len < 1 || setup.seq_len > (int64_t{1} << 24)) {
    return InvalidArgumentError(Param("seq_len") + " must be in [1, 2^24] tokens, got " +
                                std::to_string(setup.seq_len));
  }
  if (setup.gpus < 1 || setup.gpus > (int64_t{1} << 24))
    return InvalidArgumentError(Param("gpus") + " must be in [1, 2^24], got " + std::to_string(setup.gpus));
  if (!(DensePeakFlops(*setup.gpu, DType::kBf16) > 0))
    return InvalidArgumentError("performance model: " + setup.gpu->id + " has no dense bf16/fp16 peak");
  if (!(setup.gpu->memory_bw_tbps > 0) || !(setup.gpu->memory_gb > 0))
    return InvalidArgumentError("performance model: " + setup.gpu->id + " has no memory size or bandwidth");
  if (setup.cluster == nullptr && !(setup.gpu->scaleup_bw_per_direction_gbs > 0) && setup.gpus > 1)
    return InvalidArgumentError("performance model: " + setup.gpu->id +
                                " has no scale-up bandwidth in the database; pass a cluster");

  PerfModel p;
  p.setup_ = setup;
  p.fabric_ = Fabric::Of(*setup.gpu, setup.cluster, setup.efficiency);
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
  p.shared_flops_ = f[FlopsComponent::kSharedExperts] / layers;
  p.router_flops_ = f[FlopsComponent::kRouter] / layers;
  p.lm_head_flops_ = f[FlopsComponent::kLmHead] + f[FlopsComponent::kMtp];
  if (p.attn_proj_flops_ > 0)
    p.op_rc_attn_share_ = (f[FlopsComponent::kKProj] + f[FlopsComponent::kOProj]) / layers / p.attn_proj_flops_;
  p.op_rc_mlp_share_ = OpPolicyMlpShare(m);
  if (p.attn_proj_flops_ > 0)
    p.mla_up_share_ = MlaUpProjFlopsPerLayer(m) / p.attn_proj_flops_;

  const ParamCounts params = CountParams(m);
  p.expert_layer_params_ = params.routed_experts / layers;
  p.dense_layer_params_ =
      (params.attention + params.dense_mlp + params.shared_experts + params.router + params.norms) / layers;
  p.embedding_params_ = params.embedding + params.position_embedding;
  p.lm_head_params_ = m.tied_embeddings ? params.embedding : params.lm_head;
  p.moe_layer_share_ = m.is_moe() ? static_cast<double>(m.num_moe_layers()) / layers : 0;

  // Activations (Korthikanti et al., EstimateTrainingMemory) for each tp
  // that divides the heads, per recompute mode, sequence parallelism, fused
  // attention, and 16-bit or FP8 GEMM inputs (the framework's
  // fp8_saved_input_bytes).
  const int64_t max_tp = std::min<int64_t>(m.heads, kMaxTensorParallel);
  p.activations_.assign(ActivationKey(max_tp + 1, false, Recompute::kNone, false, false), {0, 0});
  for (int64_t tp = 1; tp <= max_tp; ++tp) {
    if (m.heads % tp != 0)
      continue;
    for (bool sp : {false, true}) {
      for (Recompute r : kAllRecomputeModes) {
        for (bool flash : {false, true}) {
          for (bool fp8 : {false, true}) {
            TrainingMemoryOptions o;
            o.seq_len = setup.seq_len;
            o.micro_batch = 1;
            o.recompute = r;
            o.flash_attention = flash;
            o.tensor_parallel = tp;
            o.sequence_parallel = sp;
            o.recompute_modules = setup.recompute_modules;
            if (fp8)
              o.linear_input_bytes = setup.framework.fp8_saved_input_bytes;
            MFU_ASSIGN_OR_RETURN(TrainingMemory mem, EstimateTrainingMemory(m, o));
            p.activations_[ActivationKey(tp, sp, r, flash, fp8)] = {mem.activations_per_layer_bytes,
                                                                    mem.output_layer_activations_bytes};
          }
        }
      }
    }
  }

  MFU_ASSIGN_OR_RETURN(TrainingFlops model_flops,
                       ComputeTrainingFlops(m, setup.convention, setup.seq_len, Recompute::kNone));
  p.model_flops_per_token_ = model_flops.model_per_token;
  for (Recompute r : kAllRecomputeModes) {
    MFU_ASSIGN_OR_RETURN(TrainingFlops t,
                         ComputeTrainingFlops(m, setup.convention, setup.seq_len, r, setup.recompute_modules));
    p.hardware_flops_per_token_[static_cast<size_t>(r)] = t.hardware_per_token;
  }
  return p;
}

void PerfModel::SetEfficiency(const EfficiencyParams& efficiency) {
  setup_.efficiency = efficiency;
  fabric_ = Fabric::Of(*setup_.gpu, setup_.cluster, efficiency);
  vector_kernels_ = TrainingVectorKernels(efficiency);
}

size_t PerfModel::ActivationKey(int64_t tp, bool sp, Recompute recompute, bool flash, bool fp8) {
  const size_t mode =
      (static_cast<size_t>(tp) * 2 + (sp ? 1 : 0)) * kAllRecomputeModes.size() + static_cast<size_t>(recompute);
  return (mode * 2 + (flash ? 1 : 0)) * 2 + (fp8 ? 1 : 0);
}

}  // namespace mfu
