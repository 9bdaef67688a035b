// Issue #12 "no silent defaults, no implausible figure, unvalidated said",
// library side: the notes of predict, plan and infer; the request checks of
// the training and inference jobs (zero, negative, NaN and infinite values
// rejected naming the parameter); measured figures above the peak rejected
// as data errors. Expected numbers are computed here from the inputs, never
// copied from the program's output.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mfu/catalog.h"
#include "mfu/file_system.h"
#include "mfu/inference_job.h"
#include "mfu/model.h"
#include "mfu/training_setup.h"

namespace mfu {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

const Catalog& Builtin() {
  static const Catalog catalog = *Catalog::LoadBuiltin();
  return catalog;
}

const Note* Find(const std::vector<Note>& notes, const std::string& code) {
  for (const Note& n : notes) {
    if (n.code == code)
      return &n;
  }
  return nullptr;
}

// The families data/efficiency/validation.csv marks "validated" for
// training (column 2) or inference (column 3), read here independently of
// the loader.
std::vector<std::string> ValidatedFamilies(int column) {
  std::ifstream f(std::string(MFU_SOURCE_DIR) + "/data/efficiency/validation.csv");
  EXPECT_TRUE(f.good());
  std::vector<std::string> out;
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    for (std::string c; cols.size() < 3 && std::getline(ss, c, ',');)
      cols.push_back(c);
    if (cols.size() == 3 && cols[static_cast<size_t>(column)] == "validated")
      out.push_back(cols[0]);
  }
  return out;
}

std::string Joined(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items)
    s += (s.empty() ? "" : ", ") + i;
  return s;
}

TrainingRequest Training(const std::string& model, const std::string& gpu, const std::string& cluster, int64_t gpus) {
  TrainingRequest r;
  r.model = *LoadModel(mfu::RealFileSystem(), model);
  r.hardware.gpu = gpu;
  r.hardware.cluster = cluster;
  r.hardware.gpus = gpus;
  r.seq_len = 8192;
  return r;
}

// ------------------------------------------------------------- predict

// The example: predict without a global batch takes gbs = dp x mbs,
// one micro-batch per pipeline per step. Llama 3.1 70B on 64 H100 (dgx-h100)
// at tp 8 pp 4: dp = 64 / 32 = 2, gbs = 2 x 1 = 2; with one micro-batch
// through 4 stages, 1F1B idles each stage (p - 1) / (m + p - 1) = 3/4 of the
// pipeline time, so the bubble is most of the step.
TEST(PredictNotes, DefaultGlobalBatchIsSaidLoudly) {
  auto s = std::move(ResolveTrainingSetup(Builtin(), Training("llama-3.1-70b", "", "dgx-h100", 64))).value();
  TrainingConfigRequest q;
  q.tp = 8;
  q.pp = 4;
  auto c = ResolveTrainingConfig(*s, q);
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto r = PredictTraining(*s, *c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Note* n = Find(r->notes, "default_global_batch");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->kind, NoteKind::kAssumption);
  EXPECT_EQ(n->message.rfind("global batch not given: dp x mbs = 2 sequences, 1 micro-batch per step (", 0), 0u)
      << n->message;
  EXPECT_NE(n->message.find("give parameter 'gbs'"), std::string::npos);
  // The bubble it names is at least the 1F1B share of the pipeline time
  // (the step also holds the optimizer and exposed communication).
  const double bubble = r->prediction.breakdown.bubble_s / r->prediction.step_s;
  EXPECT_GT(bubble, 0.5);
  EXPECT_LT(bubble, 0.75);
  char figure[32];
  std::snprintf(figure, sizeof figure, "(%.0f%% of the step", 100 * bubble);
  EXPECT_NE(n->message.find(figure), std::string::npos) << n->message;

  // With the job's global batch: no note, and far less bubble.
  q.gbs = 512;
  c = ResolveTrainingConfig(*s, q);
  ASSERT_TRUE(c.ok());
  r = PredictTraining(*s, *c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Find(r->notes, "default_global_batch"), nullptr);
  EXPECT_LT(r->prediction.breakdown.bubble_s / r->prediction.step_s, 0.1);
}

