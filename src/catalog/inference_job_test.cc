// The inference job (mfu/inference_job.h): request-shape parsing, setup
// resolution and its messages, and the studies of a report.

#include "mfu/inference_job.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "mfu/catalog.h"
#include "mfu/file_system.h"
#include "mfu/model.h"
#include "mfu/result.h"

namespace mfu {
namespace {

const Catalog& Builtin() {
  static const Catalog* catalog = [] {
    auto c = Catalog::LoadBuiltin();
    EXPECT_TRUE(c.ok()) << c.status().message();
    return new Catalog(std::move(c).value());
  }();
  return *catalog;
}

InferenceRequest Llama8bOnH100(int64_t input_len, int64_t output_len) {
  InferenceRequest r;
  auto m = LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  EXPECT_TRUE(m.ok());
  r.model = std::move(m).value();
  r.gpu = "h100";
  r.input_len = input_len;
  r.output_len = output_len;
  return r;
}

TEST(ParseWorkload, CsvRowsAndErrorsNameTheLineAndColumn) {
  auto ok = ParseWorkloadCsv("input_len,output_len,requests\n128,64,3\n2048,256,1\n", "w.csv");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[0].input_len, 128);
  EXPECT_EQ((*ok)[0].output_len, 64);
  EXPECT_EQ((*ok)[0].requests, 3);
  EXPECT_EQ((*ok)[1].requests, 1);
  auto defaults = ParseWorkloadCsv("output_len,input_len\n5,7\n", "w.csv");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ((*defaults)[0].input_len, 7);
  EXPECT_EQ((*defaults)[0].requests, 1);  // no requests column: weight 1
  auto bad = ParseWorkloadCsv("input_len,output_len\n128,128\n128,0\n", "w.csv");
  EXPECT_EQ(bad.status().code(), StatusCode::kParse);
  // The loader's message (base/table.h, since #11; before: "w.csv:3 output_len: ...").
  EXPECT_EQ(bad.status().message(), "w.csv:3: column 'output_len': '0' is not a whole number in [1, 1e9]");
  EXPECT_EQ(ParseWorkloadCsv("input_len,output_len\n1.5,2\n", "w.csv").status().code(), StatusCode::kParse);
  auto missing = ParseWorkloadCsv("input,output_len\n1,2\n", "w.csv");
  EXPECT_EQ(missing.status().code(), StatusCode::kParse);
  EXPECT_EQ(missing.status().message(), "w.csv:1: missing column 'input_len'");
  EXPECT_EQ(ParseWorkloadCsv("inptu_len,output_len\n1,2\n", "w.csv").status().message(),
            "w.csv:1: missing column 'input_len' (the header has 'inptu_len')");
  // Other columns are ignored; an empty requests cell is an error, not a weight of 1.
  auto extra = ParseWorkloadCsv("id,input_len,output_len,requests\na,8k,2,3\n", "w.csv");
  ASSERT_TRUE(extra.ok()) << extra.status().message();
  EXPECT_EQ((*extra)[0].input_len, 8000);  // "8k": base::ParseScaledNumber's suffix
  EXPECT_EQ(ParseWorkloadCsv("input_len,output_len,requests\n1,2,\n", "w.csv").status().message(),
            "w.csv:2: column 'requests': '' is not a whole number in [1, 1e9]");
  EXPECT_EQ(ParseWorkloadCsv("input_len,output_len\n", "w.csv").status().code(), StatusCode::kParse);
}

TEST(ParseWorkload, ListOrFileThroughTheFileSystem) {
  InMemoryFileSystem fs;
  fs.AddFile("w.csv", "input_len,output_len,requests\n128,128,2\n2048,128,1\n");
  auto list = ParseWorkload(fs, "128:128:2,2048:128");
  auto file = ParseWorkload(fs, "w.csv");
  ASSERT_TRUE(list.ok() && file.ok());
  ASSERT_EQ(list->size(), file->size());
  for (size_t i = 0; i < list->size(); ++i) {
    EXPECT_EQ((*list)[i].input_len, (*file)[i].input_len);
    EXPECT_EQ((*list)[i].output_len, (*file)[i].output_len);
    EXPECT_EQ((*list)[i].requests, (*file)[i].requests);
  }
  auto bad = ParseWorkload(fs, "128:128,64");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "parameter 'workload': '64' is not INPUT:OUTPUT[:REQUESTS]");
  EXPECT_EQ(ParseWorkload(fs, "128:0").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseWorkload(fs, "missing.csv").status().code(), StatusCode::kNotFound);
}

