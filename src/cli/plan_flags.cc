#include "cli/plan_flags.h"

#include <CLI/CLI.hpp>
#include <string>

#include "mfu/file_system.h"

namespace mfu::cli {

void SetupFlags::Register(CLI::App& app) {
  model.Register(app);
  gpu.Register(app, /*required=*/false);
  TrainingRequest& r = request;
  app.add_option("--cluster", cluster, "Cluster preset (data/clusters/clusters.csv: dgx-h100, gb200-nvl72, ...)");
  app.add_option("--cluster-file", cluster_file, "CSV adding or overriding clusters (data/clusters/README.md)");
  app.add_option("--efficiency-file", efficiency_files,
                 "CSV overriding efficiency parameters (data/efficiency/efficiency.csv, 'mfu calibrate --write') or "
                 "vector kernel parameters (vector_kernels.csv); repeatable")
      ->allow_extra_args(false);
  app.add_option("--gpus,-n", gpus, "GPUs in the job");
  app.add_option("--nodes", nodes, "Nodes of the cluster (GPUs = nodes x GPUs per node)");
  app.add_option("--seq-len,-s", r.seq_len, "Sequence length")->required();
  app.add_option("--convention,-c", r.convention, "FLOPs convention of MFU/TFLOP/s (see 'mfu flops --help')")
      ->capture_default_str();
  app.add_option("--precision,-p", r.precision, "bf16, fp16 or fp8: the linear layers' GEMMs and the MFU denominator")
      ->capture_default_str();
  app.add_option("--framework", r.framework,
                 "Framework profile (data/frameworks/frameworks.csv): what overlaps, attention kernel, FP8 recipe")
      ->capture_default_str();
  app.add_option("--framework-file", framework_files, "CSV adding or changing framework profiles; repeatable")
      ->allow_extra_args(false);
  app.add_option(
      "--attention", r.attention,
      "Attention kernel: flash (the framework's), best (cudnn/fa3/fa4), fa2, triton, unfused [default: framework]");
  app.add_option("--compile", r.compile,
                 "torch.compile on or off, for a framework whose elementwise ops run eager or compiled (torchtitan, "
                 "composer) [default: the framework's elementwise column]");
  app.add_option("--state", r.state,
                 "Another training framework whose stored dtypes to count (docs/memory.md) [default: --framework's]");
  app.add_option("--weight-precision", r.weight_dtype, "Stored weight precision [default: the framework's]");
  app.add_option("--grad-precision", r.grad_dtype, "Main gradient precision [default: the framework's]");
  app.add_option("--moe-imbalance", r.moe_imbalance,
                 "Tokens of the busiest expert rank / the mean (MoE) [default: 1, balanced routing]");
  app.add_option("--ep-dispatch", r.ep_dispatch,
                 "MoE expert dispatch: alltoall (a copy per routed expert) or deepep (DeepEP/HybridEP: a copy per "
                 "destination GPU, and per destination node across nodes) [default: the framework's]");
  app.add_option("--recompute-modules", r.recompute_modules,
                 "What --recompute selective recomputes, Megatron's --recompute-modules: core_attn, layernorm, "
                 "moe_act, mlp, moe, shared_experts, mla_up_proj, comma-separated [default: core_attn]");
  app.add_option("--dropout", r.dropout,
                 "Dropout probability of the run: above 0 stores dropout masks [default: the model config's]");
}

StatusOr<Catalog> SetupFlags::LoadCatalog() const {
  CatalogFiles files;
  if (!gpu.hardware_file.empty())
    files.hardware.push_back(gpu.hardware_file);
  if (!cluster_file.empty())
    files.clusters.push_back(cluster_file);
  files.efficiency = efficiency_files;
  files.frameworks = framework_files;
  return Catalog::Load(RealFileSystem(), files);
}

StatusOr<TrainingRequest> SetupFlags::ToRequest() const {
  TrainingRequest r = request;
  MFU_ASSIGN_OR_RETURN(r.model, model.Resolve());
  r.hardware.gpu = gpu.gpu;
  r.hardware.cluster = cluster;
  r.hardware.gpus = gpus;
  r.hardware.nodes = nodes;
  return r;
}

void ConfigFlags::Register(CLI::App& app) {
  TrainingConfigRequest& r = request;
  auto* g = app.add_option_group("Parallelism", "The configuration (missing dimensions are derived and stated)");
  g->add_option("--tp", r.tp, "Tensor parallel size")->capture_default_str();
  g->add_option("--pp", r.pp, "Pipeline parallel size")->capture_default_str();
  g->add_option("--dp", r.dp, "Data parallel size [default: gpus / (tp x pp x cp)]");
  g->add_option("--cp", r.cp, "Context parallel size")->capture_default_str();
  g->add_option("--ep", r.ep, "Expert parallel size (MoE)")->capture_default_str();
  g->add_option("--etp", r.etp, "Expert tensor parallel size (MoE)")->capture_default_str();
  g->add_option("--vpp", r.vpp, "Virtual pipeline stages per GPU (interleaved 1F1B)")->capture_default_str();
  g->add_option("--micro-batch", r.mbs, "Micro-batch size (sequences)")->capture_default_str();
  g->add_option("--global-batch", r.gbs, "Global batch (sequences per step) [default: dp x micro-batch]");
  g->add_option("--recompute", r.recompute, "none, selective, full")->capture_default_str();
  g->add_option("--zero", r.zero,
                "ZeRO stage: 0 (DDP), 1 (distributed optimizer), 2, 3 [default: the framework's zero_stage: 1 for "
                "megatron-core and nemo, 3 for torchtitan and composer; data/frameworks]");
  g->add_flag("--fsdp", r.fsdp, "PyTorch FSDP full sharding (ZeRO-3 per micro-batch)");
  g->add_flag("--no-sp", r.no_sp, "Tensor parallelism without sequence parallelism");
  g->add_flag("--tp-comm-overlap", r.tp_comm_overlap,
              "Overlap tensor-parallel communication with GEMMs [default: the framework's recipe]");
  g->add_flag("--no-tp-comm-overlap", r.no_tp_comm_overlap, "Tensor-parallel communication not overlapped");
  g->add_flag("--no-dp-overlap", r.no_dp_overlap, "Gradient reduction not overlapped with backward");
}

}  // namespace mfu::cli
