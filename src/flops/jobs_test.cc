// The counting jobs (CountFlops, EstimateMemory, RunCalc, CountPresetParams):
// requests of plain values, resolved and checked, messages naming the
// parameter; expected numbers from the cited sources or by hand.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "mfu/calc.h"
#include "mfu/flops.h"
#include "mfu/hwdb.h"
#include "mfu/memory.h"
#include "mfu/model.h"
#include "mfu/result.h"

namespace mfu {
namespace {

ModelSpec Llama8bSpec() {
  auto m = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : ModelSpec{};
}

// meta-llama/Llama-3.1-8B's safetensors index: total_size 16,060,522,496
// bytes of bf16 = 8,030,261,248 parameters.
TEST(CountFlops, TrainingDefaultsAndMessages) {
  FlopsRequest r;
  r.model = Llama8bSpec();
  auto f = CountFlops(r);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->params.total, 8030261248.0);
  EXPECT_EQ(f->seq_len, 4096);  // the default, below the model's 131072
  ASSERT_TRUE(f->training.has_value());
  EXPECT_TRUE(f->conventions.empty());
  r.convention = "all";
  auto all = CountFlops(r);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->conventions.size(), AllConventions().size());
  r.inference = "decode";
  EXPECT_EQ(CountFlops(r).status().message(),
            "parameter 'convention' all compares training counts; give one convention with parameter 'inference'");
  r.convention = "megatron";
  EXPECT_EQ(CountFlops(r).status().message(),
            "parameter 'inference' decode needs parameter 'context' (keys per new token)");
  r.context = 1000;
  r.batch = 4;
  auto d = CountFlops(r);
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_TRUE(d->inference_flops.has_value());
  EXPECT_EQ(d->inference_flops->tokens, 4);  // one new token per sequence
  r.batch = 0;
  EXPECT_EQ(CountFlops(r).status().message(), "parameter 'batch' must be positive, got 0");
}

// KV cache of Llama-3.1-8B by hand: 32 layers x 8 KV heads x (128 + 128)
// x 2 bytes = 131,072 bytes per token.
TEST(EstimateMemory, KvCacheLayoutAndMessages) {
  MemoryRequest r;
  r.model = Llama8bSpec();
  r.seq_len = 8192;
  auto m = EstimateMemory(r);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_TRUE(m->kv_cache.has_value());
  EXPECT_EQ(m->kv_cache->bytes_per_token, 131072);
  EXPECT_EQ(m->kv_context, 8192);
  EXPECT_EQ(m->state_bytes_per_param, 18);  // Megatron: 2 + 4 + 12 bytes (docs/memory.md)
  EXPECT_EQ(m->layout.gpus, 1);
  r.tp = 3;
  EXPECT_EQ(EstimateMemory(r).status().message().rfind("parameter 'tp' 3 ", 0), 0u);
  r.tp = 1;
  r.sequence_parallel = true;
  EXPECT_EQ(EstimateMemory(r).status().message(), "parameter 'sp' needs parameter 'tp' > 1");
  r.sequence_parallel = false;
  r.optimizer = "adam-fp32";
  EXPECT_EQ(EstimateMemory(r).status().message().rfind("parameter 'optimizer' adam-fp32", 0), 0u);
}

// Llama 3.1's max_position_embeddings is 131072 (its config.json): a longer
// sequence or KV context is a data error, as in flops, calc and infer.
TEST(EstimateMemory, BeyondTheModelsMaximumIsOutOfRange) {
  MemoryRequest r;
  r.model = Llama8bSpec();
  ASSERT_EQ(r.model.max_position_embeddings, 131072);
  r.seq_len = 131072;
  EXPECT_TRUE(EstimateMemory(r).ok());
  r.seq_len = 131073;
  auto m = EstimateMemory(r);
  EXPECT_EQ(m.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(m.status().message(), "parameter 'seq_len' 131073 exceeds the model's max_position_embeddings (131072)");
  r.seq_len = 4096;
  r.context = 200000;
  EXPECT_EQ(EstimateMemory(r).status().code(), StatusCode::kOutOfRange);
}

// int4 weights are half a byte per parameter like fp4 and are echoed as the
// request spelled them, not as "fp4".
TEST(EstimateMemory, FourBitStorageKeepsItsName) {
  MemoryRequest r;
  r.model = Llama8bSpec();
  r.seq_len = 4096;
  r.weight_dtype = "INT4";
  auto m = EstimateMemory(r);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->dtypes.weights, DType::kFp4);
  EXPECT_EQ(m->dtypes.WeightsName(), "int4");
  EXPECT_EQ(m->dtypes.MainGradsName(), "fp32");  // the state's default, not spelled
  r.weight_dtype = "bfloat16";
  m = EstimateMemory(r);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->dtypes.WeightsName(), "bf16");
  EXPECT_EQ(StorageDTypeName("mxfp4"), "mxfp4");
  EXPECT_EQ(StorageDTypeName("fp-nothing"), "");
}

