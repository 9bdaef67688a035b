// The verdict, the cross-rank summary and the notes (mfu/trace_verdict.h,
// mfu/trace_job.h) on hand-built traces whose buckets are counted by hand,
// and the text and JSON that show them.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mfu/report_trace.h"
#include "mfu/trace_job.h"
#include "mfu/trace_verdict.h"
#include "testing/trace_builder.h"
#include "trace/job_test_fixtures.h"

// Helpers in their own namespace: the unity build compiles this file with
// its target's other tests.
namespace mfu::verdict_test {
namespace {

using testing::TraceBuilder;
using W = WaterfallBucket;

constexpr const char* kGemm = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn";

// One rank: a 100 us ProfilerStep with one GEMM of `gemm_ns` (no shapes) at 20 us.
RankTrace OneGemm(int64_t rank, int64_t gemm_ns) {
  TraceBuilder b;
  b.Annotation("ProfilerStep#1", 0, 100'000);
  b.Launch(1'000, 5, TraceEventKind::kKernel, kGemm, 20'000, gemm_ns, TraceBuilder::kStream7);
  RankTrace t = b.Build();
  t.rank = rank;
  return t;
}

TraceJobOptions H100() {
  return testing::H100Job(1);
}

StatusOr<JobAnalysis> Analyze(std::vector<int64_t> gemm_ns, const TraceJobOptions& o) {
  std::vector<RankTrace> traces;
  for (size_t i = 0; i < gemm_ns.size(); ++i)
    traces.push_back(OneGemm(static_cast<int64_t>(i), gemm_ns[i]));
  return AnalyzeTraceJob(std::move(traces), testing::BuiltinCatalog(), o);
}

TEST(VerdictRules, OneReadableRulePerLossBucket) {
  const auto rules = VerdictRules();
  ASSERT_EQ(rules.size(), kNumWaterfallBuckets - 1);  // matrix_at_peak is no loss
  std::set<std::string> codes;
  for (size_t b = 0; b < rules.size(); ++b) {
    EXPECT_EQ(static_cast<size_t>(rules[b].bucket), b);
    EXPECT_EQ(FindVerdictRule(static_cast<W>(b)), &rules[b]);
    EXPECT_TRUE(codes.insert(rules[b].code).second) << rules[b].code;
    EXPECT_GT(std::string(rules[b].why).size(), 20u) << rules[b].code;
    EXPECT_NE(rules[b].remedies[0], nullptr) << rules[b].code;
  }
  EXPECT_EQ(FindVerdictRule(W::kMatrixAtPeak), nullptr);
  // The remedies the issue asks for, tied to their buckets.
  EXPECT_NE(std::string(FindVerdictRule(W::kExposedCommunication)->remedies[2]).find("--overlap-grad-reduce"),
            std::string::npos);
  EXPECT_NE(std::string(FindVerdictRule(W::kIdle)->remedies[0]).find("CUDA graphs"), std::string::npos);
  EXPECT_NE(std::string(FindVerdictRule(W::kNonMatrixKernels)->remedies[0]).find("torch.compile"), std::string::npos);
}

TEST(Verdict, LargestLossesAboveTheThresholdFirst) {
  std::array<int64_t, kNumWaterfallBuckets> loss{};
  loss[static_cast<size_t>(W::kIdle)] = 10;
  loss[static_cast<size_t>(W::kExposedCommunication)] = 40;
  loss[static_cast<size_t>(W::kNonMatrixKernels)] = 4;  // 4% < 5%: not named
  loss[static_cast<size_t>(W::kMatrixBelowPeak)] = 20;
  loss[static_cast<size_t>(W::kMatrixAtPeak)] = 26;  // never a loss
  const auto v = RankLosses(loss, 100);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].rule->bucket, W::kExposedCommunication);
  EXPECT_DOUBLE_EQ(v[0].share, 0.40);
  EXPECT_EQ(v[1].rule->bucket, W::kMatrixBelowPeak);
  EXPECT_EQ(v[2].rule->bucket, W::kIdle);
  EXPECT_EQ(v[2].loss_ns, 10);
  VerdictOptions one;
  one.max_items = 1;
  EXPECT_EQ(RankLosses(loss, 100, one).size(), 1u);
  EXPECT_TRUE(RankLosses(loss, 0).empty());
}

TEST(Verdict, OneStepWithoutShapes) {
  auto job = Analyze({10'000}, H100());
  ASSERT_TRUE(job.ok()) << job.status().message();
  // 100 us step: 90 us idle, the 10 us GEMM has no shapes.
  const JobVerdict& v = job->ranks[0].verdict;
  EXPECT_EQ(v.basis, VerdictBasis::kWaterfall);
  EXPECT_EQ(v.step_ns, 100'000);
  ASSERT_EQ(v.items.size(), 2u);
  EXPECT_EQ(v.items[0].rule->bucket, W::kIdle);
  EXPECT_DOUBLE_EQ(v.items[0].share, 0.9);
  EXPECT_EQ(v.items[1].rule->bucket, W::kMatrixUnknownFlops);
  EXPECT_DOUBLE_EQ(v.items[1].share, 0.1);
  ASSERT_EQ(job->notes.size(), 1u);
  EXPECT_EQ(job->notes[0].code, "flops_unknown");

  const std::string text = RenderTraceJobText(*job, H100(), false);
  EXPECT_EQ(text.rfind("why MFU is low (this trace, MFU waterfall):\n  1. idle 90.0%: GPU idle (host-bound) - ", 0), 0u)
      << text;
  EXPECT_NE(text.find("MFU (hardware FLOPs): unknown - profile with record_shapes=True"), std::string::npos) << text;
  // The coverage line and the bucket agree: 0 of 10 us known.
  EXPECT_NE(text.find("FLOPs from shapes cover 0.0% of matrix-kernel time; matrix_unknown_flops 10 of 10 us"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("MFU (hardware FLOPs) 0.0%"), std::string::npos) << text;

  const auto j = nlohmann::json::parse(RenderTraceJobJson(*job, H100()));
  EXPECT_EQ(j["verdict"][0]["bucket"], "idle");
  EXPECT_EQ(j["verdict"][0]["code"], "host_bound_idle");
  EXPECT_EQ(j["verdict"][0]["loss_ns"], 90'000);
  EXPECT_EQ(j["ranks"][0]["waterfall"]["mfu_hw_status"], "unknown");
  EXPECT_EQ(j["notes"][0]["code"], "flops_unknown");
}

TEST(Verdict, WithoutAcceleratorFromTheTimeBreakdown) {
  TraceJobOptions o;
  o.threads = 1;
  auto job = Analyze({10'000}, o);
  ASSERT_TRUE(job.ok());
  // The GPU span is the GEMM alone: nothing idle, nothing exposed.
  EXPECT_EQ(job->verdict.basis, VerdictBasis::kTimeBreakdown);
  EXPECT_EQ(job->verdict.step_ns, 10'000);
  EXPECT_TRUE(job->verdict.items.empty());
}

TEST(Summary, SlowestRanksAgainstTheMedian) {
  // Compute 10, 20, 30 and 60 us, each the whole GPU span, no collectives
  // (no wait): work = span; median (20 + 30) / 2 = 25 us.
  auto job = Analyze({10'000, 20'000, 30'000, 60'000}, H100());
  ASSERT_TRUE(job.ok());
  const JobSummary& s = job->summary;
  ASSERT_EQ(s.ranks.size(), 4u);
  EXPECT_EQ(s.median_compute_ns, 25'000);
  EXPECT_EQ(s.median_work_ns, 25'000);
  EXPECT_EQ(s.ranks[3].wait_ns, 0);
  EXPECT_EQ(s.ranks[3].work_ns, 60'000);
  EXPECT_DOUBLE_EQ(s.compute_spread, 50.0 / 25.0);
  EXPECT_DOUBLE_EQ(s.work_spread, 50.0 / 25.0);
  ASSERT_EQ(s.slowest.size(), 2u);
  EXPECT_EQ(s.slowest[0], 3u);
  EXPECT_DOUBLE_EQ(s.ranks[3].work_vs_median, 60.0 / 25.0 - 1);
  EXPECT_EQ(s.slowest[1], 2u);
  EXPECT_DOUBLE_EQ(s.ranks[2].work_vs_median, 0.2);
  EXPECT_FALSE(s.ranks[0].mfu_hw.has_value());  // no shapes: unknown
  // Job verdict: idle 90 + 80 + 70 + 40 = 280 us of 400 us.
  ASSERT_FALSE(job->verdict.items.empty());
  EXPECT_EQ(job->verdict.items[0].rule->bucket, W::kIdle);
  EXPECT_EQ(job->verdict.items[0].loss_ns, 280'000);
  EXPECT_DOUBLE_EQ(job->verdict.items[0].share, 0.7);

  const std::string text = RenderTraceJobText(*job, H100(), false);
  EXPECT_EQ(text.find("window "), std::string::npos) << "no per-rank detail by default:\n" << text;
  EXPECT_NE(text.find("slowest ranks (most work; the others wait for them): 3 (+140.0%), 2 (+20.0%); spread"),
            std::string::npos)
      << text;
  const auto j = nlohmann::json::parse(RenderTraceJobJson(*job, H100()));
  EXPECT_EQ(j["summary"]["slowest_ranks"], nlohmann::json::array({3, 2}));
  EXPECT_EQ(j["summary"]["median_work_ns"], 25'000);
}

TEST(Summary, RanksSelectTheDetail) {
  TraceJobOptions o = H100();
  o.detail_ranks = {2};
  auto job = Analyze({10'000, 20'000, 30'000}, o);
  ASSERT_TRUE(job.ok());
  EXPECT_TRUE(CheckDetailRanks(*job, o).ok());
  EXPECT_FALSE(ShowsRankDetail(*job, o, 0));
  EXPECT_TRUE(ShowsRankDetail(*job, o, 2));
  const std::string text = RenderTraceJobText(*job, o, false);
  EXPECT_NE(text.find("\nrank 2  "), std::string::npos) << text;
  EXPECT_EQ(text.find("\nrank 0  "), std::string::npos) << text;
  o.detail_ranks = {7};
  Status s = CheckDetailRanks(*job, o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "parameter 'ranks': no rank 7 in the traces (ranks: 0,1,2)");
  o.detail_ranks.clear();
  o.detail_all_ranks = true;
  EXPECT_TRUE(ShowsRankDetail(*job, o, 0));
}

TEST(Notes, ModelMfuAbovePeakIsFlagged) {
  TraceJobOptions o = H100();
  TraceModelRequest m = testing::ModelRequest128(testing::TinyModel());
  m.tokens_per_step = 1e30;
  o.model = m;
  auto job = Analyze({10'000}, o);
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_FALSE(job->notes.empty());
  bool above = false;
  for (const Note& n : job->notes) {
    if (n.code != "mfu_above_peak")
      continue;
    above = true;
    EXPECT_NE(n.message.find("parameter 'tokens_per_step' counts the whole job"), std::string::npos) << n.message;
  }
  EXPECT_TRUE(above);
  const std::string text = RenderTraceJobText(*job, o, false);
  EXPECT_NE(text.find("warning: model MFU "), std::string::npos) << text;
}

// A stated bf16 on a V100, which lists only its fp16 tensor-core peak (125
// TFLOP/s, the V100 SXM2 datasheet row of data/hardware): the model MFU takes
// the fp16 peak, as predict does for --precision bf16, and says so.
TEST(Notes, StatedBf16OnAV100TakesTheFp16Peak) {
  TraceJobOptions o = H100();
  o.gpu_override = "v100";
  TraceModelRequest m = testing::ModelRequest128(testing::TinyModel());
  m.tokens_per_step = 1024;
  m.precision = DType::kBf16;
  o.model = m;
  auto job = Analyze({10'000}, o);
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_TRUE(job->ranks[0].waterfall && job->ranks[0].waterfall->model);
  const StepWaterfall& w = *job->ranks[0].waterfall;
  EXPECT_EQ(w.model->precision, DType::kBf16);
  EXPECT_EQ(w.model->peak_precision, DType::kFp16);
  EXPECT_TRUE(w.model->peak_fallback());
  EXPECT_DOUBLE_EQ(w.model->peak_flops_per_s, 125e12);
  EXPECT_DOUBLE_EQ(w.model->mfu, w.model->model_flops / (static_cast<double>(w.step_ns) * 1e-9 * 125e12));
  const auto note =
      std::find_if(job->notes.begin(), job->notes.end(), [](const Note& n) { return n.code == "peak_fallback"; });
  ASSERT_NE(note, job->notes.end());
  EXPECT_NE(note->message.find("v100-sxm2-32gb lists no dense bf16 peak: the model MFU is against its dense fp16"),
            std::string::npos)
      << note->message;
  EXPECT_NE(RenderTraceJobJson(*job, o).find("\"peak_fallback\": \"fp16\""), std::string::npos);
  EXPECT_NE(RenderTraceJobText(*job, o, false).find("vs fp16 peak (no bf16 listed); executed/model"),
            std::string::npos);

  // Stated fp16 is listed: no fallback, no note.
  m.precision = DType::kFp16;
  o.model = m;
  auto fp16 = Analyze({10'000}, o);
  ASSERT_TRUE(fp16.ok()) << fp16.status().message();
  EXPECT_FALSE(fp16->ranks[0].waterfall->model->peak_fallback());
  EXPECT_TRUE(
      std::none_of(fp16->notes.begin(), fp16->notes.end(), [](const Note& n) { return n.code == "peak_fallback"; }));
  EXPECT_EQ(RenderTraceJobJson(*fp16, o).find("peak_fallback"), std::string::npos);
}

TEST(Notes, ModelWithoutGpuIsSaid) {
  TraceJobOptions o;
  o.threads = 1;
  TraceModelRequest m = testing::ModelRequest128(testing::TinyModel());
  m.batch = 1;
  o.model = m;
  auto job = Analyze({10'000}, o);
  ASSERT_TRUE(job.ok());
  ASSERT_FALSE(job->notes.empty());
  EXPECT_EQ(job->notes[0].code, "model_ignored_no_gpu");
  EXPECT_NE(job->notes[0].message.find("pass parameter 'gpu'"), std::string::npos);
}

TEST(TextWidth, LinesFitTheWidth) {
  auto job = Analyze({10'000, 20'000}, H100());
  ASSERT_TRUE(job.ok());
  TraceJobOptions o = H100();
  o.detail_all_ranks = true;
  for (int width : {80, 100}) {
    TextOptions text;
    text.width = width;
    std::istringstream lines(RenderTraceJobText(*job, o, true, text));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("rank ", 0) == 0)
        continue;  // a file path is never cut
      EXPECT_LE(line.size(), static_cast<size_t>(width)) << line;
    }
  }
}

}  // namespace
}  // namespace mfu::verdict_test
