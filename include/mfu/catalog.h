#pragma once

// The tables every job reads, loaded once: accelerators, clusters, the
// performance model's efficiency parameters, framework profiles and kernel
// classes, each the built-in table (data/, embedded at build time) plus the
// user's override files in order. A front end builds one Catalog and hands
// it to the job functions (ResolveTrainingSetup, ResolveInferenceSetup,
// AnalyzeTraceJob, ...).

#include <string>
#include <vector>

#include "mfu/cluster.h"
#include "mfu/file_system.h"
#include "mfu/framework.h"
#include "mfu/hwdb.h"
#include "mfu/perf_model.h"
#include "mfu/status.h"
#include "mfu/trace_classify.h"

namespace mfu {

// Which built-in efficiency table user files override: the shipped (fitted)
// one, or the kernel-grounded values (data/efficiency/kernel_grounded.csv:
// each family's parameters from kernel figures alone, what `mfu kernels`
// validates and `mfu calibrate` starts from and pulls towards).
enum class EfficiencyBase { kFitted, kKernelGrounded };

// User files merged over the built-in tables, each list in order (a later
// file overrides an earlier one). Formats: the data/<table>/README.md files.
struct CatalogFiles {
  std::vector<std::string> hardware;        // data/hardware/accelerators.csv columns
  std::vector<std::string> clusters;        // data/clusters/clusters.csv columns
  std::vector<std::string> efficiency;      // data/efficiency/efficiency.csv columns
  std::vector<std::string> frameworks;      // data/frameworks/frameworks.csv columns
  std::vector<std::string> kernel_classes;  // data/kernels/kernel_classes.csv columns
  // The table `efficiency` overrides.
  EfficiencyBase efficiency_base = EfficiencyBase::kFitted;
};

struct Catalog {
  HardwareDb hardware;
  ClusterDb clusters;
  EfficiencyDb efficiency;
  FrameworkDb frameworks;
  KernelClassifier kernel_classes;

  // The built-in tables. kInternal only when an embedded table is broken.
  static StatusOr<Catalog> LoadBuiltin();
  // The built-in tables and `files` read through `fs`: kNotFound naming a
  // file that cannot be read, kParse/kOutOfRange naming file, line and
  // column of a bad row (each table all or nothing).
  static StatusOr<Catalog> Load(const FileSystem& fs, const CatalogFiles& files);
  // The efficiency table alone: `base` with `files` (efficiency or vector
  // kernel CSVs) merged over it in order, read through `fs`; errors as Load.
  // For a second table beside a catalog's (calibrate's prior).
  static StatusOr<EfficiencyDb> LoadEfficiency(const FileSystem& fs, const std::vector<std::string>& files,
                                               EfficiencyBase base);
};

}  // namespace mfu
