// MFU/HFU reproduced from published throughputs, each under its source's own
// convention (tests/data/training-runs-calibration.csv, copied from the
// project's reference set; training-runs-calibration.md says which
// convention each source uses). Tolerance: 0.5% relative.

#include "mfu/calc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "base/csv.h"
#include "base/file_system.h"
#include "mfu/result.h"

namespace mfu {
namespace {

const Accelerator& Gpu(const char* name) {
  static HardwareDb* db = [] {
    auto loaded = HardwareDb::LoadBuiltin();
    EXPECT_TRUE(loaded.ok()) << loaded.status().message();
    return new HardwareDb(std::move(loaded).value());
  }();
  auto gpu = db->Find(name);
  EXPECT_TRUE(gpu.ok()) << gpu.status().message();
  return **gpu;
}

base::CsvTable LoadRuns() {
  base::RealFileSystem fs;
  auto text = fs.ReadFile(std::string(MFU_SOURCE_DIR) + "/tests/data/training-runs-calibration.csv");
  EXPECT_TRUE(text.ok()) << text.status().message();
  auto table = base::ParseCsv(text.ok() ? *text : "", "training-runs-calibration.csv");
  EXPECT_TRUE(table.ok()) << table.status().message();
  return table.ok() ? *table : base::CsvTable{};
}

struct Row {
  const base::CsvTable& table;
  size_t index;
  const std::string& operator[](const char* column) const {
    return table.rows[index][static_cast<size_t>(table.Column(column))];
  }
  int64_t Int(const char* column) const { return std::stoll((*this)[column]); }
  double Num(const char* column) const { return std::stod((*this)[column]); }
};

// The rows of `runs` that `keep` accepts.
template <class Keep>
std::vector<Row> RowsWhere(const base::CsvTable& runs, Keep keep) {
  std::vector<Row> rows;
  for (size_t i = 0; i < runs.rows.size(); ++i) {
    if (Row row{runs, i}; keep(row))
      rows.push_back(row);
  }
  return rows;
}

// The transformer shape a calibration row gives (the rest is per source).
GenericModelOptions ShapeOf(const Row& row) {
  GenericModelOptions o;
  o.layers = row.Int("layers");
  o.hidden = row.Int("hidden");
  o.heads = row.Int("heads");
  o.ffn = row.Int("ffn");
  o.vocab = row.Int("vocab");
  return o;
}

// The row's job size and throughput per GPU.
TrainingThroughput PerGpuThroughputOf(const Row& row) {
  return {.tokens_per_s_per_gpu = row.Num("tokens_per_s_per_gpu"),
          .gpus = row.Int("gpu_count"),
          .seq_len = row.Int("seq_len")};
}

// torchtitan benchmarks/llama3_h100_202412_torchtitan.md: "1D Llama 3.1 8B
// on 8 or 128 H100 GPUs without Float8 achieves 33% to 39% MFU" with the
// 6*N(non-embedding) + 6*L*H*(dqk+dv)*T count and the SXM peak (989 TF).
// 33% is the 128-GPU eager row (5,605 TPS/GPU), 39% the 8-GPU compiled row
// (6,667). The published figures are whole percents, so the check is that
// ours round to them (and sit within 0.5 points).
TEST(Calc, TorchtitanLlama31_8B) {
  auto spec = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  ASSERT_TRUE(spec.ok());
  MfuOptions options{Convention::kPalm, Recompute::kNone, DType::kBf16};
  struct Case {
    int64_t gpus;
    double tps_per_gpu;
    double published;
  };
  for (Case c : {Case{128, 5605, 0.33}, Case{8, 6667, 0.39}}) {
    TrainingThroughput in;
    in.gpus = c.gpus;
    in.seq_len = 8192;
    in.tokens_per_s_per_gpu = c.tps_per_gpu;
    auto r = ComputeMfu(*spec, Gpu("h100"), in, options);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(std::lround(r->mfu * 100), std::lround(c.published * 100)) << r->mfu;
    EXPECT_NEAR(r->mfu, c.published, 0.005);
  }
}

// Korthikanti et al. 2022 Table 5 iteration times -> the MFU/HFU the
// Megatron-LM README (2e90a342f5) published for the seq-parallel + selective
// rows (GPT 22B, 175B, 530B, 1T), model FLOPs 72*B*s*l*h^2*(1+s/6h+V/12lh).
TEST(Calc, KorthikantiSelectiveRows) {
  base::CsvTable runs = LoadRuns();
  int checked = 0;
  for (size_t i = 0; i < runs.rows.size(); ++i) {
    Row row{runs, i};
    if (row["source"].rfind("Korthikanti", 0) != 0 || row["mfu_pct"].empty())
      continue;
    GenericModelOptions o = ShapeOf(row);
    o.gated_mlp = false;
    auto spec = BuildGenericModel(o);
    ASSERT_TRUE(spec.ok());
    TrainingThroughput in;
    in.gpus = row.Int("gpu_count");
    in.seq_len = row.Int("seq_len");
    in.step_time_s = row.Num("step_time_s");
    in.global_batch = row.Int("global_batch_seqs");
    auto r = ComputeMfu(*spec, Gpu("a100"), in, {Convention::kExact, Recompute::kSelective, DType::kBf16});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_NEAR(r->mfu / (row.Num("mfu_pct") / 100), 1.0, 0.005) << row["model"];
    EXPECT_NEAR(r->hfu / (row.Num("hfu_pct") / 100), 1.0, 0.005) << row["model"];
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// llm-foundry scripts/train/benchmarking README: MPT rows on A100 with MFU
// and HFU; convention 6*N (all params) + 12*l*d*s, HFU 8N + 16*l*d*s with
// activation checkpointing. MPT: tied embeddings, learned position
// embeddings of seq_len rows, biases, LayerNorm, plain 4h MLP.
TEST(Calc, LlmFoundryA100Rows) {
  const base::CsvTable runs = LoadRuns();
  int checked = 0;
  for (const Row& row : RowsWhere(runs, [](const Row& r) {
         return r["source"].find("llm-foundry") != std::string::npos &&
                r["gpu_type"].find("a100") != std::string::npos && !r["mfu_pct"].empty();
       })) {
    GenericModelOptions o = ShapeOf(row);
    o.gated_mlp = false;
    o.tied_embeddings = true;
    o.bias = true;
    o.norm = NormKind::kLayerNorm;
    o.position_embeddings = row.Int("seq_len");
    auto spec = BuildGenericModel(o);
    ASSERT_TRUE(spec.ok());
    const TrainingThroughput in = PerGpuThroughputOf(row);
    bool checkpointing = row["recompute"].find("full") != std::string::npos;
    MfuOptions options{Convention::kLlmFoundry, checkpointing ? Recompute::kFull : Recompute::kNone, DType::kBf16};
    auto r = ComputeMfu(*spec, Gpu("a100"), in, options);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_NEAR(r->mfu / (row.Num("mfu_pct") / 100), 1.0, 0.005) << "row " << row["row_id"];
    EXPECT_NEAR(r->hfu / (row.Num("hfu_pct") / 100), 1.0, 0.005) << "row " << row["row_id"];
    ++checked;
  }
  EXPECT_GE(checked, 100);
}

// NeMo 24.07 performance summary: model TFLOP/s per GPU from tokens/s per
// GPU, counted with full (non-causal) attention and exact GEMMs (the calibration
// notes verify 175B: 825 tok/s x 1.0766e12 = 888 TF). GPT3 and Nemotron use a
// plain 4h MLP, Llama a gated one.
TEST(Calc, NeMo2407TflopsPerGpu) {
  const base::CsvTable runs = LoadRuns();
  int checked = 0;
  for (const Row& row : RowsWhere(runs, [](const Row& r) { return r["source"].rfind("NVIDIA/NeMo", 0) == 0; })) {
    GenericModelOptions o = ShapeOf(row);
    o.kv_heads = row.Int("kv_heads");
    o.gated_mlp = row["model"].find("LLAMA") != std::string::npos;
    auto spec = BuildGenericModel(o);
    ASSERT_TRUE(spec.ok());
    const TrainingThroughput in = PerGpuThroughputOf(row);
    auto r = ComputeMfu(*spec, Gpu("h100"), in, {Convention::kExact, Recompute::kNone, DType::kFp8});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_NEAR(r->model_tflops_per_gpu / row.Num("tflops_per_gpu"), 1.0, 0.005) << row["model"];
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

TEST(Calc, RejectsContradictoryAndImpossibleInputs) {
  auto spec = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  ASSERT_TRUE(spec.ok());
  TrainingThroughput in;
  in.gpus = 8;
  in.seq_len = 8192;
  EXPECT_EQ(ComputeMfu(*spec, Gpu("h100"), in, {}).status().code(), StatusCode::kInvalidArgument);
  in.tokens_per_s = 1e5;
  in.tokens_per_s_per_gpu = 1e4;
  EXPECT_FALSE(ComputeMfu(*spec, Gpu("h100"), in, {}).ok());
  in.tokens_per_s_per_gpu = 0;
  in.tokens_per_s = 1e9;  // 125M tokens/s per GPU: far above the peak
  auto absurd = ComputeMfu(*spec, Gpu("h100"), in, {});
  ASSERT_FALSE(absurd.ok());
  EXPECT_NE(absurd.status().message().find("% of the dense"), std::string::npos);
  in.tokens_per_s = 1e4;
  in.gpus = 0;
  EXPECT_FALSE(ComputeMfu(*spec, Gpu("h100"), in, {}).ok());
  in.gpus = 8;
  in.step_time_s = 1;  // two sources
  EXPECT_FALSE(ComputeMfu(*spec, Gpu("h100"), in, {}).ok());
  in.tokens_per_s = 0;  // step time without global batch
  EXPECT_FALSE(ComputeMfu(*spec, Gpu("h100"), in, {}).ok());
  // V100 has no bf16 peak.
  in.step_time_s = 0;
  in.tokens_per_s = 1e4;
  EXPECT_FALSE(ComputeMfu(*spec, Gpu("v100"), in, {Convention::kMegatron, Recompute::kNone, DType::kBf16}).ok());
}

TEST(Calc, Bands) {
  EXPECT_EQ(DescribeMfuBand(0.2), "below the typical 30-60% band");
  EXPECT_EQ(DescribeMfuBand(0.45), "within the typical 30-60% band");
  EXPECT_EQ(DescribeMfuBand(0.7), "leading: the best published runs reach ~70%");
  EXPECT_STREQ(MfuBandCode(0.2), "below_typical");
  EXPECT_STREQ(MfuBandCode(0.45), "typical");
  EXPECT_STREQ(MfuBandCode(0.7), "leading");
  EXPECT_STREQ(MfuBandCode(0.9), "above_published");
  // Boundaries: 30% and 60% are typical, 75% leading (the bands as stated).
  EXPECT_STREQ(MfuBandCode(0.30), "typical");
  EXPECT_STREQ(MfuBandCode(0.60), "typical");
  EXPECT_STREQ(MfuBandCode(0.75), "leading");
  EXPECT_EQ(DescribeMfuBand(0.30), "within the typical 30-60% band");
}

// The plausibility note every job attaches: 1,000 TFLOP/s of model FLOPs on a
// 989 TFLOP/s peak is 101.1%, above the peak; 500 is not.
TEST(Notes, UtilizationAbovePeakIsAWarning) {
  const double peak = 989e12;
  Utilization over = MakeUtilization(Convention::kMegatron, DType::kBf16, 1000e12, 1000e12, peak);
  std::optional<Note> note = CheckUtilizationPlausible(over, "the throughput is for the whole job");
  ASSERT_TRUE(note.has_value());
  EXPECT_EQ(note->kind, NoteKind::kWarning);
  EXPECT_EQ(note->code, "mfu_above_peak");
  EXPECT_EQ(note->message,
            "MFU 101.1% is above 100% of the dense bf16 peak, which no job reaches: likely the throughput is for "
            "the whole job");
  EXPECT_FALSE(CheckUtilizationPlausible(MakeUtilization(Convention::kMegatron, DType::kBf16, 500e12, 600e12, peak), "")
                   .has_value());
  // Only HFU above the peak (recompute counted twice, say).
  std::optional<Note> hfu =
      CheckUtilizationPlausible(MakeUtilization(Convention::kMegatron, DType::kBf16, 900e12, 1200e12, peak), "");
  ASSERT_TRUE(hfu.has_value());
  EXPECT_EQ(hfu->message, "HFU 121.3% is above 100% of the dense bf16 peak, which no job reaches");
  // No peak: nothing to say.
  EXPECT_FALSE(
      CheckUtilizationPlausible(MakeUtilization(Convention::kMegatron, DType::kBf16, 1e15, 1e15, 0), "x").has_value());
  EXPECT_STREQ(NoteKindName(NoteKind::kAssumption), "assumption");
}

}  // namespace
}  // namespace mfu
