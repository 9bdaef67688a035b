#pragma once

// Pieces of output shared by several commands: the JSON envelope and the
// model/parameter blocks, so every command describes a model the same way.

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "mfu/model.h"

namespace mfu::cli {

// {"schema_version": N, "mfu_version": "..."} to which a command adds its fields.
nlohmann::json JsonEnvelope();
void PrintJson(std::ostream& out, const nlohmann::json& value);

nlohmann::json ModelJson(const ModelSpec& spec);
nlohmann::json ParamsJson(const ParamCounts& params);

// "model       llama-3.1-8b-instruct (llama, 32 layers, ...)" and the
// parameter lines of the terminal report.
void PrintModelSummary(std::ostream& out, const ModelSpec& spec, const ParamCounts& params);

}  // namespace mfu::cli
