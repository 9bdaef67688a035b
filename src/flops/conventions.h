#pragma once

// The switches that define each named convention (docs/conventions.md).

#include "mfu/flops.h"

namespace mfu::flops {

enum class Basis { kGemm, kParams };  // count GEMMs, or 2 x parameters
enum class AttentionMode { kNone, kCausalHalf, kFull, kCausalWindow };
enum class MtpMode { kNone, kLayer, kLayerAndLogits };

struct Rules {
  Basis basis = Basis::kGemm;
  AttentionMode attention = AttentionMode::kCausalHalf;
  bool router = false;       // count the router GEMM (2*h*E)
  bool all_experts = false;  // every routed expert, not top-k (HF)
  MtpMode mtp = MtpMode::kNone;
  bool pad_vocab = false;  // LM head with vocab padded to a multiple of 128
};

Rules RulesFor(Convention convention);

}  // namespace mfu::flops