// Families without measured training runs carry "unvalidated_family"; the
// validated families the note names are those of validation.csv.
TEST(PredictNotes, UnvalidatedFamiliesAreSaid) {
  const std::vector<std::string> validated = ValidatedFamilies(1);
  ASSERT_FALSE(validated.empty());
  for (const char* gpu : {"b200", "mi300x"}) {
    auto s = ResolveTrainingSetup(Builtin(), Training("llama-3.1-8b", gpu, "", 8));
    ASSERT_TRUE(s.ok()) << gpu << ": " << s.status().message();
    const Note* n = Find((*s)->notes, "unvalidated_family");
    ASSERT_NE(n, nullptr) << gpu;
    EXPECT_EQ(n->kind, NoteKind::kWarning);
    EXPECT_NE(n->message.find((*s)->gpu->id), std::string::npos) << n->message;
    EXPECT_NE(n->message.find("(" + Joined(validated) + ")"), std::string::npos) << n->message;
    EXPECT_NE(n->message.find(std::string(ValidatedTrainingError())), std::string::npos) << n->message;
  }
  auto h100 = ResolveTrainingSetup(Builtin(), Training("llama-3.1-8b", "h100", "", 8));
  ASSERT_TRUE(h100.ok());
  EXPECT_EQ(Find((*h100)->notes, "unvalidated_family"), nullptr);
}

// A TPU v5p slice (data/clusters tpu-v5p-pod, its ICI torus approximated
// as a flat domain) predicts, and says it is unvalidated: no TPU family has
// a measured run.
TEST(PredictNotes, TpuV5pSliceRunsAndIsUnvalidated) {
  for (const auto& [gpu, cluster] : {std::pair{"tpu-v5p", ""}, std::pair{"", "tpu-v5p-pod"}}) {
    SCOPED_TRACE(std::string(gpu) + cluster);
    auto s = ResolveTrainingSetup(Builtin(), Training("llama-3.1-8b", gpu, cluster, 64));
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_NE((*s)->cluster, nullptr);
    EXPECT_EQ((*s)->cluster->id, "tpu-v5p-pod");
    const Note* n = Find((*s)->notes, "unvalidated_family");
    ASSERT_NE(n, nullptr);
    EXPECT_NE(n->message.find("tpu-v5p"), std::string::npos) << n->message;
    TrainingConfigRequest q;
    q.tp = 4;
    q.gbs = 256;
    auto c = ResolveTrainingConfig(**s, q);
    ASSERT_TRUE(c.ok()) << c.status().message();
    auto r = PredictTraining(**s, *c);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_GT(r->prediction.step_s, 0);
    ASSERT_NE(Find(r->notes, "unvalidated_family"), nullptr);
  }
}

// ------------------------------------------------------- training checks

struct BadConfig {
  const char* param;
  std::function<void(TrainingConfigRequest&)> set;
  const char* label;
};

class TrainingConfigRejects : public testing::TestWithParam<BadConfig> {};

TEST_P(TrainingConfigRejects, NamingTheParameter) {
  auto s = std::move(ResolveTrainingSetup(Builtin(), Training("llama-3.1-8b", "h100", "", 8))).value();
  TrainingConfigRequest q;
  GetParam().set(q);
  StatusOr<TrainingConfig> c = ResolveTrainingConfig(*s, q);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find(std::string("parameter '") + GetParam().param + "'"), std::string::npos)
      << c.status().message();
}

std::function<void(TrainingConfigRequest&)> Size(int64_t TrainingConfigRequest::*field, int64_t v) {
  return [field, v](TrainingConfigRequest& q) { q.*field = v; };
}

