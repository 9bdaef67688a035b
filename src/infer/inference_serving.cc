// The serving side of the inference model (inference.h; docs/infer.md,
// "Continuous batching and chunked prefill"): the steady state of a
// continuous-batching schedule and the throughput of a workload or a mix of
// them, speculative decoding, a measured throughput's MFU/MBU, the serving
// engines' defaults and where the model was validated. The step costs they
// combine are inference.cc's.

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/inference.h"

namespace mfu {

namespace {

// The prompt work of a round: `tokens` prompt tokens as whole prompts of
// `input` tokens (tokens / input of them) or, below one prompt, a chunk of
// one whose cached prefix is the mean over its chunks, (input - tokens) / 2.
struct PromptWork {
  double prompts = 0, tokens = 0, cached = 0;
};
PromptWork PromptsOf(double tokens, double input) {
  if (tokens >= input)
    return {tokens / input, input, 0};
  return {1, tokens, (input - tokens) / 2};
}

// The steady state of one micro-batch of `batch` requests of `input` +
// `output` tokens under `schedule` (docs/infer.md, "Continuous batching"):
// rounds of `decode` decode tokens at the mean context; to keep them
// decoding, decode x input / (output - 1) prompt tokens must enter per
// round, `per_round` prompt tokens at a time (what has arrived, at least
// one prompt or a chunk of one), so a share f of the rounds carries prompt
// work (mixed: in the same pass; else a pass of its own, f of them per
// decode pass).
struct Steady {
  double decode = 0, per_round = 0, share = 0;
  double round_s = 0, ttft_s = 0, output_per_round = 0, model_flops = 0, bytes = 0;
};

Steady SteadyState(const InferenceModel& model, const ServingSchedule& schedule, double batch, double input,
                   double output) {
  const double budget = schedule.token_budget;
  const double steps = output - 1;  // the prefill emits the first token
  const bool chunked = schedule.chunked_prefill, mixed = schedule.mixed;
  // Prompt tokens a pass can take beside `d` decode tokens.
  auto capacity = [&](double d) {
    const double left = mixed ? budget - d : budget;
    return chunked ? left : input * std::max(1.0, std::floor(left / input));
  };
  Steady st;
  if (steps <= 0) {
    // One output token: passes of prompts alone.
    st.per_round = chunked ? budget : input * std::max(1.0, std::floor(budget / input));
    const PromptWork w = PromptsOf(st.per_round, input);
    const StepCost pass = model.Mixed(0, 0, w.prompts, w.tokens, w.cached);
    st.share = 1;
    st.round_s = pass.time_s;
    st.ttft_s = std::ceil(input / st.per_round - 1e-9) * pass.time_s;
    st.output_per_round = st.per_round / input;
    st.model_flops = pass.model_flops;
    st.bytes = pass.total_bytes();
    return st;
  }
  st.decode = batch;
  if (mixed && batch * input / steps > capacity(batch)) {
    // The token budget binds: fewer requests decode, the rest wait, so that
    // each round's prompt tokens keep the decoding ones replaced.
    if (chunked) {
      st.decode = budget * steps / (input + steps);
    } else {
      // k whole prompts per round keep k x steps requests decoding, if the
      // k prompts and those decode tokens fit (one prompt always runs).
      double best = steps;
      const double k0 = std::max(1.0, std::floor(budget / (input + steps)));
      for (double k : {k0, k0 + 1})
        best = std::max(best, std::min(k * steps, budget - k * input));
      st.decode = std::min(batch, best);
    }
  }
  // Requests finish, and new prompts arrive, at decode / steps per round;
  // a round takes what has arrived (at least one prompt), up to what the
  // pass can take.
  const double arrivals = st.decode / steps;
  const double context = input + output / 2;
  st.per_round = std::min(capacity(st.decode), input * std::max(1.0, arrivals));
  st.share = arrivals * input / st.per_round;
  const PromptWork w = PromptsOf(st.per_round, input);
  const StepCost decode = model.Decode(st.decode, context);
  const double chunks = std::ceil(input / st.per_round - 1e-9);
  if (mixed) {
    const StepCost with = model.Mixed(st.decode, context, w.prompts, w.tokens, w.cached);
    st.round_s = st.share * with.time_s + (1 - st.share) * decode.time_s;
    st.ttft_s = chunks * with.time_s;
    st.model_flops = st.share * with.model_flops + (1 - st.share) * decode.model_flops;
    st.bytes = st.share * with.total_bytes() + (1 - st.share) * decode.total_bytes();
  } else {
    const StepCost pass = model.Mixed(0, 0, w.prompts, w.tokens, w.cached);
    st.round_s = decode.time_s + st.share * pass.time_s;
    st.ttft_s = chunks * pass.time_s;
    st.model_flops = decode.model_flops + st.share * pass.model_flops;
    st.bytes = decode.total_bytes() + st.share * pass.total_bytes();
  }
  st.output_per_round = st.decode * output / steps;
  return st;
}

}  // namespace

StatusOr<WorkloadResult> InferenceModel::Workload(double input_len, double output_len, double batch) const {
  if (!(input_len >= 1) || !(output_len >= 1))
    return InvalidArgumentError("inference: input and output lengths must be >= 1");
  if (!(setup_.schedule.token_budget >= 1) || setup_.schedule.token_budget > 1e7)
    return InvalidArgumentError("inference: the token budget must be in [1, 1e7]");
  MFU_RETURN_IF_ERROR(CheckContext(input_len + output_len));
  const InferenceMemory mem = Memory();
  WorkloadResult r;
  // TensorRT-LLM's default scheduler reserves input + output tokens of KV
  // cache per request (no eviction): the largest such batch, up to the cap.
  const double fits = std::floor(mem.kv_capacity_tokens / (input_len + output_len));
  if (batch > 0) {
    r.batch = batch;
    r.batch_reason = "given";
    if (batch > fits) {
      return NotFoundError("inference: a batch of " + std::to_string(static_cast<int64_t>(batch)) +
                           " needs more KV cache than fits (" + std::to_string(static_cast<int64_t>(fits)) +
                           " requests of " + std::to_string(static_cast<int64_t>(input_len + output_len)) + " tokens)");
    }
  } else {
    if (fits < 1) {
      return NotFoundError("inference: " + setup_.model->name + " leaves no room for one request's KV cache on " +
                           std::to_string(gpus()) + " x " + setup_.gpu->id);
    }
    // TensorRT-LLM and vLLM run a scheduler per attention-DP rank.
    const double cap = BatchCap();
    r.batch = std::min(fits, cap);
    r.batch_reason = fits < cap ? "KV capacity" : "engine cap";
  }
  // With pipeline parallelism the requests form pp micro-batches in flight,
  // each crossing every stage in turn.
  const double pp = static_cast<double>(setup_.pp);
  const double micro = std::max(1.0, r.batch / pp);
  // Each attention-DP rank fills its own token budget.
  ServingSchedule schedule = setup_.schedule;
  if (setup_.attention_dp)
    schedule.token_budget *= static_cast<double>(setup_.tp);
  const Steady st = SteadyState(*this, schedule, micro, input_len, output_len);
  r.output_tokens_per_s = pp * st.output_per_round / st.round_s;
  r.ttft_s = st.ttft_s;
  r.tpot_s = output_len > 1 ? st.round_s : 0;
  r.decode_batch = pp * st.decode;
  r.prefill_tokens = st.per_round;
  r.prefill_round_share = st.share;
  r.mfu = pp * st.model_flops / (st.round_s * peak_);  // model FLOPs per GPU
  r.mbu = pp * st.bytes / (st.round_s * setup_.gpu->memory_bw_tbps * 1e12);
  return r;
}

StatusOr<SpeculativeResult> InferenceModel::Speculative(double batch, double context, int64_t draft_tokens,
                                                        double acceptance, const InferenceModel* drafter) const {
  if (!(acceptance >= 0) || !(acceptance < 1))
    return InvalidArgumentError("inference: the acceptance rate must be in [0, 1)");
  if (draft_tokens < 1 || draft_tokens > 64)
    return InvalidArgumentError("inference: draft tokens must be in [1, 64]");
  MFU_RETURN_IF_ERROR(CheckContext(context + static_cast<double>(draft_tokens) + 1));
  const auto k = static_cast<double>(draft_tokens);
  SpeculativeResult r;
  r.tokens_per_step = (1 - std::pow(acceptance, k + 1)) / (1 - acceptance);
  const StepCost plain = Decode(batch, context);
  const StepCost verify = Decode(batch, context, k + 1);
  double draft_s = 0, draft_flops = 0;
  if (drafter != nullptr) {
    const StepCost d = drafter->Decode(batch, context);
    draft_s = k * d.time_s;
    draft_flops = k * d.flops * static_cast<double>(drafter->gpus()) / static_cast<double>(gpus());
  } else {
    // Self-drafting heads (Medusa/EAGLE-style): about one extra layer per
    // draft token.
    const double per_layer = 1.0 / static_cast<double>(setup_.model->num_layers);
    draft_s = k * plain.time_s * per_layer;
    draft_flops = k * plain.flops * per_layer;
  }
  r.step_s = draft_s + verify.time_s;
  r.tpot_s = r.step_s / r.tokens_per_step;
  r.speedup = plain.time_s / r.tpot_s;
  const double emitted = batch * r.tokens_per_step;
  r.mfu = plain.model_flops / batch * emitted / (r.step_s * peak_);
  r.hfu = (verify.flops + draft_flops) / (r.step_s * peak_);
  return r;
}

StatusOr<WorkloadMix> InferenceModel::Mix(const std::vector<WorkloadPair>& pairs, double batch) const {
  if (pairs.empty())
    return InvalidArgumentError("inference: the workload has no request shapes");
  WorkloadMix mix;
  double output_tokens = 0, flops_time = 0, bytes_time = 0;
  for (const WorkloadPair& pair : pairs) {
    if (!(pair.requests > 0) || !std::isfinite(pair.requests))
      return InvalidArgumentError("inference: a workload's request count must be positive");
    MFU_ASSIGN_OR_RETURN(WorkloadResult w, Workload(pair.input_len, pair.output_len, batch));
    const double seconds = pair.requests * pair.output_len / w.output_tokens_per_s;
    mix.seconds += seconds;
    output_tokens += pair.requests * pair.output_len;
    flops_time += w.mfu * seconds;
    bytes_time += w.mbu * seconds;
    mix.pairs.push_back(std::move(w));
  }
  mix.output_tokens_per_s = output_tokens / mix.seconds;
  mix.mfu = flops_time / mix.seconds;
  mix.mbu = bytes_time / mix.seconds;
  return mix;
}

StatusOr<MeasuredInference> InferenceModel::FromMeasurement(double input_len, double output_len,
                                                            double output_tokens_per_s, double batch) const {
  if (!(output_tokens_per_s > 0) || !std::isfinite(output_tokens_per_s))
    return InvalidArgumentError("inference: the measured output tokens/s must be positive");
  MFU_ASSIGN_OR_RETURN(WorkloadResult w, Workload(input_len, output_len, batch));
  MeasuredInference m;
  m.output_tokens_per_s = output_tokens_per_s;
  m.input_len = input_len;
  m.output_len = output_len;
  m.batch = w.batch;
  // The same work at the measured rate: utilizations scale with the ratio.
  const double ratio = output_tokens_per_s / w.output_tokens_per_s;
  m.mfu = w.mfu * ratio;
  m.mbu = w.mbu * ratio;
  return m;
}

StatusOr<StepUtilization> InferenceModel::Utilization(const StepCost& step, double seconds) const {
  if (!(seconds > 0) || !std::isfinite(seconds))
    return InvalidArgumentError("inference: a measured time must be positive");
  StepUtilization u;
  u.seconds = seconds;
  u.predicted_s = step.time_s;
  u.mfu = step.model_flops / (seconds * peak_);
  u.mbu = step.total_bytes() / (seconds * setup_.gpu->memory_bw_tbps * 1e12);
  return u;
}

StatusOr<ServingDefaults> ServingDefaultsFor(const FrameworkProfile& framework, const Accelerator& gpu) {
  if (framework.kind != "serving") {
    return InvalidArgumentError("framework " + framework.name + " is a " + framework.kind +
                                " framework; inference needs a serving one (tensorrt-llm, vllm, sglang)");
  }
  ServingDefaults d;
  if (framework.name == "vllm") {
    // vLLM V1 (vllm/v1/core/sched/scheduler.py) schedules the running
    // requests' decode tokens first and fills the rest of the budget with
    // prompt chunks: chunked prefill is always on. `vllm serve` defaults
    // (vllm/engine/arg_utils.py EngineArgs.get_batch_defaults,
    // OPENAI_API_SERVER): max_num_batched_tokens 8192 and max_num_seqs 1024
    // on GPUs of >= 70 GiB other than A100, else 2048 and 256.
    const bool large = gpu.memory_gb >= 70 && gpu.id.rfind("a100", 0) != 0;
    d.schedule = {large ? 8192.0 : 2048.0, true, true};
    d.max_batch = large ? 1024 : 256;
  } else if (framework.name == "sglang") {
    // SGLang (python/sglang/srt/server_args.py): chunked_prefill_size 2048
    // below 35 GB of GPU memory, 8192 below 160 GB, 16384 above;
    // enable_mixed_chunk off, so prefill batches run apart from decode
    // batches (managers/scheduler.py get_next_batch_to_run). Its
    // max_running_requests is derived from the KV pool and clamped to [2048,
    // 4096] (model_executor/model_runner.py): the lower bound here.
    const double chunk = gpu.memory_gb < 35 ? 2048 : gpu.memory_gb < 160 ? 8192 : 16384;
    d.schedule = {chunk, true, false};
    d.max_batch = 2048;
  } else {
    // TensorRT-LLM (tensorrt_llm/llmapi/llm_args.py BaseLlmArgs):
    // max_num_tokens 8192, enable_chunked_prefill False; in-flight batching
    // runs context requests, whole, in the same pass as generation requests
    // (docs features/paged-attention-ifb-scheduler.md); max_batch_size 2048
    // (BuildConfig).
    d.schedule = {8192, false, true};
    d.max_batch = 2048;
  }
  return d;
}

InferenceValidity InferenceValidation(std::string_view accelerator_id, std::string_view framework) {
  // The only measurements the inference model is checked against:
  // TensorRT-LLM's H100 SXM max-throughput table (inference_test.cc).
  constexpr std::string_view kValidatedGpu = "h100-sxm5-80gb";
  constexpr std::string_view kValidatedFramework = "tensorrt-llm";
  InferenceValidity v;
  if (accelerator_id != kValidatedGpu) {
    v.note =
        "unvalidated: inference is checked only against TensorRT-LLM's H100 SXM throughput table "
        "(docs/infer.md); " +
        std::string(accelerator_id) + " rests on its family's kernel figures";
  } else if (framework != kValidatedFramework) {
    v.note =
        "unvalidated: inference is checked only against TensorRT-LLM's H100 SXM throughput table "
        "(docs/infer.md), not " +
        std::string(framework) + "'s scheduling";
  } else {
    v.validated = true;
  }
  return v;
}

}  // namespace mfu
