// AnalyzeTrainingLog: the inputs resolved (flag, else the log's header, else
// a stated default), FLOPs per token from the flops library under the
// source's convention and under megatron, then MFU/HFU per step against the
// device's dense peak. Findings and the steady state are log_findings.cc
// and steady_state.cc.

#include "mfu/log_analysis.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "log/log_analysis_internal.h"
#include "mfu/result.h"

namespace mfu {
namespace {

bool Finite(double x) {
  return std::isfinite(x);
}

void AddMissing(LogAnalysis& a, std::string message) {
  LogFinding f;
  f.kind = "missing_input";
  f.message = std::move(message);
  a.findings.push_back(std::move(f));
}

Status CheckRequest(const LogAnalysisRequest& r) {
  if (r.gpus < 0 || r.gpus > 10'000'000)
    return InvalidArgumentError("parameter 'gpus' must be between 1 and 10,000,000, got " + std::to_string(r.gpus));
  if (r.seq_len < 0 || r.seq_len > (int64_t{1} << 31))
    return InvalidArgumentError("parameter 'seq_len' must be a positive integer, got " + std::to_string(r.seq_len));
  if (r.global_batch < 0)
    return InvalidArgumentError("parameter 'global_batch' must be a positive integer, got " +
                                std::to_string(r.global_batch));
  if (!(r.tolerance > 0) || !(r.tolerance < 10))
    return InvalidArgumentError(fmt::format("parameter 'tolerance' must be in (0, 10), got {}", r.tolerance));
  if (!(r.steady_band > 0) || !(r.steady_band < 1))
    return InvalidArgumentError(fmt::format("parameter 'steady_band' must be in (0, 1), got {}", r.steady_band));
  return Status::Ok();
}

Status ResolveConvention(const LogAnalysisRequest& r, LogFormat format, LogAnalysis& a) {
  if (!r.convention.empty()) {
    StatusOr<Convention> c = ParseConvention(r.convention);
    if (!c.ok())
      return InvalidArgumentError("parameter 'convention': " + c.status().message());
    a.convention = *c;
    a.convention_source = "flag";
    return Status::Ok();
  }
  a.convention = SourceConvention(format);
  a.convention_source = std::string("the convention ") + LogFormatId(format) + " uses for its own figures";
  return Status::Ok();
}

Status ResolvePrecision(const LogAnalysisRequest& r, const LogHeader& h, LogAnalysis& a) {
  if (!r.precision.empty()) {
    StatusOr<DType> d = ParseDType(r.precision);
    if (!d.ok())
      return InvalidArgumentError("parameter 'precision': " + d.status().message());
    a.precision = *d;
    a.precision_source = "flag";
    return Status::Ok();
  }
  if (!h.precision.empty()) {
    if (StatusOr<DType> d = ParseDType(h.precision); d.ok()) {
      a.precision = *d;
      a.precision_source = "header";
      return Status::Ok();
    }
  }
  a.precision = DType::kBf16;
  a.precision_source = "default";
  a.notes.push_back({NoteKind::kAssumption, "default_precision",
                     "the log does not state the GEMM precision: MFU is against the dense BF16 peak "
                     "(pass parameter 'precision' to change it)"});
  return Status::Ok();
}

Status ResolveRecompute(const LogAnalysisRequest& r, const LogHeader& h, LogAnalysis& a) {
  if (!r.recompute.empty()) {
    StatusOr<Recompute> rc = ParseRecompute(r.recompute);
    if (!rc.ok())
      return InvalidArgumentError("parameter 'recompute': " + rc.status().message());
    a.recompute = *rc;
    a.recompute_source = "flag";
    return Status::Ok();
  }
  if (!h.recompute.empty()) {
    if (StatusOr<Recompute> rc = ParseRecompute(h.recompute); rc.ok()) {
      a.recompute = *rc;
      a.recompute_source = "header";
      return Status::Ok();
    }
  }
  a.recompute = Recompute::kNone;
  a.recompute_source = "default";
  return Status::Ok();
}

Status ResolveGpu(const LogAnalysisRequest& r, const LogHeader& h, const HardwareDb& db, LogAnalysis& a) {
  if (!r.gpu.empty()) {
    // An unknown name on the command line is a usage error (docs/cli.md).
    StatusOr<const Accelerator*> g = db.Find(r.gpu);
    if (!g.ok())
      return InvalidArgumentError("parameter 'gpu': " + g.status().message());
    a.gpu = *g;
    a.gpu_source = "flag";
    return Status::Ok();
  }
  StatusOr<const Accelerator*> g = h.device_name.empty() ? NotFoundError("") : db.Find(h.device_name);
  if (g.ok()) {
    a.gpu = *g;
    a.gpu_source = "header";
    return Status::Ok();
  }
  if (!r.fallback_gpu.empty()) {
    if (StatusOr<const Accelerator*> f = db.Find(r.fallback_gpu); f.ok()) {
      a.gpu = *f;
      a.gpu_source = r.fallback_source;
      return Status::Ok();
    }
  }
  if (h.device_name.empty()) {
    AddMissing(
        a, "the log does not name the accelerator: pass parameter 'gpu' (e.g. parameter 'gpu' h100) to recompute MFU");
    return Status::Ok();
  }
  AddMissing(a, "the log's device '" + h.device_name + "' is not one accelerator of the hardware database (" +
                    g.status().message() + "): pass parameter 'gpu'");
  return Status::Ok();
}

// The first positive value of `flag`, `header`, then `fallback`, with where
// it came from.
void Pick(int64_t flag, int64_t header, int64_t fallback, const char* fallback_source, int64_t& out,
          std::string& source) {
  if (flag > 0) {
    out = flag;
    source = "flag";
  } else if (header > 0) {
    out = header;
    source = "header";
  } else if (fallback > 0) {
    out = fallback;
    source = fallback_source;
  }
}

void ResolveSizes(const LogAnalysisRequest& r, const LogTimeline& t, LogAnalysis& a) {
  const LogHeader& h = t.header;
  int64_t line_batch = 0;
  for (const LogStep& s : t.steps) {
    if (s.global_batch > 0) {
      line_batch = s.global_batch;
      break;
    }
  }
  Pick(r.gpus, h.world_size, r.fallback_gpus, r.fallback_source.c_str(), a.gpus, a.gpus_source);
  Pick(r.global_batch, h.global_batch, line_batch, "step lines", a.global_batch, a.global_batch_source);
  int64_t derived_seq = 0;
  if (h.tokens_per_step > 0 && a.global_batch > 0 && h.tokens_per_step % a.global_batch == 0)
    derived_seq = h.tokens_per_step / a.global_batch;
  Pick(r.seq_len, h.seq_len, derived_seq, "header tokens per step / global batch", a.seq_len, a.seq_len_source);
  if (a.global_batch == 0 && h.tokens_per_step > 0 && a.seq_len > 0 && h.tokens_per_step % a.seq_len == 0) {
    a.global_batch = h.tokens_per_step / a.seq_len;
    a.global_batch_source = "header tokens per step / seq_len";
  }
}

// A generic ModelSpec from the architecture the header dumps (Megatron's
// arguments, nanoGPT's config), when it has every size a count needs.
void ResolveModel(const LogAnalysisRequest& r, const LogHeader& h, LogAnalysis& a, std::optional<ModelSpec>& model) {
  if (r.model) {
    model = r.model;
    a.model_name = r.model->name;
    a.model_source = "flag";
    return;
  }
  if (h.num_layers > 0 && h.hidden_size > 0 && h.num_attention_heads > 0 && h.vocab_size > 0) {
    GenericModelOptions o;
    o.name = h.model_name.empty() ? "generic (from the log's header)" : h.model_name;
    o.layers = h.num_layers;
    o.hidden = h.hidden_size;
    o.heads = h.num_attention_heads;
    o.kv_heads = h.num_query_groups;
    o.vocab = h.vocab_size;
    o.gated_mlp = h.swiglu;
    o.ffn = h.ffn_hidden_size > 0 ? h.ffn_hidden_size : (h.swiglu ? 0 : 4 * h.hidden_size);
    o.experts = h.num_experts;
    o.top_k = h.moe_router_topk;
    o.moe_ffn = h.moe_ffn_hidden_size;
    StatusOr<ModelSpec> built = BuildGenericModel(o);
    if (built.ok()) {
      model = std::move(*built);
      a.model_name = model->name;
      a.model_source = "header";
      return;
    }
    AddMissing(a, "the header's architecture does not make a model (" + built.status().message() +
                      "): pass parameter 'model'");
    return;
  }
  AddMissing(a,
             "the log does not give the model's architecture: pass parameter 'model' (a preset or config.json) to "
             "recompute FLOPs per token");
}

double AttentionCore(const TrainingFlops& f) {
  return 3 * (f.forward[FlopsComponent::kAttnScores] + f.forward[FlopsComponent::kAttnContext]);
}

void ComputeFlops(const std::optional<ModelSpec>& model, LogAnalysis& a, log_internal::FlopsAlternatives& alt) {
  if (!model)
    return;
  if (a.seq_len <= 0) {
    AddMissing(a, "the log does not give the sequence length: pass parameter 'seq_len' to recompute FLOPs per token");
    return;
  }
  StatusOr<TrainingFlops> source = ComputeTrainingFlops(*model, a.convention, a.seq_len, a.recompute);
  StatusOr<TrainingFlops> megatron = ComputeTrainingFlops(*model, Convention::kMegatron, a.seq_len, a.recompute);
  if (!source.ok() || !megatron.ok()) {
    AddMissing(a, "FLOPs per token could not be counted (" +
                      (source.ok() ? megatron.status() : source.status()).message() +
                      "): check parameter 'seq_len' and parameter 'model'");
    return;
  }
  a.model_flops_per_token = source->model_per_token;
  a.hardware_flops_per_token = source->hardware_per_token;
  a.megatron_flops_per_token = megatron->model_per_token;
  alt.attention_counted = AttentionCore(*source);
  alt.total_params = CountParams(*model).total;
  if (StatusOr<TrainingFlops> exact = ComputeTrainingFlops(*model, Convention::kExact, a.seq_len, Recompute::kNone);
      exact.ok())
    alt.attention_full = AttentionCore(*exact);
  if (StatusOr<TrainingFlops> hf = ComputeTrainingFlops(*model, Convention::kHf, a.seq_len, Recompute::kNone); hf.ok())
    alt.hf_six_n = hf->model_per_token;
}

// Tokens/s per GPU of one line, from the first figure it has; "" when none.
const char* FillTokenRate(LogStep& s, const LogAnalysis& a) {
  const auto gpus = static_cast<double>(a.gpus);
  const auto seq = static_cast<double>(a.seq_len);
  if (Finite(s.tokens_per_s_per_gpu) && s.tokens_per_s_per_gpu > 0)
    return "tokens_per_s_per_gpu";
  if (a.gpus <= 0)
    return "";
  if (Finite(s.tokens_per_s) && s.tokens_per_s > 0) {
    s.tokens_per_s_per_gpu = s.tokens_per_s / gpus;
    return "tokens_per_s / gpus";
  }
  if (a.seq_len <= 0)
    return "";
  if (Finite(s.samples_per_s) && s.samples_per_s > 0) {
    s.tokens_per_s_per_gpu = s.samples_per_s * seq / gpus;
    return "samples_per_s x seq_len / gpus";
  }
  const int64_t batch = s.global_batch > 0 ? s.global_batch : a.global_batch;
  if (Finite(s.step_time_s) && s.step_time_s > 0 && batch > 0) {
    s.tokens_per_s_per_gpu = static_cast<double>(batch) * seq / s.step_time_s / gpus;
    return "global_batch x seq_len / step_time_s / gpus";
  }
  return "";
}

void RecomputeSteps(LogAnalysis& a) {
  std::string source;
  bool lacking = false;
  for (LogStep& s : a.timeline.steps) {
    const char* used = FillTokenRate(s, a);
    if (*used == '\0') {
      lacking = lacking || !s.validation;
      continue;
    }
    if (source.empty())
      source = used;
    else if (source != used)
      source = "mixed";
    const double tps = s.tokens_per_s_per_gpu;
    if (a.model_flops_per_token > 0) {
      s.tflops_per_gpu = a.model_flops_per_token * tps / 1e12;
      if (a.peak_flops > 0) {
        s.mfu = a.model_flops_per_token * tps / a.peak_flops;
        s.hfu = a.hardware_flops_per_token * tps / a.peak_flops;
        s.mfu_megatron = a.megatron_flops_per_token * tps / a.peak_flops;
      }
    }
  }
  a.throughput_source = source.empty() ? "none" : source;
  if (!lacking)
    return;
  if (a.gpus <= 0) {
    AddMissing(
        a, "the log does not give the GPU count: pass parameter 'gpus' to turn its throughput into tokens/s per GPU");
  } else if (a.seq_len > 0 && a.global_batch <= 0 && source.empty()) {
    AddMissing(a,
               "the step lines give only a step time and the log does not give the global batch: pass "
               "parameter 'global_batch'");
  }
}

}  // namespace

Convention SourceConvention(LogFormat format) {
  switch (format) {
    case LogFormat::kTorchtitan:
    case LogFormat::kNanoGpt:
    case LogFormat::kPicotron:
      return Convention::kPalm;
    case LogFormat::kMaxText:
      return Convention::kMaxtext;
    case LogFormat::kHfTrainer:
    case LogFormat::kHfTrainerState:
      return Convention::kHf;
    case LogFormat::kComposer:
      return Convention::kLlmFoundry;
    default:
      return Convention::kMegatron;
  }
}

StatusOr<LogAnalysis> AnalyzeTrainingLog(LogTimeline timeline, const HardwareDb& hardware,
                                         const LogAnalysisRequest& request) {
  MFU_RETURN_IF_ERROR(CheckRequest(request));
  LogAnalysis a;
  MFU_RETURN_IF_ERROR(ResolveConvention(request, timeline.format, a));
  MFU_RETURN_IF_ERROR(ResolvePrecision(request, timeline.header, a));
  MFU_RETURN_IF_ERROR(ResolveRecompute(request, timeline.header, a));
  MFU_RETURN_IF_ERROR(ResolveGpu(request, timeline.header, hardware, a));
  if (a.gpu) {
    a.peak_flops = DensePeakFlops(*a.gpu, a.precision, PeakFallbacks::None());
    if (!(a.peak_flops > 0)) {
      return InvalidArgumentError(std::string("parameter 'precision': ") + a.gpu->id + " has no dense " +
                                  DTypeName(a.precision) + " peak in the hardware database");
    }
  }
  ResolveSizes(request, timeline, a);
  std::optional<ModelSpec> model;
  ResolveModel(request, timeline.header, a, model);
  log_internal::FlopsAlternatives alt;
  ComputeFlops(model, a, alt);
  a.model = std::move(model);
  a.timeline = std::move(timeline);
  RecomputeSteps(a);
  const log_internal::RateProfile profile = log_internal::ProfileRates(a.timeline.steps, request.steady_band);
  a.steady_state = log_internal::SummarizeSteadyState(a.timeline.steps, profile, request.steady_band);
  log_internal::AddFindings(request, profile, alt, a);
  return a;
}

}  // namespace mfu
