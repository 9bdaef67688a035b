// ResolveHardware's default (reference) cluster, and the cluster presets
// added for #12 checked against an independent transcription of the vendor
// figures each row cites (data/clusters/clusters.csv `source`).

#include "mfu/setup.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace mfu {
namespace {

Catalog Builtin() {
  StatusOr<Catalog> c = Catalog::Load(InMemoryFileSystem(), CatalogFiles{});
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? std::move(c).value() : Catalog{};
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ResolveHardware, MultiNodeGpuUsesTheReferenceClusterAndSaysSo) {
  Catalog catalog = Builtin();
  HardwareRequest r;
  r.gpu = "h100";
  r.gpus = 64;
  StatusOr<ResolvedHardware> hw = ResolveHardware(catalog, r);
  ASSERT_TRUE(hw.ok()) << hw.status().message();
  ASSERT_NE(hw->cluster, nullptr);
  EXPECT_EQ(hw->cluster->id, "dgx-h100");
  ASSERT_EQ(hw->notes.size(), 1u);
  EXPECT_EQ(hw->notes[0].kind, NoteKind::kAssumption);
  EXPECT_EQ(hw->notes[0].code, "default_cluster");
  EXPECT_TRUE(Contains(hw->notes[0].message, "dgx-h100")) << hw->notes[0].message;
  EXPECT_TRUE(Contains(hw->notes[0].message, "parameter 'cluster'")) << hw->notes[0].message;

  // DeepSeek-V3 on 256 H800 (the example) needs no CSV any more.
  r.gpu = "h800";
  r.gpus = 256;
  hw = ResolveHardware(catalog, r);
  ASSERT_TRUE(hw.ok()) << hw.status().message();
  EXPECT_EQ(hw->cluster->id, "deepseek-h800");

  r.gpu = "mi300x";
  r.gpus = 0;
  r.nodes = 4;
  hw = ResolveHardware(catalog, r);
  ASSERT_TRUE(hw.ok()) << hw.status().message();
  EXPECT_EQ(hw->cluster->id, "mi300x-platform");
  EXPECT_EQ(hw->gpus, 32);
}

TEST(ResolveHardware, OneNodeNeedsNoCluster) {
  Catalog catalog = Builtin();
  HardwareRequest r;
  r.gpu = "h100";
  r.gpus = 8;
  StatusOr<ResolvedHardware> hw = ResolveHardware(catalog, r);
  ASSERT_TRUE(hw.ok()) << hw.status().message();
  EXPECT_EQ(hw->cluster, nullptr);
  EXPECT_TRUE(hw->notes.empty());
}

TEST(ResolveHardware, NoReferenceClusterListsTheGpusClusters) {
  Catalog catalog = Builtin();
  HardwareRequest r;
  r.gpu = "h100-96gb-500w";  // only grand-teton-h100, not a reference
  r.gpus = 16;
  StatusOr<ResolvedHardware> hw = ResolveHardware(catalog, r);
  ASSERT_FALSE(hw.ok());
  EXPECT_EQ(hw.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(hw.status().message(), "its clusters: grand-teton-h100")) << hw.status().message();
  r.gpu = "h20";  // no cluster at all
  hw = ResolveHardware(catalog, r);
  ASSERT_FALSE(hw.ok());
  EXPECT_TRUE(Contains(hw.status().message(), "no cluster preset has h20-sxm-96gb")) << hw.status().message();
  EXPECT_TRUE(Contains(hw.status().message(), "data/clusters/README.md")) << hw.status().message();
}

TEST(ResolveHardware, TwoReferencesForOneGpuIsAnError) {
  InMemoryFileSystem fs;
  fs.AddFile("c.csv", "id,reference\naws-p5,1\n");
  CatalogFiles files;
  files.clusters = {"c.csv"};
  StatusOr<Catalog> catalog = Catalog::Load(fs, files);
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  HardwareRequest r;
  r.gpu = "h100";
  r.gpus = 16;
  StatusOr<ResolvedHardware> hw = ResolveHardware(*catalog, r);
  ASSERT_FALSE(hw.ok());
  EXPECT_TRUE(Contains(hw.status().message(), "both marked reference")) << hw.status().message();
}

TEST(ClusterPresets, AtMostOneReferencePerAccelerator) {
  Catalog catalog = Builtin();
  std::map<std::string, std::string> reference;
  for (const Cluster& c : catalog.clusters.all()) {
    StatusOr<const Accelerator*> a = catalog.hardware.Find(c.accelerator);
    ASSERT_TRUE(a.ok()) << c.id << ": " << a.status().message();
    if (!c.reference)
      continue;
    EXPECT_TRUE(reference.emplace((*a)->id, c.id).second) << (*a)->id << ": " << reference[(*a)->id] << " and " << c.id;
  }
  for (const char* gpu : {"a100", "h100", "h200", "b200", "gb200", "h800", "mi300x", "mi325x", "mi355x"}) {
    StatusOr<const Accelerator*> a = catalog.hardware.Find(gpu);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(reference.count((*a)->id), 1u) << gpu;
  }
}

// The vendors' figures as their documents state them: NVLink per GPU
// bidirectional, NICs per node (or per GPU) in Gb/s. The table holds per GPU,
// per direction (data/clusters/README.md rule 1); this derives that here.
struct Datasheet {
  const char* id;
  const char* accelerator;
  int gpus_per_node;
  double scaleup_bidir_gbs_per_gpu;  // GB/s, both directions
  double node_scaleout_gbps;         // Gb/s, all GPU NICs of a node
  int64_t max_gpus;
};

constexpr Datasheet kDatasheets[] = {
    // DeepSeek-V3 report Sec. 3.1/3.2.2: IB 50 GB/s per GPU = 400 Gb/s, 2048 GPUs;
    // H800 NVLink 400 GB/s bidirectional.
    {"deepseek-h800", "h800-sxm5-80gb", 8, 400, 8 * 50 * 8, 2048},
    // AMD platform data sheets: 7 Infinity Fabric links x 128 GB/s (MI300X,
    // MI325X) or x 153.6 GB/s (MI355X) bidirectional; 8 x 400G NICs.
    {"mi300x-platform", "mi300x-oam-192gb", 8, 7 * 128, 8 * 400, 0},
    {"mi325x-platform", "mi325x-oam-256gb", 8, 7 * 128, 8 * 400, 0},
    {"mi355x-platform", "mi355x-oam-288gb", 8, 7 * 153.6, 8 * 400, 0},
    // AWS P5/P6 pages: 3200 Gbps EFA per instance; NVLink 900 GB/s (Hopper),
    // 1.8 TB/s (Blackwell) bidirectional per GPU.
    {"aws-p5", "h100-sxm5-80gb", 8, 900, 3200, 0},
    {"aws-p5e", "h200-sxm-141gb", 8, 900, 3200, 0},
    {"aws-p5en", "h200-sxm-141gb", 8, 900, 3200, 0},
    {"aws-p6-b200", "b200-sxm-180gb", 8, 1800, 3200, 0},
    // GCP "Networking and GPU machines": A3 High 4 x 200 Gbps GPU NICs, A3 Mega
    // 8 x 200, A3 Ultra and A4 8 x ConnectX-7 = 3200 Gbps.
    {"gcp-a3-high", "h100-sxm5-80gb", 8, 900, 4 * 200, 0},
    {"gcp-a3-mega", "h100-sxm5-80gb", 8, 900, 8 * 200, 0},
    {"gcp-a3-ultra", "h200-sxm-141gb", 8, 900, 3200, 0},
    {"gcp-a4", "b200-sxm-180gb", 8, 1800, 3200, 0},
    // Microsoft Learn ND H100 v5 / ND H200 v5: one 400 Gb/s NDR IB per GPU.
    {"azure-nd-h100-v5", "h100-sxm5-80gb", 8, 900, 8 * 400, 0},
    {"azure-nd-h200-v5", "h200-sxm-141gb", 8, 900, 8 * 400, 0},
};

TEST(ClusterPresets, NewRowsMatchTheirDatasheets) {
  Catalog catalog = Builtin();
  for (const Datasheet& d : kDatasheets) {
    StatusOr<const Cluster*> found = catalog.clusters.Find(d.id);
    ASSERT_TRUE(found.ok()) << found.status().message();
    const Cluster& c = **found;
    EXPECT_EQ(*catalog.hardware.Find(c.accelerator), *catalog.hardware.Find(d.accelerator)) << d.id;
    EXPECT_EQ(c.gpus_per_node, d.gpus_per_node) << d.id;
    EXPECT_EQ(c.nvlink_domain_gpus, d.gpus_per_node) << d.id;
    EXPECT_DOUBLE_EQ(c.scaleup_bw_bytes_per_s, d.scaleup_bidir_gbs_per_gpu / 2 * 1e9) << d.id;
    EXPECT_DOUBLE_EQ(c.scaleout_bw_bytes_per_s, d.node_scaleout_gbps / d.gpus_per_node * 1e9 / 8) << d.id;
    EXPECT_EQ(c.max_gpus, d.max_gpus) << d.id;
    EXPECT_FALSE(c.source.empty()) << d.id;
    EXPECT_TRUE(Contains(c.notes, "not measured")) << d.id;
  }
}

}  // namespace
}  // namespace mfu
