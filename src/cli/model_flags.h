#pragma once

// Flags shared by the commands that need a model (--model or the generic
// --layers/--hidden/... set) and a GPU (--gpu, --hardware-file).

#include <string>

#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/status.h"

namespace CLI {
class App;
}

namespace mfu::cli {

struct ModelFlags {
  std::string model;
  GenericModelOptions generic;
  std::string mlp = "gated";
  std::string norm = "rmsnorm";

  void Register(CLI::App& app);
  // The model named by --model, or built from the generic flags. Giving both
  // is a usage error.
  StatusOr<ModelSpec> Resolve() const;
};

struct GpuFlags {
  std::string gpu;
  std::string hardware_file;

  void Register(CLI::App& app, bool required);
  StatusOr<HardwareDb> LoadDb() const;
};

}  // namespace mfu::cli
