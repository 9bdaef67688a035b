#pragma once

// Flags shared by `mfu predict` and `mfu plan`: the model, the accelerator
// or cluster, the GPU count, the sequence and the conventions, resolved into
// a PerfModel.

#include <memory>
#include <string>
#include <vector>

#include "cli/model_flags.h"
#include "mfu/cluster.h"
#include "mfu/framework.h"
#include "mfu/memory.h"
#include "mfu/perf_model.h"
#include "mfu/status.h"

namespace CLI {
class App;
}

namespace mfu::cli {

struct SetupFlags {
  ModelFlags model;
  GpuFlags gpu;
  std::string cluster;
  std::string cluster_file;
  std::vector<std::string> efficiency_files;  // applied in order
  int64_t gpus = 0;
  int64_t nodes = 0;
  int64_t seq_len = 0;
  std::string convention = "megatron";
  std::string precision = "bf16";
  std::string framework = "megatron-core";
  std::vector<std::string> framework_files;  // applied in order
  std::string attention;                     // "" = the framework's kernel
  double moe_imbalance = 1;
  std::string state = "megatron";  // memory.h kTrainingStatePresets

  void Register(CLI::App& app);
};

// Everything a PerfModel points to, kept alive together.
struct ResolvedSetup {
  ModelSpec model;
  HardwareDb hw;
  ClusterDb clusters;
  EfficiencyDb efficiency;
  FrameworkDb frameworks;
  const FrameworkProfile* framework = nullptr;  // as given; the setup holds a copy with --attention applied
  double moe_imbalance = 1;
  TrainingStateDtypes state;  // the stored dtypes per parameter (--state)
  const Accelerator* gpu = nullptr;
  const Cluster* cluster = nullptr;
  DType precision = DType::kBf16;
  std::vector<std::string> derived;  // what was filled in, stated in the output
  std::unique_ptr<PerfModel> perf;
};

// The parallel configuration flags of `mfu predict`.
struct ConfigFlags {
  int64_t tp = 1, pp = 1, dp = 0, cp = 1, ep = 1, etp = 1, vpp = 1;
  int64_t micro_batch = 1;
  int64_t global_batch = 0;
  std::string recompute = "none";
  int zero = 1;
  bool fsdp = false;
  bool no_sequence_parallel = false;
  bool tp_comm_overlap = false;
  bool no_tp_comm_overlap = false;
  bool no_dp_overlap = false;

  void Register(CLI::App& app);
  StatusOr<TrainingConfig> Resolve(const struct ResolvedSetup& setup) const;
};

// kInvalidArgument for contradictory or missing flags (no --gpus and no
// --nodes, --gpu disagreeing with the cluster's accelerator, ...).
StatusOr<std::unique_ptr<ResolvedSetup>> ResolveSetup(const SetupFlags& flags);

}  // namespace mfu::cli