// torchtitan benchmarks/llama3_h100_202412_torchtitan.md: 6,667 tokens/s
// per GPU on 8 H100s is 39% MFU under the 6N + attention count (palm), the
// SXM dense bf16 peak 989.4 TFLOP/s.
TEST(RunCalc, TorchtitanRowThroughTheRequest) {
  auto db = HardwareDb::LoadBuiltin();
  ASSERT_TRUE(db.ok());
  CalcRequest r;
  r.model = Llama8bSpec();
  r.gpu = "h100";
  r.throughput.gpus = 8;
  r.throughput.seq_len = 8192;
  r.tokens_per_sec_per_gpu = "6667";
  r.convention = "palm";
  auto c = RunCalc(*db, r);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NEAR(c->result.mfu, 0.39, 0.005);
  EXPECT_DOUBLE_EQ(c->utilization.peak_flops_per_s, 989.4e12);
  EXPECT_DOUBLE_EQ(c->utilization.mfu, c->result.mfu);
  r.tokens_per_sec = "53.3k";  // a second source
  EXPECT_EQ(RunCalc(*db, r).status().code(), StatusCode::kInvalidArgument);
  r.tokens_per_sec = "";
  r.throughput.global_batch = 8;
  EXPECT_EQ(RunCalc(*db, r).status().message(), "parameter 'global_batch' goes with parameter 'step_time'");
}

TEST(CountPresetParams, EveryPresetSortedWithItsCounts) {
  auto presets = CountPresetParams();
  ASSERT_TRUE(presets.ok()) << presets.status().message();
  ASSERT_EQ(presets->size(), ListModelPresets().size());
  for (size_t i = 1; i < presets->size(); ++i)
    EXPECT_LT((*presets)[i - 1].preset.name, (*presets)[i].preset.name);
  for (const PresetCount& p : *presets)
    EXPECT_GT(p.params.total, 0) << p.preset.name;
}

// The one peak-fallback rule (DensePeakFlops) over a made-up device listing
// only fp16 (8), fp32 (2) and fp64 (1) TFLOP/s: a job's precision takes the
// other half type, a traced kernel's math takes FP32 for TF32 and FP64 for
// FP64 tensor but never the other half type, and nothing else falls back.
TEST(DensePeakFlops, JobAndKernelFallbacks) {
  Accelerator gpu;
  gpu.peak_tflops[static_cast<size_t>(DType::kFp16)] = 8;
  gpu.peak_tflops[static_cast<size_t>(DType::kFp32)] = 2;
  gpu.peak_tflops[static_cast<size_t>(DType::kFp64)] = 1;
  EXPECT_DOUBLE_EQ(DensePeakFlops(gpu, DType::kFp16), 8e12);  // listed
  EXPECT_DOUBLE_EQ(DensePeakFlops(gpu, DType::kBf16), 8e12);  // bf16 -> fp16
  EXPECT_DOUBLE_EQ(DensePeakFlops(gpu, DType::kTf32), 0);
  EXPECT_DOUBLE_EQ(DensePeakFlops(gpu, DType::kFp8), 0);
  const PeakFallbacks kernel = PeakFallbacks::Kernel();
  EXPECT_DOUBLE_EQ(DensePeakFlops(gpu, DType::kBf16, kernel), 0);
  EXPECT_DOUBLE_EQ(DensePeakFlops(gpu, DType::kTf32, kernel), 2e12);
  EXPECT_DOUBLE_EQ(DensePeakFlops(gpu, DType::kFp64Tensor, kernel), 1e12);
  EXPECT_DOUBLE_EQ(DensePeakFlops(gpu, DType::kFp64Tensor), 0);
  EXPECT_DOUBLE_EQ(DensePeakFlops(gpu, DType::kBf16, PeakFallbacks::None()), 0);
  EXPECT_DOUBLE_EQ(DensePeakFlops(gpu, DType::kFp16, PeakFallbacks::None()), 8e12);
  gpu.peak_tflops[static_cast<size_t>(DType::kBf16)] = 4;  // both listed: each its own
  EXPECT_DOUBLE_EQ(DensePeakFlops(gpu, DType::kBf16), 4e12);
  EXPECT_DOUBLE_EQ(DensePeakFlops(gpu, DType::kFp16), 8e12);
}

}  // namespace
}  // namespace mfu
