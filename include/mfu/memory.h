#pragma once

// Memory of training and inference: weights, gradients, optimizer states,
// activations (Korthikanti et al. 2022) and the KV cache.

#include <cstdint>

#include "mfu/flops.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/status.h"

namespace mfu {

enum class Optimizer {
  kAdamMixed,    // fp32 master weights + two fp32 moments: 12 bytes/param
  kAdamFp32,     // weights already fp32: two fp32 moments, 8 bytes/param
  kSgdMomentum,  // one fp32 momentum (+ fp32 master if weights are 16-bit)
};

struct TrainingMemoryOptions {
  DType weight_dtype = DType::kBf16;
  DType grad_dtype = DType::kBf16;
  Optimizer optimizer = Optimizer::kAdamMixed;
  int64_t seq_len = 0;
  int64_t micro_batch = 1;
  Recompute recompute = Recompute::kNone;
  bool flash_attention = true;
  int64_t tensor_parallel = 1;
  bool sequence_parallel = false;
  double activation_bytes = 2;  // bytes per stored activation element (16-bit)
};

// Whole-model bytes (no sharding: divide by the data-parallel group for ZeRO).
struct TrainingMemory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;  // includes fp32 master weights
  // Activations stored for backward, per layer and over all layers, for one
  // micro-batch, per tensor-parallel rank.
  double activations_per_layer_bytes = 0;
  double activations_bytes = 0;
  double output_layer_activations_bytes = 0;  // final norm, LM head input, fp32 logits
  double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + output_layer_activations_bytes;
  }
};

// Korthikanti et al. 2022 (arXiv:2205.05198) section 4, generalised to GQA, gated
// MLPs and MoE (docs/memory.md): per layer s*b*h*34 + 5*a*s^2*b bytes for a
// GPT layer; the a*s^2 term vanishes with flash attention or selective
// recompute; full recompute keeps only the layer input (2*s*b*h).
StatusOr<TrainingMemory> EstimateTrainingMemory(const ModelSpec& spec, const TrainingMemoryOptions& options);

// Korthikanti's closed form for one GPT layer, for tests and documentation:
// s*b*h*(34 + 5*a*s/h) with no parallelism.
double KorthikantiActivationBytesPerLayer(double s, double b, double h, double a);

struct KvCacheSize {
  double bytes_per_token = 0;                  // all layers, ignoring window caps
  double bytes_per_sequence = 0;               // at `context_len`, with sliding-window caps
  double kv_elements_per_token_per_layer = 0;  // K+V (or MLA latent) elements
};

// KV cache for one sequence of `context_len` tokens in `dtype`: MHA/GQA keep
// K and V (g*(d_qk + d_v) elements per layer per token), MLA keeps the latent
// plus the rope key (kv_lora_rank + qk_rope_head_dim), sliding-window layers
// keep at most `window` tokens.
StatusOr<KvCacheSize> ComputeKvCache(const ModelSpec& spec, DType dtype, int64_t context_len);

}  // namespace mfu
