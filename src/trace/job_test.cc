// The trace job (mfu/trace_job.h) and its renderers (mfu/report_trace.h) on
// a hand-built one-step trace whose numbers are counted by hand: a 100 us
// ProfilerStep on the CPU with one 10 us BF16 GEMM (no shapes) on stream 7.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mfu/report_trace.h"
#include "mfu/trace_job.h"
#include "testing/trace_builder.h"
#include "trace/job_test_fixtures.h"

namespace mfu {
namespace {

using testing::TraceBuilder;
using W = WaterfallBucket;

const Catalog& Builtin() {
  return testing::BuiltinCatalog();
}

std::vector<RankTrace> OneStep() {
  TraceBuilder b;
  b.Annotation("ProfilerStep#1", 0, 100'000);
  b.Launch(1'000, 5, TraceEventKind::kKernel, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn", 20'000, 10'000,
           TraceBuilder::kStream7);
  std::vector<RankTrace> traces;
  traces.push_back(b.Build());
  traces[0].rank = 0;
  return traces;
}

TraceJobOptions H100() {
  return testing::H100Job(2);
}

TEST(TraceJob, OneStepWaterfallByHand) {
  auto job = AnalyzeTraceJob(OneStep(), Builtin(), H100());
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_EQ(job->ranks.size(), 1u);
  const RankAnalysis& r = job->ranks[0];
  ASSERT_NE(r.gpu, nullptr);
  EXPECT_EQ(r.gpu->id, "h100-sxm5-80gb");
  ASSERT_TRUE(r.waterfall.has_value()) << r.waterfall_error;
  const StepWaterfall& w = *r.waterfall;
  EXPECT_EQ(w.label, "ProfilerStep#1");
  EXPECT_EQ(w.step_ns, 100'000);
  EXPECT_EQ(w[W::kIdle], 90'000);                // 100 us step - 10 us busy
  EXPECT_EQ(w[W::kMatrixUnknownFlops], 10'000);  // the GEMM, no shapes
  EXPECT_EQ(w[W::kMatrixAtPeak], 0);
  EXPECT_DOUBLE_EQ(w.compute_share, 0.1);
  EXPECT_DOUBLE_EQ(w.matrix_share, 1.0);
  EXPECT_TRUE(CheckConsistency(w).ok()) << CheckConsistency(w).message();
  EXPECT_TRUE(CheckConsistency(static_cast<const Waterfall&>(w)).ok());
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.main.temporal.span_ns, 10'000);
}

TEST(TraceJob, ModelUtilization) {
  TraceJobOptions o = H100();
  TraceModelRequest m = testing::ModelRequest128(testing::TinyModel());
  m.batch = 2;
  o.model = m;
  auto job = AnalyzeTraceJob(OneStep(), Builtin(), o);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const StepWaterfall& w = *job->ranks[0].waterfall;
  ASSERT_TRUE(w.model.has_value());
  const Utilization& u = w.model->utilization;
  // FLOP/s = FLOPs per step / 100 us; mfu = that / the H100's dense BF16 peak.
  EXPECT_DOUBLE_EQ(u.model_flops_per_s, w.model->model_flops / 100e-6);
  EXPECT_DOUBLE_EQ(u.peak_flops_per_s, 989.4e12);
  EXPECT_NEAR(u.mfu, w.model->mfu, 1e-12);
  EXPECT_EQ(u.precision, DType::kBf16);
}

TEST(TraceJob, OptionErrorsNameParameters) {
  TraceJobOptions o = H100();
  o.threads = 300;
  Status s = ValidateTraceJobOptions(o, Builtin());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("parameter 'threads'"), std::string::npos) << s.message();

  o = H100();
  o.model = TraceModelRequest{};
  s = AnalyzeTraceJob(OneStep(), Builtin(), o).status();
  EXPECT_NE(s.message().find("parameter 'seq_len'"), std::string::npos) << s.message();
  o.model->seq_len = 128;
  s = ValidateTraceJobOptions(o, Builtin());
  EXPECT_NE(s.message().find("parameter 'tokens_per_step' or parameter 'batch'"), std::string::npos) << s.message();
  o.model->tokens_per_step = 0;
  s = ValidateTraceJobOptions(o, Builtin());
  EXPECT_NE(s.message().find("must be positive"), std::string::npos) << s.message();

  o = H100();
  o.gpu_override = "h1000";
  EXPECT_EQ(ValidateTraceJobOptions(o, Builtin()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(AnalyzeTracePaths(RealFileSystem(), {"/no/such/trace.json"}, Builtin(), H100()).status().code(),
            StatusCode::kNotFound);
}

TEST(TraceJob, NoAcceleratorIsNotAnError) {
  TraceJobOptions o;
  o.threads = 1;
  auto job = AnalyzeTraceJob(OneStep(), Builtin(), o);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->ranks[0].gpu, nullptr);
  EXPECT_FALSE(job->ranks[0].accelerator_error.empty());
  EXPECT_FALSE(job->ranks[0].waterfall.has_value());
}

TEST(TraceReport, JsonCarriesTheSharedWaterfall) {
  auto job = AnalyzeTraceJob(OneStep(), Builtin(), H100());
  ASSERT_TRUE(job.ok());
  const std::string text = RenderTraceJobJson(*job, H100());
  ASSERT_EQ(text.back(), '\n');
  const auto j = nlohmann::json::parse(text);
  const auto& rank = j["ranks"][0];
  EXPECT_EQ(rank["gpu"]["id"], "h100-sxm5-80gb");
  const auto& w = rank["waterfall"];
  EXPECT_EQ(w["step_ns"], 100'000);
  EXPECT_EQ(w["buckets_ns"]["idle"], 90'000);
  EXPECT_EQ(w["buckets_ns"]["matrix_unknown_flops"], 10'000);
  EXPECT_EQ(w["label"], "ProfilerStep#1");
  EXPECT_EQ(rank["temporal"]["span_ns"], 10'000);
  EXPECT_EQ(rank["steps"][0]["waterfall"]["step_ns"], 100'000);
}

TEST(TraceReport, TextAndCsv) {
  auto job = AnalyzeTraceJob(OneStep(), Builtin(), H100());
  ASSERT_TRUE(job.ok());
  const std::string text = RenderTraceJobText(*job, H100(), false);
  EXPECT_NE(text.find("MFU waterfall over ProfilerStep#1 (100 us, dense peaks of h100-sxm5-80gb)"), std::string::npos)
      << text;
  const auto files = RenderTraceJobCsv(*job);
  ASSERT_GE(files.size(), 8u);
  EXPECT_EQ(files[5].first, "waterfall.csv");
  // Eight buckets of the one step, in us: idle 90, matrix_unknown_flops 10.
  EXPECT_NE(files[5].second.find("0,\"ProfilerStep#1\",idle,90\n"), std::string::npos) << files[5].second;
  EXPECT_NE(files[5].second.find("0,\"ProfilerStep#1\",matrix_unknown_flops,10\n"), std::string::npos);
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

// The library renders the same bytes as `mfu trace` (the golden outputs of
// tests/golden/trace, recorded from the CLI), for a job read by path.
TEST(TraceReport, SameBytesAsTheCliGoldens) {
  std::filesystem::current_path(MFU_SOURCE_DIR);  // the goldens name paths from the checkout
  for (const char* name : {"triton", "nccl-a100"}) {
    const std::string golden = std::string("tests/golden/trace/") + name;
    const std::string cmd = ReadFile(golden + "/cmd");  // "trace PATH"
    const std::string path = cmd.substr(6, cmd.find_last_not_of(" \n") - 5);
    TraceJobOptions options;
    auto job = AnalyzeTracePaths(RealFileSystem(), {path}, Builtin(), options);
    ASSERT_TRUE(job.ok()) << job.status().message();
    EXPECT_EQ(RenderTraceJobText(*job, options, false), ReadFile(golden + "/expected.txt")) << name;
    // The CLI spells the library's "parameter 'python'" (a diagnostic's
    // description) as its flag.
    std::string json = RenderTraceJobJson(*job, options);
    for (size_t at = json.find("parameter 'python'"); at != std::string::npos; at = json.find("parameter 'python'"))
      json.replace(at, 18, "--python");
    EXPECT_EQ(json, ReadFile(golden + "/expected.json")) << name;
  }
}

}  // namespace
}  // namespace mfu
