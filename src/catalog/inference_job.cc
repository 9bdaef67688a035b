// The inference job (mfu/inference_job.h): a request resolved against the
// catalog, then the report's studies.

#include "mfu/inference_job.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "mfu/perf_model.h"
#include "mfu/result.h"
#include "mfu/setup.h"

namespace mfu {
namespace {

// "" (not given) is bf16, stated by DefaultPrecisionNote.
StatusOr<DType> ParsePrecision(const std::string& text, const char* param) {
  StatusOr<DType> d = ParseStorageDType(text.empty() ? "bf16" : text);
  if (!d.ok())
    return InvalidArgumentError(Param(param) + ": " + d.status().message());
  return d;
}

// The framework (a serving profile) and its scheduling defaults, with the
// request's chunked_prefill and max_batch applied.
Status ResolveFramework(const Catalog& catalog, const InferenceRequest& r, InferenceSetup& s) {
  StatusOr<const FrameworkProfile*> found = catalog.frameworks.Find(r.framework);
  if (!found.ok())
    return InvalidArgumentError(Param("framework") + ": " + found.status().message());
  s.framework = **found;
  StatusOr<ServingDefaults> d = ServingDefaultsFor(s.framework, *s.gpu);
  if (!d.ok())
    return InvalidArgumentError(Param("framework") + ": " + d.status().message());
  s.schedule = d->schedule;
  s.max_batch = d->max_batch;
  if (r.chunked_prefill) {
    const int64_t budget = *r.chunked_prefill;
    if (budget < 0 || budget > 10000000) {
      return InvalidArgumentError(Param("chunked_prefill") +
                                  " must be a token budget in [1, 1e7], or 0 for whole prompts");
    }
    s.schedule.chunked_prefill = budget > 0;
    if (budget > 0)
      s.schedule.token_budget = static_cast<double>(budget);
  }
  if (r.max_batch) {
    if (!(*r.max_batch >= 1) || *r.max_batch > 1e6)
      return InvalidArgumentError(Param("max_batch") + " must be in [1, 1e6]");
    s.max_batch = *r.max_batch;
  }
  return Status::Ok();
}

// ResolveInferenceSetup, keeping the hardware's notes for the job.
StatusOr<InferenceSetup> ResolveSetup(const Catalog& catalog, const InferenceRequest& r, std::vector<Note>* notes) {
  if (r.gpus < 0)
    return InvalidArgumentError(Param("gpus") + " must be >= 1 (or 0: tp x pp), got " + std::to_string(r.gpus));
  // Before the GPU count tp x pp is formed from them (a 0 would read as "no count").
  for (auto [name, value] : {std::pair{"tp", r.tp}, std::pair{"pp", r.pp}, std::pair{"ep", r.ep}}) {
    if (value < 1 || value > 1024)
      return InvalidArgumentError(Param(name) + " must be in [1, 1024], got " + std::to_string(value));
  }
  HardwareRequest hw;
  hw.gpu = r.gpu;
  hw.cluster = r.cluster;
  hw.gpus = r.tp * r.pp;                           // one replica; its layout is checked by InferenceModel::Create
  hw.max_gpus_without_cluster = int64_t{1} << 20;  // the scale-up link only: no node limit
  MFU_ASSIGN_OR_RETURN(ResolvedHardware resolved, ResolveHardware(catalog, hw));
  if (notes != nullptr)
    *notes = std::move(resolved.notes);
  if (r.gpus != 0 && r.gpus != r.tp * r.pp) {
    return InvalidArgumentError(Param("gpus") + " " + std::to_string(r.gpus) +
                                " but tp x pp = " + std::to_string(r.tp * r.pp) +
                                " (one replica; data-parallel replicas scale throughput linearly)");
  }
  InferenceSetup s;
  s.model = &r.model;
  s.gpu = resolved.gpu;
  s.cluster = resolved.cluster;
  s.tp = r.tp;
  s.pp = r.pp;
  s.ep = r.ep;
  s.attention_dp = r.attention_dp;
  MFU_ASSIGN_OR_RETURN(s.weight_dtype, ParsePrecision(r.weight_precision, "weight_precision"));
  MFU_ASSIGN_OR_RETURN(s.kv_dtype, ParsePrecision(r.kv_precision, "kv_precision"));
  if (r.mla != "absorbed" && r.mla != "naive")
    return InvalidArgumentError(Param("mla") + " must be absorbed or naive");
  s.mla = r.mla == "absorbed" ? MlaMode::kAbsorbed : MlaMode::kNonAbsorbed;
  MFU_ASSIGN_OR_RETURN(s.convention, ParseConvention(r.convention));
  s.efficiency = catalog.efficiency.For(s.gpu->id);
  MFU_RETURN_IF_ERROR(ResolveFramework(catalog, r, s));
  return s;
}

}  // namespace

StatusOr<InferenceSetup> ResolveInferenceSetup(const Catalog& catalog, const InferenceRequest& r) {
  return ResolveSetup(catalog, r, nullptr);
}

namespace {

// "16.43 GiB", as the reports print sizes (report::Bytes).
std::string SizeText(double bytes) {
  const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t u = 0;
  for (; bytes >= 1024 && u + 1 < std::size(units); ++u)
    bytes /= 1024;
  char text[64];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
  return text;
}

bool Given(double value) {
  return value > 0 || value < 0;
}

// What the request's fields allow together; whether it names one shape.
StatusOr<bool> CheckShape(const InferenceRequest& r, bool has_mix) {
  const bool single = r.input_len != 0 || r.output_len != 0 || !has_mix;
  if (single && (r.input_len < 1 || r.output_len < 1)) {
    return InvalidArgumentError(!has_mix ? "give " + Param("input_len") + " and " + Param("output_len") +
                                               " (each >= 1), or " + Param("workload")
                                         : Param("input_len") + " and " + Param("output_len") + " must be >= 1");
  }
  if (!single &&
      (r.draft_tokens != 0 || Given(r.measured_tokens_per_s) || Given(r.measured_ttft_s) || Given(r.measured_tpot_s))) {
    return InvalidArgumentError(Param("draft_tokens") + " and parameter 'measured_*' need one request shape: give " +
                                Param("input_len") + " and " + Param("output_len"));
  }
  if (r.batch < 0)
    return InvalidArgumentError(Param("batch") + " must be >= 1 (or 0: the largest that fits), got " +
                                std::to_string(r.batch));
  if (r.input_len < 0 || r.output_len < 0)
    return InvalidArgumentError(Param(r.input_len < 0 ? "input_len" : "output_len") + " must be >= 1");
  if (r.draft_tokens < 0 || r.draft_tokens > 64) {
    return InvalidArgumentError(Param("draft_tokens") + " must be in [1, 64] (or 0: no speculative decoding), got " +
                                std::to_string(r.draft_tokens));
  }
  if (!(r.acceptance >= 0 && r.acceptance < 1))
    return InvalidArgumentError(Param("acceptance") + " (the acceptance rate) must be in [0, 1), got " +
                                base::FormatNumber(r.acceptance));
  for (auto [param, value] :
       {std::pair{"measured_tokens_per_sec", r.measured_tokens_per_s}, std::pair{"measured_ttft", r.measured_ttft_s},
        std::pair{"measured_tpot", r.measured_tpot_s}}) {
    if ((Given(value) || std::isnan(value)) && !(std::isfinite(value) && value > 0)) {
      return InvalidArgumentError(Param(param) + " must be a positive finite number (0: not measured), got " +
                                  base::FormatNumber(value));
    }
  }
  return single;
}

// A measured figure implying more than the dense peak or the HBM bandwidth
// is a data error (kOutOfRange, exit 1), as in `mfu calc`: the rule of
// CheckUtilizationPlausible / CheckBandwidthPlausible.
Status CheckMeasured(const InferenceModel& m, const char* param, double mfu, double mbu) {
  const double peak = m.peak_flops();
  const Utilization u = MakeUtilization(m.setup().convention, m.compute_dtype(), mfu * peak, mfu * peak, peak);
  std::optional<Note> above = CheckUtilizationPlausible(u, kMeasuredAbovePeakCauses);
  if (!above)
    above = CheckBandwidthPlausible(mbu, "MBU", kMeasuredAbovePeakCauses);
  if (!above)
    return Status::Ok();
  return OutOfRangeError(Param(param) + " implies " + above->message);
}

// A predicted figure above the peak: the model's error, said as a warning.
void CheckPredicted(const char* what, double mfu, double mbu, const InferenceModel& m, std::vector<Note>& notes) {
  const double peak = m.peak_flops();
  const Utilization u = MakeUtilization(m.setup().convention, m.compute_dtype(), mfu * peak, mfu * peak, peak);
  const std::string causes = std::string("an error of the inference model for ") + what + " (please report it)";
  std::optional<Note> above = CheckUtilizationPlausible(u, causes);
  if (!above)
    above = CheckBandwidthPlausible(mbu, std::string(what) + "'s MBU", causes);
  if (above)
    notes.push_back(std::move(*above));
}

// The defaults of `r` that change the answer, and the predicted figures
// that cannot be right.
void AddJobNotes(const InferenceRequest& r, const InferenceModel& m, InferenceResult& out) {
  if (r.weight_precision.empty() || r.kv_precision.empty()) {
    const bool both = r.weight_precision.empty() && r.kv_precision.empty();
    const std::string which = both ? "weights and KV cache" : r.weight_precision.empty() ? "weights" : "KV cache";
    const std::string give = both                         ? Param("weight_precision") + " and " + Param("kv_precision")
                             : r.weight_precision.empty() ? Param("weight_precision")
                                                          : Param("kv_precision");
    out.notes.push_back(
        {NoteKind::kAssumption, "default_precision",
         "precision not given: " + which + " in bf16; give " + give + " (fp8 halves the bytes a decode step reads)"});
  }
  if (!out.single_shape) {
    if (out.mix)
      CheckPredicted("the request mix", out.mix->mfu, out.mix->mbu, m, out.notes);
    return;
  }
  if (r.batch == 0) {
    out.notes.push_back({NoteKind::kAssumption, "default_batch",
                         "batch not given: " + std::to_string(static_cast<int64_t>(out.workload.batch)) +
                             " concurrent requests, the largest that fits (" + out.workload.batch_reason + "); give " +
                             Param("batch") + " for the engine's actual concurrency"});
  }
  if (out.speculative && !Given(r.acceptance)) {
    out.notes.push_back({NoteKind::kAssumption, "default_acceptance",
                         "acceptance rate not given: 0 (no draft token accepted, so speculation only adds the "
                         "drafter's cost); give " +
                             Param("acceptance") + " (the drafter's measured per-token rate)"});
  }
  CheckPredicted("the workload", out.workload.mfu, out.workload.mbu, m, out.notes);
  if (out.speculative)
    CheckPredicted("speculative decoding", std::max(out.speculative->result.mfu, out.speculative->result.hfu), 0, m,
                   out.notes);
}

// The studies of one request shape: the workload at its batch, the sweeps,
// speculative decoding and what the measurements imply.
Status RunSingleShape(const FileSystem& fs, const InferenceModel& m, const InferenceRequest& r, InferenceResult& out) {
  const auto in = static_cast<double>(r.input_len), n_out = static_cast<double>(r.output_len);
  const auto batch = static_cast<double>(r.batch);
  out.input_len = r.input_len;
  out.output_len = r.output_len;
  MFU_ASSIGN_OR_RETURN(out.workload, m.Workload(in, n_out, batch));
  const WorkloadResult& w = out.workload;
  out.mean_context = in + n_out / 2;
  out.decode_sweep = DecodeSweep(m, w.batch, out.mean_context);
  out.prefill_sweep = PrefillSweep(m, in);
  if (r.draft_tokens > 0) {
    MFU_ASSIGN_OR_RETURN(out.speculative, SpeculativeDecoding(fs, m, w.batch, out.mean_context, r.draft_tokens,
                                                              r.acceptance, r.drafter));
  } else if (Given(r.acceptance) || !r.drafter.empty()) {
    return InvalidArgumentError(Param("acceptance") + " and " + Param("drafter") + " go with " + Param("draft_tokens"));
  }
  if (Given(r.measured_tokens_per_s)) {
    MFU_ASSIGN_OR_RETURN(out.measured, m.FromMeasurement(in, n_out, r.measured_tokens_per_s, batch));
    MFU_RETURN_IF_ERROR(CheckMeasured(m, "measured_tokens_per_sec", out.measured->mfu, out.measured->mbu));
  }
  if (Given(r.measured_ttft_s)) {
    MFU_ASSIGN_OR_RETURN(out.measured_ttft, m.Utilization(m.Prefill(1, in), r.measured_ttft_s));
    MFU_RETURN_IF_ERROR(CheckMeasured(m, "measured_ttft", out.measured_ttft->mfu, out.measured_ttft->mbu));
  }
  if (Given(r.measured_tpot_s)) {
    const StepCost step = m.Decode(w.batch / static_cast<double>(m.setup().pp), out.mean_context);
    MFU_ASSIGN_OR_RETURN(out.measured_tpot, m.Utilization(step, r.measured_tpot_s));
    MFU_RETURN_IF_ERROR(CheckMeasured(m, "measured_tpot", out.measured_tpot->mfu, out.measured_tpot->mbu));
  }
  out.compute_bound_batch = m.ComputeBoundBatch(out.mean_context);
  return Status::Ok();
}

}  // namespace

StatusOr<InferenceResult> RunInferenceJob(const Catalog& catalog, const FileSystem& fs, const InferenceRequest& r) {
  InferenceResult out;
  auto model = std::make_shared<ModelSpec>(r.model);
  out.model = model;
  MFU_ASSIGN_OR_RETURN(out.setup, ResolveSetup(catalog, r, &out.notes));
  out.setup.model = model.get();  // the result's copy, not the caller's request
  MFU_ASSIGN_OR_RETURN(const bool single, CheckShape(r, !r.workload.empty()));
  if (!r.workload.empty()) {
    MFU_ASSIGN_OR_RETURN(out.pairs, ParseWorkload(fs, r.workload));
  }
  MFU_ASSIGN_OR_RETURN(InferenceModel m, InferenceModel::Create(out.setup));
  out.validity = InferenceValidation(out.setup.gpu->id, out.setup.framework.name);
  if (std::optional<Note> n =
          UnvalidatedFamilyNote(catalog.efficiency, out.setup.efficiency, out.setup.gpu->id, /*training=*/false))
    out.notes.push_back(std::move(*n));
  // The serving validation table is dense (Llama); MoE serving rests on the
  // kernel figures and on the engines' documented designs.
  if (r.model.is_moe()) {
    out.notes.push_back({NoteKind::kWarning, "moe_unvalidated",
                         r.attention_dp
                             ? "MoE serving is checked against no measurement; attention data parallelism is modelled "
                               "from TensorRT-LLM's design (replicated attention weights, each rank's own KV cache, "
                               "MoE tokens gathered and reduce-scattered, the busiest rank setting the pace) and "
                               "predicted 1.5x (H200) to 1.9x (B200) TensorRT-LLM's published Qwen3-235B "
                               "throughput (medians), whose batch settings are not published (docs/infer.md)"
                             : "MoE serving is checked against no measurement: the inference model's validation table "
                               "is dense (docs/infer.md)"});
  }
  out.gpus = m.gpus();
  out.peak_flops = m.peak_flops();
  out.compute_dtype = m.compute_dtype();
  out.memory = m.Memory();
  if (!out.memory.fits()) {
    return NotFoundError(model->name + " does not fit: " + SizeText(out.memory.weights_bytes) +
                         " of weights per GPU on " + std::to_string(m.gpus()) + " x " + out.setup.gpu->id + " (" +
                         SizeText(out.memory.capacity_bytes) + " of HBM); use more " + Param("tp") + "/" + Param("pp") +
                         " or lower " + Param("weight_precision"));
  }
  if (!out.pairs.empty()) {
    MFU_ASSIGN_OR_RETURN(out.mix, m.Mix(out.pairs, static_cast<double>(r.batch)));
  }
  out.single_shape = single;
  if (single)
    MFU_RETURN_IF_ERROR(RunSingleShape(fs, m, r, out));
  AddJobNotes(r, m, out);
  return out;
}

}  // namespace mfu
