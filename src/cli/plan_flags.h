#pragma once

// Flags shared by `mfu predict` and `mfu plan`: the model, the accelerator
// or cluster, the GPU count, the sequence and the conventions, mapped to a
// TrainingRequest (mfu/training_setup.h) and the user's table files.

#include <string>
#include <vector>

#include "cli/model_flags.h"
#include "mfu/catalog.h"
#include "mfu/status.h"
#include "mfu/training_setup.h"

namespace CLI {
class App;
}

namespace mfu::cli {

struct SetupFlags {
  ModelFlags model;
  GpuFlags gpu;
  std::string cluster;
  std::string cluster_file;
  std::vector<std::string> efficiency_files;  // applied in order
  int64_t gpus = 0;
  int64_t nodes = 0;
  TrainingRequest request;                   // the remaining fields, set by their flags
  std::vector<std::string> framework_files;  // applied in order

  void Register(CLI::App& app);
  // The built-in tables with --hardware-file, --cluster-file,
  // --efficiency-file and --framework-file.
  StatusOr<Catalog> LoadCatalog() const;
  // The request with the model resolved (--model or the generic flags).
  StatusOr<TrainingRequest> ToRequest() const;
};

// The parallel configuration flags of `mfu predict`.
struct ConfigFlags {
  TrainingConfigRequest request;
  void Register(CLI::App& app);
};

}  // namespace mfu::cli
