#include "mfu/cluster.h"

#include <gtest/gtest.h>

#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/csv.h"
#include "base/embedded_file.h"
#include "base/strings.h"
#include "mfu/hwdb.h"
#include "mfu_embedded/hwdb_data.h"

namespace mfu {
namespace {

constexpr const char* kHeader =
    "id,aliases,name,accelerator,reference,gpus_per_node,nvlink_domain_gpus,scaleup_gbs_per_gpu,scaleout_gbps_per_gpu,"
    "scaleup_latency_us,scaleout_latency_us,max_gpus,price_per_gpu_hour,source,notes";

class ClusterDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<ClusterDb> db = ClusterDb::LoadBuiltin();
    ASSERT_TRUE(db.ok()) << db.status().message();
    db_ = std::move(db).value();
  }

  const Cluster& Get(std::string_view name) {
    StatusOr<const Cluster*> c = db_.Find(name);
    EXPECT_TRUE(c.ok()) << c.status().message();
    static const Cluster kMissing;
    return c.ok() ? **c : kMissing;
  }

  // Adds `csv` to the built-in database and returns the error it must give.
  Status AddError(const std::string& csv) {
    Status status = db_.AddCsv(csv, "my.csv");
    EXPECT_FALSE(status.ok()) << csv;
    return status;
  }

  ClusterDb db_;
};

