#pragma once

// Resolution of a training job (predict, plan): the model, the hardware (the
// accelerator, cluster and GPU count, mfu/setup.h), the precision, the FLOPs
// convention, the framework profile with an attention override, the MoE
// imbalance and the stored training state, into a PerfModel; and the
// parallel configuration of one run into a TrainingConfig. Errors name the
// request's fields as Param("name") (mfu/setup.h).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mfu/catalog.h"
#include "mfu/cluster.h"
#include "mfu/framework.h"
#include "mfu/goodput.h"
#include "mfu/memory.h"
#include "mfu/model.h"
#include "mfu/perf_model.h"
#include "mfu/plan_studies.h"
#include "mfu/planner.h"
#include "mfu/result.h"
#include "mfu/setup.h"
#include "mfu/status.h"

namespace mfu {

struct TrainingRequest {
  ModelSpec model;  // resolved by the caller (preset, config.json, generic)
  HardwareRequest hardware;
  int64_t seq_len = 0;
  std::string convention = "megatron";
  std::string precision = "bf16";  // bf16, fp16 or fp8
  std::string framework = "megatron-core";
  std::string attention;  // "" = the framework's kernel; "flash", "best", "fa2", "triton", "unfused"
  // "" = the framework's `elementwise` default; "on" / "off": torch.compile
  // on or off, for a framework whose elementwise work is eager or compiled
  // (kInvalidArgument for one with its own fused kernels).
  std::string compile;
  // "" = the framework's `ep_dispatch`; "alltoall" or "deepep" (alias
  // "hybridep", "flex"): how the expert dispatch moves tokens.
  std::string ep_dispatch;
  // "" = core_attn; else Megatron's --recompute-modules list (core_attn,
  // layernorm, moe_act, mlp, moe, shared_experts): what `selective`
  // recomputes, for a framework whose selective_ac is `attention`.
  std::string recompute_modules;
  double moe_imbalance = 1;  // busiest expert rank / mean, in [1, 64]
  // Unset: the model's (ModelSpec::dropout); else the run's dropout
  // probability in [0, 1), which decides whether dropout masks are stored.
  std::optional<double> dropout;
  // "" = the framework's stored dtypes (frameworks.csv); otherwise the
  // training framework whose state to count instead (FrameworkDb::FindTraining).
  std::string state;
  // "" = the state's; otherwise the stored weight / main-gradient dtype
  // (OverrideStateDTypes), e.g. grad_dtype "bf16" for Megatron without fp32 grads.
  std::string weight_dtype;
  std::string grad_dtype;
};

// Everything a PerfModel points to, kept alive together (the accelerator,
// cluster and framework point into the catalog, which must outlive it).
struct ResolvedTraining {
  ModelSpec model;
  const Accelerator* gpu = nullptr;
  const Cluster* cluster = nullptr;
  const FrameworkProfile* framework = nullptr;  // as in the catalog; the PerfModel holds it with the attention override
  DType precision = DType::kBf16;
  double moe_imbalance = 1;
  TrainingStateDtypes state;
  std::vector<std::string> derived;  // what was filled in ("gpus = nodes x 8 = 64")
  // What the setup assumed or cannot vouch for: the hardware's notes
  // (ResolvedHardware), an efficiency family without measured training
  // runs ("unvalidated_family", from data/efficiency/validation.csv). Every
  // predict and plan result starts with them.
  std::vector<Note> notes;
  std::unique_ptr<PerfModel> perf;
};

// kInvalidArgument for contradictory or missing fields (see ResolveHardware),
// a precision training is not modelled in or the accelerator lacks, an
// unknown convention, framework (or an inference one), attention kernel or
// state framework, an imbalance outside [1, 64].
StatusOr<std::unique_ptr<ResolvedTraining>> ResolveTrainingSetup(const Catalog& catalog,
                                                                 const TrainingRequest& request);

// `mfu memory` over the catalog: `request.framework` (and `request.state`,
// when given, for the state alone) resolved through
// FrameworkDb::FindTraining into `framework_state`, then EstimateMemory.
// kInvalidArgument naming Param("framework") or Param("state") for an
// unknown or serving framework; EstimateMemory's errors.
StatusOr<MemoryReport> EstimateMemory(const Catalog& catalog, MemoryRequest request);

// One parallel configuration as a user states it (field names as the CLI's
// flags): missing dimensions are derived by the model.
struct TrainingConfigRequest {
  int64_t tp = 1, pp = 1, dp = 0, cp = 1, ep = 1, etp = 1, vpp = 1;
  int64_t mbs = 1;
  int64_t gbs = 0;  // 0: dp x mbs
  std::string recompute = "none";
  std::optional<int> zero;  // unset: the framework's zero_stage (3 with fsdp)
  bool fsdp = false;
  bool no_sp = false;
  bool tp_comm_overlap = false;     // asked for
  bool no_tp_comm_overlap = false;  // refused (default: the framework's recipe)
  bool no_dp_overlap = false;
};

// The configuration with the setup's precision, state, imbalance and the
// framework's defaults, checked by PerfModel::Validate. kInvalidArgument
// naming the field.
StatusOr<TrainingConfig> ResolveTrainingConfig(const ResolvedTraining& setup, const TrainingConfigRequest& request);

// What the model derived for a configuration as given (dp, the global
// batch), stated after `setup.derived`.
std::vector<std::string> DerivedConfigNotes(const TrainingConfig& given, const Prediction& p);

// ------------------------------------------------------------------ jobs

// `mfu predict`: one configuration.
struct PredictResult {
  Prediction prediction;
  std::vector<std::string> derived;  // the setup's, then the configuration's (DerivedConfigNotes)
  // The setup's notes, then the configuration's: a global batch taken as
  // dp x mbs ("default_global_batch", with the bubble it implies), a
  // predicted MFU/HFU above the dense peak ("mfu_above_peak": a model
  // error, never expected).
  std::vector<Note> notes;
};
// kInvalidArgument when the configuration is not valid (anything but kOk or
// kOutOfMemory), naming the issue, the configuration and the GPU count.
StatusOr<PredictResult> PredictTraining(const ResolvedTraining& setup, const TrainingConfig& config);

// `mfu plan`: the search and its studies.
struct PlanRequest {
  PlanOptions options;  // precision, imbalance and state are taken from the setup
  std::vector<std::string> recompute = {"none", "selective", "full"};
  bool tp_across_nodes = false;
  std::string tokens;              // token budget ("15T"); "" none
  double price_per_gpu_hour = -1;  // USD; -1: the cluster's, if known (other negatives, NaN, inf: rejected)
  std::vector<int64_t> scaling;    // GPU counts of the scaling table
  // Failures folded into the time to train: the job's MTBF (a node's MTBF
  // / nodes), the blocking checkpoint time and the restart time as
  // durations ("24h", "60s", "10m"); "" not given (checkpoint 60 s and
  // restart 10 min are assumed, and said, when only the MTBF is).
  std::string mtbf, checkpoint_time, restart_time;
};
struct PlanStudy {
  PlanResult plan;
  double search_seconds = 0;  // wall time of the main search
  TrainingBudget budget;
  std::vector<TrainingTime> time_to_train;  // per plan.top entry, with a budget
  // With PlanRequest::mtbf: the intervals and expected goodput (Daly's
  // interval's, which budget.goodput takes).
  std::optional<GoodputWhatIf> goodput;
  bool has_runner_up = false;
  ConfigDifference difference;  // best vs runner-up
  std::vector<ScalePoint> scaling;
  int64_t fits_at_gpus = 0;  // nothing fits: FindSmallestFittingGpus (clusters only)
  // The setup's notes, then the search's: the best configuration at a
  // default search bound ("search_bound": a wider bound may find a faster
  // one), the cluster's price taken ("default_price").
  std::vector<Note> notes;
};
// kInvalidArgument naming the field for out-of-range options.
StatusOr<PlanStudy> RunPlanStudy(const ResolvedTraining& setup, const PlanRequest& request);

}  // namespace mfu
