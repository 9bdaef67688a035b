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
