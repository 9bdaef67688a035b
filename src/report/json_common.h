#pragma once

// The JSON shapes every result shares (docs/cli.md "JSON layout"), so every
// command and every front end describes a model, an accelerator, a
// convention, a waterfall and a utilization the same way:
//
//   model        ModelJson: an object, never a bare name
//   gpu          {"id", "name"}
//   convention   {"name", "summary"}
//   precision    a dtype name ("bf16"); inference adds weight_/kv_precision
//   waterfall    {"step_ns", "buckets_ns": {name: int}, "compute_share",
//                 "matrix_share", "matrix_efficiency", "mfu_hw"}
//   utilization  {"convention", "precision", "model_flops_per_s",
//                 "hardware_flops_per_s", "peak_flops_per_s", "mfu", "hfu"}
// Units are suffixes (_ns, _s, _bytes, _flops, _per_s); counts and bytes are
// integers; fractions are 0..1; codes, not prose, are keys and enum values.
// nlohmann/json is private to libmfu: this header is not public.

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <vector>

#include "mfu/flops.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/result.h"
#include "mfu/text_options.h"

namespace mfu::report {

// {"schema_version": N, "mfu_version": "..."} to which a command adds its fields.
nlohmann::json JsonEnvelope();
void PrintJson(std::ostream& out, const nlohmann::json& value);

// Pretty-printed with two-space indent and a final newline: the bytes a
// front end writes.
std::string JsonText(const nlohmann::json& value);

nlohmann::json ModelJson(const ModelSpec& spec);
nlohmann::json GpuJson(const Accelerator& gpu);
nlohmann::json ConventionJson(Convention convention);
nlohmann::json WaterfallJson(const Waterfall& w);
nlohmann::json UtilizationJson(const Utilization& u);
// A byte or count as a JSON integer (rounded; doubles print as 1.0e10).
int64_t JsonInt(double value);
// `value`, or null when it is not finite (JSON has no NaN or infinity).
nlohmann::json JsonNumber(double value);
nlohmann::json ParamsJson(const ParamCounts& params);
// "notes": [{"kind": "assumption"|"warning", "code", "message"}] (always an
// array, empty when there are none).
nlohmann::json NotesJson(const std::vector<Note>& notes);
// One line per note: "assumed: <message>" or "warning: <message>", wrapped
// to `width` columns (0: no limit) with continuation lines indented.
void PrintNotes(std::ostream& out, const std::vector<Note>& notes, int width = 0);
// The same with each message in `text`'s spelling first (TextOptions::Spelled:
// "parameter 'interval'" as the front end shows it), so that lines wrap at
// the words shown.
void PrintNotes(std::ostream& out, const std::vector<Note>& notes, const TextOptions& text);

// "model       llama-3.1-8b-instruct (llama, 32 layers, ...)" and the
// parameter lines of the terminal report.
void PrintModelSummary(std::ostream& out, const ModelSpec& spec, const ParamCounts& params, int width = 0);

}  // namespace mfu::report
