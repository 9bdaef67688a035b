// AnalyzeTrainingLog on hand-built timelines: the inputs resolved, the
// recomputed MFU checked against figures computed here by hand or printed by
// the frameworks (each cited), and the cross-checks issue #14 asks for.

#include "mfu/log_analysis.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "log/analysis_test_util.h"
#include "mfu/file_system.h"

namespace mfu {
namespace {

using log_test::CountKind;
using log_test::Db;
using log_test::FindKind;
using log_test::Model;
using log_test::Step;

// Llama-3-8B (and 3.1-8B) under torchtitan's formula, by hand
// (torchtitan/models/llama3/model.py get_nparams_and_flops, training-logs.md
// section 5.3): N = 8,030,261,248 total - 128,256 x 4,096 = 525,336,576 embedding
// = 7,504,924,672; 6N + 12 x L x heads x head_dim x T with L = 32, 32 heads
// of 128, T = 8192.
constexpr double kLlama8bN = 8'030'261'248.0 - 128256.0 * 4096.0;
constexpr double kLlama8bPalm = 6 * kLlama8bN + 12.0 * 32 * 32 * 128 * 8192;
constexpr double kH100Bf16 = 989.4e12;  // data/hardware/accelerators.csv h100-sxm5-80gb

LogTimeline Torchtitan(std::vector<double> tps, std::vector<double> logged_mfu) {
  LogTimeline t;
  t.format = LogFormat::kTorchtitan;
  for (size_t i = 0; i < tps.size(); ++i) {
    LogStep s = Step(static_cast<int64_t>(10 * (i + 1)), static_cast<int64_t>(i + 1));
    s.tokens_per_s_per_gpu = tps[i];
    s.logged_mfu = i < logged_mfu.size() ? logged_mfu[i] : kLogNaN;
    t.steps.push_back(s);
  }
  return t;
}

LogAnalysisRequest TitanRequest(const char* model = "llama-3-8b") {
  LogAnalysisRequest r;
  r.model = Model(model);
  r.gpu = "h100";
  r.gpus = 32;
  r.seq_len = 8192;
  return r;
}

TEST(SourceConvention, EachFrameworksOwnFormula) {
  // log_analysis.h and docs/logs.md's table.
  EXPECT_EQ(SourceConvention(LogFormat::kTorchtitan), Convention::kPalm);
  EXPECT_EQ(SourceConvention(LogFormat::kNanoGpt), Convention::kPalm);
  EXPECT_EQ(SourceConvention(LogFormat::kPicotron), Convention::kPalm);
  EXPECT_EQ(SourceConvention(LogFormat::kMegatronLm), Convention::kMegatron);
  EXPECT_EQ(SourceConvention(LogFormat::kNemo2), Convention::kMegatron);
  EXPECT_EQ(SourceConvention(LogFormat::kDeepSpeed), Convention::kMegatron);
  EXPECT_EQ(SourceConvention(LogFormat::kMaxText), Convention::kMaxtext);
  EXPECT_EQ(SourceConvention(LogFormat::kHfTrainer), Convention::kHf);
  EXPECT_EQ(SourceConvention(LogFormat::kHfTrainerState), Convention::kHf);
  EXPECT_EQ(SourceConvention(LogFormat::kComposer), Convention::kLlmFoundry);
}

// tests/data/logs/torchtitan_aws-llama3-8b-slurm-ansi.log prints
// `tps: 6,785  mfu: 39.73%` for Llama-3-8B on 32 H100 in BF16
// (aws-samples/awsome-distributed-training @7217859f, 3.test_cases/pytorch/
// torchtitan/slurm/README.md L59-67).
TEST(AnalyzeTrainingLog, ReproducesTorchtitansLoggedMfuOnTheAwsExcerpt) {
  auto a = AnalyzeTrainingLog(Torchtitan({6785, 6785, 6785}, {0.3973, 0.3973, 0.3973}), Db(), TitanRequest());
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->convention, Convention::kPalm);
  EXPECT_NEAR(a->model_flops_per_token / kLlama8bPalm, 1, 1e-3);
  EXPECT_NEAR(a->timeline.steps[0].mfu, kLlama8bPalm * 6785 / kH100Bf16, 1e-4);
  EXPECT_NEAR(a->timeline.steps[0].mfu / 0.3973, 1, 0.01);
  EXPECT_NEAR(a->steady_state.mfu / 0.3973, 1, 0.01);
  EXPECT_EQ(a->throughput_source, "tokens_per_s_per_gpu");
  EXPECT_EQ(CountKind(*a, "logged_mfu_mismatch"), 0u);
  EXPECT_EQ(CountKind(*a, "peak_a100_fallback"), 0u);
  // Megatron counts the same model with causal (halved) attention: below.
  EXPECT_LT(a->timeline.steps[0].mfu_megatron, a->timeline.steps[0].mfu);
}

// torchtitan docs/performance.md @eaea6f6a2fa9 (pytorch/torchtitan): "the 1D
// Llama 3.1 8B model training on 8 or 128 H100 GPUs without Float8 achieves
// 33% to 39% MFU", from its Table 1: FSDP 5,762 TPS/GPU and FSDP +
// torch.compile 6,667 TPS/GPU (local batch 2, seq 8192, H100 at 989 TFLOP/s).
TEST(AnalyzeTrainingLog, ReproducesTorchtitanDocs33And39PercentLines) {
  LogAnalysisRequest r = TitanRequest("llama-3.1-8b");
  r.gpus = 8;
  auto fsdp = AnalyzeTrainingLog(Torchtitan({5762, 5762, 5762}, {}), Db(), r);
  auto compiled = AnalyzeTrainingLog(Torchtitan({6667, 6667, 6667}, {}), Db(), r);
  ASSERT_TRUE(fsdp.ok() && compiled.ok());
  const double m33 = fsdp->steady_state.mfu, m39 = compiled->steady_state.mfu;
  EXPECT_GE(m33, 0.33);
  EXPECT_LT(m33, 0.34);
  EXPECT_GE(m39, 0.39);
  EXPECT_LT(m39, 0.40);
  EXPECT_NEAR(m39, kLlama8bPalm * 6667 / kH100Bf16, 1e-4);
}

TEST(AnalyzeTrainingLog, A100FallbackPeakOnAnH100IsNamed) {
  // What torchtitan prints when get_peak_flops falls back to 312e12.
  const double logged = kLlama8bPalm * 6785 / 312e12;  // 1.2594: 125.94%
  auto a = AnalyzeTrainingLog(Torchtitan({6785, 6785, 6785}, {logged, logged, logged}), Db(), TitanRequest());
  ASSERT_TRUE(a.ok());
  const LogFinding* f = FindKind(*a, "peak_a100_fallback");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("312 TFLOP/s"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("39.7"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("PR #4779"), std::string::npos) << f->message;
  EXPECT_EQ(f->line, 1);
  EXPECT_EQ(CountKind(*a, "mfu_above_100"), 1u);
}

TEST(AnalyzeTrainingLog, PrintedPeakLineIsChecked) {
  LogTimeline t = Torchtitan({6785, 6785}, {});
  t.header.peak_flops_used = 3.12e14;  // "Peak FLOPS used for computing MFU: 3.120e+14"
  t.header.peak_flops_line = 7;
  auto a = AnalyzeTrainingLog(t, Db(), TitanRequest());
  ASSERT_TRUE(a.ok());
  const LogFinding* f = FindKind(*a, "peak_a100_fallback");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->line, 7);
  t.header.peak_flops_used = 1.5e14;
  a = AnalyzeTrainingLog(t, Db(), TitanRequest());
  ASSERT_TRUE(a.ok());
  f = FindKind(*a, "peak_other");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("150.0 TFLOP/s"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("989.4"), std::string::npos) << f->message;
}

double TrueMfu(double tps) {
  return kLlama8bPalm * tps / kH100Bf16;
}

std::string CauseOf(double logged_factor, LogAnalysisRequest r = TitanRequest(), LogHeader h = {}) {
  const double m = TrueMfu(6785) * logged_factor;
  LogTimeline t = Torchtitan({6785, 6785, 6785}, {m, m, m});
  t.header = h;
  auto a = AnalyzeTrainingLog(t, Db(), r);
  if (!a.ok())
    return a.status().message();
  for (const LogFinding& f : a->findings) {
    if (f.kind != "mfu_above_100")
      return f.kind;
  }
  return "";
}

TEST(AnalyzeTrainingLog, CauseOfALoggedMfuMismatchFollowsTheRatio) {
  EXPECT_EQ(CauseOf(1.02), "");  // within the 10% tolerance
  EXPECT_EQ(CauseOf(0.5), "peak_sparse");
  EXPECT_EQ(CauseOf(32), "per_job_vs_per_device");
  EXPECT_EQ(CauseOf(1.0 / 32), "per_job_vs_per_device");
  LogHeader tp4;
  tp4.tensor_parallel = 4;
  EXPECT_EQ(CauseOf(4, TitanRequest(), tp4), "world_size");
  // Causal attention: 6N + 6 x L x heads x head_dim x T (half the T^2 term).
  const double causal = (6 * kLlama8bN + 6.0 * 32 * 32 * 128 * 8192) / kLlama8bPalm;  // 0.888
  EXPECT_EQ(CauseOf(causal), "attention_factor");
  EXPECT_EQ(CauseOf(1.37), "logged_mfu_mismatch");
  // TF32 on an H100: 989.4 / 494.7 = 2 (accelerators.csv), an FP8 run
  // against BF16 gives the same factor: only the precision tells them apart.
  LogAnalysisRequest fp8 = TitanRequest();
  fp8.precision = "fp8";
  EXPECT_EQ(CauseOf(1.0, fp8), "quantized_vs_bf16_peak");  // logged against BF16: 2x ours
  EXPECT_EQ(CauseOf(2.0), "peak_tf32");
}

// The ezpz FSDP log (tests/data/logs/hf-transformers_ezpz-fsdp-aurora.log,
// saforem2/ezpz @1229a179 docs/examples/hf-trainer/index.md): Llama-3.2-1B on
// 24 XPUs, 100 steps of 24 x 8192 tokens, `total_flos = 4454709GF` (x 2^30)
// and `Number of trainable parameters = 51,492,278`. By hand: 6 x 973.1e6
// non-embedding parameters (1,235,814,400 - 128,256 x 2,048) x 19,660,800
// tokens = 1.148e17, and 4.783e15 is 1/24 of it (training-logs.md section 7.3).
TEST(AnalyzeTrainingLog, HfTotalFlosExplainedAsShardedParameters) {
  LogTimeline t;
  t.format = LogFormat::kHfTrainer;
  t.header.global_batch = 24;
  t.header.parameters = 51'492'278;
  LogStep s = Step(100, 116);
  s.logged_total_flos = 4454709.0 * 1073741824.0;
  t.steps.push_back(s);
  LogAnalysisRequest r;
  r.model = Model("llama-3.2-1b");
  r.gpu = "h100";
  r.gpus = 24;
  r.seq_len = 8192;
  auto a = AnalyzeTrainingLog(t, Db(), r);
  ASSERT_TRUE(a.ok()) << a.status().message();
  const double n = 1'235'814'400.0 - 128256.0 * 2048;
  EXPECT_NEAR(6 * n * 19'660'800 / 24 / s.logged_total_flos, 1, 0.01);  // the hand derivation holds
  ASSERT_EQ(CountKind(*a, "sharded_parameters"), 2u);
  const LogFinding* f = nullptr;
  for (const LogFinding& x : a->findings) {
    if (x.kind == "sharded_parameters" && x.line == 116)
      f = &x;
  }
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("1/24"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("19660800 tokens"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("padding"), std::string::npos) << f->message;
  // The same FLOPs over one GPU's worth of tokens: 1.3x -> padding counted.
  // The log's own token count is used where it has one.
  t.steps[0].consumed_tokens = 19'660'800;
  a = AnalyzeTrainingLog(t, Db(), r);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(CountKind(*a, "sharded_parameters"), 2u);
  t.steps[0].logged_total_flos = 1.3 * 6 * n * 19'660'800;
  t.header.parameters = kLogNaN;
  a = AnalyzeTrainingLog(t, Db(), r);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(CountKind(*a, "padding_counted"), 1u);
  EXPECT_EQ(CountKind(*a, "sharded_parameters"), 0u);
}

TEST(AnalyzeTrainingLog, ThroughputFromWhateverTheLineHas) {
  LogTimeline t;
  t.format = LogFormat::kMegatronLm;
  LogStep a1 = Step(1, 1), a2 = Step(2, 2), a3 = Step(3, 3);
  a1.tokens_per_s = 64000;  // whole job: 8,000 per GPU
  a2.samples_per_s = 16;    // 16 x 4096 / 8 = 8,192
  a3.step_time_s = 2;       // 32 x 4096 / 2 / 8 = 8,192
  t.steps = {a1, a2, a3};
  LogAnalysisRequest r;
  r.model = Model("llama-3-8b");
  r.gpu = "h100";
  r.gpus = 8;
  r.seq_len = 4096;
  r.global_batch = 32;
  auto a = AnalyzeTrainingLog(t, Db(), r);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_DOUBLE_EQ(a->timeline.steps[0].tokens_per_s_per_gpu, 8000);
  EXPECT_DOUBLE_EQ(a->timeline.steps[1].tokens_per_s_per_gpu, 8192);
  EXPECT_DOUBLE_EQ(a->timeline.steps[2].tokens_per_s_per_gpu, 8192);
  EXPECT_EQ(a->throughput_source, "mixed");
  EXPECT_NEAR(a->timeline.steps[0].tflops_per_gpu, a->model_flops_per_token * 8000 / 1e12, 1e-9);
  EXPECT_NEAR(a->timeline.steps[0].mfu, a->model_flops_per_token * 8000 / kH100Bf16, 1e-12);
  EXPECT_EQ(a->precision_source, "default");
  ASSERT_FALSE(a->notes.empty());
  EXPECT_EQ(a->notes[0].code, "default_precision");
}

TEST(AnalyzeTrainingLog, SelectiveRecomputeRaisesHfuNotMfu) {
  LogTimeline t = Torchtitan({6000, 6000}, {});
  LogAnalysisRequest r = TitanRequest();
  r.recompute = "full";
  auto a = AnalyzeTrainingLog(t, Db(), r);
  ASSERT_TRUE(a.ok());
  const LogStep& s = a->timeline.steps[0];
  // Full recompute: one extra forward of every layer, so HFU / MFU is
  // close to 4/3 (the LM head is not recomputed: a bit less).
  EXPECT_GT(s.hfu / s.mfu, 1.25);
  EXPECT_LE(s.hfu / s.mfu, 4.0 / 3 + 1e-9);
}

TEST(AnalyzeTrainingLog, ModelFromTheHeadersArchitecture) {
  // Megatron's argument dump of a GPT-3-style model (no SwiGLU: ffn = 4h).
  LogTimeline t;
  t.format = LogFormat::kMegatronLm;
  t.header.num_layers = 24;
  t.header.hidden_size = 2048;
  t.header.num_attention_heads = 16;
  t.header.vocab_size = 50304;
  t.header.seq_len = 2048;
  t.header.world_size = 8;
  t.header.global_batch = 256;
  t.header.device_name = "NVIDIA H100 80GB HBM3";
  LogStep s = Step(10, 5);
  s.step_time_s = 1.5;
  t.steps.push_back(s);
  auto a = AnalyzeTrainingLog(t, Db(), {});
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->model_source, "header");
  EXPECT_EQ(a->gpu_source, "header");
  EXPECT_EQ(a->gpus_source, "header");
  EXPECT_EQ(a->gpu->id, "h100-sxm5-80gb");
  EXPECT_EQ(a->convention, Convention::kMegatron);
  // 256 x 2048 / 1.5 / 8 tokens/s per GPU.
  EXPECT_NEAR(a->timeline.steps[0].tokens_per_s_per_gpu, 256.0 * 2048 / 1.5 / 8, 1e-9);
  EXPECT_TRUE(std::isfinite(a->timeline.steps[0].mfu));
  EXPECT_EQ(CountKind(*a, "missing_input"), 0u);
}

TEST(AnalyzeTrainingLog, MissingInputsAreFindingsNotErrors) {
  LogTimeline t = Torchtitan({6785, 6785}, {0.3973, 0.3973});
  auto a = AnalyzeTrainingLog(t, Db(), {});
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(std::isnan(a->timeline.steps[0].mfu));
  EXPECT_GE(CountKind(*a, "missing_input"), 2u);  // no GPU, no model
  bool gpu = false, model = false;
  for (const LogFinding& f : a->findings) {
    gpu = gpu || f.message.find("parameter 'gpu'") != std::string::npos;
    model = model || f.message.find("parameter 'model'") != std::string::npos;
  }
  EXPECT_TRUE(gpu && model);
}

TEST(AnalyzeTrainingLog, BadRequestsNameTheParameter) {
  LogTimeline t = Torchtitan({6785}, {});
  LogAnalysisRequest r = TitanRequest();
  r.convention = "nonsense";
  auto a = AnalyzeTrainingLog(t, Db(), r);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("parameter 'convention'"), std::string::npos);
  r = TitanRequest();
  r.gpu = "no-such-gpu-xyz";
  a = AnalyzeTrainingLog(t, Db(), r);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("parameter 'gpu'"), std::string::npos);
  r = TitanRequest();
  r.tolerance = 0;
  EXPECT_EQ(AnalyzeTrainingLog(t, Db(), r).status().code(), StatusCode::kInvalidArgument);
  r = TitanRequest();
  r.precision = "fp4";  // no dense FP4 on an H100
  EXPECT_EQ(AnalyzeTrainingLog(t, Db(), r).status().code(), StatusCode::kInvalidArgument);
}

