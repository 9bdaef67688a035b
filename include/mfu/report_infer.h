#pragma once

// The `mfu infer` report of an InferenceResult (mfu/inference_job.h) as a
// terminal text and as JSON (docs/infer.md, docs/cli.md "JSON layout"):
// exactly the bytes a front end writes.

#include <string>

#include "mfu/inference_job.h"
#include "mfu/text_options.h"

namespace mfu {

std::string RenderInferenceText(const InferenceResult& result, const TextOptions& options = {});
std::string RenderInferenceJson(const InferenceResult& result);

}  // namespace mfu