TEST_F(ClusterDbTest, EveryBuiltinRowLoadsAndItsAcceleratorResolves) {
  StatusOr<HardwareDb> hw = HardwareDb::LoadBuiltin();
  ASSERT_TRUE(hw.ok()) << hw.status().message();
  ASSERT_EQ(db_.all().size(), 29u);
  std::set<std::string> ids;
  for (const Cluster& c : db_.all()) {
    SCOPED_TRACE(c.id);
    EXPECT_TRUE(ids.insert(c.id).second);
    EXPECT_FALSE(c.name.empty());
    EXPECT_FALSE(c.source.empty());
    EXPECT_FALSE(c.notes.empty());
    StatusOr<const Accelerator*> a = hw->Find(c.accelerator);
    ASSERT_TRUE(a.ok()) << a.status().message();
    EXPECT_EQ((*a)->id, c.accelerator);  // rows name the exact hwdb id
    EXPECT_GT(c.gpus_per_node, 0);
    EXPECT_TRUE(c.nvlink_domain_gpus % c.gpus_per_node == 0 || c.gpus_per_node % c.nvlink_domain_gpus == 0);
    EXPECT_GT(c.scaleup_bw_bytes_per_s, c.scaleout_bw_bytes_per_s);
    EXPECT_GT(c.scaleout_bw_bytes_per_s, 0);
    EXPECT_GT(c.scaleup_latency_s, 0);
    EXPECT_GT(c.scaleout_latency_s, c.scaleup_latency_s);
    EXPECT_GE(c.price_per_gpu_hour, 0);
  }
  for (const char* id :
       {"dgx-a100", "dgx-a100-40gb", "dgx-h100", "hgx-h200", "dgx-b200", "dgx-b300", "gb200-nvl72", "gb300-nvl72",
        "selene", "mosaic-a100-40gb", "mosaic-a100-80gb", "grand-teton-h100", "vtrain-a100"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
}

// Blackwell Ultra's reference systems as their sources give them: NVLink 5
// at 1.8 TB/s bidirectional per GPU (900 GB/s a direction) and one 800 Gb/s
// ConnectX-8 per GPU; a GB300 NVL72 node is a 4-GPU tray in a 72-GPU domain.
TEST_F(ClusterDbTest, BlackwellUltraReferenceSystems) {
  const Cluster& nvl = Get("gb300-nvl72");
  EXPECT_EQ(nvl.accelerator, "gb300-288gb");
  EXPECT_EQ(nvl.gpus_per_node, 4);
  EXPECT_EQ(nvl.nvlink_domain_gpus, 72);
  EXPECT_DOUBLE_EQ(nvl.scaleup_bw_bytes_per_s, 900e9);
  EXPECT_DOUBLE_EQ(nvl.scaleout_bw_bytes_per_s, 800e9 / 8);
  EXPECT_TRUE(nvl.reference);
  const Cluster& dgx = Get("dgx-b300");
  EXPECT_EQ(dgx.accelerator, "b300-sxm-288gb");
  EXPECT_EQ(dgx.gpus_per_node, 8);
  EXPECT_EQ(dgx.nvlink_domain_gpus, 8);
  EXPECT_DOUBLE_EQ(dgx.scaleup_bw_bytes_per_s, 900e9);
  EXPECT_DOUBLE_EQ(dgx.scaleout_bw_bytes_per_s, 800e9 / 8);
  EXPECT_TRUE(dgx.reference);
}

TEST_F(ClusterDbTest, ShippedCsvHasTheDocumentedColumnsInOrder) {
  std::string_view bytes;
  for (const base::EmbeddedFile& f : base::HardwareDataFiles()) {
    if (f.path == "clusters/clusters.csv")
      bytes = f.bytes;
  }
  StatusOr<base::CsvTable> table = base::ParseCsv(bytes, "clusters.csv");
  ASSERT_TRUE(table.ok()) << table.status().message();
  EXPECT_EQ(base::Join(table->header, ","), kHeader);
}

TEST_F(ClusterDbTest, FindsByIdAliasAndAnyCase) {
  EXPECT_EQ(Get("dgx-h100").id, "dgx-h100");
  EXPECT_EQ(Get("DGX-H100").id, "dgx-h100");
  EXPECT_EQ(Get("dgx-h100-80gb").id, "dgx-h100");
  EXPECT_EQ(Get("NVL72").id, "gb200-nvl72");
  EXPECT_EQ(Get(" selene ").id, "selene");
  EXPECT_EQ(Get("torchtitan-h100").id, "grand-teton-h100");
}

TEST_F(ClusterDbTest, UnknownNameListsTheIds) {
  StatusOr<const Cluster*> c = db_.Find("dgx-h10");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  const std::string& message = c.status().message();
  EXPECT_NE(message.find("unknown cluster 'dgx-h10'"), std::string::npos) << message;
  EXPECT_NE(message.find("did you mean 'dgx-h100'"), std::string::npos) << message;
  EXPECT_NE(message.find("gb200-nvl72"), std::string::npos) << message;
}

// DGX H100 datasheet: NVLink 4 900 GB/s bidirectional per GPU, one 400 Gb/s
// ConnectX-7 per GPU.
TEST_F(ClusterDbTest, DgxH100MatchesTheDatasheet) {
  const Cluster& c = Get("dgx-h100");
  EXPECT_EQ(c.accelerator, "h100-sxm5-80gb");
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_EQ(c.nvlink_domain_gpus, 8);
  EXPECT_DOUBLE_EQ(c.scaleup_bw_bytes_per_s, 450e9);
  EXPECT_DOUBLE_EQ(c.scaleout_bw_bytes_per_s, 50e9);  // 400 Gb/s
  EXPECT_DOUBLE_EQ(c.scaleup_latency_s, 3e-6);
  EXPECT_DOUBLE_EQ(c.scaleout_latency_s, 6e-6);
  EXPECT_EQ(c.max_gpus, 0);
}

// DGX A100: NVLink 3 600 GB/s bidirectional, 8x 200 Gb/s HDR; GB200 NVL72:
// 4-GPU trays in a 72-GPU NVLink 5 domain (1.8 TB/s bidirectional), one
// 400 Gb/s ConnectX-7 per GPU (DGX GB200 user guide).
TEST_F(ClusterDbTest, OtherPresetsMatchTheirSources) {
  EXPECT_DOUBLE_EQ(Get("dgx-a100").scaleup_bw_bytes_per_s, 300e9);
  EXPECT_DOUBLE_EQ(Get("dgx-a100").scaleout_bw_bytes_per_s, 25e9);
  EXPECT_EQ(Get("dgx-a100-40gb").accelerator, "a100-sxm4-40gb");
  const Cluster& nvl72 = Get("gb200-nvl72");
  EXPECT_EQ(nvl72.gpus_per_node, 4);
  EXPECT_EQ(nvl72.nvlink_domain_gpus, 72);
  EXPECT_DOUBLE_EQ(nvl72.scaleup_bw_bytes_per_s, 900e9);
  EXPECT_DOUBLE_EQ(nvl72.scaleout_bw_bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(Get("dgx-b200").scaleup_bw_bytes_per_s, 900e9);
  EXPECT_DOUBLE_EQ(Get("mosaic-a100-40gb").scaleout_bw_bytes_per_s, 25e9);  // 1600 Gb/s per 8-GPU node
  const Cluster& vtrain = Get("vtrain-a100");
  // NVLink 3 per direction: vTrain's measured 8-GPU all-reduce reaches 220 GB/s bus
  // bandwidth, above its configs' intra_node_bandwidth of 150.
  EXPECT_DOUBLE_EQ(vtrain.scaleup_bw_bytes_per_s, 300e9);
  EXPECT_DOUBLE_EQ(vtrain.scaleout_bw_bytes_per_s, 12.5e9);  // 800 Gb/s per 8-GPU node
}

// Google Cloud TPU v5p system architecture page: 8960 chips per pod, largest
// slice 6144 chips (16x16x24), 4-chip hosts, 1200 GBps bidirectional ICI per
// chip, 50 Gbps DCN per chip. TPU v6e page: 256 chips per pod, 8 chips per
// host, 800 GBps bidirectional ICI per chip, all-reduce bandwidth 102.4 TB/s
// per pod. The rows hold half the bidirectional ICI (a ring all-reduce over
// the whole torus), which for v6e is Google's all-reduce figure per chip.
TEST_F(ClusterDbTest, TpuPodsMatchGooglesSystemArchitecturePages) {
  const Cluster& v5p = Get("tpu-v5p-pod");
  EXPECT_EQ(v5p.accelerator, "tpu-v5p");
  EXPECT_TRUE(v5p.reference);
  EXPECT_EQ(v5p.gpus_per_node, 4);
  EXPECT_EQ(v5p.nvlink_domain_gpus, 16 * 16 * 24);
  EXPECT_EQ(v5p.max_gpus, 8960);
  EXPECT_DOUBLE_EQ(v5p.scaleup_bw_bytes_per_s, 1200e9 / 2);
  EXPECT_DOUBLE_EQ(v5p.scaleout_bw_bytes_per_s, 50e9 / 8);  // 50 Gbps
  const Cluster& v6e = Get("trillium-pod");
  EXPECT_EQ(v6e.id, "tpu-v6e-pod");
  EXPECT_EQ(v6e.accelerator, "tpu-v6e");
  EXPECT_TRUE(v6e.reference);
  EXPECT_EQ(v6e.gpus_per_node, 8);
  EXPECT_EQ(v6e.nvlink_domain_gpus, 256);
  EXPECT_EQ(v6e.max_gpus, 256);
  EXPECT_DOUBLE_EQ(v6e.scaleup_bw_bytes_per_s, 800e9 / 2);
  EXPECT_DOUBLE_EQ(v6e.scaleup_bw_bytes_per_s, 102.4e12 / 256);
  for (const Cluster* c : {&v5p, &v6e}) {
    SCOPED_TRACE(c->id);
    EXPECT_NE(c->notes.find("approximation"), std::string::npos);
    EXPECT_NE(c->notes.find("unvalidated"), std::string::npos);
  }
}

TEST_F(ClusterDbTest, OverrideReplacesOnlyTheGivenColumns) {
  Cluster before = Get("dgx-h100");
  ASSERT_TRUE(
      db_.AddCsv("id,aliases,scaleout_gbps_per_gpu,price_per_gpu_hour\ndgx-h100,my-h100s,800,2.5\n", "my.csv").ok());
  const Cluster& after = Get("my-h100s");
  EXPECT_EQ(after.id, "dgx-h100");
  EXPECT_DOUBLE_EQ(after.scaleout_bw_bytes_per_s, 100e9);
  EXPECT_DOUBLE_EQ(after.price_per_gpu_hour, 2.5);
  EXPECT_DOUBLE_EQ(after.scaleup_bw_bytes_per_s, before.scaleup_bw_bytes_per_s);
  EXPECT_DOUBLE_EQ(after.scaleup_latency_s, before.scaleup_latency_s);
  EXPECT_EQ(after.name, before.name);
  EXPECT_EQ(after.source, before.source);
  EXPECT_EQ(after.gpus_per_node, before.gpus_per_node);
  EXPECT_EQ(after.aliases.size(), before.aliases.size() + 1);  // appended, not replaced
  EXPECT_EQ(Get("dgx-h100-80gb").id, "dgx-h100");
  EXPECT_EQ(db_.all().size(), 29u);
}

TEST_F(ClusterDbTest, NewRowIsAdded) {
  std::string csv =
      std::string(kHeader) + "\nmy-pod,pod,My pod,h100,0,8,8,450,200,2.5,9,1024,3.1,\"my datasheet, p. 2\",\n";
  ASSERT_TRUE(db_.AddCsv(csv, "my.csv").ok());
  const Cluster& c = Get("POD");
  EXPECT_EQ(c.id, "my-pod");
  EXPECT_EQ(c.accelerator, "h100");
  EXPECT_DOUBLE_EQ(c.scaleout_bw_bytes_per_s, 25e9);
  EXPECT_DOUBLE_EQ(c.scaleup_latency_s, 2.5e-6);
  EXPECT_EQ(c.max_gpus, 1024);
  EXPECT_EQ(c.source, "my datasheet, p. 2");
  EXPECT_EQ(db_.all().size(), 30u);
}

TEST_F(ClusterDbTest, UnknownColumnIsAParseErrorWithASuggestion) {
  Status s = AddError("id,scaleout_gbps_per_gpus\ndgx-h100,800\n");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_EQ(s.message(), "my.csv:1: unknown column 'scaleout_gbps_per_gpus' (did you mean 'scaleout_gbps_per_gpu'?)");
  s = AddError("id,scaleout_gbps,nic\ndgx-h100,800,cx7\n");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_EQ(s.message(), "my.csv:1: unknown columns 'scaleout_gbps', 'nic'");
}

TEST_F(ClusterDbTest, TextInANumberNamesLineAndColumn) {
  Status s = AddError("id,scaleout_gbps_per_gpu\ndgx-a100,200\ndgx-h100,x\n");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_EQ(s.message(), "my.csv:3: column 'scaleout_gbps_per_gpu': 'x' is not a number");
  s = AddError("id,gpus_per_node\ndgx-h100,8.5\n");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_EQ(s.message(), "my.csv:2: column 'gpus_per_node': '8.5' is not an integer");
}

TEST_F(ClusterDbTest, NonPositiveSizesAndBandwidthsAreOutOfRange) {
  Status s = AddError("id,scaleup_gbs_per_gpu\ndgx-h100,-450\n");
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "my.csv:2: column 'scaleup_gbs_per_gpu': -450 must be positive");
  s = AddError("id,scaleout_gbps_per_gpu\ndgx-h100,0\n");
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "my.csv:2: column 'scaleout_gbps_per_gpu': 0 must be positive");
  s = AddError("id,gpus_per_node\ndgx-h100,0\n");
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "my.csv:2: column 'gpus_per_node': 0 must be positive");
  s = AddError("id,scaleout_latency_us\ndgx-h100,-1\n");
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "my.csv:2: column 'scaleout_latency_us': -1 must be non-negative");
}

