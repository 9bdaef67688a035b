#include "mfu/hwdb.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/csv.h"
#include "base/embedded_file.h"
#include "hwdb/name_match.h"
#include "mfu_embedded/hwdb_data.h"

namespace mfu {
namespace {

constexpr size_t kBf16 = static_cast<size_t>(DType::kBf16);
constexpr size_t kFp16 = static_cast<size_t>(DType::kFp16);
constexpr size_t kFp8 = static_cast<size_t>(DType::kFp8);
constexpr size_t kTf32 = static_cast<size_t>(DType::kTf32);
constexpr size_t kFp64 = static_cast<size_t>(DType::kFp64);
constexpr size_t kFp4 = static_cast<size_t>(DType::kFp4);

class BuiltinDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<HardwareDb> db = HardwareDb::LoadBuiltin();
    ASSERT_TRUE(db.ok()) << db.status().message();
    db_ = std::move(db).value();
  }

  const Accelerator& Get(std::string_view name) {
    StatusOr<const Accelerator*> a = db_.Find(name);
    EXPECT_TRUE(a.ok()) << a.status().message();
    static const Accelerator kMissing;
    return a.ok() ? **a : kMissing;
  }

  std::string FindError(std::string_view name) {
    StatusOr<const Accelerator*> a = db_.Find(name);
    EXPECT_FALSE(a.ok()) << name << " resolved to " << (a.ok() ? (*a)->id : "");
    if (a.ok())
      return "";
    EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
    return a.status().message();
  }

  HardwareDb db_;
};

// 42 devices of ../shared/reference/accelerators.csv plus the 500 W H100
// part of torchtitan's runs (a power-capped row of the H100 SXM5) and the two
// GPUs of the fleet telemetry captures (Tesla T4, RTX 4000 Ada).
TEST_F(BuiltinDbTest, LoadsAll45RowsWithCompleteMetadata) {
  ASSERT_EQ(db_.all().size(), 45u);
  std::set<std::string> ids;
  for (const Accelerator& a : db_.all()) {
    SCOPED_TRACE(a.id);
    EXPECT_TRUE(ids.insert(a.id).second);
    EXPECT_FALSE(a.vendor.empty());
    EXPECT_FALSE(a.name.empty());
    EXPECT_FALSE(a.form_factor.empty());
    EXPECT_FALSE(a.source.empty());
    EXPECT_FALSE(a.confidence.empty());
    EXPECT_GT(a.memory_gb, 0);
    double max_peak = 0;
    for (double p : a.peak_tflops)
      max_peak = std::max(max_peak, p);
    EXPECT_GT(max_peak, 0);
    EXPECT_LT(max_peak, 20000);  // B300 FP4 dense (13,500) is the largest
  }
}

TEST_F(BuiltinDbTest, ShippedCsvHasEveryColumn) {
  std::string_view bytes;
  for (const base::EmbeddedFile& f : base::HardwareDataFiles()) {
    if (f.path == "hardware/accelerators.csv")
      bytes = f.bytes;
  }
  StatusOr<base::CsvTable> table = base::ParseCsv(bytes, "accelerators.csv");
  ASSERT_TRUE(table.ok()) << table.status().message();
  // The reference columns plus the two leading ones mfu adds.
  const std::vector<std::string> expected = {"id",
                                             "aliases",
                                             "vendor",
                                             "accelerator",
                                             "form_factor",
                                             "fp64_tflops",
                                             "fp64_tensor_tflops",
                                             "fp32_tflops",
                                             "tf32_tflops",
                                             "bf16_tflops",
                                             "fp16_tflops",
                                             "fp8_tflops",
                                             "fp6_tflops",
                                             "fp4_tflops",
                                             "int8_tops",
                                             "vendor_sparse_multiplier",
                                             "memory_gb",
                                             "memory_type",
                                             "mem_bw_tbps",
                                             "l2_or_onchip_mb",
                                             "sm_or_cu_count",
                                             "boost_clock_mhz",
                                             "tdp_w",
                                             "power_cap_clock_fraction",
                                             "scaleup_interconnect",
                                             "scaleup_bw_per_direction_gbs",
                                             "scaleup_bw_total_bidir_gbs",
                                             "typical_scaleout_nic",
                                             "confidence",
                                             "source",
                                             "notes"};
  EXPECT_EQ(table->header, expected);
}

