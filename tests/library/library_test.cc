// The library is the product: this test links only mfu::mfu (no CLI code),
// runs a whole trace job, a predict, a plan and an infer through the public
// API, renders them with the library's renderers, and checks that the JSON
// (and the text) equal, byte for byte, what the `mfu` binary prints for the
// same request. A front end (bindings, an exporter) built the same way gets
// the same schema.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/catalog.h"
#include "mfu/file_system.h"
#include "mfu/inference_job.h"
#include "mfu/model.h"
#include "mfu/report_infer.h"
#include "mfu/report_plan.h"
#include "mfu/report_trace.h"
#include "mfu/reporter.h"
#include "mfu/trace_job.h"
#include "mfu/training_setup.h"

namespace mfu {
namespace {

// stdout of `mfu <args>` run from the source root (the paths below are
// relative to it, as the CLI prints them).
std::string RunCli(const std::string& args) {
  const std::string command = std::string("cd '") + MFU_SOURCE_DIR + "' && '" + MFU_BINARY + "' " + args;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  EXPECT_NE(pipe, nullptr) << command;
  std::string out;
  std::array<char, 65536> buffer{};
  size_t n = 0;
  while (pipe && (n = fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0)
    out.append(buffer.data(), n);
  return out;
}

// The search's wall time is the one field that differs between two runs.
std::string MaskElapsed(const std::string& json) {
  static const std::regex kSeconds(R"re(("elapsed_s": )[0-9.eE+-]+)re");
  return std::regex_replace(json, kSeconds, "$1<elapsed>");
}

// The text as the CLI spells what a reader can change (cli/help.cc
// CliTextOptions: "--seq-len", "'mfu trace'"); the library's own spelling is
// "parameter 'seq_len'", "command 'trace'". The short forms the renderers ask
// for are not in these cases.
TextOptions CliSpelling() {
  TextOptions text;
  text.parameter = [](std::string_view name, bool) {
    std::string flag = "--" + std::string(name);
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
  };
  text.command = [](std::string_view command) { return "'mfu " + std::string(command) + "'"; };
  return text;
}

// The library's output in the CLI's spelling: every "parameter 'max_events'"
// as "--max-events" and "command 'hw list'" as "'mfu hw list'", the rewrite
// the CLI applies to all it prints (cli/help.cc InFlagSpelling), e.g. to a
// diagnostic's description "(keep them with parameter 'python')". None of
// these cases names a deprecated flag spelling, the one thing the CLI's
// rewrite also maps.
std::string InCliSpelling(const std::string& library_output) {
  static const std::regex kParameter("parameter '([a-z0-9_]+)'");
  static const std::regex kCommand("(^|[^A-Za-z0-9])command '");
  std::string out;
  auto last = library_output.cbegin();
  for (std::sregex_iterator it(library_output.begin(), library_output.end(), kParameter), end; it != end; ++it) {
    out.append(last, (*it)[0].first);
    std::string flag = "--" + (*it)[1].str();
    std::replace(flag.begin(), flag.end(), '_', '-');
    out += flag;
    last = (*it)[0].second;
  }
  out.append(last, library_output.cend());
  return std::regex_replace(out, kCommand, "$1'mfu ");
}

class LibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<Catalog> catalog = Catalog::LoadBuiltin();
    ASSERT_TRUE(catalog.ok()) << catalog.status().message();
    catalog_ = std::make_unique<Catalog>(std::move(*catalog));
  }
  ModelSpec Model(const std::string& name) const {
    StatusOr<ModelSpec> m = LoadModel(InMemoryFileSystem(), name);
    EXPECT_TRUE(m.ok()) << m.status().message();
    return m.ok() ? *m : ModelSpec{};
  }
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(LibraryTest, TraceJobEqualsTheCli) {
  const std::string path = "tests/data/traces/nccl_collectives_a100.json.gz";
  TraceJobOptions options;
  options.threads = 2;
  StatusOr<JobAnalysis> job =
      AnalyzeTracePaths(RealFileSystem(), {std::string(MFU_SOURCE_DIR) + "/" + path}, *catalog_, options);
  ASSERT_TRUE(job.ok()) << job.status().message();
  // The CLI was given the relative path; the rank's path is the one field
  // that names it.
  for (RankAnalysis& r : job->ranks)
    r.trace.path = path;
  EXPECT_EQ(InCliSpelling(RenderTraceJobJson(*job, options)), RunCli("trace " + path + " --threads 2 --json"));
  EXPECT_EQ(InCliSpelling(RenderTraceJobText(*job, options, false, CliSpelling())),
            RunCli("trace " + path + " --threads 2"));
}

TrainingRequest Llama8bOnDgxH100(ModelSpec model) {
  TrainingRequest request;
  request.model = std::move(model);
  request.hardware.cluster = "dgx-h100";
  request.hardware.gpus = 64;
  request.seq_len = 8192;
  return request;
}

TEST_F(LibraryTest, PredictEqualsTheCli) {
  StatusOr<std::unique_ptr<ResolvedTraining>> setup =
      ResolveTrainingSetup(*catalog_, Llama8bOnDgxH100(Model("llama-3.1-8b")));
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  TrainingConfigRequest config_request;
  config_request.tp = 2;
  config_request.gbs = 256;
  StatusOr<TrainingConfig> config = ResolveTrainingConfig(**setup, config_request);
  ASSERT_TRUE(config.ok()) << config.status().message();
  StatusOr<PredictResult> result = PredictTraining(**setup, *config);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const std::string args = "predict --model llama-3.1-8b --cluster dgx-h100 --gpus 64 --seq-len 8192 --tp 2 --gbs 256";
  EXPECT_EQ(RenderPredictJson(**setup, *result), RunCli(args + " --json"));
  EXPECT_EQ(RenderPredictText(**setup, *result, CliSpelling()), RunCli(args));
  // The Reporter a front end holds gives the CLI's bytes in every format.
  EXPECT_EQ(Reporter(ReportFormat::kCsv).Report(**setup, *result), RunCli(args + " --output-format csv"));
  EXPECT_EQ(Reporter(ReportFormat::kJson).Report(**setup, *result), RunCli(args + " --output-format json"));
  EXPECT_EQ(Reporter(ReportFormat::kText, CliSpelling()).Report(**setup, *result), RunCli(args));
}

TEST_F(LibraryTest, PlanEqualsTheCli) {
  StatusOr<std::unique_ptr<ResolvedTraining>> setup =
      ResolveTrainingSetup(*catalog_, Llama8bOnDgxH100(Model("llama-3.1-8b")));
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  PlanRequest request;
  request.options.global_batch = 512;
  StatusOr<PlanStudy> study = RunPlanStudy(**setup, request);
  ASSERT_TRUE(study.ok()) << study.status().message();
  const std::string args = "plan --model llama-3.1-8b --cluster dgx-h100 --gpus 64 --seq-len 8192 --gbs 512";
  EXPECT_EQ(MaskElapsed(RenderPlanJson(**setup, *study)), MaskElapsed(RunCli(args + " --json")));
  EXPECT_EQ(RenderPlanText(**setup, *study, /*timing=*/false), RunCli(args));
}

TEST_F(LibraryTest, InferEqualsTheCli) {
  InferenceRequest request;
  request.model = Model("llama-3.1-8b");
  request.gpu = "h100";
  request.input_len = 1000;
  request.output_len = 500;
  request.draft_tokens = 4;
  request.acceptance = 0.7;
  // Given, so the result carries no assumption notes: notes name request
  // fields ("parameter 'batch'") where the CLI names its flags.
  request.weight_precision = "bf16";
  request.kv_precision = "bf16";
  request.batch = 256;
  StatusOr<InferenceResult> result = RunInferenceJob(*catalog_, RealFileSystem(), request);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const std::string args =
      "infer --model llama-3.1-8b --gpu h100 --input-len 1000 --output-len 500 --draft-tokens 4 --acceptance 0.7 "
      "--weight-precision bf16 --kv-precision bf16 --batch 256";
  EXPECT_EQ(RenderInferenceJson(*result), RunCli(args + " --json"));
  EXPECT_EQ(RenderInferenceText(*result), RunCli(args));
  EXPECT_EQ(Reporter(ReportFormat::kCsv).Report(*result), RunCli(args + " --output-format csv"));
}

}  // namespace
}  // namespace mfu
