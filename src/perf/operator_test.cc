// The model's GEMM roofline, vector kernels and collective model against
// measured operator times: Vidur's profiles (tests/data/vidur/, MIT; FP16
// GEMMs and vector operators of Llama layers on A100 and H100 per token
// count and TP degree, NCCL all-reduce on a DGX H100). The shipped GEMM,
// vector kernel and NVLink parameters were fitted to these (mfu calibrate
// --operators); this test fails when a change makes the model disagree with
// them more.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mfu/cluster.h"
#include "mfu/hwdb.h"
#include "mfu/operator_profiles.h"
#include "mfu/perf_model.h"
#include "mfu/vector_kernels.h"

namespace mfu {
namespace {

const std::string kDir = std::string(MFU_SOURCE_DIR) + "/tests/data/vidur";

bool Near(double a, double b) {
  return std::fabs(a - b) < 0.5;
}

struct Errors {
  double sum = 0;
  double max = 0;
  size_t n = 0;
  void Add(double predicted, double measured) {
    const double ape = std::fabs(predicted / measured - 1);
    sum += ape;
    max = std::max(max, ape);
    ++n;
  }
  double mape() const { return n > 0 ? sum / static_cast<double>(n) : 0; }
};

class OperatorProfilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto hw = HardwareDb::LoadBuiltin();
    auto clusters = ClusterDb::LoadBuiltin();
    auto eff = EfficiencyDb::LoadBuiltin();
    auto profiles = ReadOperatorProfiles(RealFileSystem(), kDir);
    ASSERT_TRUE(hw.ok() && clusters.ok() && eff.ok());
    ASSERT_TRUE(profiles.ok()) << profiles.status().message();
    hw_ = std::move(hw).value();
    clusters_ = std::move(clusters).value();
    eff_ = std::move(eff).value();
    profiles_ = std::move(profiles).value();
  }
  HardwareDb hw_;
  ClusterDb clusters_;
  EfficiencyDb eff_;
  OperatorProfiles profiles_;
};

