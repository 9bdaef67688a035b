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
#include "mfu/hwdb.h"
#include "mfu/perf_model.h"
#include "mfu/status.h"

namespace mfu {

// One timed kernel. GEMMs: m x n x k. Vector operators: `bytes` of HBM
// traffic (16-bit reads and writes).
struct OperatorSample {
  std::string accelerator;  // hardware database id
  std::string op;           // "mlp_up_proj", "input_layernorm", ...
  bool gemm = true;
  double m = 0, n = 0, k = 0;
  double bytes = 0;
  double tokens = 0;
  double seconds = 0;
};

struct CollectiveSample {
  std::string cluster;  // cluster id
  Collective kind = Collective::kAllReduce;
  double ranks = 0;
  double bytes = 0;
  double seconds = 0;
};

struct OperatorProfiles {
  std::vector<OperatorSample> operators;
  std::vector<CollectiveSample> collectives;
};

// Reads `dir`/compute.csv and `dir`/collectives.csv (either may be absent,
// not both). kParse names the file, line and column.
StatusOr<OperatorProfiles> ReadOperatorProfiles(const std::string& dir);
StatusOr<OperatorProfiles> ParseOperatorProfiles(std::string_view compute_csv, std::string_view collectives_csv,
                                                 std::string_view origin);

// The model's time for a sample (GemmSeconds, the vector bandwidth, or
// CollectiveSeconds on the cluster's scale-up link). 0 when the accelerator
// or cluster is unknown.
double PredictSample(const OperatorSample& s, const HardwareDb& hw, const EfficiencyParams& e);
double PredictSample(const CollectiveSample& s, const ClusterDb& clusters, const EfficiencyParams& e);

struct OperatorFamilyFit {
  std::string family;
  size_t gemms = 0, vectors = 0, collectives = 0;
  double gemm_mape_before = 0, gemm_mape_after = 0;
  double vector_mape_before = 0, vector_mape_after = 0;
  double collective_mape_before = 0, collective_mape_after = 0;
  std::vector<std::string> fitted;  // the parameter names the profiles fixed
};

// Fits, per accelerator family with samples, matmul_peak_fraction,
// matmul_half_dim and vector_bw_fraction (GEMMs and vector operators) and
// scaleup_bw_fraction (collectives of >= 4 MiB within one scale-up domain),
// minimising the mean |log(predicted / measured)|. Updates `efficiency`.
StatusOr<std::vector<OperatorFamilyFit>> FitOperatorProfiles(const OperatorProfiles& profiles, const HardwareDb& hw,
                                                             const ClusterDb& clusters, EfficiencyDb& efficiency);

}  // namespace mfu