TEST_F(ClusterDbTest, AbsurdValuesAreOutOfRange) {
  Status s = AddError("id,scaleup_gbs_per_gpu\ndgx-h100,450e9\n");  // bytes/s given as GB/s
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message().rfind("my.csv:2: column 'scaleup_gbs_per_gpu': 450e9 is absurd", 0), 0u) << s.message();
  s = AddError("id,scaleout_gbps_per_gpu\ndgx-h100,400000000\n");
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message().rfind("my.csv:2: column 'scaleout_gbps_per_gpu':", 0), 0u) << s.message();
  s = AddError("id,scaleup_latency_us\ndgx-h100,2000000\n");  // 2 s
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message().rfind("my.csv:2: column 'scaleup_latency_us': 2000000 is absurd", 0), 0u) << s.message();
  s = AddError("id,gpus_per_node,nvlink_domain_gpus\ndgx-h100,8,2000000\n");
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message().rfind("my.csv:2: column 'nvlink_domain_gpus': 2000000 is absurd", 0), 0u) << s.message();
}

TEST_F(ClusterDbTest, DomainMustBeAMultipleOrDivisorOfTheNode) {
  Status s = AddError("id,nvlink_domain_gpus\ndgx-h100,12\n");
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(),
            "my.csv:2: column 'nvlink_domain_gpus': 12 is neither a multiple nor a divisor of gpus_per_node 8");
  EXPECT_TRUE(db_.AddCsv("id,nvlink_domain_gpus\ndgx-h100,2\n", "ok.csv").ok());    // NVLink pairs
  EXPECT_TRUE(db_.AddCsv("id,nvlink_domain_gpus\ndgx-h100,256\n", "ok.csv").ok());  // NVLink switch system
}

