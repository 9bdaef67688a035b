#pragma once

// `mfu plan`: every valid parallel configuration of a training setup,
// evaluated by the performance model and ranked by throughput (for a fixed
// GPU count, the same order as MFU and as cost per token).

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mfu/perf_model.h"
#include "mfu/status.h"

namespace mfu {

struct PlanOptions {
  int64_t global_batch = 0;  // sequences per step (required)
  std::vector<int64_t> micro_batches = {1, 2, 4, 8};
  std::vector<Recompute> recompute = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  // ZeRO stages to try (3 = FSDP-style full sharding); empty: every stage the
  // framework implements (FrameworkProfile::zero_stages). Under pipeline
  // parallelism only those of zero_stages_pp are tried.
  std::vector<int> zero_stages;
  int64_t max_vpp = 8;
  int64_t max_cp = 16;
  bool tp_within_node = true;  // tensor parallelism only inside a scale-up domain
  DType precision = DType::kBf16;
  bool tp_comm_overlap = false;  // also on where the framework's recipes turn it on
  double moe_imbalance = 1;      // TrainingConfig::moe_imbalance of every candidate
  TrainingStateDtypes state;     // TrainingConfig::state of every candidate
  size_t top_k = 10;
};

struct PlanResult {
  std::vector<Prediction> top;  // best first, fitting configurations only
  uint64_t evaluated = 0;
  uint64_t fitting = 0;
  std::array<uint64_t, 10> by_issue{};  // counts by ConfigIssue
  // The configuration that came closest to fitting when none fits (smallest
  // memory over capacity), for the "why nothing fits" report.
  Prediction closest;
  double closest_over_bytes = 0;
};

// Enumerates tp (dividing heads), pp, cp, ep (MoE), vpp, micro-batch,
// recompute and ZeRO stage; dp is derived. kInvalidArgument for a missing or
// impossible global batch, empty option lists or a ZeRO stage the framework
// does not implement.
StatusOr<PlanResult> PlanTraining(const PerfModel& model, const PlanOptions& options);

}  // namespace mfu
