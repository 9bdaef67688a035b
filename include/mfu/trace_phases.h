#pragma once

// Step-time decomposition as users think of it: data loading, forward,
// backward, optimizer, communication and other host work, over the CPU
// ProfilerStep#N range of the thread that ran the training loop. Buckets sum
// exactly to the step's CPU time (int64 ns).
//
// Sources, strongest first:
//  * record_function ranges (user_annotation): "enumerate(DataLoader)#...",
//    "## data_load ##"/"## load_batch ##"/"## wait_for_batch ##" (data);
//    "Optimizer.step#...", "Optimizer.zero_grad#...", "## optimizer ##"
//    (optimizer); ranges whose names contain "forward" / "backward" (a
//    cpu_op named *forward*, like aten::_flash_attention_forward, is not a
//    phase marker; one named *backward* is backward work);
//  * autograd work on any thread: "autograd::engine::evaluate_function: ..."
//    and "*Backward*" ops (backward runs on autograd's device threads while
//    the loop's thread waits in loss.backward(), so the backward phase is the
//    span from its first to its last such event);
//  * collectives on the loop's thread: record_param_comms, c10d::*,
//    _c10d_functional::*, nccl:* / gloo:* / hccl:* ranges;
//  * when no forward range is annotated: the span from the first top-level
//    op of the step (after data loading) to the start of backward (or of the
//    optimizer, or the last op); host-to-device copies (aten::to,
//    aten::_to_copy, aten::copy_, aten::pin_memory) at top level before
//    that are data loading.
// Where sources overlap, the earlier phase in this order wins: data loading,
// optimizer, communication, backward, forward; the rest is other host work.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "mfu/status.h"
#include "mfu/trace.h"
#include "mfu/trace_breakdown.h"

namespace mfu {

enum class StepPhase : uint8_t {
  kDataLoading = 0,
  kForward,
  kBackward,
  kOptimizer,
  kCommunication,
  kOtherHost,
};
inline constexpr size_t kNumStepPhases = 6;
// "data_loading", "forward", "backward", "optimizer", "communication", "other_host".
const char* StepPhaseName(StepPhase phase);

struct StepPhases {
  std::string label;  // "ProfilerStep#12"
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t track = kNoIndex;       // the loop's thread (the step annotation's track)
  bool forward_annotated = false;  // forward came from record_function ranges, not inferred
  std::array<int64_t, kNumStepPhases> phase_ns{};
  int64_t step_ns() const { return end_ns - start_ns; }
  int64_t operator[](StepPhase p) const { return phase_ns[static_cast<size_t>(p)]; }
};

// One decomposition per step of `steps` (FindProfilerSteps), in its order.
std::vector<StepPhases> ComputeStepPhases(const RankTrace& trace, std::span<const ProfilerStepInfo> steps);

// Every phase >= 0 and the phases sum exactly to the step time; kInternal
// naming the first violation.
Status CheckConsistency(const StepPhases& phases);

}  // namespace mfu