TEST_F(ClusterDbTest, DuplicateIdInOneFileIsAParseError) {
  Status s = AddError("id,scaleout_gbps_per_gpu\ndgx-h100,400\ndgx-a100,200\ndgx-h100,800\n");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_EQ(s.message(), "my.csv:4: duplicate id 'dgx-h100' (first on line 2)");
}

TEST_F(ClusterDbTest, NewClusterNeedsItsFabricColumns) {
  Status s = AddError("id,name,scaleout_gbps_per_gpu\nmy-pod,My pod,400\n");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_EQ(s.message(),
            "my.csv:2: column 'accelerator': required for the new cluster 'my-pod' (an override needs an existing id)");
}

TEST_F(ClusterDbTest, AliasNamingTwoClustersIsAParseError) {
  Status s = AddError("id,aliases\ndgx-a100,DGX-H100\n");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_EQ(s.message(), "my.csv:2: 'dgx-h100' names both 'dgx-a100' and 'dgx-h100'");
}

TEST_F(ClusterDbTest, BadIdAndMalformedCsvAreParseErrors) {
  Status s = AddError("id,scaleout_gbps_per_gpu\nDGX H100,400\n");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_EQ(s.message().rfind("my.csv:2: column 'id': 'DGX H100' must be lowercase", 0), 0u) << s.message();
  s = AddError("id,notes\ndgx-h100,\"unterminated\n");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_EQ(s.message().rfind("my.csv:2:", 0), 0u) << s.message();
  s = AddError("name\nx\n");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_EQ(s.message(), "my.csv:1: missing column 'id'");
}

TEST_F(ClusterDbTest, FailedAddLeavesTheDatabaseUnchanged) {
  EXPECT_FALSE(db_.AddCsv("id,scaleout_gbps_per_gpu\ndgx-h100,800\ndgx-a100,x\n", "my.csv").ok());
  EXPECT_DOUBLE_EQ(Get("dgx-h100").scaleout_bw_bytes_per_s, 50e9);
  EXPECT_FALSE(db_.AddCsv("id,scaleout_gbps_per_gpu,nvlink_domain_gpus\ndgx-h100,800,\ndgx-a100,,5\n", "my.csv").ok());
  EXPECT_DOUBLE_EQ(Get("dgx-h100").scaleout_bw_bytes_per_s, 50e9);
}

TEST_F(ClusterDbTest, MissingFileIsNotFound) {
  Status s = db_.AddFile(RealFileSystem(), "/nonexistent/clusters.csv");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("/nonexistent/clusters.csv"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace mfu