TEST(ResolveInferenceSetup, MessagesNameParameters) {
  InferenceRequest r = Llama8bOnH100(100, 100);
  r.gpus = 4;
  auto s = ResolveInferenceSetup(Builtin(), r);
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message().rfind("parameter 'gpus' 4 but tp x pp = 1", 0), 0u) << s.status().message();
  r = Llama8bOnH100(100, 100);
  r.gpu = "";
  EXPECT_EQ(ResolveInferenceSetup(Builtin(), r).status().message(), "give parameter 'gpu' or parameter 'cluster'");
  r = Llama8bOnH100(100, 100);
  r.chunked_prefill = -5;
  EXPECT_NE(ResolveInferenceSetup(Builtin(), r).status().message().find("parameter 'chunked_prefill'"),
            std::string::npos);
  r = Llama8bOnH100(100, 100);
  r.framework = "megatron-core";
  EXPECT_EQ(ResolveInferenceSetup(Builtin(), r).status().message().rfind("parameter 'framework': ", 0), 0u);
  r = Llama8bOnH100(100, 100);
  r.weight_precision = "fp7";
  EXPECT_EQ(ResolveInferenceSetup(Builtin(), r).status().message().rfind("parameter 'weight_precision': ", 0), 0u);
  // vLLM on an H100: chunked prefill at 8192 tokens, a cap of 1024 requests
  // (vllm/engine/arg_utils.py, cited in inference.cc).
  r = Llama8bOnH100(100, 100);
  r.framework = "vllm";
  auto vllm = ResolveInferenceSetup(Builtin(), r);
  ASSERT_TRUE(vllm.ok()) << vllm.status().message();
  EXPECT_TRUE(vllm->schedule.chunked_prefill);
  EXPECT_EQ(vllm->schedule.token_budget, 8192);
  EXPECT_EQ(vllm->max_batch, 1024);
  EXPECT_EQ(vllm->model, &r.model);
}

TEST(RunInferenceJob, SweepsCoverTheBatchAndThePrompt) {
  const InMemoryFileSystem fs;
  auto r = RunInferenceJob(Builtin(), fs, Llama8bOnH100(1000, 500));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->single_shape);
  EXPECT_DOUBLE_EQ(r->mean_context, 1250);
  // Batch 1, 2, 4, ... then the workload's batch.
  ASSERT_FALSE(r->decode_sweep.empty());
  for (size_t i = 0; i + 1 < r->decode_sweep.size(); ++i)
    EXPECT_EQ(r->decode_sweep[i].batch, int64_t{1} << i);
  EXPECT_EQ(static_cast<double>(r->decode_sweep.back().batch), r->workload.batch);
  // Prompts of 128 and 512 tokens, then the request's 1000.
  ASSERT_EQ(r->prefill_sweep.size(), 3u);
  EXPECT_EQ(r->prefill_sweep[0].prompt_len, 128);
  EXPECT_EQ(r->prefill_sweep[1].prompt_len, 512);
  EXPECT_EQ(r->prefill_sweep[2].prompt_len, 1000);
  for (const DecodePoint& p : r->decode_sweep) {
    EXPECT_TRUE(CheckConsistency(p.step.waterfall).ok());
    EXPECT_NEAR(p.output_tokens_per_s, static_cast<double>(p.batch) / p.step.time_s, 1e-9 * p.output_tokens_per_s);
  }
  for (const PrefillPoint& p : r->prefill_sweep)
    EXPECT_TRUE(CheckConsistency(p.step.waterfall).ok());
  EXPECT_FALSE(r->speculative.has_value());
  EXPECT_FALSE(r->mix.has_value());
}

TEST(RunInferenceJob, DrafterMixAndFieldChecks) {
  const InMemoryFileSystem fs;
  InferenceRequest req = Llama8bOnH100(500, 500);
  req.draft_tokens = 4;
  req.acceptance = 0.8;
  req.drafter = "llama-3.2-1b";
  auto r = RunInferenceJob(Builtin(), fs, req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->speculative.has_value());
  EXPECT_EQ(r->speculative->drafter, "llama-3.2-1b");
  EXPECT_NEAR(r->speculative->result.tokens_per_step, (1 - std::pow(0.8, 5)) / (1 - 0.8), 1e-12);
  // A mix only: no single-shape studies.
  InferenceRequest mix = Llama8bOnH100(0, 0);
  mix.workload = "128:128:2,2048:128";
  auto m = RunInferenceJob(Builtin(), fs, mix);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(m->single_shape);
  ASSERT_TRUE(m->mix.has_value());
  EXPECT_EQ(m->mix->pairs.size(), 2u);
  EXPECT_TRUE(m->decode_sweep.empty());
  mix.measured_tpot_s = 0.01;
  EXPECT_EQ(RunInferenceJob(Builtin(), fs, mix).status().code(), StatusCode::kInvalidArgument);
  InferenceRequest lonely = Llama8bOnH100(100, 100);
  lonely.drafter = "llama-3.2-1b";
  EXPECT_EQ(RunInferenceJob(Builtin(), fs, lonely).status().message(),
            "parameter 'acceptance' and parameter 'drafter' go with parameter 'draft_tokens'");
  InferenceRequest big = Llama8bOnH100(100, 100);
  big.model = *LoadModel(mfu::RealFileSystem(), "llama-3.1-405b");
  auto no_fit = RunInferenceJob(Builtin(), fs, big);
  EXPECT_EQ(no_fit.status().code(), StatusCode::kNotFound);
  EXPECT_NE(no_fit.status().message().find("use more parameter 'tp'/parameter 'pp'"), std::string::npos);
}

}  // namespace
}  // namespace mfu
