// Jobs, nodes, the --jobs file and the mapping directory, with expected
// values worked out by hand in the comments.

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "fleet/fleet_internal.h"
#include "fleet/fleet_test_util.h"
#include "mfu/fleet.h"
#include "mfu/flops.h"
#include "mfu/model.h"

namespace mfu {
namespace {

using F = TelemetryField;
using testing::H100;
using testing::Point;

TEST(PodJobId, DropsOrdinalsHashesAndRoles) {
  EXPECT_EQ(fleet::PodJobId("team-a", "llama-train-worker-3"), "team-a/llama-train");
  EXPECT_EQ(fleet::PodJobId("team-a", "llama-train-master-0"), "team-a/llama-train");
  EXPECT_EQ(fleet::PodJobId("", "bert-7d9f8c6b5-x2x7q"), "bert");
  EXPECT_EQ(fleet::PodJobId("default", "cuda-vectoradd"), "default/cuda-vectoradd");
  EXPECT_EQ(fleet::PodJobId("ns", "llama-70b-12"), "ns/llama-70b");
  EXPECT_EQ(fleet::PodJobId("ns", "42"), "ns/42");  // never empty
}

TEST(AssignJob, JobsFileMatchThenSlurmThenMappingThenPod) {
  TelemetryDevice d = H100("GPU-a");
  d.k8s_namespace = "ml";
  d.pod = "run7-worker-1";
  std::map<std::string, std::vector<std::string>> mapping = {{"0", {"4242"}}};
  FleetJobReport r;
  r.id = "run-seven";
  r.match = "ml/run7";
  EXPECT_EQ(fleet::AssignJob(d, {r}, mapping).id, "run-seven");
  EXPECT_EQ(fleet::AssignJob(d, {r}, mapping).source, "jobs_file");
  d.hpc_job = "991";
  r.match = "";
  EXPECT_EQ(fleet::AssignJob(d, {r}, mapping).id, "991");
  EXPECT_EQ(fleet::AssignJob(d, {r}, mapping).source, "slurm");
  d.hpc_job = "";
  EXPECT_EQ(fleet::AssignJob(d, {}, mapping).id, "4242");
  EXPECT_EQ(fleet::AssignJob(d, {}, {}).id, "ml/run7");
  EXPECT_EQ(fleet::AssignJob(d, {}, {}).source, "kubernetes");
  d.pod = "";
  EXPECT_EQ(fleet::AssignJob(d, {}, {}).id, "");
}

class JobsTest : public ::testing::Test {
 protected:
  void SetUp() override { db_ = std::move(*HardwareDb::LoadBuiltin()); }
  StatusOr<FleetReport> Run(const std::vector<std::pair<TelemetryDevice, std::vector<TelemetryPoint>>>& devices,
                            FleetOptions options = {}) {
    options.hardware = &db_;
    FleetAnalyzer analyzer(options);
    for (const auto& [device, points] : devices)
      MFU_RETURN_IF_ERROR(analyzer.OnDevice(device, points));
    return analyzer.Finish({}, "test");
  }
  // Four GPUs of Slurm job 77 on two hosts at activity 0.6, 0.6, 0.6, 0.25
  // (SM clock at boost, so MFU = activity).
  std::vector<std::pair<TelemetryDevice, std::vector<TelemetryPoint>>> FourGpus() {
    std::vector<std::pair<TelemetryDevice, std::vector<TelemetryPoint>>> out;
    const double activity[] = {0.6, 0.6, 0.6, 0.25};
    for (int i = 0; i < 4; ++i) {
      TelemetryDevice d = H100("GPU-" + std::to_string(i), i < 2 ? "node-a" : "node-b", std::to_string(i % 2));
      d.hpc_job = "77";
      out.push_back({d, {Point(0, {{F::kTensorActive, activity[i]}, {F::kSmClockMhz, 1980}, {F::kPowerWatts, 500}})}});
    }
    return out;
  }
  // Options with one --jobs entry for `id`: llama-3-8b at 1,000 tokens/s
  // over 2,048-token sequences.
  static FleetOptions WithJob(const std::string& id, const std::string& precision = "") {
    FleetJobReport job;
    job.id = id;
    job.model = "llama-3-8b";
    job.tokens_per_sec = 1000;
    job.seq_len = 2048;
    job.precision = precision;
    FleetOptions options;
    options.job_reports = {job};
    return options;
  }
  HardwareDb db_;
};

// Median activity of {0.6, 0.6, 0.6, 0.25} = (0.6 + 0.6) / 2 = 0.6; the
// limit 0.8 x 0.6 = 0.48 leaves GPU-3 (0.25) a straggler. Job MFU over equal
// times = (0.6 x 3 + 0.25) / 4 = 0.5125; min 0.25, max 0.6.
TEST_F(JobsTest, SpreadAndStragglers) {
  StatusOr<FleetReport> r = Run(FourGpus());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->jobs.size(), 1u);
  const JobEstimate& job = r->jobs[0];
  EXPECT_EQ(job.id, "77");
  EXPECT_EQ(job.source, "slurm");
  EXPECT_EQ(job.gpus.size(), 4u);
  EXPECT_NEAR(job.estimated_mfu, 0.5125, 1e-12);
  EXPECT_NEAR(job.mfu_min, 0.25, 1e-12);
  EXPECT_NEAR(job.mfu_median, 0.6, 1e-12);
  EXPECT_NEAR(job.mfu_max, 0.6, 1e-12);
  ASSERT_EQ(job.stragglers.size(), 1u);
  EXPECT_EQ(job.stragglers[0], H100("GPU-3", "node-b", "1").Key());
  EXPECT_FALSE(job.reported_mfu.has_value());
  // Nodes: two GPUs each, 2 x 500 W; node-b's MFU (0.6 + 0.25) / 2 = 0.425.
  ASSERT_EQ(r->nodes.size(), 2u);
  EXPECT_EQ(r->nodes[1].hostname, "node-b");
  EXPECT_EQ(r->nodes[1].gpus, 2);
  EXPECT_DOUBLE_EQ(r->nodes[1].power_watts, 1000);
  EXPECT_NEAR(r->nodes[1].estimated_mfu, 0.425, 1e-12);
  // Fleet: 4 GPUs x 30 s = 120 GPU-s; three in 30-60%, one in < 30%.
  EXPECT_EQ(r->fleet.gpus, 4);
  EXPECT_NEAR(r->fleet.gpu_hours, 120.0 / 3600, 1e-12);
  EXPECT_NEAR(r->fleet.gpu_hours_by_band[static_cast<size_t>(MfuBand::k30To60)], 90.0 / 3600, 1e-12);
  EXPECT_NEAR(r->fleet.gpu_hours_by_band[static_cast<size_t>(MfuBand::kBelow30)], 30.0 / 3600, 1e-12);
}

// Reported MFU = tokens/s x model FLOPs per token / (GPUs x peak). The
// FLOPs per token come from the flops module (tested there); the rest by
// hand: step 2.0 s, global batch 64 x seq 4,096 -> 131,072 tokens/s over 4
// H100s at bf16 (4 x 989.4e12 FLOP/s).
TEST_F(JobsTest, ReportedMfuBesideTheEstimate) {
  FleetOptions options = WithJob("77");
  FleetJobReport& job = options.job_reports[0];
  job.tokens_per_sec = 0;
  job.step_time_s = 2.0;
  job.global_batch = 64;
  job.seq_len = 4096;
  StatusOr<FleetReport> r = Run(FourGpus(), options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  StatusOr<ModelSpec> spec = LoadModel(InMemoryFileSystem(), "llama-3-8b");
  ASSERT_TRUE(spec.ok());
  StatusOr<TrainingFlops> flops = ComputeTrainingFlops(*spec, Convention::kMegatron, 4096, Recompute::kNone);
  ASSERT_TRUE(flops.ok());
  const double expected = 131072.0 * flops->model_per_token / (4 * 989.4e12);
  ASSERT_TRUE(r->jobs[0].reported_mfu.has_value());
  EXPECT_NEAR(*r->jobs[0].reported_mfu, expected, 1e-12);
  EXPECT_NEAR(*r->jobs[0].reported_to_estimated, expected / 0.5125, 1e-12);
}

TEST_F(JobsTest, UnmatchedJobsEntryIsNoted) {
  StatusOr<FleetReport> r = Run(FourGpus(), WithJob("nope"));
  ASSERT_TRUE(r.ok());
  bool noted = false;
  for (const Note& n : r->notes)
    noted = noted || n.code == "jobs_file_unmatched";
  EXPECT_TRUE(noted);
}

// A job's precision from the --jobs file sets its GPUs' denominator: fp8
// 1,978.9e12 for job 77.
TEST_F(JobsTest, PerJobPrecision) {
  StatusOr<FleetReport> r = Run(FourGpus(), WithJob("77", "fp8"));
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->gpus[0].peak_flops, 1978.9e12);
  EXPECT_EQ(r->gpus[0].precision, DType::kFp8);
}

// dcgm-exporter's format (internal/pkg/transformation/hpc.go): a file per
// GPU index, a job id per line; names that are not an index are skipped.
TEST_F(JobsTest, HpcJobMappingDirectory) {
  InMemoryFileSystem fs;
  fs.AddFile("map/0", "5001\n");
  fs.AddFile("map/1", "5002\n5003\n");
  fs.AddFile("map/README", "not a gpu\n");
  StatusOr<std::map<std::string, std::vector<std::string>>> m = fleet::ReadHpcJobMapping(fs, "map");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->size(), 2u);
  EXPECT_EQ(m->at("1"), (std::vector<std::string>{"5002", "5003"}));
  FleetOptions options;
  options.hpc_job_mapping_dir = "map";
  options.file_system = &fs;
  StatusOr<FleetReport> r = Run({{H100("GPU-a", "n", "0"), {Point(0, {{F::kTensorActive, 0.5}})}},
                                 {H100("GPU-b", "n", "1"), {Point(0, {{F::kTensorActive, 0.5}})}}},
                                options);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[0].id, "5001");
  EXPECT_EQ(r->jobs[0].source, "mapping_file");
  options.hpc_job_mapping_dir = "missing";
  EXPECT_FALSE(Run({{H100("GPU-a"), {Point(0, {})}}}, options).ok());
}