// Values from the vendors' datasheets. NVIDIA quotes Tensor Core rates "with
// sparsity" and notes "specifications are one-half lower without sparsity".
TEST_F(BuiltinDbTest, DenseDatasheetPeaks) {
  // NVIDIA H100 Tensor Core GPU datasheet, SXM column: BF16 1979*, FP8 3958*.
  const Accelerator& h100 = Get("h100");
  EXPECT_EQ(h100.id, "h100-sxm5-80gb");
  EXPECT_DOUBLE_EQ(h100.peak_tflops[kBf16], 989.4);
  EXPECT_DOUBLE_EQ(h100.peak_tflops[kFp16], 989.4);
  EXPECT_DOUBLE_EQ(h100.peak_tflops[kFp8], 1978.9);
  EXPECT_DOUBLE_EQ(h100.peak_tflops[kTf32], 494.7);
  EXPECT_DOUBLE_EQ(h100.peak_tflops[kFp64], 34);
  EXPECT_DOUBLE_EQ(h100.memory_gb, 80);
  EXPECT_DOUBLE_EQ(h100.memory_bw_tbps, 3.35);
  EXPECT_DOUBLE_EQ(h100.peak_flops(DType::kBf16), 989.4e12);
  // NVIDIA A100 datasheet: BF16 312 (624* with sparsity).
  EXPECT_DOUBLE_EQ(Get("a100").peak_tflops[kBf16], 312);
  // H100 PCIe 756.5 (Composer's table: 1.513e15 / 2).
  EXPECT_DOUBLE_EQ(Get("h100 pcie").peak_tflops[kBf16], 756.5);
  // AMD Instinct MI300X datasheet: BF16 1307.4 dense, 2614.9 with sparsity.
  const Accelerator& mi300x = Get("mi300x");
  EXPECT_DOUBLE_EQ(mi300x.peak_tflops[kBf16], 1307.4);
  EXPECT_DOUBLE_EQ(mi300x.peak_tflops[kFp8], 2614.9);
  // HGX B200: BF16 36 PF* per 8 GPUs -> 2250 dense per GPU (torchtitan 2.25e15).
  EXPECT_DOUBLE_EQ(Get("b200").peak_tflops[kBf16], 2250);
  // HGX B300: FP4 is the 1.33x exception, 13.5 PF dense per GPU.
  EXPECT_DOUBLE_EQ(Get("b300").peak_tflops[kFp4], 13500);
  // Intel Gaudi 3 white paper: FP8 = BF16 = 1835 (no 2x).
  const Accelerator& gaudi3 = Get("gaudi3");
  EXPECT_DOUBLE_EQ(gaudi3.peak_tflops[kBf16], 1835);
  EXPECT_DOUBLE_EQ(gaudi3.peak_tflops[kFp8], 1835);
  // Google Cloud TPU v5p page: 459 TF bf16 and fp8 (no speedup).
  EXPECT_DOUBLE_EQ(Get("tpu-v5p").peak_tflops[kFp8], 459);
  // H800: same GH100 compute as H100 SXM, FP64 cut to ~1 TF.
  const Accelerator& h800 = Get("h800");
  EXPECT_DOUBLE_EQ(h800.peak_tflops[kBf16], 989.4);
  EXPECT_DOUBLE_EQ(h800.peak_tflops[kFp64], 1);
}

// Rule 4 of the reference notes: the peak has the granularity of the device
// the runtime sees.
TEST_F(BuiltinDbTest, PerRuntimeDeviceGranularity) {
  // MI250X datasheet 383 per OAM; PyTorch sees 2 GCDs (torchtitan 191.5e12).
  const Accelerator& mi250x = Get("AMD Instinct MI250X");
  EXPECT_DOUBLE_EQ(mi250x.peak_tflops[kBf16], 191.5);
  EXPECT_DOUBLE_EQ(mi250x.memory_gb, 64);
  // TPU7x: 2307 per chip, each TensorCore is a device (torchtitan halves it).
  EXPECT_DOUBLE_EQ(Get("tpu7x").peak_tflops[kBf16], 1153.5);
  // Ascend 910C: 752 per dual-die package, each die is an NPU.
  EXPECT_DOUBLE_EQ(Get("ascend-910c").peak_tflops[kBf16], 376);
}