INSTANTIATE_TEST_SUITE_P(Fields, TrainingConfigRejects,
                         testing::Values(BadConfig{"tp", Size(&TrainingConfigRequest::tp, 0), "tp_zero"},
                                         BadConfig{"tp", Size(&TrainingConfigRequest::tp, -2), "tp_negative"},
                                         BadConfig{"pp", Size(&TrainingConfigRequest::pp, 0), "pp_zero"},
                                         BadConfig{"pp", Size(&TrainingConfigRequest::pp, -1), "pp_negative"},
                                         BadConfig{"cp", Size(&TrainingConfigRequest::cp, 0), "cp_zero"},
                                         BadConfig{"ep", Size(&TrainingConfigRequest::ep, -1), "ep_negative"},
                                         BadConfig{"etp", Size(&TrainingConfigRequest::etp, 0), "etp_zero"},
                                         BadConfig{"vpp", Size(&TrainingConfigRequest::vpp, 0), "vpp_zero"},
                                         BadConfig{"mbs", Size(&TrainingConfigRequest::mbs, 0), "mbs_zero"},
                                         BadConfig{"mbs", Size(&TrainingConfigRequest::mbs, -4), "mbs_negative"},
                                         BadConfig{"mbs", Size(&TrainingConfigRequest::mbs, int64_t{1} << 40),
                                                   "mbs_absurd"},
                                         BadConfig{"dp", Size(&TrainingConfigRequest::dp, -1), "dp_negative"},
                                         BadConfig{"gbs", Size(&TrainingConfigRequest::gbs, -64), "gbs_negative"},
                                         BadConfig{"zero", [](TrainingConfigRequest& q) { q.zero = 4; }, "zero_stage"}),
                         [](const testing::TestParamInfo<BadConfig>& i) { return std::string(i.param.label); });

class TrainingSetupRejects : public testing::TestWithParam<double> {};

// moe_imbalance is a ratio in [1, 64]: 0, negative, NaN and inf rejected.
TEST_P(TrainingSetupRejects, MoeImbalance) {
  TrainingRequest r = Training("llama-3.1-8b", "h100", "", 8);
  r.moe_imbalance = GetParam();
  auto s = ResolveTrainingSetup(Builtin(), r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message().rfind("parameter 'moe_imbalance' must be in [1, 64]", 0), 0u) << s.status().message();
}
INSTANTIATE_TEST_SUITE_P(Values, TrainingSetupRejects, testing::Values(0.0, -1.0, 0.5, 65.0, kNan, kInf));

TEST(TrainingSetupRejects, SeqLen) {
  for (int64_t seq : {int64_t{0}, int64_t{-8192}, int64_t{1} << 30}) {
    TrainingRequest r = Training("llama-3.1-8b", "h100", "", 8);
    r.seq_len = seq;
    auto s = ResolveTrainingSetup(Builtin(), r);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().message().rfind("parameter 'seq_len' must be in [1, 2^24]", 0), 0u) << s.status().message();
  }
}

// ------------------------------------------------------------------ plan

struct BadPlan {
  const char* param;
  std::function<void(PlanRequest&)> set;
  const char* label;
};

class PlanRejects : public testing::TestWithParam<BadPlan> {};

