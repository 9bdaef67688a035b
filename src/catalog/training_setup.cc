// Resolution of a training job (training_setup.h): what was in the CLI's
// ResolveSetup and ConfigFlags::Resolve, with messages naming the request's
// fields.

#include "mfu/training_setup.h"

#include <optional>
#include <string>
#include <utility>

namespace mfu {
namespace {

StatusOr<DType> ResolvePrecision(const std::string& name, const Accelerator& gpu) {
  MFU_ASSIGN_OR_RETURN(DType precision, ParseDType(name));
  if (precision != DType::kBf16 && precision != DType::kFp16 && precision != DType::kFp8)
    return InvalidArgumentError(Param("precision") + ": training is modelled in bf16, fp16 or fp8");
  if (!(gpu.peak_flops(precision) > 0)) {
    return InvalidArgumentError(Param("precision") + " " + name + ": " + gpu.id + " has no dense " +
                                DTypeName(precision) + " peak");
  }
  return precision;
}

// The framework whose stored dtypes a job counts: `framework`'s own, or
// the training framework named by the `state` override when given.
StatusOr<const FrameworkProfile*> StateSource(const Catalog& catalog, const FrameworkProfile* framework,
                                              const std::string& state) {
  if (state.empty())
    return framework;
  StatusOr<const FrameworkProfile*> other = catalog.frameworks.FindTraining(state);
  if (!other.ok())
    return InvalidArgumentError(Param("state") + ": " + other.status().message());
  return *other;
}

// The framework profile with the attention override applied; fills
// r.framework, r.moe_imbalance and r.state.
StatusOr<FrameworkProfile> ResolveFramework(const Catalog& catalog, const TrainingRequest& q, ResolvedTraining& r) {
  StatusOr<const FrameworkProfile*> found = catalog.frameworks.Find(q.framework);
  if (!found.ok())
    return InvalidArgumentError(Param("framework") + ": " + found.status().message());
  r.framework = *found;
  if (r.framework->kind != "training") {
    return InvalidArgumentError(Param("framework") + " " + r.framework->name + " is a " + r.framework->kind +
                                " framework; training needs a training one");
  }
  FrameworkProfile p = *r.framework;
  if (!q.attention.empty() && q.attention != "flash") {
    StatusOr<AttentionKernel> k = ParseAttentionKernel(q.attention);
    if (!k.ok())
      return InvalidArgumentError(Param("attention") + ": " + k.status().message() + " (or flash: the framework's)");
    p.attention = *k;
  } else if (q.attention == "flash" && p.attention == AttentionKernel::kUnfused) {
    p.attention = AttentionKernel::kFa2;
  }
  MFU_ASSIGN_OR_RETURN(p.elementwise, ApplyCompile(p, q.compile, Param("compile")));
  if (!q.ep_dispatch.empty()) {
    StatusOr<EpDispatch> d = ParseEpDispatch(q.ep_dispatch);
    if (!d.ok())
      return InvalidArgumentError(Param("ep_dispatch") + ": " + d.status().message());
    p.ep_dispatch = *d;
  }
  if (!(q.moe_imbalance >= 1 && q.moe_imbalance <= 64))
    return InvalidArgumentError(Param("moe_imbalance") + " must be in [1, 64] (busiest expert rank / mean)");
  r.moe_imbalance = q.moe_imbalance;
  MFU_ASSIGN_OR_RETURN(const FrameworkProfile* state, StateSource(catalog, r.framework, q.state));
  MFU_ASSIGN_OR_RETURN(r.state, OverrideStateDTypes(state->state, q.weight_dtype, q.grad_dtype));
  return p;
}

// Megatron's --recompute-modules: "" is core_attn; a list needs a framework
// whose `selective` is Megatron's (selective_ac attention).
StatusOr<uint32_t> ResolveRecomputeModules(const std::string& list, const FrameworkProfile& fw,
                                           const ModelSpec& model) {
  if (list.empty())
    return kDefaultRecomputeModules;
  if (fw.selective_ac != SelectiveAc::kAttention) {
    return InvalidArgumentError(Param("recompute_modules") + " lists Megatron's selective recompute; " + fw.name +
                                "'s selective is its op-level policy");
  }
  StatusOr<uint32_t> modules = ParseRecomputeModules(list);
  if (!modules.ok())
    return InvalidArgumentError(Param("recompute_modules") + ": " + modules.status().message());
  MFU_RETURN_IF_ERROR(CheckRecomputeModules(model, *modules, Recompute::kSelective));
  return modules;
}

// The request's sizes and the configuration fields they set.
constexpr std::pair<int64_t TrainingConfigRequest::*, int64_t TrainingConfig::*> kSizes[] = {
    {&TrainingConfigRequest::tp, &TrainingConfig::tp},
    {&TrainingConfigRequest::pp, &TrainingConfig::pp},
    {&TrainingConfigRequest::dp, &TrainingConfig::dp},
    {&TrainingConfigRequest::cp, &TrainingConfig::cp},
    {&TrainingConfigRequest::ep, &TrainingConfig::ep},
    {&TrainingConfigRequest::etp, &TrainingConfig::etp},
    {&TrainingConfigRequest::vpp, &TrainingConfig::vpp},
    {&TrainingConfigRequest::mbs, &TrainingConfig::micro_batch},
    {&TrainingConfigRequest::gbs, &TrainingConfig::global_batch}};

// What the setup cannot vouch for: an efficiency family without measured
// training runs. (One node without a cluster is not an assumption: it runs
// on the accelerator's own scale-up figures; more GPUs need a cluster,
// which ResolveHardware states when it picks one.)
void AddSetupNotes(const Catalog& catalog, ResolvedTraining& r) {
  const TrainingSetup& t = r.perf->setup();
  if (std::optional<Note> n = UnvalidatedFamilyNote(catalog.efficiency, t.efficiency, r.gpu->id, /*training=*/true))
    r.notes.push_back(std::move(*n));
  // No measured training run is MoE: its mechanisms rest on kernel figures,
  // and published runs outside the fit (docs/plan.md) show where they fall
  // short.
  if (r.model.is_moe()) {
    r.notes.push_back(
        {NoteKind::kWarning, "moe_unvalidated",
         "MoE training is checked at kernel level only (grouped GEMMs, router, permutation, dispatch): no measured "
         "calibration run is MoE; published runs of small-expert models without CUDA graphs ran 1.6-3.4x slower "
         "than predicted (a per-layer host cost the model lacks; docs/plan.md)"});
  }
}

}  // namespace

StatusOr<std::unique_ptr<ResolvedTraining>> ResolveTrainingSetup(const Catalog& catalog, const TrainingRequest& q) {
  auto r = std::make_unique<ResolvedTraining>();
  r->model = q.model;
  MFU_RETURN_IF_ERROR(ApplyDropout(q.dropout, r->model));
  MFU_ASSIGN_OR_RETURN(Convention convention, ParseConvention(q.convention));
  MFU_ASSIGN_OR_RETURN(ResolvedHardware hw, ResolveHardware(catalog, q.hardware));
  r->gpu = hw.gpu;
  r->cluster = hw.cluster;
  r->derived = std::move(hw.derived);
  r->notes = std::move(hw.notes);
  MFU_ASSIGN_OR_RETURN(r->precision, ResolvePrecision(q.precision, *r->gpu));
  TrainingSetup setup;
  setup.model = &r->model;
  setup.seq_len = q.seq_len;
  setup.gpu = r->gpu;
  setup.cluster = r->cluster;
  setup.gpus = hw.gpus;
  setup.convention = convention;
  setup.efficiency = catalog.efficiency.For(r->gpu->id);
  MFU_ASSIGN_OR_RETURN(setup.framework, ResolveFramework(catalog, q, *r));
  MFU_ASSIGN_OR_RETURN(setup.recompute_modules,
                       ResolveRecomputeModules(q.recompute_modules, setup.framework, r->model));
  MFU_ASSIGN_OR_RETURN(PerfModel perf, PerfModel::Create(setup));
  r->perf = std::make_unique<PerfModel>(std::move(perf));
  AddSetupNotes(catalog, *r);
  return r;
}

StatusOr<MemoryReport> EstimateMemory(const Catalog& catalog, MemoryRequest request) {
  StatusOr<const FrameworkProfile*> framework = catalog.frameworks.FindTraining(request.framework);
  if (!framework.ok())
    return InvalidArgumentError(Param("framework") + ": " + framework.status().message());
  request.framework = (*framework)->name;
  if (!request.zero)
    request.zero = (*framework)->DefaultZeroStage(request.pp);
  MFU_RETURN_IF_ERROR(CheckZeroStage(**framework, *request.zero, request.pp));
  MFU_ASSIGN_OR_RETURN(const FrameworkProfile* state, StateSource(catalog, *framework, request.state));
  if (!request.state.empty())
    request.state = state->name;
  request.framework_state = state->state;
  request.fp8_saved_input_bytes = (*framework)->fp8_saved_input_bytes;
  if (!request.recompute_modules.empty())
    MFU_RETURN_IF_ERROR(ResolveRecomputeModules(request.recompute_modules, **framework, request.model).status());
  MFU_ASSIGN_OR_RETURN(Recompute asked, ParseRecompute(request.recompute));
  request.recompute = RecomputeName((*framework)->RecomputeOf(asked));
  return EstimateMemory(request);
}

StatusOr<TrainingConfig> ResolveTrainingConfig(const ResolvedTraining& setup, const TrainingConfigRequest& q) {
  if (q.fsdp && q.zero && *q.zero != 3)
    return InvalidArgumentError(Param("fsdp") + " is ZeRO-3; it contradicts " + Param("zero") + " " +
                                std::to_string(*q.zero));
  if (q.tp_comm_overlap && q.no_tp_comm_overlap)
    return InvalidArgumentError(Param("tp_comm_overlap") + " contradicts " + Param("no_tp_comm_overlap"));
  const FrameworkProfile& fw = setup.perf->setup().framework;
  TrainingConfig c;
  for (const auto& [from, to] : kSizes)
    c.*to = q.*from;
  MFU_ASSIGN_OR_RETURN(Recompute asked, ParseRecompute(q.recompute));
  c.recompute = fw.RecomputeOf(asked);
  MFU_RETURN_IF_ERROR(CheckRecomputeModules(setup.model, setup.perf->setup().recompute_modules, c.recompute));
  c.zero_stage = q.fsdp ? fw.FsdpStage(q.pp) : q.zero.value_or(fw.DefaultZeroStage(q.pp));
  c.fsdp = q.fsdp;
  c.tp_comm_overlap = q.tp_comm_overlap;  // as asked, for Validate: can the framework?
  c.dp_overlap = !q.no_dp_overlap;
  c.flash_attention = fw.attention != AttentionKernel::kUnfused;
  c.moe_imbalance = setup.moe_imbalance;
  c.state = setup.state;
  c.sequence_parallel = !q.no_sp && fw.sequence_parallel;
  c.precision = setup.precision;
  MFU_RETURN_IF_ERROR(setup.perf->Validate(c));
  c.tp_comm_overlap = q.tp > 1 && !q.no_tp_comm_overlap && (q.tp_comm_overlap || fw.tp_overlap_default);
  return c;
}

std::vector<std::string> DerivedConfigNotes(const TrainingConfig& given, const Prediction& p) {
  std::vector<std::string> derived;
  if (given.dp == 0)
    derived.push_back("dp = gpus / (tp x pp x cp) = " + std::to_string(p.config.dp));
  if (given.global_batch == 0)
    derived.push_back("global batch = dp x micro-batch = " + std::to_string(p.config.global_batch) + " sequences");
  return derived;
}

}  // namespace mfu