TEST_F(BuiltinDbTest, NoPeakIsAVendorSparseFigure) {
  struct Sparse {
    const char* id;
    size_t dtype;
    double sparse_tflops;
  };
  // Headline "with sparsity" figures from the datasheets cited in the CSV.
  const Sparse kSparse[] = {
      {"h100-sxm5-80gb", kBf16, 1979},     {"h100-sxm5-80gb", kFp8, 3958},      {"h100-sxm5-80gb", kTf32, 989},
      {"h100-pcie-80gb", kBf16, 1513},     {"h100-nvl-94gb", kBf16, 1671},      {"h200-sxm-141gb", kBf16, 1979},
      {"a100-sxm4-80gb", kBf16, 624},      {"a100-sxm4-80gb", kTf32, 312},      {"l40s-pcie-48gb", kBf16, 733},
      {"l4-pcie-24gb", kBf16, 242},        {"a10-pcie-24gb", kBf16, 250},       {"b200-sxm-180gb", kBf16, 4500},
      {"mi300x-oam-192gb", kBf16, 2614.9}, {"mi325x-oam-256gb", kBf16, 2614.9}, {"trn2", kBf16, 2563},
  };
  for (const Sparse& s : kSparse) {
    SCOPED_TRACE(s.id);
    const Accelerator& a = Get(s.id);
    EXPECT_GT(a.peak_tflops[s.dtype], 0);
    EXPECT_LT(a.peak_tflops[s.dtype], 0.6 * s.sparse_tflops);
  }
  // NVIDIA tensor TF32 is half the BF16 rate: a sparse BF16 next to a dense
  // TF32 (or the other way round) breaks the ratio.
  for (const Accelerator& a : db_.all()) {
    if (a.vendor != "NVIDIA" || a.peak_tflops[kTf32] <= 0 || a.peak_tflops[kBf16] <= 0) {
      continue;
    }
    SCOPED_TRACE(a.id);
    // B100's sheet gives 1750 / 900 = 1.94; a sparse mix-up gives 1 or 4.
    EXPECT_NEAR(a.peak_tflops[kBf16] / a.peak_tflops[kTf32], 2.0, 0.1);
  }
}