TEST(MergeTrainingLogs, AttemptsContinueAcrossFiles) {
  LogTimeline a = Torchtitan({6000, 6000}, {});
  LogTimeline b = Torchtitan({6000, 6000, 6000}, {});
  a.origin = "a.log";
  b.origin = "b.log";
  b.attempts = 2;
  b.steps[2].attempt = 1;
  b.header.seq_len = 8192;
  auto m = MergeTrainingLogs({a, b});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->steps.size(), 5u);
  EXPECT_EQ(m->attempts, 3);
  EXPECT_EQ(m->steps[2].attempt, 1);
  EXPECT_EQ(m->steps[4].attempt, 2);
  EXPECT_EQ(m->header.seq_len, 8192);
  EXPECT_EQ(m->origin, "a.log, b.log");
  EXPECT_FALSE(MergeTrainingLogs({}).ok());
}

TEST(AttachEvidence, TakesTheLineWithoutAnsi) {
  std::vector<LogFinding> f(2);
  f[0].origin = "x.log";
  f[0].line = 2;
  f[1].origin = "y.log";
  f[1].line = 1;
  AttachEvidence("first\n  \x1b[36mstep: 2  \x1b[35mmfu: 1%\x1b[39m  \r\nthird", "x.log", f);
  EXPECT_EQ(f[0].evidence, "step: 2  mfu: 1%");
  EXPECT_EQ(f[1].evidence, "");
}

}  // namespace
}  // namespace mfu
