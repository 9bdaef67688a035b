#include "cli/plan_flags.h"

#include <CLI/CLI.hpp>
#include <string>
#include <utility>

namespace mfu::cli {

void SetupFlags::Register(CLI::App& app) {
  model.Register(app);
  gpu.Register(app, /*required=*/false);
  app.add_option("--cluster", cluster, "Cluster preset (data/clusters/clusters.csv: dgx-h100, gb200-nvl72, ...)");
  app.add_option("--cluster-file", cluster_file, "CSV adding or overriding clusters (data/clusters/README.md)");
  app.add_option("--efficiency-file", efficiency_files,
                 "CSV overriding efficiency parameters (data/efficiency/efficiency.csv, 'mfu calibrate --write') or "
                 "vector kernel parameters (vector_kernels.csv); repeatable")
      ->allow_extra_args(false);
  app.add_option("--gpus,-n", gpus, "GPUs in the job");
  app.add_option("--nodes", nodes, "Nodes of the cluster (GPUs = nodes x GPUs per node)");
  app.add_option("--seq-len,-s", seq_len, "Sequence length")->required();
  app.add_option("--convention,-c", convention, "FLOPs convention of MFU/TFLOP/s (see 'mfu flops --help')")
      ->capture_default_str();
  app.add_option("--precision,-p", precision, "bf16, fp16 or fp8: the linear layers' GEMMs and the MFU denominator")
      ->capture_default_str();
  app.add_option("--framework", framework,
                 "Framework profile (data/frameworks/frameworks.csv): what overlaps, attention kernel, FP8 recipe")
      ->capture_default_str();
  app.add_option("--framework-file", framework_files, "CSV adding or changing framework profiles; repeatable")
      ->allow_extra_args(false);
  app.add_option(
      "--attention", attention,
      "Attention kernel: flash (the framework's), best (cudnn/fa3/fa4), fa2, triton, unfused [default: framework]");
  app.add_option("--state", state,
                 "Stored dtypes per parameter: megatron, torchtitan-fsdp, deepspeed, bf16 (docs/memory.md)")
      ->capture_default_str();
  app.add_option("--moe-imbalance", moe_imbalance,
                 "Tokens of the busiest expert rank / the mean (MoE) [default: 1, balanced routing]");
}

namespace {

// The framework profile with --attention applied.
StatusOr<FrameworkProfile> ResolveFramework(const SetupFlags& f, ResolvedSetup& r) {
  MFU_ASSIGN_OR_RETURN(r.frameworks, FrameworkDb::LoadBuiltin());
  for (const std::string& file : f.framework_files)
    MFU_RETURN_IF_ERROR(r.frameworks.AddFile(file));
  StatusOr<const FrameworkProfile*> found = r.frameworks.Find(f.framework);
  if (!found.ok())
    return InvalidArgumentError("--framework: " + found.status().message());
  r.framework = *found;
  if (r.framework->kind != "training") {
    return InvalidArgumentError("--framework " + r.framework->name + " is a " + r.framework->kind +
                                " framework; training needs a training one");
  }
  FrameworkProfile p = *r.framework;
  if (!f.attention.empty() && f.attention != "flash") {
    StatusOr<AttentionKernel> k = ParseAttentionKernel(f.attention);
    if (!k.ok())
      return InvalidArgumentError("--attention: " + k.status().message() + " (or flash: the framework's)");
    p.attention = *k;
  } else if (f.attention == "flash" && p.attention == AttentionKernel::kUnfused) {
    p.attention = AttentionKernel::kFa2;
  }
  if (!(f.moe_imbalance >= 1 && f.moe_imbalance <= 64))
    return InvalidArgumentError("--moe-imbalance must be in [1, 64] (busiest expert rank / mean)");
  r.moe_imbalance = f.moe_imbalance;
  StatusOr<TrainingStateDtypes> state = TrainingStatePreset(f.state);
  if (!state.ok())
    return InvalidArgumentError("--state: " + state.status().message());
  r.state = *state;
  return p;
}

}  // namespace

StatusOr<std::unique_ptr<ResolvedSetup>> ResolveSetup(const SetupFlags& f) {
  auto r = std::make_unique<ResolvedSetup>();
  MFU_ASSIGN_OR_RETURN(r->model, f.model.Resolve());
  MFU_ASSIGN_OR_RETURN(r->hw, f.gpu.LoadDb());
  MFU_ASSIGN_OR_RETURN(r->clusters, ClusterDb::LoadBuiltin());
  if (!f.cluster_file.empty())
    MFU_RETURN_IF_ERROR(r->clusters.AddFile(f.cluster_file));
  MFU_ASSIGN_OR_RETURN(r->efficiency, EfficiencyDb::LoadBuiltin());
  for (const std::string& file : f.efficiency_files)
    MFU_RETURN_IF_ERROR(r->efficiency.AddFile(file));
  MFU_ASSIGN_OR_RETURN(r->precision, ParseDType(f.precision));
  if (r->precision != DType::kBf16 && r->precision != DType::kFp16 && r->precision != DType::kFp8)
    return InvalidArgumentError("--precision: training is modelled in bf16, fp16 or fp8");
  MFU_ASSIGN_OR_RETURN(Convention convention, ParseConvention(f.convention));

  if (f.cluster.empty() && f.gpu.gpu.empty())
    return InvalidArgumentError("give --gpu or --cluster (see 'mfu hw list' and data/clusters/clusters.csv)");
  if (!f.cluster.empty()) {
    MFU_ASSIGN_OR_RETURN(r->cluster, r->clusters.Find(f.cluster));
    MFU_ASSIGN_OR_RETURN(const Accelerator* cluster_gpu, r->hw.Find(r->cluster->accelerator));
    if (!f.gpu.gpu.empty()) {
      MFU_ASSIGN_OR_RETURN(r->gpu, r->hw.Find(f.gpu.gpu));
      if (r->gpu != cluster_gpu) {
        return InvalidArgumentError("--gpu " + f.gpu.gpu + " contradicts --cluster " + f.cluster + " (built from " +
                                    cluster_gpu->id + "); drop one");
      }
    }
    r->gpu = cluster_gpu;
  } else {
    MFU_ASSIGN_OR_RETURN(r->gpu, r->hw.Find(f.gpu.gpu));
  }
  if (!(r->gpu->peak_flops(r->precision) > 0)) {
    return InvalidArgumentError("--precision " + f.precision + ": " + r->gpu->id + " has no dense " +
                                DTypeName(r->precision) + " peak");
  }

  int64_t gpus = f.gpus;
  if (f.nodes < 0 || gpus < 0)
    return InvalidArgumentError("--gpus and --nodes must be positive");
  if (f.nodes > 0) {
    if (r->cluster == nullptr)
      return InvalidArgumentError("--nodes needs --cluster (GPUs per node)");
    const int64_t from_nodes = f.nodes * r->cluster->gpus_per_node;
    if (gpus > 0 && gpus != from_nodes) {
      return InvalidArgumentError("--gpus " + std::to_string(gpus) + " contradicts --nodes " + std::to_string(f.nodes) +
                                  " x " + std::to_string(r->cluster->gpus_per_node) + " GPUs per node");
    }
    gpus = from_nodes;
    r->derived.push_back("gpus = nodes x " + std::to_string(r->cluster->gpus_per_node) + " = " + std::to_string(gpus));
  }
  if (gpus == 0)
    return InvalidArgumentError("give --gpus (or --nodes with --cluster)");
  if (r->cluster != nullptr && r->cluster->max_gpus > 0 && gpus > r->cluster->max_gpus) {
    return InvalidArgumentError("--gpus " + std::to_string(gpus) + " exceeds the " + r->cluster->id + " limit of " +
                                std::to_string(r->cluster->max_gpus));
  }
  if (r->cluster == nullptr && gpus > 8) {
    return InvalidArgumentError("--gpus " + std::to_string(gpus) +
                                ": more than one 8-GPU node needs --cluster (its scale-out network)");
  }
  TrainingSetup setup;
  setup.model = &r->model;
  setup.seq_len = f.seq_len;
  setup.gpu = r->gpu;
  setup.cluster = r->cluster;
  setup.gpus = gpus;
  setup.convention = convention;
  setup.efficiency = r->efficiency.For(r->gpu->id);
  MFU_ASSIGN_OR_RETURN(setup.framework, ResolveFramework(f, *r));
  MFU_ASSIGN_OR_RETURN(PerfModel perf, PerfModel::Create(setup));
  r->perf = std::make_unique<PerfModel>(std::move(perf));
  return r;
}

void ConfigFlags::Register(CLI::App& app) {
  auto* g = app.add_option_group("Parallelism", "The configuration (missing dimensions are derived and stated)");
  g->add_option("--tp", tp, "Tensor parallel size")->capture_default_str();
  g->add_option("--pp", pp, "Pipeline parallel size")->capture_default_str();
  g->add_option("--dp", dp, "Data parallel size [default: gpus / (tp x pp x cp)]");
  g->add_option("--cp", cp, "Context parallel size")->capture_default_str();
  g->add_option("--ep", ep, "Expert parallel size (MoE)")->capture_default_str();
  g->add_option("--etp", etp, "Expert tensor parallel size (MoE)")->capture_default_str();
  g->add_option("--vpp", vpp, "Virtual pipeline stages per GPU (interleaved 1F1B)")->capture_default_str();
  g->add_option("--mbs", micro_batch, "Micro-batch size (sequences)")->capture_default_str();
  g->add_option("--gbs", global_batch, "Global batch (sequences per step) [default: dp x mbs]");
  g->add_option("--recompute", recompute, "none, selective, full")->capture_default_str();
  g->add_option("--zero", zero, "ZeRO stage: 0 (DDP), 1 (distributed optimizer), 2, 3")->capture_default_str();
  g->add_flag("--fsdp", fsdp, "PyTorch FSDP full sharding (ZeRO-3 per micro-batch)");
  g->add_flag("--no-sp", no_sequence_parallel, "Tensor parallelism without sequence parallelism");
  g->add_flag("--tp-comm-overlap", tp_comm_overlap,
              "Overlap tensor-parallel communication with GEMMs [default: the framework's recipe]");
  g->add_flag("--no-tp-comm-overlap", no_tp_comm_overlap, "Tensor-parallel communication not overlapped");
  g->add_flag("--no-dp-overlap", no_dp_overlap, "Gradient reduction not overlapped with backward");
}

StatusOr<TrainingConfig> ConfigFlags::Resolve(const ResolvedSetup& setup) const {
  TrainingConfig c;
  for (auto [name, v] : {std::pair{"--tp", tp},
                         {"--pp", pp},
                         {"--cp", cp},
                         {"--ep", ep},
                         {"--etp", etp},
                         {"--vpp", vpp},
                         {"--mbs", micro_batch}}) {
    if (v < 1)
      return InvalidArgumentError(std::string(name) + " must be >= 1 (got " + std::to_string(v) + ")");
    if (v > (int64_t{1} << 24))
      return InvalidArgumentError(std::string(name) + " " + std::to_string(v) + " is absurd");
  }
  if (dp < 0 || global_batch < 0)
    return InvalidArgumentError("--dp and --gbs must be positive");
  if (zero < 0 || zero > 3)
    return InvalidArgumentError("--zero must be 0, 1, 2 or 3");
  if (fsdp && zero != 1 && zero != 3)
    return InvalidArgumentError("--fsdp is ZeRO-3; it contradicts --zero " + std::to_string(zero));
  if (vpp > 1 && pp == 1)
    return InvalidArgumentError("--vpp needs --pp > 1");
  if (!setup.model.is_moe() && (ep > 1 || etp > 1))
    return InvalidArgumentError("--ep/--etp need a mixture-of-experts model");
  const int64_t gpus = setup.perf->setup().gpus;
  if (gpus % (tp * pp * cp) != 0) {
    return InvalidArgumentError("tp x pp x cp = " + std::to_string(tp * pp * cp) + " does not divide " +
                                std::to_string(gpus) + " GPUs");
  }
  if (dp > 0 && dp * tp * pp * cp != gpus) {
    return InvalidArgumentError("dp x tp x pp x cp = " + std::to_string(dp * tp * pp * cp) + " but there are " +
                                std::to_string(gpus) + " GPUs");
  }
  c.tp = tp;
  c.pp = pp;
  c.dp = dp;
  c.cp = cp;
  c.ep = ep;
  c.etp = etp;
  c.vpp = vpp;
  c.micro_batch = micro_batch;
  c.global_batch = global_batch;
  MFU_ASSIGN_OR_RETURN(c.recompute, ParseRecompute(recompute));
  c.zero_stage = fsdp ? 3 : zero;
  c.fsdp = fsdp;
  const FrameworkProfile& fw = setup.perf->setup().framework;
  if (tp_comm_overlap && no_tp_comm_overlap)
    return InvalidArgumentError("--tp-comm-overlap contradicts --no-tp-comm-overlap");
  if (tp_comm_overlap && !fw.tp_overlap_supported) {
    return InvalidArgumentError("--tp-comm-overlap: framework " + fw.name +
                                " cannot overlap tensor-parallel communication (data/frameworks/frameworks.csv)");
  }
  c.tp_comm_overlap = tp > 1 && !no_tp_comm_overlap && (tp_comm_overlap || fw.tp_overlap_default);
  c.dp_overlap = !no_dp_overlap;
  c.flash_attention = fw.attention != AttentionKernel::kUnfused;
  c.moe_imbalance = setup.moe_imbalance;
  c.state = setup.state;
  c.sequence_parallel = !no_sequence_parallel && fw.sequence_parallel;
  c.precision = setup.precision;
  return c;
}

}  // namespace mfu::cli
