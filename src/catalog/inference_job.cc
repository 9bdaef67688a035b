// The inference job (mfu/inference_job.h): a request resolved against the
// catalog, then the report's studies.

#include "mfu/inference_job.h"

#include <cmath>
#include <cstdio>
#include <iterator>
#include <memory>
#include <string>
#include <utility>

#include "base/strings.h"
#include "mfu/setup.h"

namespace mfu {
namespace {

StatusOr<DType> ParsePrecision(const std::string& text, const char* param) {
  const std::string t = base::ToLower(text);
  if (t == "int4" || t == "fp4" || t == "nvfp4" || t == "mxfp4")
    return DType::kFp4;  // 4-bit weights: half a byte
  StatusOr<DType> d = ParseDType(t);
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

}  // namespace

StatusOr<InferenceSetup> ResolveInferenceSetup(const Catalog& catalog, const InferenceRequest& r) {
  HardwareRequest hw;
  hw.gpu = r.gpu;
  hw.cluster = r.cluster;
  hw.gpus = r.tp * r.pp;                           // one replica; its layout is checked by InferenceModel::Create
  hw.max_gpus_without_cluster = int64_t{1} << 20;  // the scale-up link only: no node limit
  MFU_ASSIGN_OR_RETURN(ResolvedHardware resolved, ResolveHardware(catalog, hw));
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
    return InvalidArgumentError(Param("batch") + " must be positive");
  return single;
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
  }
  if (Given(r.measured_ttft_s)) {
    MFU_ASSIGN_OR_RETURN(out.measured_ttft, m.Utilization(m.Prefill(1, in), r.measured_ttft_s));
  }
  if (Given(r.measured_tpot_s)) {
    const StepCost step = m.Decode(w.batch / static_cast<double>(m.setup().pp), out.mean_context);
    MFU_ASSIGN_OR_RETURN(out.measured_tpot, m.Utilization(step, r.measured_tpot_s));
  }
  out.compute_bound_batch = m.ComputeBoundBatch(out.mean_context);
  return Status::Ok();
}

}  // namespace

StatusOr<InferenceResult> RunInferenceJob(const Catalog& catalog, const FileSystem& fs, const InferenceRequest& r) {
  InferenceResult out;
  auto model = std::make_shared<ModelSpec>(r.model);
  out.model = model;
  MFU_ASSIGN_OR_RETURN(out.setup, ResolveInferenceSetup(catalog, r));
  out.setup.model = model.get();  // the result's copy, not the caller's request
  MFU_ASSIGN_OR_RETURN(const bool single, CheckShape(r, !r.workload.empty()));
  if (!r.workload.empty()) {
    MFU_ASSIGN_OR_RETURN(out.pairs, ParseWorkload(fs, r.workload));
  }
  MFU_ASSIGN_OR_RETURN(InferenceModel m, InferenceModel::Create(out.setup));
  out.validity = InferenceValidation(out.setup.gpu->id, out.setup.framework.name);
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
  return out;
}

}  // namespace mfu
