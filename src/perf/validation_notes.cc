// The "unvalidated_family" note (efficiency.h UnvalidatedFamilyNote): which
// efficiency families the shipped calibration data vouches for is read from
// the efficiency database (data/efficiency/validation.csv), never listed
// here, so a family that gains measured runs loses its note with the data.

#include <optional>
#include <string>
#include <string_view>

#include "mfu/efficiency.h"

namespace mfu {

std::string_view ValidatedTrainingError() {
  // docs/plan.md "Accuracy on 253 measured runs", the `overall` row
  // (perf_model_test.cc checks that the document still says so).
  return "7.0% MAPE over 253 measured runs";
}

std::string_view ValidatedInferenceError() {
  // docs/infer.md "Validation" (perf_model_test.cc checks it).
  return "5.2% MAPE on TensorRT-LLM's H100 throughput table";
}

std::optional<Note> UnvalidatedFamilyNote(const EfficiencyDb& db, const EfficiencyParams& family,
                                          std::string_view accelerator_id, bool training) {
  const std::string& status = training ? family.training_validation : family.inference_validation;
  if (status == "validated")
    return std::nullopt;
  std::string validated;
  for (const EfficiencyParams& p : db.all()) {
    if ((training ? p.training_validation : p.inference_validation) == "validated")
      validated += (validated.empty() ? "" : ", ") + p.family;
  }
  const char* what = training ? "training" : "inference";
  Note note;
  note.kind = NoteKind::kWarning;
  note.code = "unvalidated_family";
  note.message = std::string(what) + " predictions on " + std::string(accelerator_id) + " are unvalidated: family '" +
                 family.family + "' is " + (status == "kernels only" ? "checked against kernel figures only" : status) +
                 " for " + what + ", with no measured end-to-end run (data/efficiency/validation.csv)";
  if (!validated.empty()) {
    note.message += "; on the validated families (" + validated + ") the error is " +
                    std::string(training ? ValidatedTrainingError() : ValidatedInferenceError());
  }
  return note;
}

}  // namespace mfu