TEST_F(OperatorProfilesTest, ReadsEveryShape) {
  // 4 models x 13 token counts x 4 TP degrees, 4 GEMMs and 3 vector ops each.
  EXPECT_EQ(profiles_.operators.size(), 208u * 7u);
  EXPECT_EQ(profiles_.collectives.size(), 45u);
  // Vidur's H100 Llama-2-7B mlp_up_proj at 4096 tokens, TP1: fused gate+up,
  // 4096 x 22016 x 4096 (../shared/telemetry/README.md's worked check).
  bool found = false;
  for (const OperatorSample& s : profiles_.operators) {
    if (s.accelerator == "h100-sxm5-80gb" && s.op == "mlp_up_proj" && Near(s.m, 4096) && Near(s.k, 4096) &&
        Near(s.n, 22016)) {
      found = true;
      EXPECT_NEAR(s.seconds, 0.986e-3, 0.02e-3);
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(OperatorProfilesTest, GemmRooflineWithinBounds) {
  std::map<std::string, Errors> compute, bandwidth, all;
  for (const OperatorSample& s : profiles_.operators) {
    if (!s.gemm)
      continue;
    const double predicted = PredictSample(s, hw_, eff_.For(s.accelerator));
    ASSERT_GT(predicted, 0);
    all[s.accelerator].Add(predicted, s.seconds);
    if (s.tokens >= 512)
      compute[s.accelerator].Add(predicted, s.seconds);
    if (s.tokens <= 8)
      bandwidth[s.accelerator].Add(predicted, s.seconds);
  }
  // Measured when the parameters were fitted: A100 12.7%, H100 15.2% over
  // all 208 shapes; large-token (compute-bound) and 1-8 token (weights
  // streaming) regimes are reported.
  EXPECT_LE(all["a100-sxm4-80gb"].mape(), 0.14);
  EXPECT_LE(all["h100-sxm5-80gb"].mape(), 0.17);
  for (const auto& [gpu, e] : compute)
    std::printf("GEMM >= 512 tokens %s: %zu shapes, MAPE %.1f%%\n", gpu.c_str(), e.n, 100 * e.mape());
  for (const auto& [gpu, e] : bandwidth)
    std::printf("GEMM <= 8 tokens %s: %zu shapes, MAPE %.1f%%\n", gpu.c_str(), e.n, 100 * e.mape());
}

TEST_F(OperatorProfilesTest, AllReduceOnNvlinkWithinBounds) {
  Errors large;
  for (const CollectiveSample& s : profiles_.collectives) {
    if (s.bytes >= (1 << 22))
      large.Add(PredictSample(s, clusters_, eff_.For("h100-sxm5-80gb")), s.seconds);
  }
  EXPECT_EQ(large.n, 15u);
  EXPECT_LE(large.mape(), 0.18);  // 16.2% when fitted
}

// The per-operator table of docs/infer.md: median error of the predicted
// kernel time per operator and GPU over every token count (1-4096) and TP
// degree (1-8), GEMMs and memory-bound vector operators. The bounds are the
// medians measured with the shipped parameters plus a small margin; the
// inference issue's goal is 15% for each.
TEST_F(OperatorProfilesTest, PerOperatorMedianErrors) {
  std::map<std::string, std::vector<double>> by_op;
  for (const OperatorSample& s : profiles_.operators) {
    const double predicted = PredictSample(s, hw_, eff_.For(s.accelerator));
    by_op[s.accelerator + " " + s.op].push_back(std::fabs(predicted / s.seconds - 1));
  }
  struct Bound {
    const char* op;
    double a100, h100;  // measured: A100, H100
  };
  const Bound bounds[] = {
      // Measured 2026-12-01 with the per-kernel floor (kernel_overhead_us,
      // fitted here too) in every GEMM prediction; the goal is 15% for each.
      {"attn_pre_proj", 0.05, 0.07},     // 4.0%, 5.9%
      {"attn_post_proj", 0.055, 0.095},  // 4.3%, 8.2%
      {"mlp_up_proj", 0.055, 0.05},      // 4.4%, 3.9%
      {"mlp_down_proj", 0.045, 0.08},    // 3.4%, 6.9%
      {"input_layernorm", 0.045, 0.02},  // 2.9%, 0.0% (Vidur's times are whole microseconds)
      {"add", 0.025, 0.12},              // 0.9%, 10.7%
      {"mlp_act", 0.09, 0.105},          // 7.4%, 9.1%
  };
  for (auto& [key, errors] : by_op) {
    std::sort(errors.begin(), errors.end());
    std::printf("%-36s %3zu shapes  median %5.1f%%  p90 %5.1f%%\n", key.c_str(), errors.size(),
                100 * errors[errors.size() / 2], 100 * errors[errors.size() * 9 / 10]);
  }
  for (const Bound& b : bounds) {
    for (const auto& [gpu, bound] : {std::pair{"a100-sxm4-80gb", b.a100}, std::pair{"h100-sxm5-80gb", b.h100}}) {
      const std::vector<double>& errors = by_op[std::string(gpu) + " " + b.op];
      ASSERT_EQ(errors.size(), 104u) << gpu << " " << b.op;
      EXPECT_LE(errors[errors.size() / 2], bound) << gpu << " " << b.op;
      EXPECT_LE(bound, 0.15);
    }
  }
}

// The shipped vector kernel rows are what the fit gives (mfu calibrate
// --operators, docs/plan.md), from any starting values: the fit starts from
// a grid, not from the table it updates.
TEST_F(OperatorProfilesTest, VectorKernelFitReproducesTheShippedRows) {
  EfficiencyDb from_shipped = eff_;
  EfficiencyDb from_elsewhere = eff_;
  for (const char* family : {"ampere", "hopper"}) {
    for (VectorKernelParams& k : from_elsewhere.Mutable(family)->vector_kernels)
      k = {10, 0, 0.9, "elsewhere"};
  }
  auto a = FitOperatorProfiles(profiles_, hw_, clusters_, from_shipped);
  auto b = FitOperatorProfiles(profiles_, hw_, clusters_, from_elsewhere);
  ASSERT_TRUE(a.ok() && b.ok());
  for (const char* family : {"ampere", "hopper"}) {
    for (size_t k = 0; k < kNumVectorKernels; ++k) {
      const VectorKernelParams& shipped = eff_.Mutable(family)->vector_kernels[k];
      const VectorKernelParams& fitted = from_shipped.Mutable(family)->vector_kernels[k];
      const VectorKernelParams& other = from_elsewhere.Mutable(family)->vector_kernels[k];
      for (const VectorKernelParamInfo& info : VectorKernelParamInfos()) {
        const std::string what =
            std::string(family) + " " + VectorKernelName(static_cast<VectorKernel>(k)) + " " + info.name;
        EXPECT_DOUBLE_EQ(fitted.*info.field, other.*info.field) << what;
        // The table holds four significant digits.
        EXPECT_NEAR(fitted.*info.field, shipped.*info.field, 5e-4 * std::fabs(shipped.*info.field)) << what;
      }
      EXPECT_EQ(fitted.source.rfind("fitted by mfu calibrate --operators to 104 measured kernel times", 0), 0u);
      EXPECT_EQ(shipped.source.rfind("fitted by mfu calibrate --operators to 104 measured kernel times", 0), 0u);
    }
  }
}

TEST(OperatorProfiles, ParseErrorsNameFileLineAndColumn) {
  const char* header =
      "gpu,model,hidden,ffn,heads,kv_heads,gated,tokens,tp,attn_pre_proj_ms,attn_post_proj_ms,"
      "mlp_up_proj_ms,mlp_down_proj_ms,input_layernorm_ms,mlp_act_ms,add_ms\n";
  auto bad =
      ParseOperatorProfiles(std::string(header) + "h100,x,4096,11008,32,32,True,8,1,abc,1,1,1,1,1,1\n", "", "dir");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kParse);
  EXPECT_NE(bad.status().message().find("dir/compute.csv:2: column 'attn_pre_proj_ms'"), std::string::npos)
      << bad.status().message();
  auto zero =
      ParseOperatorProfiles(std::string(header) + "h100,x,4096,11008,32,32,True,8,0,1,1,1,1,1,1,1\n", "", "dir");
  EXPECT_EQ(zero.status().code(), StatusCode::kOutOfRange);
  // The header through base/table.h: a column read must be there; a
  // misspelling is named beside it; Vidur's other columns (model) are kept.
  std::string misspelt = header;
  misspelt.replace(misspelt.find("add_ms"), 6, "add_mss");
  EXPECT_EQ(ParseOperatorProfiles(misspelt + "h100,x,4096,11008,32,32,True,8,1,1,1,1,1,1,1,1\n", "", "dir")
                .status()
                .message(),
            "dir/compute.csv:1: missing column 'add_ms' (the header has 'add_mss')");
  EXPECT_EQ(ParseOperatorProfiles("", "cluster,collective,gpus,median_ms\ndgx-h100,all_reduce,8,1\n", "dir")
                .status()
                .message(),
            "dir/collectives.csv:1: missing column 'bytes'");
  auto coll = ParseOperatorProfiles("", "cluster,collective,gpus,bytes,median_ms\ndgx-h100,broadcast,8,1,1\n", "dir");
  ASSERT_FALSE(coll.ok());
  EXPECT_NE(coll.status().message().find("'broadcast'"), std::string::npos);
  EXPECT_EQ(ReadOperatorProfiles(RealFileSystem(), "/nonexistent").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace mfu
