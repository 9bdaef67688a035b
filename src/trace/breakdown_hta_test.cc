// Breakdowns: parity with Holistic Trace Analysis on the two trace sets of
// shared/reference/hta-reference-outputs.md (copied to tests/data/traces/:
// dlrm_kineto = section 3, hta_sampled = section 5.1). The hand-built cases
// are in breakdown_test.cc.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "mfu/trace_breakdown.h"
#include "mfu/trace_classify.h"
#include "testing/trace_builder.h"

namespace mfu {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------
// Parity with HTA (v0.6.1, f4d0062c). Expected values copied from
// shared/reference/hta-reference-outputs.md: section 3 (8-rank DLRM,
// tests/data/traces/dlrm_kineto) and section 5.1 (2-rank sampled,
// tests/data/traces/hta_sampled). Times are us.

struct HtaTemporal {
  int64_t rank;
  int64_t idle_us, compute_us, non_compute_us, kernel_us;
  double idle_pct, compute_pct, non_compute_pct;
};
struct HtaOverlap {
  int64_t rank;
  double pct;
};
struct HtaIdle {
  int64_t rank;
  int64_t stream;
  IdleCategory category;
  int64_t idle_us;
  uint64_t count;
  double mean, std, min, p25, p50, p75, max;
};
struct HtaKernelTypeSum {
  const char* type;
  int64_t sum_us;
  double pct;
};
struct HtaLaunch {
  int64_t rank;
  uint64_t launches;
  double median_us, p95_us;
  uint64_t short_kernels;
};

// Section 3 (DLRM): get_temporal_breakdown, get_comm_comp_overlap,
// get_idle_time_breakdown (+ interval stats), get_gpu_kernel_breakdown.
constexpr HtaTemporal kDlrmTemporal[] = {
    {0, 6419, 1034, 5556, 13009, 49.34, 7.95, 42.71}, {1, 6428, 1246, 11075, 18749, 34.28, 6.65, 59.07},
    {2, 7046, 1068, 3236, 11350, 62.08, 9.41, 28.51}, {3, 8145, 1240, 9468, 18853, 43.20, 6.58, 50.22},
    {4, 8887, 1126, 6576, 16589, 53.57, 6.79, 39.64}, {5, 9121, 1041, 6230, 16392, 55.64, 6.35, 38.01},
    {6, 7051, 1051, 3308, 11410, 61.80, 9.21, 28.99}, {7, 8308, 1059, 1600, 10967, 75.75, 9.66, 14.59},
};
constexpr HtaOverlap kDlrmOverlap[] = {
    {0, 4.50}, {1, 2.47}, {2, 7.88}, {3, 3.31}, {4, 0.56}, {5, 0.64}, {6, 7.56}, {7, 9.51},
};
constexpr HtaIdle kDlrmIdle[] = {
    {0, 22, IdleCategory::kHostWait, 145, 4, 36.25, 32.88, 16.0, 16.75, 22.0, 41.50, 85.0},
    {0, 22, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {0, 7, IdleCategory::kHostWait, 11448, 169, 67.74, 250.28, 6.0, 14.00, 23.0, 38.00, 2489.0},
    {0, 7, IdleCategory::kKernelWait, 123, 55, 2.24, 1.82, 1.0, 1.00, 2.0, 2.00, 7.0},
    {0, 7, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {0, 24, IdleCategory::kHostWait, 5906, 19, 310.84, 919.81, 7.0, 17.00, 33.0, 87.50, 3965.0},
    {0, 24, IdleCategory::kKernelWait, 18, 3, 6.00, 0.00, 6.0, 6.00, 6.0, 6.00, 6.0},
    {0, 24, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {0, 84, IdleCategory::kHostWait, 4740, 5, 948.00, 607.15, 225.0, 478.00, 1053.0, 1239.00, 1745.0},
    {0, 84, IdleCategory::kKernelWait, 3, 2, 1.50, 0.71, 1.0, 1.25, 1.5, 1.75, 2.0},
    {0, 84, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {1, 7, IdleCategory::kHostWait, 17449, 234, 74.57, 506.37, 1.0, 2.00, 16.0, 33.00, 7260.0},
    {1, 7, IdleCategory::kKernelWait, 115, 55, 2.09, 1.67, 0.0, 1.00, 2.0, 2.00, 7.0},
    {1, 7, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {1, 22, IdleCategory::kHostWait, 154, 4, 38.50, 29.42, 17.0, 24.50, 27.5, 41.50, 82.0},
    {1, 22, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {1, 24, IdleCategory::kHostWait, 11382, 20, 569.10, 2100.13, 7.0, 15.00, 34.0, 87.50, 9431.0},
    {1, 24, IdleCategory::kKernelWait, 12, 2, 6.00, 0.00, 6.0, 6.00, 6.0, 6.00, 6.0},
    {1, 24, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {1, 84, IdleCategory::kHostWait, 4688, 5, 937.60, 597.10, 231.0, 506.00, 988.0, 1211.00, 1752.0},
    {1, 84, IdleCategory::kKernelWait, 3, 2, 1.50, 0.71, 1.0, 1.25, 1.5, 1.75, 2.0},
    {1, 84, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {2, 22, IdleCategory::kHostWait, 142, 4, 35.50, 31.40, 16.0, 16.75, 22.0, 40.75, 82.0},
    {2, 22, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {2, 7, IdleCategory::kHostWait, 9777, 176, 55.55, 174.44, 6.0, 13.75, 22.0, 40.00, 1965.0},
    {2, 7, IdleCategory::kKernelWait, 105, 49, 2.14, 1.72, 1.0, 1.00, 2.0, 2.00, 8.0},
    {2, 7, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {2, 24, IdleCategory::kHostWait, 4270, 19, 224.74, 654.63, 8.0, 18.00, 34.0, 89.50, 2867.0},
    {2, 24, IdleCategory::kKernelWait, 23, 3, 7.67, 2.89, 6.0, 6.00, 6.0, 8.50, 11.0},
    {2, 24, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {2, 84, IdleCategory::kHostWait, 5423, 6, 903.83, 823.97, 31.0, 300.50, 807.0, 1240.75, 2261.0},
    {2, 84, IdleCategory::kKernelWait, 1, 1, 1.00, kNaN, 1.0, 1.00, 1.0, 1.00, 1.0},
    {2, 84, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {3, 7, IdleCategory::kHostWait, 17548, 243, 72.21, 416.21, 0.0, 2.00, 16.0, 32.00, 5669.0},
    {3, 7, IdleCategory::kKernelWait, 109, 57, 1.91, 1.39, 0.0, 1.00, 2.0, 2.00, 6.0},
    {3, 7, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {3, 22, IdleCategory::kHostWait, 187, 4, 46.75, 41.88, 22.0, 22.00, 28.0, 52.75, 109.0},
    {3, 22, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {3, 24, IdleCategory::kHostWait, 10146, 21, 483.14, 1767.97, 9.0, 14.00, 33.0, 87.00, 8129.0},
    {3, 24, IdleCategory::kKernelWait, 5, 1, 5.00, kNaN, 5.0, 5.00, 5.0, 5.00, 5.0},
    {3, 24, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {3, 84, IdleCategory::kHostWait, 4746, 5, 949.20, 592.39, 228.0, 547.00, 1003.0, 1213.00, 1755.0},
    {3, 84, IdleCategory::kKernelWait, 3, 2, 1.50, 0.71, 1.0, 1.25, 1.5, 1.75, 2.0},
    {3, 84, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {4, 22, IdleCategory::kHostWait, 151, 4, 37.75, 31.70, 17.0, 22.25, 24.5, 40.00, 85.0},
    {4, 22, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {4, 7, IdleCategory::kHostWait, 14956, 203, 73.67, 365.61, 7.0, 12.00, 24.0, 42.00, 4518.0},
    {4, 7, IdleCategory::kKernelWait, 113, 33, 3.42, 2.12, 1.0, 2.00, 3.0, 5.00, 7.0},
    {4, 7, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {4, 24, IdleCategory::kHostWait, 8613, 19, 453.32, 1511.10, 7.0, 18.50, 33.0, 92.50, 6594.0},
    {4, 24, IdleCategory::kKernelWait, 18, 3, 6.00, 0.00, 6.0, 6.00, 6.0, 6.00, 6.0},
    {4, 24, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {4, 84, IdleCategory::kHostWait, 6691, 6, 1115.17, 603.71, 231.0, 703.25, 1281.5, 1592.00, 1691.0},
    {4, 84, IdleCategory::kKernelWait, 2, 1, 2.00, kNaN, 2.0, 2.00, 2.0, 2.00, 2.0},
    {4, 84, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {5, 22, IdleCategory::kHostWait, 148, 4, 37.00, 34.26, 17.0, 17.00, 21.5, 41.50, 88.0},
    {5, 22, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {5, 7, IdleCategory::kHostWait, 14874, 204, 72.91, 351.07, 7.0, 12.00, 24.0, 42.00, 4307.0},
    {5, 7, IdleCategory::kKernelWait, 76, 20, 3.80, 2.67, 1.0, 1.75, 2.5, 6.00, 8.0},
    {5, 7, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {5, 24, IdleCategory::kHostWait, 8419, 20, 420.95, 1438.63, 7.0, 16.00, 30.0, 83.75, 6439.0},
    {5, 24, IdleCategory::kKernelWait, 13, 2, 6.50, 0.71, 6.0, 6.25, 6.5, 6.75, 7.0},
    {5, 24, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {5, 84, IdleCategory::kHostWait, 6821, 6, 1136.83, 614.68, 226.0, 738.75, 1274.0, 1624.75, 1745.0},
    {5, 84, IdleCategory::kKernelWait, 1, 1, 1.00, kNaN, 1.0, 1.00, 1.0, 1.00, 1.0},
    {5, 84, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {6, 22, IdleCategory::kHostWait, 140, 4, 35.00, 31.59, 16.0, 16.75, 21.0, 39.25, 82.0},
    {6, 22, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {6, 7, IdleCategory::kHostWait, 9850, 178, 55.34, 174.39, 7.0, 13.25, 23.0, 38.00, 1973.0},
    {6, 7, IdleCategory::kKernelWait, 100, 47, 2.13, 1.66, 1.0, 1.00, 1.0, 2.00, 6.0},
    {6, 7, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {6, 24, IdleCategory::kHostWait, 4261, 19, 224.26, 651.49, 7.0, 18.00, 33.0, 83.50, 2852.0},
    {6, 24, IdleCategory::kKernelWait, 16, 3, 5.33, 0.58, 5.0, 5.00, 5.0, 5.50, 6.0},
    {6, 24, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {6, 84, IdleCategory::kHostWait, 5346, 5, 1069.20, 787.88, 225.0, 508.00, 1086.0, 1268.00, 2259.0},
    {6, 84, IdleCategory::kKernelWait, 9, 2, 4.50, 4.95, 1.0, 2.75, 4.5, 6.25, 8.0},
    {6, 84, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {7, 22, IdleCategory::kHostWait, 141, 4, 35.25, 32.78, 16.0, 16.00, 20.5, 39.75, 84.0},
    {7, 22, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {7, 7, IdleCategory::kHostWait, 9405, 184, 51.11, 147.91, 6.0, 12.00, 22.0, 38.00, 1637.0},
    {7, 7, IdleCategory::kKernelWait, 98, 41, 2.39, 1.86, 1.0, 1.00, 2.0, 2.00, 7.0},
    {7, 7, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {7, 24, IdleCategory::kHostWait, 3936, 20, 196.80, 631.94, 7.0, 15.00, 29.0, 89.00, 2864.0},
    {7, 24, IdleCategory::kKernelWait, 12, 2, 6.00, 0.00, 6.0, 6.00, 6.0, 6.00, 6.0},
    {7, 24, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {7, 84, IdleCategory::kHostWait, 6658, 7, 951.14, 942.86, 126.0, 265.50, 624.0, 1303.50, 2770.0},
    {7, 84, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
};
constexpr HtaKernelTypeSum kDlrmKernelTypes[] = {
    {"COMMUNICATION", 46880, 83.8},
    {"COMPUTATION", 7213, 12.9},
    {"COMPUTATION overlapping COMMUNICATION", 1652, 3.0},
    {"MEMORY", 159, 0.3},
    {"COMMUNICATION overlapping MEMORY", 10, 0.0},
};
// Section 5.1 (sampled): the same analyses.
constexpr HtaTemporal kSampledTemporal[] = {
    {0, 321378, 106252, 172428, 600058, 53.56, 17.71, 28.74},
    {1, 328671, 135548, 136455, 600674, 54.72, 22.57, 22.72},
};
constexpr HtaOverlap kSampledOverlap[] = {
    {0, 11.81},
    {1, 20.05},
};
constexpr HtaIdle kSampledIdle[] = {
    {0, 23, IdleCategory::kHostWait, 596037, 52, 11462.25, 64586.86, 7.0, 26.00, 58.5, 113.25, 447239.0},
    {0, 23, IdleCategory::kKernelWait, 70, 9, 7.78, 11.49, 1.0, 2.00, 2.0, 3.00, 29.0},
    {0, 23, IdleCategory::kOther, 34, 1, 34.00, kNaN, 34.0, 34.00, 34.0, 34.00, 34.0},
    {0, 84, IdleCategory::kHostWait, 148934, 2, 74467.00, 47178.16, 41107.0, 57787.00, 74467.0, 91147.00, 107827.0},
    {0, 84, IdleCategory::kKernelWait, 6, 1, 6.00, kNaN, 6.0, 6.00, 6.0, 6.00, 6.0},
    {0, 84, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {0, 25, IdleCategory::kKernelWait, 9, 1, 9.00, kNaN, 9.0, 9.00, 9.0, 9.00, 9.0},
    {0, 25, IdleCategory::kOther, 47865, 6, 7977.50, 13282.95, 32.0, 274.00, 590.0, 10368.00, 32857.0},
    {0, 7, IdleCategory::kHostWait, 213825, 82, 2607.62, 7641.60, 11.0, 61.00, 129.5, 1285.25, 56614.0},
    {0, 7, IdleCategory::kKernelWait, 1985, 196, 10.13, 7.82, 1.0, 3.00, 8.0, 15.25, 29.0},
    {0, 7, IdleCategory::kOther, 261740, 247, 1059.68, 4606.06, 30.0, 91.00, 248.0, 763.50, 47785.0},
    {0, 203, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {1, 23, IdleCategory::kHostWait, 596313, 52, 11467.56, 64645.87, 6.0, 23.25, 60.5, 120.25, 447639.0},
    {1, 23, IdleCategory::kKernelWait, 100, 10, 10.00, 10.42, 1.0, 2.00, 3.5, 18.00, 27.0},
    {1, 23, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    {1, 25, IdleCategory::kKernelWait, 9, 1, 9.00, kNaN, 9.0, 9.00, 9.0, 9.00, 9.0},
    {1, 25, IdleCategory::kOther, 53028, 6, 8838.00, 12503.64, 871.0, 1333.25, 2488.5, 10985.50, 32414.0},
    {1, 7, IdleCategory::kHostWait, 156827, 87, 1802.61, 3918.60, 11.0, 45.00, 213.0, 1291.00, 20764.0},
    {1, 7, IdleCategory::kKernelWait, 1816, 185, 9.82, 7.84, 1.0, 3.00, 7.0, 15.00, 29.0},
    {1, 7, IdleCategory::kOther, 281064, 228, 1232.74, 5604.01, 30.0, 89.00, 273.0, 744.75, 64049.0},
    {1, 84, IdleCategory::kHostWait, 251860, 2, 125930.00, 112321.08, 46507.0, 86218.50, 125930.0, 165641.50, 205353.0},
    {1, 84, IdleCategory::kOther, 23247, 1, 23247.00, kNaN, 23247.0, 23247.00, 23247.0, 23247.00, 23247.0},
    {1, 203, IdleCategory::kOther, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
};
constexpr HtaKernelTypeSum kSampledKernelTypes[] = {
    {"COMMUNICATION", 305584, 55.5},
    {"COMPUTATION", 185023, 33.6},
    {"COMPUTATION overlapping COMMUNICATION", 56747, 10.3},
    {"MEMORY", 2288, 0.4},
    {"COMMUNICATION overlapping MEMORY", 1011, 0.2},
    {"COMPUTATION overlapping MEMORY", 18, 0.0},
    {"COMPUTATION overlapping COMMUNICATION overlapping MEMORY", 12, 0.0},
};

constexpr HtaLaunch kDlrmLaunch[] = {
    {0, 261, 2.0, 371.0, 180},
    {1, 262, 2.0, 372.6999999999997, 183},
    {2, 262, 2.0, 269.5499999999999, 182},
    {3, 273, 2.0, 257.19999999999936, 216},
    {4, 273, 2.0, 12.999999999999886, 188},
    {5, 261, 2.0, 4.0, 200},
    {6, 262, 2.0, 259.5499999999999, 181},
    {7, 262, 2.0, 149.5499999999999, 179},
};
constexpr HtaLaunch kSampledLaunch[] = {
    {0, 602, 10246.0, 64814.85, 140},
    {1, 577, 10282.0, 73663.0, 140},
};

// HTA joins GPU ops whose launch is missing from the trace to row 0 of its
// dataframe (see BreakdownOptions::hta_row0_ts_ns): traceEvents[0].ts of each
// DLRM file, in us. The sampled set drops such ops with its last step.
constexpr int64_t kDlrmRow0TsUs[] = {1694128201435418, 1694128201435377, 1694128201435447, 1694128201435377,
                                     1694128201435423, 1694128201435404, 1694128201435447, 1694128201435604};

struct RankResult {
  int64_t rank;
  WindowBreakdown hta;
  WindowBreakdown mfu;
};

std::vector<RankResult> AnalyzeSet(const std::string& dir, std::span<const int64_t> row0_ts_us) {
  auto traces = ParseTraceSet(RealFileSystem(), testing::TestTracePath(dir));
  EXPECT_TRUE(traces.ok()) << traces.status().message();
  std::vector<RankResult> results;
  if (!traces.ok())
    return results;
  for (const RankTrace& trace : *traces) {
    const std::vector<KernelClass> classes = ClassifyEvents(trace, testing::BuiltinClassifier());
    const std::vector<uint32_t> launches = LinkLaunches(trace);
    const std::vector<ProfilerStepInfo> steps = FindProfilerSteps(trace, launches);
    const TraceWindow window = HtaWindow(steps);
    BreakdownOptions hta;
    hta.variant = BreakdownVariant::kHtaCompat;
    hta.top_kernels = 5;
    if (trace.rank >= 0 && static_cast<size_t>(trace.rank) < row0_ts_us.size()) {
      hta.hta_row0_ts_ns = row0_ts_us[static_cast<size_t>(trace.rank)] * 1000;
    }
    BreakdownOptions mfu;
    results.push_back({trace.rank, AnalyzeWindow(trace, classes, launches, window, hta),
                       AnalyzeWindow(trace, classes, launches, window, mfu)});
  }
  return results;
}

void ExpectTemporal(const std::vector<RankResult>& results, std::span<const HtaTemporal> expected) {
  ASSERT_EQ(results.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const HtaTemporal& e = expected[i];
    const TemporalBreakdown& t = results[i].hta.temporal;
    SCOPED_TRACE("rank " + std::to_string(e.rank));
    EXPECT_EQ(results[i].rank, e.rank);
    EXPECT_EQ(t.idle_ns, e.idle_us * 1000);
    EXPECT_EQ(t.compute_ns, e.compute_us * 1000);
    EXPECT_EQ(t.non_compute_ns, e.non_compute_us * 1000);
    EXPECT_EQ(t.span_ns, e.kernel_us * 1000);
    // HTA prints round(100 * x, 2).
    EXPECT_NEAR(t.idle_pct(), e.idle_pct, 0.005 + 1e-9);
    EXPECT_NEAR(t.compute_pct(), e.compute_pct, 0.005 + 1e-9);
    EXPECT_NEAR(t.non_compute_pct(), e.non_compute_pct, 0.005 + 1e-9);
    // On whole-us traces whose kernels both classifications agree on, the
    // exact variant gives the same numbers, and its finer split adds up.
    const TemporalBreakdown& m = results[i].mfu.temporal;
    EXPECT_EQ(m.idle_ns, t.idle_ns);
    EXPECT_EQ(m.compute_ns, t.compute_ns);
    EXPECT_EQ(m.span_ns, t.span_ns);
    EXPECT_EQ(m.exposed_comm_ns + m.exposed_memcpy_ns + m.exposed_memset_ns, m.non_compute_ns);
  }
}

void ExpectOverlap(const std::vector<RankResult>& results, std::span<const HtaOverlap> expected) {
  ASSERT_EQ(results.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("rank " + std::to_string(expected[i].rank));
    EXPECT_NEAR(results[i].hta.overlap.overlap_pct, expected[i].pct, 0.005 + 1e-9);
    EXPECT_NEAR(results[i].mfu.overlap.overlap_pct, expected[i].pct, 0.005 + 1e-9);
  }
}

void ExpectKernelTypes(const std::vector<RankResult>& results, std::span<const HtaKernelTypeSum> expected) {
  KernelTypeBreakdown pooled;
  for (const RankResult& r : results)
    pooled += r.hta.kernel_types;
  std::map<std::string, int64_t> ours;
  for (unsigned mask = 1; mask < 8; ++mask) {
    if (pooled.exact_ns[mask] != 0)
      ours[KernelTypeBreakdown::MaskName(mask)] = pooled.exact_ns[mask];
  }
  std::map<std::string, int64_t> theirs;
  for (const HtaKernelTypeSum& e : expected) {
    theirs[e.type] = e.sum_us * 1000;
    const double pct = 100.0 * static_cast<double>(e.sum_us * 1000) / static_cast<double>(pooled.total_ns());
    EXPECT_NEAR(pct, e.pct, 0.05 + 1e-9) << e.type;
  }
  EXPECT_EQ(ours, theirs);
}

void ExpectIdle(const std::vector<RankResult>& results, std::span<const HtaIdle> expected) {
  // (rank, stream) -> the categories HTA lists; the others must be empty.
  std::map<std::pair<int64_t, int64_t>, std::vector<const HtaIdle*>> by_stream;
  for (const HtaIdle& e : expected)
    by_stream[{e.rank, e.stream}].push_back(&e);
  size_t streams = 0;
  for (const RankResult& r : results) {
    for (const StreamIdle& s : r.hta.idle.streams) {
      SCOPED_TRACE("rank " + std::to_string(r.rank) + " stream " + std::to_string(s.stream));
      auto it = by_stream.find({r.rank, s.stream});
      ASSERT_NE(it, by_stream.end());
      ++streams;
      std::array<bool, kNumIdleCategories> listed{};
      for (const HtaIdle* e : it->second) {
        const auto c = static_cast<size_t>(e->category);
        listed[c] = true;
        SCOPED_TRACE(IdleCategoryName(e->category));
        const IntervalStats& st = s.stats[c];
        EXPECT_EQ(s.idle_ns[c], e->idle_us * 1000);
        EXPECT_EQ(st.count, e->count);
        auto near = [](double ns, double us) {
          if (std::isnan(us))
            return std::isnan(ns);
          return std::abs(ns / 1000 - us) <= 0.005 + 1e-6 * std::abs(us);  // HTA rounds to 2 decimals
        };
        EXPECT_TRUE(near(st.mean_ns, e->mean)) << st.mean_ns << " vs " << e->mean;
        EXPECT_TRUE(near(st.std_ns, e->std)) << st.std_ns << " vs " << e->std;
        EXPECT_TRUE(near(st.min_ns, e->min)) << st.min_ns << " vs " << e->min;
        EXPECT_TRUE(near(st.p25_ns, e->p25)) << st.p25_ns << " vs " << e->p25;
        EXPECT_TRUE(near(st.p50_ns, e->p50)) << st.p50_ns << " vs " << e->p50;
        EXPECT_TRUE(near(st.p75_ns, e->p75)) << st.p75_ns << " vs " << e->p75;
        EXPECT_TRUE(near(st.max_ns, e->max)) << st.max_ns << " vs " << e->max;
      }
      for (size_t c = 0; c < kNumIdleCategories; ++c) {
        if (!listed[c]) {
          EXPECT_EQ(s.stats[c].count, 0u) << IdleCategoryName(static_cast<IdleCategory>(c));
        }
      }
    }
  }
  EXPECT_EQ(streams, by_stream.size());
}

void ExpectLaunches(const std::vector<RankResult>& results, std::span<const HtaLaunch> expected) {
  ASSERT_EQ(results.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("rank " + std::to_string(expected[i].rank));
    const LaunchStats& l = results[i].hta.launches;
    EXPECT_EQ(l.launches, expected[i].launches);
    EXPECT_EQ(l.short_kernels, expected[i].short_kernels);
    EXPECT_NEAR(l.launch_delay_median_ns / 1000, expected[i].median_us, 1e-6);
    EXPECT_NEAR(l.launch_delay_p95_ns / 1000, expected[i].p95_us, 1e-6);
  }
}

const std::vector<RankResult>& Dlrm() {
  static const std::vector<RankResult>* results = new std::vector<RankResult>(AnalyzeSet("dlrm_kineto", kDlrmRow0TsUs));
  return *results;
}

const std::vector<RankResult>& Sampled() {
  static const std::vector<RankResult>* results = new std::vector<RankResult>(AnalyzeSet("hta_sampled", {}));
  return *results;
}

TEST(HtaParityDlrm, Window) {
  ASSERT_EQ(Dlrm().size(), 8u);
  for (const RankResult& r : Dlrm())
    EXPECT_TRUE(r.hta.window.whole_trace);  // one ProfilerStep: all kept
}
TEST(HtaParityDlrm, TemporalBreakdown) {
  ExpectTemporal(Dlrm(), kDlrmTemporal);
}
TEST(HtaParityDlrm, CommComputeOverlap) {
  ExpectOverlap(Dlrm(), kDlrmOverlap);
}
TEST(HtaParityDlrm, KernelTypes) {
  ExpectKernelTypes(Dlrm(), kDlrmKernelTypes);
}
TEST(HtaParityDlrm, IdleBreakdown) {
  ExpectIdle(Dlrm(), kDlrmIdle);
}
TEST(HtaParityDlrm, LaunchStats) {
  ExpectLaunches(Dlrm(), kDlrmLaunch);
}

TEST(HtaParityDlrm, TopKernels) {
  // Groups with at most num_kernels (5) names are not folded into "others"
  // by HTA, so its per-kernel stats are real ones: rank 0's all-reduce
  // (sum 1799, max 952, min 246, stddev 353.001889, mean 599.666667) and rank
  // 7's pageable HtoD copies (sum 9, max 2, min 1, stddev 0.353553, mean 1.125).
  const std::vector<KernelGroup>& rank0 = Dlrm()[0].hta.top_kernels;
  ASSERT_GE(rank0.size(), 2u);
  ASSERT_EQ(rank0[1].group, "COMMUNICATION");
  const KernelStats* allreduce = nullptr;
  for (const KernelStats& k : rank0[1].top) {
    if (k.name.rfind("ncclKernel_AllReduce_RING_LL_Sum_float", 0) == 0)
      allreduce = &k;
  }
  ASSERT_NE(allreduce, nullptr);
  EXPECT_EQ(allreduce->total_ns, 1799000);
  EXPECT_EQ(allreduce->max_ns, 952000);
  EXPECT_EQ(allreduce->min_ns, 246000);
  EXPECT_NEAR(allreduce->std_ns / 1000, 353.001889, 1e-6);
  EXPECT_NEAR(allreduce->mean_ns / 1000, 599.666667, 1e-6);
  const std::vector<KernelGroup>& rank7 = Dlrm()[7].hta.top_kernels;
  ASSERT_EQ(rank7.back().group, "MEMORY");
  const KernelStats* htod = nullptr;
  for (const KernelStats& k : rank7.back().top) {
    if (k.name == "Memcpy HtoD (Pageable -> Device)")
      htod = &k;
  }
  ASSERT_NE(htod, nullptr);
  EXPECT_EQ(htod->count, 8u);
  EXPECT_EQ(htod->total_ns, 9000);
  EXPECT_NEAR(htod->std_ns / 1000, 0.353553, 1e-6);
}

TEST(HtaParitySampled, Window) {
  ASSERT_EQ(Sampled().size(), 2u);
  for (const RankResult& r : Sampled()) {
    EXPECT_FALSE(r.hta.window.whole_trace);  // ProfilerStep#552 dropped
    EXPECT_NE(r.hta.window.name.find("ProfilerStep#552"), std::string::npos) << r.hta.window.name;
  }
}
TEST(HtaParitySampled, TemporalBreakdown) {
  ExpectTemporal(Sampled(), kSampledTemporal);
}
TEST(HtaParitySampled, CommComputeOverlap) {
  ExpectOverlap(Sampled(), kSampledOverlap);
}
TEST(HtaParitySampled, KernelTypes) {
  ExpectKernelTypes(Sampled(), kSampledKernelTypes);
}
TEST(HtaParitySampled, IdleBreakdown) {
  ExpectIdle(Sampled(), kSampledIdle);
}
TEST(HtaParitySampled, LaunchStats) {
  ExpectLaunches(Sampled(), kSampledLaunch);
}

}  // namespace
}  // namespace mfu
