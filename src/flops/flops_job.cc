// The flops job (mfu/flops.h CountFlops): training counts under one or
// every convention, or one inference step.

#include <algorithm>
#include <string>
#include <utility>

#include "base/param.h"
#include "base/strings.h"
#include "flops/job_common.h"
#include "mfu/flops.h"

namespace mfu {
namespace {

using base::Param;
using flops_internal::kDefaultSeqLen;

StatusOr<int64_t> ResolveSeqLen(const FlopsRequest& r) {
  const ModelSpec& spec = r.model;
  if (r.frames || r.height || r.width) {
    if (r.seq_len)
      return InvalidArgumentError(Param("seq_len") + " and " + Param("frames") + "/" + Param("height") + "/" +
                                  Param("width") + " are alternatives");
    return DitTokens(spec, r.frames, r.height, r.width);
  }
  if (r.seq_len)
    return *r.seq_len;
  if (spec.arch == ArchKind::kDiT)
    return DefaultDitTokens(spec);
  return spec.max_position_embeddings > 0 ? std::min(kDefaultSeqLen, spec.max_position_embeddings) : kDefaultSeqLen;
}

Status CheckModes(const FlopsRequest& r) {
  if (r.batch < 1)
    return InvalidArgumentError(Param("batch") + " must be positive, got " + std::to_string(r.batch));
  // 0 is "not given" for these; a negative value is never read as that.
  for (auto [name, value] :
       {std::pair{"context", r.context}, std::pair{"cached", r.cached}, std::pair{"frames", r.frames},
        std::pair{"height", r.height}, std::pair{"width", r.width}}) {
    if (value < 0)
      return InvalidArgumentError(Param(name) + " must be >= 1, got " + std::to_string(value));
  }
  if (!r.inference.empty() && r.recompute != "none")
    return InvalidArgumentError(Param("recompute") + " applies to training, not " + Param("inference"));
  if (r.inference != "decode" && r.context > 0)
    return InvalidArgumentError(Param("context") + " needs " + Param("inference") + " decode");
  if (r.inference != "prefill" && r.cached > 0)
    return InvalidArgumentError(Param("cached") + " needs " + Param("inference") + " prefill");
  return Status::Ok();
}

std::vector<ConventionCount> CountAllConventions(const ModelSpec& spec, int64_t seq_len, Recompute recompute) {
  std::vector<ConventionCount> rows;
  for (const ConventionInfo& info : AllConventions()) {
    ConventionCount row;
    row.info = &info;
    StatusOr<TrainingFlops> t = ComputeTrainingFlops(spec, info.convention, seq_len, recompute);
    if (t.ok()) {
      row.flops = *t;
    } else {
      row.error = t.status().message();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Status CountInference(const FlopsRequest& r, FlopsReport& out) {
  const MlaMode mla = r.mla == "absorbed" ? MlaMode::kAbsorbed : MlaMode::kNonAbsorbed;
  if (r.inference == "prefill") {
    MFU_ASSIGN_OR_RETURN(out.inference_flops,
                         ComputePrefillFlops(r.model, out.convention, r.batch, out.seq_len, r.cached, mla));
    return Status::Ok();
  }
  if (r.context < 1)
    return InvalidArgumentError(Param("inference") + " decode needs " + Param("context") + " (keys per new token)");
  MFU_ASSIGN_OR_RETURN(out.inference_flops, ComputeDecodeFlops(r.model, out.convention, r.batch, r.context, mla));
  return Status::Ok();
}

// The sequence length when the request gives none (a decode step counts
// keys by its context instead).
void AddSeqLenNote(const FlopsRequest& r, FlopsReport& out) {
  if (r.seq_len || r.frames || r.height || r.width)
    return;
  const std::string given = r.model.arch == ArchKind::kDiT
                                ? Param("frames") + "/" + Param("height") + "/" + Param("width")
                                : Param("seq_len");
  out.notes.push_back(
      {NoteKind::kAssumption, "default_seq_len",
       "sequence length not given: " + std::to_string(out.seq_len) +
           (r.model.arch == ArchKind::kDiT  ? " tokens (81 frames at 720p)"
            : out.seq_len == kDefaultSeqLen ? " tokens"
                                            : " tokens (the default 4096 capped at the model's maximum)") +
           "; give " + given + " for the job's"});
}

}  // namespace

StatusOr<FlopsReport> CountFlops(const FlopsRequest& r) {
  FlopsReport out;
  out.model = r.model;
  MFU_ASSIGN_OR_RETURN(out.seq_len, ResolveSeqLen(r));
  const bool all = base::ToLower(r.convention) == "all";
  MFU_RETURN_IF_ERROR(CheckModes(r));
  MFU_ASSIGN_OR_RETURN(out.recompute, ParseRecompute(r.recompute));
  if (all && !r.inference.empty()) {
    return InvalidArgumentError(Param("convention") + " all compares training counts; give one convention with " +
                                Param("inference"));
  }
  if (!all) {
    MFU_ASSIGN_OR_RETURN(out.convention, ParseConvention(r.convention));
  }
  out.params = CountParams(r.model);
  out.batch = r.batch;
  out.inference = r.inference;
  out.mla = r.mla;
  out.context = r.context;
  out.cached = r.cached;
  if (!r.inference.empty()) {
    if (r.inference == "prefill")
      AddSeqLenNote(r, out);
    MFU_RETURN_IF_ERROR(CountInference(r, out));
    return out;
  }
  AddSeqLenNote(r, out);
  MFU_ASSIGN_OR_RETURN(out.training, ComputeTrainingFlops(r.model, out.convention, out.seq_len, out.recompute));
  if (all)
    out.conventions = CountAllConventions(r.model, out.seq_len, out.recompute);
  return out;
}

StatusOr<std::vector<PresetCount>> CountPresetParams() {
  std::vector<PresetCount> out;
  for (PresetInfo& preset : ListModelPresets()) {
    MFU_ASSIGN_OR_RETURN(ModelSpec spec, LoadModel(InMemoryFileSystem(), preset.name));
    out.push_back({std::move(preset), CountParams(spec)});
  }
  return out;
}

}  // namespace mfu