TEST_P(PlanRejects, NamingTheParameter) {
  auto s = std::move(ResolveTrainingSetup(Builtin(), Training("llama-3.1-8b", "h100", "", 8))).value();
  PlanRequest q;
  q.options.global_batch = 64;
  GetParam().set(q);
  StatusOr<PlanStudy> p = RunPlanStudy(*s, q);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find(std::string("parameter '") + GetParam().param + "'"), std::string::npos)
      << p.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, PlanRejects,
    testing::Values(
        // The issue: `plan --max-vpp 0` was silently a search without interleaving.
        BadPlan{"max_vpp", [](PlanRequest& q) { q.options.max_vpp = 0; }, "max_vpp_zero"},
        BadPlan{"max_vpp", [](PlanRequest& q) { q.options.max_vpp = -1; }, "max_vpp_negative"},
        BadPlan{"max_cp", [](PlanRequest& q) { q.options.max_cp = 0; }, "max_cp_zero"},
        BadPlan{"gbs", [](PlanRequest& q) { q.options.global_batch = 0; }, "gbs_zero"},
        BadPlan{"gbs", [](PlanRequest& q) { q.options.global_batch = -64; }, "gbs_negative"},
        BadPlan{"top", [](PlanRequest& q) { q.options.top_k = 0; }, "top_zero"},
        BadPlan{"mbs", [](PlanRequest& q) { q.options.micro_batches = {0}; }, "mbs_zero"},
        BadPlan{"scaling",
                [](PlanRequest& q) {
                  q.scaling = {8, 0};
                },
                "scaling_zero"},
        // The issue: a negative or NaN price silently dropped the cost line.
        BadPlan{"price_per_gpu_hour", [](PlanRequest& q) { q.price_per_gpu_hour = kNan; }, "price_nan"},
        BadPlan{"price_per_gpu_hour", [](PlanRequest& q) { q.price_per_gpu_hour = kInf; }, "price_inf"},
        BadPlan{"price_per_gpu_hour", [](PlanRequest& q) { q.price_per_gpu_hour = -2.5; }, "price_negative"},
        BadPlan{"tokens", [](PlanRequest& q) { q.tokens = "0"; }, "tokens_zero"},
        BadPlan{"tokens", [](PlanRequest& q) { q.tokens = "-1T"; }, "tokens_negative"}),
    [](const testing::TestParamInfo<BadPlan>& i) { return std::string(i.param.label); });

// Plan's notes start with the setup's (an unvalidated family), and a price
// left to the cluster is said.
TEST(PlanNotes, SetupNotesAndTheClusterPrice) {
  auto s = std::move(ResolveTrainingSetup(Builtin(), Training("llama-3.1-8b", "", "dgx-b200", 8))).value();
  PlanRequest q;
  q.options.global_batch = 64;
  q.tokens = "1T";
  StatusOr<PlanStudy> p = RunPlanStudy(*s, q);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_FALSE(p->notes.empty());
  EXPECT_EQ(p->notes[0].code, "unvalidated_family");
  if (s->cluster->price_per_gpu_hour > 0) {
    EXPECT_NE(Find(p->notes, "default_price"), nullptr);
  }
  q.price_per_gpu_hour = 3;
  p = RunPlanStudy(*s, q);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(Find(p->notes, "default_price"), nullptr);
}

// ----------------------------------------------------------------- infer

InferenceRequest Llama8bOnH100() {
  InferenceRequest r;
  r.model = *LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  r.gpu = "h100";
  r.input_len = 1000;
  r.output_len = 1000;
  return r;
}

struct BadInfer {
  const char* param;
  std::function<void(InferenceRequest&)> set;
  const char* label;
};

class InferRejects : public testing::TestWithParam<BadInfer> {};