// deviceProperties[].name values from the Kineto traces in the project's
// trace collection (HTA, TraceLens, PARAM, Kineto and DeepSeek samples), plus
// the names PyTorch reports for the other parts in the database.
TEST_F(BuiltinDbTest, KinetoDeviceNamesResolve) {
  const std::pair<const char*, const char*> kNames[] = {
      // Seen in the sample traces.
      {"NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"},
      {"NVIDIA H800", "h800-sxm5-80gb"},
      {"NVIDIA B200", "b200-sxm-180gb"},
      {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"},
      {"NVIDIA A100-PG509-200", "a100-sxm4-40gb"},
      {"Tesla V100-SXM2-32GB", "v100-sxm2-32gb"},
      {"Tesla V100-SXM2-16GB", "v100-sxm2-32gb"},
      {"Tesla V100-DGXS-32GB", "v100-sxm2-32gb"},
      {"AMD Instinct MI300X", "mi300x-oam-192gb"},
      {"AMD Instinct MI300X VF", "mi300x-oam-192gb"},
      {"AMD Instinct MI210", "mi210-pcie-64gb"},
      // Other device names PyTorch reports.
      {"NVIDIA H100 PCIe", "h100-pcie-80gb"},
      {"NVIDIA H100 NVL", "h100-nvl-94gb"},
      {"NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"},
      {"NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"},
      {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
      {"Tesla V100-PCIE-32GB", "v100-pcie-32gb"},
      {"NVIDIA H200", "h200-sxm-141gb"},
      {"NVIDIA H200 NVL", "h200-nvl-141gb"},
      {"NVIDIA H20", "h20-sxm-96gb"},
      {"NVIDIA GH200 480GB", "gh200-96gb"},
      {"NVIDIA GB200", "gb200-186gb"},
      {"NVIDIA B300 SXM6 AC", "b300-sxm-288gb"},
      {"NVIDIA L4", "l4-pcie-24gb"},
      {"NVIDIA L40S", "l40s-pcie-48gb"},
      {"NVIDIA A10", "a10-pcie-24gb"},
      {"NVIDIA A30", "a30-pcie-24gb"},
      {"AMD Instinct MI250X", "mi250x-gcd-64gb"},
      {"AMD Instinct MI325X", "mi325x-oam-256gb"},
      {"AMD Instinct MI355X", "mi355x-oam-288gb"},
      {"MI355X", "mi355x-oam-288gb"},
      {"MI250X", "mi250x-gcd-64gb"},
  };
  for (const auto& [name, id] : kNames) {
    EXPECT_EQ(Get(name).id, id) << name;
  }
}

TEST_F(BuiltinDbTest, AmbiguousOrUnlistedDeviceNamesAreRefused) {
  // ROCm reports this for MI250 too (lower peak): the user must say which.
  EXPECT_EQ(FindError("AMD Instinct MI250X / MI250"),
            "gpu 'AMD Instinct MI250X / MI250': unknown accelerator; see command 'hw list'");
  // ROCm's generic name, and parts not in the database.
  FindError("AMD Radeon Graphics");
  FindError("NVIDIA GeForce RTX 2080 Ti");
  FindError("Quadro GP100");
  FindError("");
  FindError("NVIDIA");
}

TEST_F(BuiltinDbTest, ForgivingNamesForTheH100Family) {
  for (const char* name : {"h100", "H100", "H100 SXM5 80GB", "NVIDIA H100 80GB HBM3", "h100-sxm5-80gb",
                           "H100-SXM5-80GB", "h100_sxm5_80gb", "nvidia h100 sxm", "h100 80gb"}) {
    EXPECT_EQ(Get(name).id, "h100-sxm5-80gb") << name;
  }
  EXPECT_EQ(Get("H100 PCIe").id, "h100-pcie-80gb");
  EXPECT_EQ(Get("h100 nvl").id, "h100-nvl-94gb");
  // The NVL is a PCIe card, and the only H100 that is both.
  EXPECT_EQ(Get("h100 pcie nvl").id, "h100-nvl-94gb");
}

TEST_F(BuiltinDbTest, SubstringsNeverConfuseParts) {
  // "H200" contains "H20" and "GB200" contains "B200" (torchtitan checks the
  // longer name first); whole-token matching makes order irrelevant.
  EXPECT_EQ(Get("H20").id, "h20-sxm-96gb");
  EXPECT_EQ(Get("h200").id, "h200-sxm-141gb");
  EXPECT_EQ(Get("NVIDIA H200").id, "h200-sxm-141gb");
  EXPECT_EQ(Get("b200").id, "b200-sxm-180gb");
  EXPECT_EQ(Get("gb200").id, "gb200-186gb");
  EXPECT_EQ(Get("b300").id, "b300-sxm-288gb");
  EXPECT_EQ(Get("mi300x").id, "mi300x-oam-192gb");
  EXPECT_EQ(Get("tpu v5e").id, "tpu-v5e");
  EXPECT_EQ(Get("TPU v5 lite").id, "tpu-v5e");
  EXPECT_EQ(Get("Google TPU v5p").id, "tpu-v5p");
  EXPECT_EQ(Get("trainium2").id, "trn2");
}

TEST_F(BuiltinDbTest, FamilyDefaultBreaksTies) {
  // Both V100 parts have 32GB; "v100" is the SXM part's alias.
  EXPECT_EQ(Get("v100 32gb").id, "v100-sxm2-32gb");
  EXPECT_EQ(Get("a100 40gb").id, "a100-sxm4-40gb");
}

TEST_F(BuiltinDbTest, AmbiguousNameListsCandidates) {
  EXPECT_EQ(FindError("a100 pcie"), "gpu 'a100 pcie': ambiguous, candidates: a100-pcie-40gb, a100-pcie-80gb");
}

TEST_F(BuiltinDbTest, UnknownNameSuggestsTheClosest) {
  EXPECT_EQ(FindError("h1000"), "gpu 'h1000': unknown accelerator (did you mean 'h100'?); see command 'hw list'");
  EXPECT_EQ(FindError("NVIDIA mi300"),
            "gpu 'NVIDIA mi300': unknown accelerator (did you mean 'mi300x'?); see "
            "command 'hw list'");
}

TEST_F(BuiltinDbTest, DisplayName) {
  EXPECT_EQ(Get("h100").display_name(), "NVIDIA H100 SXM5 80GB");
}

TEST_F(BuiltinDbTest, OverrideChangesOnlyTheGivenColumns) {
  ASSERT_TRUE(db_.AddCsv("id,bf16_tflops,aliases,notes\n"
                         "h100-sxm5-80gb,700,my-h100,capped at 500 W\n",
                         "my.csv")
                  .ok());
  const Accelerator& h100 = Get("h100");  // the old alias still works
  EXPECT_DOUBLE_EQ(h100.peak_tflops[kBf16], 700);
  EXPECT_DOUBLE_EQ(h100.peak_tflops[kFp8], 1978.9);  // untouched
  EXPECT_DOUBLE_EQ(h100.memory_gb, 80);
  EXPECT_EQ(h100.notes, "capped at 500 W");
  EXPECT_EQ(Get("my-h100").id, "h100-sxm5-80gb");
  EXPECT_EQ(db_.all().size(), 45u);
}

TEST_F(BuiltinDbTest, OverrideAddsANewEntry) {
  Status s = db_.AddCsv(
      "id,vendor,accelerator,form_factor,bf16_tflops,memory_gb,aliases\n"
      "h100-96gb,NVIDIA,H100,SXM5 96GB,989.4,96,NVIDIA H100 96GB HBM3\n",
      "my.csv");
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(db_.all().size(), 46u);
  EXPECT_DOUBLE_EQ(Get("NVIDIA H100 96GB HBM3").memory_gb, 96);
  EXPECT_EQ(Get("h100").id, "h100-sxm5-80gb");
}

TEST_F(BuiltinDbTest, FailedOverrideLeavesTheDatabaseUnchanged) {
  Status s = db_.AddCsv("id,bf16_tflops\nh100-sxm5-80gb,1\nh100-sxm-80gb,2\n", "my.csv");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_EQ(s.message(),
            "my.csv:3: id 'h100-sxm-80gb' is not in the database (did you mean "
            "'h100-sxm5-80gb'?); a new entry needs a non-empty 'accelerator' column");
  EXPECT_DOUBLE_EQ(Get("h100").peak_tflops[kBf16], 989.4);
}

TEST_F(BuiltinDbTest, OverrideCannotStealAName) {
  Status s = db_.AddCsv("id,accelerator,aliases\nmine,X1,h100\n", "my.csv");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_EQ(s.message(), "my.csv:2: 'h100' names both 'h100-sxm5-80gb' and 'mine'");
  EXPECT_EQ(db_.all().size(), 45u);
}

TEST(HardwareDbTest, LoadOverrideFileReportsAMissingFile) {
  HardwareDb db;
  Status s = db.AddFile(RealFileSystem(), "/nonexistent-dir/mfu-hwdb-test.csv");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
}

// Each malformed input gives one line naming file:line and the field.
struct BadCsv {
  const char* name;
  const char* csv;
  StatusCode code;
  const char* message;
};

class MalformedCsvTest : public ::testing::TestWithParam<BadCsv> {};

TEST_P(MalformedCsvTest, GivesOneLineError) {
  const BadCsv& c = GetParam();
  StatusOr<HardwareDb> db = HardwareDb::ParseCsv(c.csv, "x.csv");
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), c.code);
  EXPECT_EQ(db.status().message(), c.message);
  EXPECT_EQ(db.status().message().find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Hwdb, MalformedCsvTest,
    ::testing::Values(
        BadCsv{"UnterminatedQuote", "id,notes\na,ok\nb,\"open\nc,x\n", StatusCode::kParse,
               "x.csv:3: unterminated quoted field"},
        BadCsv{"BadNumber", "id,bf16_tflops\na,1\nb,abc\n", StatusCode::kParse,
               "x.csv:3: column 'bf16_tflops': 'abc' is not a number"},
        BadCsv{"RangeText", "id,bf16_tflops\na,~280-376\n", StatusCode::kParse,
               "x.csv:2: column 'bf16_tflops': '~280-376' is not a number"},
        BadCsv{"NotFinite", "id,memory_gb\na,inf\n", StatusCode::kParse,
               "x.csv:2: column 'memory_gb': 'inf' is not a number"},
        BadCsv{"Negative", "id,fp8_tflops\na,-1\n", StatusCode::kOutOfRange,
               "x.csv:2: column 'fp8_tflops': -1 must not be negative"},
        BadCsv{"FlopsNotTflops", "id,bf16_tflops\na,989.4e12\n", StatusCode::kOutOfRange,
               "x.csv:2: column 'bf16_tflops': 989.4e12 is not below 1e5 (the "
               "unit is dense TFLOP/s)"},
        BadCsv{"BadCount", "id,sm_or_cu_count\na,148 (reported)\n", StatusCode::kParse,
               "x.csv:2: column 'sm_or_cu_count': '148 (reported)' is not a count"},
        BadCsv{"UnknownColumn", "id,bf16_tflop\na,1\n", StatusCode::kParse,
               "x.csv:1: unknown column 'bf16_tflop' (did you mean 'bf16_tflops'?)"},
        BadCsv{"UnknownColumns", "id,foo,bar\na,1,2\n", StatusCode::kParse, "x.csv:1: unknown columns 'foo', 'bar'"},
        BadCsv{"MissingId", "accelerator,bf16_tflops\nH100,1\n", StatusCode::kParse, "x.csv:1: missing column 'id'"},
        BadCsv{"DuplicateId", "id,bf16_tflops\na,1\nb,2\na,3\n", StatusCode::kParse,
               "x.csv:4: duplicate id 'a' (first on line 2)"},
        BadCsv{"EmptyId", "id,bf16_tflops\n,1\n", StatusCode::kParse, "x.csv:2: column 'id' is empty"},
        BadCsv{"UppercaseId", "id\nH100\n", StatusCode::kParse,
               "x.csv:2: column 'id': 'H100' must be lowercase letters, digits, "
               "'-', '_' or '.'"},
        BadCsv{"VendorOnlyAlias", "id,aliases\na,nvidia\n", StatusCode::kParse,
               "x.csv:2: column 'aliases': alias 'nvidia' has nothing but vendor "
               "words"},
        BadCsv{"SharedAlias", "id,aliases\na,x1\nb,X1\n", StatusCode::kParse, "x.csv:3: 'x1' names both 'a' and 'b'"},
        BadCsv{"SameIdKey", "id\na-1\na_1\n", StatusCode::kParse, "x.csv:3: 'a 1' names both 'a-1' and 'a_1'"},
        BadCsv{"FieldCount", "id,bf16_tflops\na,1,2\n", StatusCode::kParse, "x.csv:2: row has 3 fields, header has 2"}),
    [](const ::testing::TestParamInfo<BadCsv>& p) { return p.param.name; });

TEST(HardwareDbTest, ParseCsvAcceptsQuotedFieldsAndSubsets) {
  StatusOr<HardwareDb> db = HardwareDb::ParseCsv(
      "id,vendor,accelerator,form_factor,bf16_tflops,notes\r\n"
      "x1,Acme,X1,\"OAM, 64GB\",\" 100 \",\"says \"\"fast\"\"\"\r\n",
      "x.csv");
  ASSERT_TRUE(db.ok()) << db.status().message();
  ASSERT_EQ(db->all().size(), 1u);
  const Accelerator& a = db->all()[0];
  EXPECT_EQ(a.form_factor, "OAM, 64GB");
  EXPECT_DOUBLE_EQ(a.peak_tflops[kBf16], 100);
  EXPECT_EQ(a.notes, "says \"fast\"");
  EXPECT_EQ(a.display_name(), "Acme X1 OAM, 64GB");
  StatusOr<const Accelerator*> found = db->Find("acme x1");
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ((*found)->id, "x1");
}

TEST(HardwareDbTest, IdsOfVendorWordsAreFoundByIdOnly) {
  StatusOr<HardwareDb> db = HardwareDb::ParseCsv("id\nnvidia\namd\n", "x.csv");
  ASSERT_TRUE(db.ok()) << db.status().message();
  StatusOr<const Accelerator*> found = db->Find("amd");
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ((*found)->id, "amd");
}

TEST(NameMatchTest, TokensDropVendorWordsAndSeparators) {
  EXPECT_EQ(hwdb::NameTokens("NVIDIA A100-SXM4-80GB"), (std::vector<std::string>{"a100", "sxm4", "80gb"}));
  EXPECT_EQ(hwdb::NameKey("AMD Instinct MI300X (OAM)"), "mi300x oam");
  EXPECT_EQ(hwdb::NameKey("Tesla V100_SXM2/32GB"), "v100 sxm2 32gb");
  EXPECT_TRUE(hwdb::NameTokens(" nvidia  ").empty());
}

TEST(DTypeTest, NamesRoundTrip) {
  for (size_t i = 0; i < kNumDTypes; ++i) {
    DType dtype = static_cast<DType>(i);
    StatusOr<DType> parsed = ParseDType(DTypeName(dtype));
    ASSERT_TRUE(parsed.ok()) << DTypeName(dtype);
    EXPECT_EQ(*parsed, dtype);
  }
  EXPECT_STREQ(DTypeName(DType::kBf16), "bf16");
  EXPECT_STREQ(DTypeName(DType::kInt8), "int8");
}

TEST(DTypeTest, CommonSpellings) {
  const std::pair<const char*, DType> kSpellings[] = {
      {"BF16", DType::kBf16},
      {"bfloat16", DType::kBf16},
      {"torch.bfloat16", DType::kBf16},
      {"c10::BFloat16", DType::kBf16},
      {"half", DType::kFp16},
      {"float16", DType::kFp16},
      {"c10::Half", DType::kFp16},
      {"float", DType::kFp32},
      {"fp8-e4m3", DType::kFp8},
      {"float8_e4m3fn", DType::kFp8},
      {"c10::Float8_e5m2", DType::kFp8},
      {"mxfp4", DType::kFp4},
      {"int8", DType::kInt8},
      {"double", DType::kFp64},
      {"fp64-tensor", DType::kFp64Tensor},
      {" tf32 ", DType::kTf32},
  };
  for (const auto& [text, dtype] : kSpellings) {
    StatusOr<DType> parsed = ParseDType(text);
    ASSERT_TRUE(parsed.ok()) << text;
    EXPECT_EQ(*parsed, dtype) << text;
  }
}

TEST(DTypeTest, UnknownListsAcceptedNames) {
  StatusOr<DType> parsed = ParseDType("fp12");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(),
            "unknown dtype 'fp12' (accepted: fp64, fp64_tensor, fp32, tf32, bf16, "
            "fp16, fp8, fp6, fp4, int8)");
}