TEST(ParseFleetJobs, ReadsBothThroughputForms) {
  StatusOr<std::vector<FleetJobReport>> jobs = ParseFleetJobs(
      R"({"jobs": [{"id": "a", "model": "llama-3-8b", "tokens_per_sec": 5e5, "seq_len": 8192, "precision": "fp8"},
                   {"id": "b", "model": "llama-3-8b", "step_time_s": 1.5, "global_batch": 32, "seq_len": 4096,
                    "match": "ml/run-b", "convention": "palm"}]})",
      "jobs.json");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_DOUBLE_EQ((*jobs)[0].tokens_per_sec, 5e5);
  EXPECT_EQ((*jobs)[0].precision, "fp8");
  EXPECT_EQ((*jobs)[1].global_batch, 32);
  EXPECT_EQ((*jobs)[1].match, "ml/run-b");
}

TEST(ParseFleetJobs, ErrorsNameTheFileAndField) {
  const std::pair<const char*, const char*> cases[] = {
      {"[", "jobs.json: not valid JSON"},
      {"{}", "jobs.json: expected {\"jobs\": [...]}"},
      {R"({"jobs": [{"model": "x", "seq_len": 1, "tokens_per_sec": 1}]})", "jobs.json: jobs[0]: missing 'id'"},
      {R"({"jobs": [{"id": "a", "model": "x", "seq_len": 0, "tokens_per_sec": 1}]})",
       "jobs.json: jobs[0].seq_len must be a positive integer"},
      {R"({"jobs": [{"id": "a", "model": "x", "seq_len": 8, "tokens_per_sec": -1}]})",
       "jobs.json: jobs[0].tokens_per_sec must be a positive number"},
      {R"({"jobs": [{"id": "a", "model": "x", "seq_len": 8}]})",
       "jobs.json: jobs[0]: give tokens_per_sec, or step_time_s with global_batch"},
      {R"({"jobs": [{"id": "a", "model": "x", "seq_len": 8, "step_time_s": 1}]})",
       "jobs.json: jobs[0].global_batch must be a positive integer (with step_time_s)"},
      {R"({"jobs": [{"id": "a", "model": "x", "seq_len": 8, "tokens_per_sec": 1, "gpus": 8}]})",
       "jobs.json: jobs[0]: gpu and gpus are read with a log only"},
      {R"({"jobs": [{"id": "a", "model": "x", "seq_len": 8, "tokens_per_sec": 1, "gpu_count": 8}]})",
       "jobs.json: jobs[0]: unknown field 'gpu_count'"},
      {R"({"jobs": [{"id": "a", "log": "t.log", "tokens_per_sec": 1}]})",
       "jobs.json: jobs[0]: give one of tokens_per_sec, step_time_s with global_batch, or log, not two"},
      {R"({"jobs": [{"id": "a", "log": []}]})", "jobs.json: jobs[0].log must be a path or a non-empty array"},
      {R"({"jobs": [{"id": "a", "log": ["t.log", 3]}]})", "jobs.json: jobs[0].log[1] must be a non-empty string"},
      {R"({"jobs": [{"id": "a", "log": "t.log", "gpus": 0}]})", "jobs.json: jobs[0].gpus must be an integer"},
      {R"({"jobs": [{"id": "a", "seq_len": 8, "tokens_per_sec": 1}]})", "jobs.json: jobs[0]: missing 'model'"},
      {R"({"jobs": [{"id": "a", "model": "x", "seq_len": 8, "tokens_per_sec": 1},
                    {"id": "a", "model": "x", "seq_len": 8, "tokens_per_sec": 1}]})",
       "jobs.json: jobs[1].id 'a' appears twice"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    StatusOr<std::vector<FleetJobReport>> jobs = ParseFleetJobs(text, "jobs.json");
    ASSERT_FALSE(jobs.ok());
    EXPECT_EQ(jobs.status().message().rfind(message, 0), 0u) << jobs.status().message();
  }
  StatusOr<std::vector<FleetJobReport>> bad = ParseFleetJobs(
      R"({"jobs": [{"id": "a", "model": "x", "seq_len": 8, "tokens_per_sec": 1, "precision": "fp7"}]})", "j.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("j.json: jobs[0].precision: ", 0), 0u);
}

}  // namespace
}  // namespace mfu
