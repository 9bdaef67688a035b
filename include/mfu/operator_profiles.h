#pragma once

// Measured operator times that shape the performance model's efficiency
// curves independently of end-to-end runs: GEMMs and memory-bound vector
// operators per token count and tensor-parallel degree, and collectives per
// message size (tests/data/vidur/, extracted from Vidur's profiles by
// tools/extract_vidur.py; the format is documented in docs/plan.md).

#include <string>
#include <string_view>
#include <vector>

#include "mfu/cluster.h"
#include "mfu/file_system.h"
#include "mfu/hwdb.h"
#include "mfu/roofline.h"
#include "mfu/status.h"
#include "mfu/vector_kernels.h"

namespace mfu {

// One timed kernel. GEMMs: m x n x k. Vector operators: `tokens` rows of
// `row_bytes` of HBM traffic each (16-bit reads and writes), `bytes` in all.
struct OperatorSample {
  std::string accelerator;  // hardware database id
  std::string op;           // "mlp_up_proj", "input_layernorm", ...
  bool gemm = true;
  double m = 0, n = 0, k = 0;
  double bytes = 0;
  double tokens = 0;
  double seconds = 0;
  VectorKernel kernel = VectorKernel::kNorm;  // vector operators: the kind that times it
  double row_bytes = 0;
};

struct CollectiveSample {
  std::string cluster;  // cluster id
  CollectiveKind kind = CollectiveKind::kAllReduce;
  double ranks = 0;
  double bytes = 0;
  double seconds = 0;
};

struct OperatorProfiles {
  std::vector<OperatorSample> operators;
  std::vector<CollectiveSample> collectives;
  std::string origin;  // the directory they were read from
};

// Reads `dir`/compute.csv and `dir`/collectives.csv (either may be absent,
// not both). kParse names the file, line and column.
StatusOr<OperatorProfiles> ReadOperatorProfiles(const FileSystem& fs, const std::string& dir);
StatusOr<OperatorProfiles> ParseOperatorProfiles(std::string_view compute_csv, std::string_view collectives_csv,
                                                 std::string_view origin);

// The model's time for a sample (GemmSeconds, VectorKernelSeconds of its
// kind, or CollectiveSeconds on the cluster's scale-up link). 0 when the
// accelerator or cluster is unknown.
double PredictSample(const OperatorSample& s, const HardwareDb& hw, const EfficiencyParams& e);
double PredictSample(const CollectiveSample& s, const ClusterDb& clusters, const EfficiencyParams& e);

// One vector kernel kind's fit: its samples' median absolute error before
// and after, and the fitted parameters.
struct VectorKernelFit {
  VectorKernel kernel = VectorKernel::kNorm;
  size_t samples = 0;
  double median_before = 0, median_after = 0;
  VectorKernelParams params;
};

struct OperatorFamilyFit {
  std::string family;
  size_t gemms = 0, vectors = 0, collectives = 0;
  double gemm_mape_before = 0, gemm_mape_after = 0;
  double vector_mape_before = 0, vector_mape_after = 0;
  double collective_mape_before = 0, collective_mape_after = 0;
  std::vector<std::string> fitted;  // the efficiency parameter names the profiles fixed
  std::vector<VectorKernelFit> kernels;
};

// Fits, per accelerator family with samples, matmul_peak_fraction,
// matmul_half_dim and vector_bw_fraction (GEMMs: compute-bound shapes and
// weights streaming at a few tokens), scaleup_bw_fraction (collectives of
// >= 4 MiB within one scale-up domain) and each vector kernel kind's
// min_us, row_ns_per_kib and bw_fraction (its operators at every token
// count), minimising the mean |log(predicted / measured)|. Updates
// `efficiency`; a fitted kernel's source names the profiles' origin.
StatusOr<std::vector<OperatorFamilyFit>> FitOperatorProfiles(const OperatorProfiles& profiles, const HardwareDb& hw,
                                                             const ClusterDb& clusters, EfficiencyDb& efficiency);

}  // namespace mfu