TEST_P(InferRejects, NamingTheParameter) {
  InferenceRequest r = Llama8bOnH100();
  GetParam().set(r);
  StatusOr<InferenceResult> res = RunInferenceJob(Builtin(), mfu::RealFileSystem(), r);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kInvalidArgument) << res.status().message();
  EXPECT_NE(res.status().message().find(std::string("parameter '") + GetParam().param + "'"), std::string::npos)
      << res.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, InferRejects,
    testing::Values(BadInfer{"batch", [](InferenceRequest& r) { r.batch = -1; }, "batch_negative"},
                    BadInfer{"input_len", [](InferenceRequest& r) { r.input_len = -1; }, "input_len_negative"},
                    BadInfer{"output_len", [](InferenceRequest& r) { r.output_len = -5; }, "output_len_negative"},
                    BadInfer{"gpus", [](InferenceRequest& r) { r.gpus = -1; }, "gpus_negative"},
                    BadInfer{"tp", [](InferenceRequest& r) { r.tp = 0; }, "tp_zero"},
                    BadInfer{"pp", [](InferenceRequest& r) { r.pp = -1; }, "pp_negative"},
                    BadInfer{"draft_tokens", [](InferenceRequest& r) { r.draft_tokens = -1; }, "draft_tokens_negative"},
                    BadInfer{"draft_tokens", [](InferenceRequest& r) { r.draft_tokens = 65; }, "draft_tokens_absurd"},
                    BadInfer{"acceptance", [](InferenceRequest& r) { r.acceptance = kNan; }, "acceptance_nan"},
                    BadInfer{"acceptance", [](InferenceRequest& r) { r.acceptance = -0.1; }, "acceptance_negative"},
                    BadInfer{"acceptance", [](InferenceRequest& r) { r.acceptance = 1; }, "acceptance_one"},
                    BadInfer{"acceptance", [](InferenceRequest& r) { r.acceptance = kInf; }, "acceptance_inf"},
                    BadInfer{"measured_tokens_per_sec", [](InferenceRequest& r) { r.measured_tokens_per_s = -1; },
                             "measured_tokens_negative"},
                    BadInfer{"measured_tokens_per_sec", [](InferenceRequest& r) { r.measured_tokens_per_s = kNan; },
                             "measured_tokens_nan"},
                    BadInfer{"measured_tokens_per_sec", [](InferenceRequest& r) { r.measured_tokens_per_s = kInf; },
                             "measured_tokens_inf"},
                    BadInfer{"measured_ttft", [](InferenceRequest& r) { r.measured_ttft_s = -0.1; }, "ttft_negative"},
                    BadInfer{"measured_ttft", [](InferenceRequest& r) { r.measured_ttft_s = kNan; }, "ttft_nan"},
                    BadInfer{"measured_tpot", [](InferenceRequest& r) { r.measured_tpot_s = kInf; }, "tpot_inf"},
                    BadInfer{"max_batch", [](InferenceRequest& r) { r.max_batch = 0.0; }, "max_batch_zero"},
                    BadInfer{"max_batch", [](InferenceRequest& r) { r.max_batch = kNan; }, "max_batch_nan"},
                    BadInfer{"max_batch", [](InferenceRequest& r) { r.max_batch = kInf; }, "max_batch_inf"},
                    BadInfer{"chunked_prefill", [](InferenceRequest& r) { r.chunked_prefill = -1; },
                             "chunked_prefill_negative"}),
    [](const testing::TestParamInfo<BadInfer>& i) { return std::string(i.param.label); });

// The example: `infer --measured-tokens-per-sec 1e12` printed MFU
// 3,044,613,295%. 1e12 output tokens/s of an 8B model is at least 2 x 8e9 x
// 1e12 = 1.6e22 FLOP/s, four orders above one H100's 989 TFLOP/s: a data
// error (kOutOfRange) naming the parameter and the likely cause.
TEST(InferMeasured, AbovePeakIsADataError) {
  InferenceRequest r = Llama8bOnH100();
  r.measured_tokens_per_s = 1e12;
  StatusOr<InferenceResult> res = RunInferenceJob(Builtin(), mfu::RealFileSystem(), r);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kOutOfRange);
  const std::string& m = res.status().message();
  EXPECT_EQ(m.rfind("parameter 'measured_tokens_per_sec' implies MFU ", 0), 0u) << m;
  EXPECT_NE(m.find("above 100% of the dense"), std::string::npos) << m;
  EXPECT_NE(m.find("for the whole job, not per GPU"), std::string::npos) << m;
  // A TPOT of 1 ns: the bytes of one decode step (16 GB of bf16 weights)
  // in 1 ns is 1.6e19 B/s, far above 3.35 TB/s.
  r = Llama8bOnH100();
  r.batch = 1;
  r.measured_tpot_s = 1e-9;
  res = RunInferenceJob(Builtin(), mfu::RealFileSystem(), r);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(res.status().message().rfind("parameter 'measured_tpot' implies ", 0), 0u) << res.status().message();
  // At batch 8 each decode step reads the 16 GB of weights for 8 tokens: at
  // 3.35 TB/s at most ~1,675 tokens/s, so 2,000 is above the bandwidth and
  // 1,000 (~60% of it) is plausible: no error, no warning.
  r = Llama8bOnH100();
  r.batch = 8;
  r.measured_tokens_per_s = 2000;
  res = RunInferenceJob(Builtin(), mfu::RealFileSystem(), r);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("implies MBU "), std::string::npos) << res.status().message();
  r.measured_tokens_per_s = 1000;
  res = RunInferenceJob(Builtin(), mfu::RealFileSystem(), r);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(Find(res->notes, "mfu_above_peak"), nullptr);
  EXPECT_EQ(Find(res->notes, "mbu_above_peak"), nullptr);
}

