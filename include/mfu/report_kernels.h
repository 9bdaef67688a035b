#pragma once

// Renderers of `mfu kernels` (mfu/kernel_figures.h): the kernel-level
// predictions against published figures, as terminal text and as JSON (the
// exact bytes a front end writes).

#include <string>
#include <vector>

#include "mfu/kernel_figures.h"
#include "mfu/text_options.h"

namespace mfu {

// `figures_path` is stated; with `summary_only`, only the per-family table.
std::string RenderKernelValidationText(const std::vector<KernelFigure>& figures, const KernelValidation& validation,
                                       const std::string& figures_path, bool summary_only,
                                       const TextOptions& options = {});
std::string RenderKernelValidationJson(const KernelValidation& validation, const std::string& figures_path);

}  // namespace mfu
