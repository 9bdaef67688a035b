#pragma once

// The inference job behind `mfu infer`, as a library call: a request of
// plain values (model, accelerator or cluster, layout, precisions, serving
// framework, request shapes, speculative decoding, measurements) resolved
// against a Catalog into an InferenceSetup, then the studies a report shows
// (the workload at its largest batch, a decode sweep over batch sizes, a
// prefill sweep over prompt lengths, speculative decoding, a request mix,
// what measured times imply), each step with its Waterfall and Utilization.
// Errors name the request's fields as `parameter 'name'` (mfu/setup.h).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/catalog.h"
#include "mfu/file_system.h"
#include "mfu/inference.h"
#include "mfu/model.h"
#include "mfu/result.h"
#include "mfu/status.h"

namespace mfu {

struct InferenceRequest {
  ModelSpec model;
  std::string gpu;      // accelerator name; "" when `cluster` names it
  std::string cluster;  // cluster preset for the NVLink figures; "" for the accelerator's own
  int64_t gpus = 0;     // GPUs of one replica; 0: tp x pp (else must equal it)
  int64_t tp = 1, pp = 1, ep = 1;
  bool attention_dp = false;  // attention data parallel over tp (MoE): InferenceSetup::attention_dp
  // bf16, fp16, fp8, int8, int4/fp4/nvfp4/mxfp4; "" (not given): bf16, stated
  // as the note "default_precision".
  std::string weight_precision;
  std::string kv_precision;      // bf16, fp16, fp8; "": bf16 (noted)
  std::string mla = "absorbed";  // or "naive"
  std::string convention = "megatron";
  std::string framework = "tensorrt-llm";  // a serving profile of catalog.frameworks
  std::optional<int64_t> chunked_prefill;  // token budget; 0: whole prompts; unset: the framework's
  std::optional<double> max_batch;         // the engine's batch cap; unset: the framework's
  int64_t input_len = 0, output_len = 0;   // one request shape (0 and 0 with a workload: mix only)
  // Request shapes: "I:O[:N],..." or the path of a CSV (ParseWorkload).
  std::string workload;
  int64_t batch = 0;         // concurrent requests; 0: the largest that fits (noted)
  int64_t draft_tokens = 0;  // [1, 64]; 0: no speculative decoding
  double acceptance = 0;     // [0, 1); 0 with draft tokens is noted as not given
  std::string drafter;       // preset or config.json; "" with draft_tokens: self-drafting heads
  // 0: none; otherwise positive and finite, implying at most 100% of the
  // dense peak and of the HBM bandwidth (else kOutOfRange).
  double measured_tokens_per_s = 0, measured_ttft_s = 0, measured_tpot_s = 0;
};

// The setup of `request` on `catalog`: accelerator and cluster through
// ResolveHardware (same messages as training for the same mistakes), the
// efficiency parameters of the accelerator, the framework's serving defaults
// with chunked_prefill and max_batch applied. The setup points into
// `catalog` and at `request.model`: both must outlive it. kInvalidArgument
// naming the parameter for gpus != tp x pp, an unknown precision, mla,
// convention or framework, or out-of-range chunked_prefill / max_batch;
// kNotFound for unknown accelerators and clusters.
StatusOr<InferenceSetup> ResolveInferenceSetup(const Catalog& catalog, const InferenceRequest& request);

// One point of a decode sweep: one step at `batch` concurrent requests
// (per pipeline micro-batch), its time split into a Waterfall.
struct DecodePoint {
  int64_t batch = 0;
  StepCost step;
  double output_tokens_per_s = 0;  // pp x batch / step time (the replica)
  double mfu = 0;                  // model FLOPs / (step time x peak)
  double mbu = 0;                  // bytes / (step time x HBM bandwidth)
};
// Decode at `context` cached tokens for batch 1, 2, 4, ... up to
// `max_batch`, which ends the sweep (also when not a power of two).
std::vector<DecodePoint> DecodeSweep(const InferenceModel& model, double max_batch, double context);

// One prefill of a single request of `prompt_len` tokens.
struct PrefillPoint {
  int64_t prompt_len = 0;
  StepCost step;
  double mfu = 0;
};
// Prefill of one request for prompts of 128, 512, 2048, ... tokens below
// `input_len`, then `input_len` itself.
std::vector<PrefillPoint> PrefillSweep(const InferenceModel& model, double input_len);

struct SpeculativeReport {
  int64_t draft_tokens = 0;
  double acceptance = 0;
  std::string drafter;  // "" : self-drafting heads (Medusa/EAGLE-style)
  SpeculativeResult result;
};
// Speculative decoding at `batch` requests and `context` cached tokens:
// the drafter (`drafter`, a preset or config.json; "" for self-drafting
// heads; a config file is read through `fs`) on one GPU with `model`'s
// precisions and framework.
// kInvalidArgument for acceptance outside [0, 1) or draft tokens outside
// [1, 64]; a drafter that does not load or fit.
StatusOr<SpeculativeReport> SpeculativeDecoding(const FileSystem& fs, const InferenceModel& model, double batch,
                                                double context, int64_t draft_tokens, double acceptance,
                                                const std::string& drafter);

// Request shapes from CSV `text` with columns input_len, output_len and an
// optional requests (whole numbers in [1, 1e9]). kParse naming
// `origin`:line and the column of a bad value, a missing column, or no rows.
StatusOr<std::vector<WorkloadPair>> ParseWorkloadCsv(std::string_view text, std::string_view origin);
// "I:O[:N],..." (kInvalidArgument naming parameter 'workload' and the item),
// or, when `spec` holds no ':', the path of a CSV read through `fs`
// (ParseWorkloadCsv; kNotFound when it cannot be read).
StatusOr<std::vector<WorkloadPair>> ParseWorkload(const FileSystem& fs, std::string_view spec);

// Everything `mfu infer` reports. `model` is shared so that copies of the
// result keep `setup.model` valid; `setup.gpu` and `setup.cluster` point into
// the catalog the job ran on.
struct InferenceResult {
  std::shared_ptr<const ModelSpec> model;
  InferenceSetup setup;
  InferenceValidity validity;
  int64_t gpus = 0;
  double peak_flops = 0;  // dense FLOP/s of the compute dtype (the MFU denominator)
  DType compute_dtype = DType::kBf16;
  InferenceMemory memory;
  std::vector<WorkloadPair> pairs;  // the request mix, if given
  std::optional<WorkloadMix> mix;
  // One request shape (single_shape false: a mix only, nothing below is set).
  bool single_shape = false;
  int64_t input_len = 0, output_len = 0;
  WorkloadResult workload;
  double mean_context = 0;         // input + output / 2: where the decode sweep runs
  double compute_bound_batch = 0;  // 0: memory-bound up to the batch cap
  std::vector<DecodePoint> decode_sweep;
  std::vector<PrefillPoint> prefill_sweep;
  std::optional<SpeculativeReport> speculative;
  std::optional<MeasuredInference> measured;
  std::optional<StepUtilization> measured_ttft, measured_tpot;
  // What the job assumed and what a reader should doubt (docs/infer.md
  // "Notes"): the hardware's notes; "unvalidated_family" off the validated
  // families (data/efficiency/validation.csv); "default_batch" (the largest
  // batch that fits), "default_precision" (bf16 weights and KV cache),
  // "default_acceptance" (speculative decoding at acceptance 0). A measured
  // figure implying more than 100% of the dense peak or of the HBM
  // bandwidth is an error, not a note.
  std::vector<Note> notes;
};

// The whole job; the workload file, if any, is read through `fs`.
// kInvalidArgument for missing or contradicting request fields (naming the
// parameter); kNotFound when the weights do not fit (or what
// ResolveInferenceSetup and the model return); kOutOfRange for a context
// beyond the model's maximum or a measurement implying more than 100% of the
// dense peak or of the HBM bandwidth (the message names the parameter and
// the likely cause).
StatusOr<InferenceResult> RunInferenceJob(const Catalog& catalog, const FileSystem& fs,
                                          const InferenceRequest& request);

}  // namespace mfu