TEST(InferNotes, DefaultsAndUnvalidatedFamilies) {
  InferenceRequest r = Llama8bOnH100();
  r.draft_tokens = 4;  // no acceptance, no drafter: self-drafting heads at acceptance 0
  StatusOr<InferenceResult> res = RunInferenceJob(Builtin(), mfu::RealFileSystem(), r);
  ASSERT_TRUE(res.ok()) << res.status().message();
  std::set<std::string> codes;
  for (const Note& n : res->notes)
    codes.insert(n.code);
  EXPECT_EQ(codes, (std::set<std::string>{"default_precision", "default_batch", "default_acceptance"}));
  const Note* batch = Find(res->notes, "default_batch");
  ASSERT_NE(batch, nullptr);
  EXPECT_NE(batch->message.find(std::to_string(static_cast<int64_t>(res->workload.batch)) + " concurrent requests"),
            std::string::npos)
      << batch->message;

  // Everything given: no assumption left.
  r.weight_precision = "fp8";
  r.kv_precision = "fp8";
  r.batch = 16;
  r.acceptance = 0.7;
  res = RunInferenceJob(Builtin(), mfu::RealFileSystem(), r);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_TRUE(res->notes.empty()) << res->notes.front().message;

  // Blackwell has no measured serving run.
  r.gpu = "b200";
  res = RunInferenceJob(Builtin(), mfu::RealFileSystem(), r);
  ASSERT_TRUE(res.ok()) << res.status().message();
  const Note* n = Find(res->notes, "unvalidated_family");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->kind, NoteKind::kWarning);
  EXPECT_NE(n->message.find("(" + Joined(ValidatedFamilies(2)) + ")"), std::string::npos) << n->message;
  EXPECT_NE(n->message.find(std::string(ValidatedInferenceError())), std::string::npos) << n->message;
}

// The error figures the unvalidated notes quote are the ones the docs
// regenerate: docs/plan.md's calibrate table ("overall  253  7.1%") and
// docs/infer.md's validation paragraph ("**MAPE 5.7%**").
TEST(ValidatedError, MatchesTheDocs) {
  auto read = [](const std::string& path) {
    std::ifstream f(std::string(MFU_SOURCE_DIR) + "/" + path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  const std::string training(ValidatedTrainingError());  // "6.9% MAPE over 253 measured runs"
  const std::string mape = training.substr(0, training.find(' '));
  const std::string runs =
      training.substr(training.find("over ") + 5, training.find(" measured") - training.find("over ") - 5);
  const std::string plan = read("docs/plan.md");
  const size_t overall = plan.find("\noverall ");
  ASSERT_NE(overall, std::string::npos);
  std::stringstream row(plan.substr(overall + 1, plan.find('\n', overall + 1) - overall - 1));
  std::string name, n, first;
  row >> name >> n >> first;
  EXPECT_EQ(n, runs);
  EXPECT_EQ(first, mape);
  const std::string inference(ValidatedInferenceError());  // "5.3% MAPE on ..."
  EXPECT_NE(read("docs/infer.md").find("**MAPE " + inference.substr(0, inference.find(' ')) + "**"), std::string::npos);
}

}  // namespace
}  // namespace mfu