TEST(DTypeTest, Bytes) {
  EXPECT_DOUBLE_EQ(DTypeBytes(DType::kBf16), 2);
  EXPECT_DOUBLE_EQ(DTypeBytes(DType::kFp8), 1);
  EXPECT_DOUBLE_EQ(DTypeBytes(DType::kFp4), 0.5);
  EXPECT_DOUBLE_EQ(DTypeBytes(DType::kFp32), 4);
}

// dcgm-exporter's modelName and AMD's card_model strings, as the captures in
// tests/data/telemetry spell them (and dcgm-exporter's docs for H100/A100),
// find their rows: `mfu fleet analyze` takes the device from this string and
// never guesses. Figures from the datasheets cited in the rows' source:
// T4 65 TFLOPS FP16 on 40 SMs at 1,590 MHz (40 x 1,590e6 x 1,024 = 65.1e12);
// RTX 4000 Ada 327.6 TFLOPS FP8 sparse -> 81.9 BF16 dense, 48 SMs, 2,175 MHz.
TEST_F(BuiltinDbTest, TelemetryModelNamesFindTheirRows) {
  const std::pair<const char*, const char*> cases[] = {
      {"Tesla T4", "t4-pcie-16gb"},
      {"NVIDIA RTX 4000 Ada Generation", "rtx-4000-ada-20gb"},
      {"NVIDIA L40S", "l40s-pcie-48gb"},
      {"NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"},
      {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"},
      {"NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"},
      {"AMD Instinct MI300X", "mi300x-oam-192gb"},
  };
  for (const auto& [model_name, id] : cases) {
    SCOPED_TRACE(model_name);
    StatusOr<const Accelerator*> a = db_.Find(model_name);
    ASSERT_TRUE(a.ok()) << a.status().message();
    EXPECT_EQ((*a)->id, id);
  }
  const Accelerator* t4 = *db_.Find("Tesla T4");
  EXPECT_EQ(t4->sm_count, 40);
  EXPECT_DOUBLE_EQ(t4->boost_clock_mhz, 1590);
  EXPECT_DOUBLE_EQ(t4->peak_flops(DType::kFp16), 65e12);
  EXPECT_DOUBLE_EQ(t4->peak_flops(DType::kBf16), 0);  // Turing: no BF16 tensor path
  const Accelerator* ada = *db_.Find("NVIDIA RTX 4000 Ada Generation");
  EXPECT_EQ(ada->sm_count, 48);
  EXPECT_DOUBLE_EQ(ada->boost_clock_mhz, 2175);
  EXPECT_DOUBLE_EQ(ada->peak_flops(DType::kBf16), 327.6e12 / 4);
}

}  // namespace
}  // namespace mfu
