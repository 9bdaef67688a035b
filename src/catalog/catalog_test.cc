#include "mfu/catalog.h"

#include <gtest/gtest.h>

#include <string>

namespace mfu {
namespace {

TEST(Catalog, LoadsUserFilesThroughTheFileSystem) {
  InMemoryFileSystem fs;
  fs.AddFile("hw.csv", "id,accelerator,bf16_tflops\nmy-gpu,My GPU,123\n");
  fs.AddFile("clusters.csv", "id,price_per_gpu_hour\ndgx-h100,2.5\n");
  fs.AddFile("eff.csv", "family,overlap_efficiency\nhopper,0.5\n");
  fs.AddFile("fw.csv", "name,moe_sync_us\nmegatron-core,7\n");
  fs.AddFile("classes.csv", "class,match,pattern,source\ngemm,prefix,my_gemm,test\n");
  CatalogFiles files;
  files.hardware = {"hw.csv"};
  files.clusters = {"clusters.csv"};
  files.efficiency = {"eff.csv"};
  files.frameworks = {"fw.csv"};
  files.kernel_classes = {"classes.csv"};
  StatusOr<Catalog> c = Catalog::Load(fs, files);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ((*c->hardware.Find("my-gpu"))->peak_tflops[static_cast<size_t>(DType::kBf16)], 123);
  EXPECT_DOUBLE_EQ((*c->clusters.Find("dgx-h100"))->price_per_gpu_hour, 2.5);
  EXPECT_DOUBLE_EQ(c->efficiency.For("h100-sxm5-80gb").overlap_efficiency, 0.5);
  EXPECT_DOUBLE_EQ((*c->frameworks.Find("megatron-core"))->moe_sync_us, 7);
  EXPECT_EQ(c->kernel_classes.Classify(TraceEventKind::kKernel, "my_gemm_kernel"), KernelClass::kGemm);
}

// The kernel-grounded base (what `mfu kernels` and calibrate's prior use):
// the same table EfficiencyDb::LoadBuiltinPrior builds, with the user's files
// merged over it; the fitted base is LoadBuiltin's.
TEST(Catalog, EfficiencyBaseChoosesTheTableFilesOverride) {
  InMemoryFileSystem fs;
  fs.AddFile("eff.csv", "family,overlap_efficiency\nhopper,0.5\n");
  CatalogFiles files;
  files.efficiency_base = EfficiencyBase::kKernelGrounded;
  StatusOr<Catalog> grounded = Catalog::Load(fs, files);
  ASSERT_TRUE(grounded.ok()) << grounded.status().message();
  StatusOr<EfficiencyDb> prior = EfficiencyDb::LoadBuiltinPrior();
  ASSERT_TRUE(prior.ok());
  EXPECT_EQ(grounded->efficiency.ToCsv(), prior->ToCsv());
  StatusOr<EfficiencyDb> fitted = EfficiencyDb::LoadBuiltin();
  ASSERT_TRUE(fitted.ok());
  EXPECT_NE(prior->ToCsv(), fitted->ToCsv());  // else this test could not fail
  EXPECT_EQ(Catalog::LoadBuiltin()->efficiency.ToCsv(), fitted->ToCsv());

  files.efficiency = {"eff.csv"};
  StatusOr<EfficiencyDb> db = Catalog::LoadEfficiency(fs, files.efficiency, EfficiencyBase::kKernelGrounded);
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_DOUBLE_EQ(db->For("h100-sxm5-80gb").overlap_efficiency, 0.5);
  EXPECT_EQ(Catalog::Load(fs, files)->efficiency.ToCsv(), db->ToCsv());
  EXPECT_EQ(Catalog::LoadEfficiency(fs, {"missing.csv"}, EfficiencyBase::kFitted).status().code(),
            StatusCode::kNotFound);
}

TEST(Catalog, ErrorsNameTheFile) {
  InMemoryFileSystem fs;
  fs.AddFile("bad.csv", "id,scaleout_gbps_per_gpu\ndgx-h100,x\n");
  CatalogFiles files;
  files.clusters = {"bad.csv"};
  StatusOr<Catalog> c = Catalog::Load(fs, files);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "bad.csv:2: column 'scaleout_gbps_per_gpu': 'x' is not a number");
  files.clusters = {"missing.csv"};
  c = Catalog::Load(fs, files);
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace mfu
