// A job's training log as its reported throughput in the fleet view
// (job_log.cc): the jobs file's `log` and --job-log, the real torchtitan
// excerpt of tests/data/logs against generated dcgm-exporter telemetry, the
// sources of model/gpu/seq_len, the log findings that become job findings,
// the missing-input finding, errors naming the flag and the file, and the
// exporter's cache. Expected figures are worked out by hand in the comments.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fleet/fleet_internal.h"
#include "mfu/file_system.h"
#include "mfu/fleet.h"
#include "testing/telemetry_gen.h"

namespace mfu {
namespace {

// tests/data/logs/torchtitan_aws-llama3-8b-slurm-ansi.log (aws-samples/
// awsome-distributed-training @7217859f, 3.test_cases/pytorch/torchtitan/
// slurm/README.md lines 59-67, 89-97): Llama-3-8B, seq 8192, BF16 run
// `tps: 6,785  mfu: 39.73%` at step 1990, then a compile + float8 run from
// step 1990 again (a restart). The log names no accelerator.
const char kTitan[] = "titan.log";

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(MFU_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Training FLOPs per token of Llama-3.1-8B at T = 8192 under torchtitan's
// own count (torchtitan get_dense_model_nparams_and_flops, the palm
// convention): 6 x (N - embedding) + 12 x L x (heads x head_dim) x T
// = 6 x (8,030,261,248 - 128,256 x 4,096) + 12 x 32 x 4,096 x 8,192
// = 45,029,548,032 + 12,884,901,888 = 57,914,449,920.
constexpr double kLlama8bPalmFlops = 57'914'449'920.0;
constexpr double kH100Bf16 = 989.4e12;  // dense BF16, H100 SXM5 datasheet

// 8 H100s, tensor activity 0.5 at the boost clock (1,980 MHz): every GPU
// and each of the two Slurm jobs "1000" (GPUs 0-3) and "1001" at an
// estimated MFU of 0.5.
std::string Telemetry() {
  testing::ExpositionGenOptions gen;
  gen.gpus = testing::MakeTelemetryGpus(8, 8, 2, testing::TelemetryGenJobLabels::kHpcJob);
  return testing::GenerateExposition(gen);
}

// Six torchtitan step lines (steps 10-60) as torchtitan's train.py logs
// them (torchtitan @ 2025-03, "step: %2d  loss: %7.4f  memory:
// %5.2fGiB(%.2f%%)  tps: %s  mfu: %.2f%%"), each at `tps` and `mfu`.
std::string TitanSteps(const std::string& tps, const std::string& mfu) {
  std::string text;
  for (int step = 10; step <= 60; step += 10)
    text += "2025-03-04 00:44:44,441 - root - INFO - step: " + std::to_string(step) +
            "  loss:  3.4370  memory: 68.57GiB(86.69%)  tps: " + tps + "  mfu: " + mfu + "\n";
  return text;
}

class JobLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<HardwareDb> hw = HardwareDb::LoadBuiltin();
    ASSERT_TRUE(hw.ok());
    hw_ = std::move(*hw);
    fs_.AddFile(kTitan, ReadSource("tests/data/logs/torchtitan_aws-llama3-8b-slurm-ansi.log"));
    ASSERT_GT(fs_.ReadFile(kTitan)->size(), 1000u);
  }

  StatusOr<FleetReport> Analyze(const std::string& jobs_json, const std::vector<std::string>& job_logs = {}) {
    FleetOptions options;
    options.hardware = &hw_;
    options.file_system = &fs_;
    if (jobs_json.empty()) {
      MFU_RETURN_IF_ERROR(AddFleetJobLogs(job_logs, options.job_reports));
    } else {
      MFU_ASSIGN_OR_RETURN(options.job_reports, ParseFleetJobs(jobs_json, "jobs.json", job_logs));
    }
    return AnalyzeFleet(Telemetry(), "gen.prom", options);
  }

  const FleetFinding* Find(const JobEstimate& job, const std::string& code) {
    for (const FleetFinding& f : job.findings) {
      if (f.code == code)
        return &f;
    }
    return nullptr;
  }

  HardwareDb hw_;
  InMemoryFileSystem fs_;
};

TEST_F(JobLogTest, TorchtitanExcerptIsTheReportedMfu) {
  StatusOr<FleetReport> r =
      Analyze(R"({"jobs": [{"id": "1000", "model": "llama-3.1-8b", "seq_len": 8192, "log": "titan.log"}]})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->jobs.size(), 2u);
  const JobEstimate& job = r->jobs[0];
  ASSERT_EQ(job.id, "1000");
  EXPECT_NEAR(job.estimated_mfu, 0.5, 1e-9);
  // 57,914,449,920 x 6,785 / 989.4e12 = 0.39716 (the log printed 39.73%).
  const double expected = kLlama8bPalmFlops * 6785 / kH100Bf16;
  EXPECT_NEAR(expected, 0.3971, 1e-4);
  ASSERT_TRUE(job.reported_mfu.has_value());
  EXPECT_NEAR(*job.reported_mfu, expected, 1e-9);
  ASSERT_TRUE(job.reported_to_estimated.has_value());
  EXPECT_NEAR(*job.reported_to_estimated, expected / 0.5, 1e-9);
  EXPECT_EQ(job.reported_source, "log titan.log: steady state steps 1990-1990, convention palm");
  ASSERT_TRUE(job.reported_log.has_value());
  const JobLogSummary& log = *job.reported_log;
  EXPECT_EQ(log.format, "torchtitan");
  EXPECT_EQ(log.attempts, 2);
  EXPECT_EQ(log.first_step, 1990);
  EXPECT_EQ(log.last_step, 1990);
  EXPECT_DOUBLE_EQ(log.tokens_per_s_per_gpu, 6785);
  EXPECT_DOUBLE_EQ(log.logged_mfu, 0.3973);
  EXPECT_EQ(log.gpu, "h100-sxm5-80gb");
  EXPECT_EQ(log.gpu_source, "telemetry");  // the log names no device
  EXPECT_EQ(log.model_source, "jobs file");
  EXPECT_EQ(log.seq_len, 8192);
  EXPECT_EQ(log.gpus, 4);  // the job's 4 GPUs in the telemetry
  EXPECT_EQ(log.gpus_source, "telemetry");
  // The float8 run restarting at step 1990 (line 12: rank "1:" is kept).
  const FleetFinding* restart = Find(job, "log_restart");
  ASSERT_NE(restart, nullptr);
  EXPECT_NE(restart->message.find("1 restart (2 attempts)"), std::string::npos) << restart->message;
  EXPECT_NE(restart->message.find("titan.log:12"), std::string::npos) << restart->message;
  // The logged 39.73% agrees with 39.72%: no finding about it.
  EXPECT_EQ(Find(job, "log_logged_mfu_mismatch"), nullptr);
  EXPECT_EQ(Find(job, "log_peak_a100_fallback"), nullptr);
  EXPECT_FALSE(r->jobs[1].reported_mfu.has_value());
  EXPECT_TRUE(r->jobs[1].reported_source.empty());
}

TEST_F(JobLogTest, JobLogFlagWithoutAJobsFile) {
  // No model: the log cannot give an MFU and says which fields to add.
  StatusOr<FleetReport> r = Analyze("", {"1000=titan.log"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const JobEstimate& job = r->jobs[0];
  EXPECT_FALSE(job.reported_mfu.has_value());
  const FleetFinding* missing = Find(job, "log_missing_input");
  ASSERT_NE(missing, nullptr);
  EXPECT_NE(missing->message.find("add model, seq_len to the job's parameter 'jobs' entry"), std::string::npos)
      << missing->message;
  // A job the telemetry does not show: a note naming the flag.
  StatusOr<FleetReport> unmatched = Analyze("", {"9999=titan.log"});
  ASSERT_TRUE(unmatched.ok()) << unmatched.status().message();
  bool note = false;
  for (const Note& n : unmatched->notes)
    note = note || (n.code == "jobs_file_unmatched" && n.message.rfind("parameter 'job_log' job '9999'", 0) == 0);
  EXPECT_TRUE(note);
  // The jobs file gives the model; --job-log the log: the same MFU.
  StatusOr<FleetReport> both =
      Analyze(R"({"jobs": [{"id": "1000", "model": "llama-3.1-8b", "seq_len": 8192}]})", {"1000=titan.log"});
  ASSERT_TRUE(both.ok()) << both.status().message();
  ASSERT_TRUE(both->jobs[0].reported_mfu.has_value());
  EXPECT_NEAR(*both->jobs[0].reported_mfu, kLlama8bPalmFlops * 6785 / kH100Bf16, 1e-9);
}

TEST_F(JobLogTest, JobsFileGpuOverridesTheTelemetry) {
  // gpu a100: 57,914,449,920 x 6,785 / 312e12 = 1.2594, above 100%.
  StatusOr<FleetReport> r = Analyze(
      R"({"jobs": [{"id": "1000", "model": "llama-3.1-8b", "seq_len": 8192, "log": "titan.log", "gpu": "a100"}]})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const JobEstimate& job = r->jobs[0];
  ASSERT_TRUE(job.reported_mfu.has_value());
  EXPECT_NEAR(*job.reported_mfu, kLlama8bPalmFlops * 6785 / 312e12, 1e-9);
  EXPECT_EQ(job.reported_log->gpu_source, "jobs file");
  EXPECT_NE(Find(job, "log_mfu_above_100"), nullptr);
}

// A torchtitan log whose own MFU divides by the A100's 312 TFLOP/s on an
// H100 (torchtitan PR#4779's fallback): 57,914,449,920 x 6,785 / 312e12 =
// 125.94% printed, 39.72% recomputed.
TEST_F(JobLogTest, LoggedMfuWrongBecomesAJobFinding) {
  fs_.AddFile("a100peak.log", TitanSteps("6,785", "125.94%"));
  StatusOr<FleetReport> r =
      Analyze(R"({"jobs": [{"id": "1000", "model": "llama-3.1-8b", "seq_len": 8192, "log": ["a100peak.log"]}]})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const JobEstimate& job = r->jobs[0];
  ASSERT_TRUE(job.reported_mfu.has_value());
  EXPECT_NEAR(*job.reported_mfu, kLlama8bPalmFlops * 6785 / kH100Bf16, 1e-9);
  const FleetFinding* peak = Find(job, "log_peak_a100_fallback");
  ASSERT_NE(peak, nullptr);
  EXPECT_EQ(peak->message.rfind("a100peak.log:", 0), 0u) << peak->message;
  EXPECT_EQ(Find(job, "log_restart"), nullptr);
}

// torchtitan prints its device at start (torchtitan components/metrics.py
// build_device_memory_monitor: "{DEVICE} capacity: {name} with
// {gib:.2f}GiB memory"). A log naming an A100 is analysed against the A100
// even where the telemetry shows H100s, and the disagreement is a finding:
// 57,914,449,920 x 2,000 / 312e12 = 0.37125.
TEST_F(JobLogTest, HeaderDeviceBeatsTheTelemetry) {
  fs_.AddFile("a100.log",
              "2025-03-04 00:30:00,000 - root - INFO - CUDA capacity: NVIDIA A100-SXM4-80GB with 79.15GiB memory\n" +
                  TitanSteps("2,000", "37.12%"));
  StatusOr<FleetReport> r =
      Analyze(R"({"jobs": [{"id": "1000", "model": "llama-3.1-8b", "seq_len": 8192, "log": "a100.log"}]})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const JobEstimate& job = r->jobs[0];
  ASSERT_TRUE(job.reported_log.has_value());
  EXPECT_EQ(job.reported_log->gpu_source, "header");
  EXPECT_EQ(job.reported_log->gpu.rfind("a100", 0), 0u) << job.reported_log->gpu;
  ASSERT_TRUE(job.reported_mfu.has_value());
  EXPECT_NEAR(*job.reported_mfu, kLlama8bPalmFlops * 2000 / 312e12, 1e-9);
  EXPECT_NE(Find(job, "log_gpu_mismatch"), nullptr);
  EXPECT_EQ(Find(job, "log_logged_mfu_mismatch"), nullptr);
}

TEST_F(JobLogTest, ErrorsNameTheFlagAndTheFile) {
  {
    StatusOr<FleetReport> r = Analyze("", {"1000=missing.log"});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
    EXPECT_EQ(r.status().message().rfind("parameter 'job_log' 1000=missing.log: missing.log", 0), 0u)
        << r.status().message();
  }
  {
    fs_.AddFile("empty.log", "hello\nno steps here\n");
    StatusOr<FleetReport> r = Analyze("", {"1000=empty.log"});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kParse);
    EXPECT_EQ(r.status().message().rfind("parameter 'job_log' 1000=empty.log: empty.log: no training step lines", 0),
              0u)
        << r.status().message();
  }
  {
    StatusOr<FleetReport> r = Analyze(R"({"jobs": [{"id": "1000", "log": "gone.log"}]})");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message().rfind("jobs.json: jobs[0].log: gone.log", 0), 0u) << r.status().message();
  }
  {
    StatusOr<FleetReport> r =
        Analyze(R"({"jobs": [{"id": "1000", "log": "titan.log", "gpu": "h1000", "model": "llama-3.1-8b"}]})");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kParse);  // the jobs file is wrong: data, exit 1
    EXPECT_EQ(r.status().message().rfind("parameter 'jobs' entry '1000': parameter 'gpu'", 0), 0u)
        << r.status().message();
  }
  std::vector<FleetJobReport> reports;
  for (const char* bad : {"titan.log", "=titan.log", "1000="}) {
    Status s = AddFleetJobLogs({bad}, reports);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.message(),
              std::string("parameter 'job_log' '") + bad + "': expected JOB=FILE (a job id, '=', a log file)");
  }
  StatusOr<std::vector<FleetJobReport>> both = ParseFleetJobs(
      R"({"jobs": [{"id": "1000", "model": "x", "seq_len": 8, "tokens_per_sec": 1}]})", "jobs.json", {"1000=t.log"});
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(both.status().message().rfind(
                "parameter 'job_log' 1000=t.log: the parameter 'jobs' entry '1000' gives its throughput", 0),
            0u)
      << both.status().message();
}

TEST_F(JobLogTest, JobsFileLogListAndFlagAppend) {
  StatusOr<std::vector<FleetJobReport>> jobs =
      ParseFleetJobs(R"({"jobs": [{"id": "a", "log": ["one.log", "two.log"], "gpus": 16, "gpu": "h100"}]})",
                     "jobs.json", {"a=three.log", "b=four.log"});
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 2u);
  const FleetJobReport& a = (*jobs)[0];
  ASSERT_EQ(a.log.size(), 3u);
  EXPECT_EQ(a.log[0].path, "one.log");
  EXPECT_EQ(a.log[0].given_by, "jobs.json: jobs[0].log[0]");
  EXPECT_EQ(a.log[2].path, "three.log");
  EXPECT_EQ(a.log[2].given_by, "parameter 'job_log' a=three.log");
  EXPECT_EQ(a.gpus, 16);
  EXPECT_EQ(a.gpu, "h100");
  EXPECT_EQ((*jobs)[1].id, "b");
  EXPECT_TRUE((*jobs)[1].model.empty());
}

// The exporter's cache: the second analysis does not read the log again;
// a log that disappears keeps the last good figure with a log_stale finding.
TEST_F(JobLogTest, CacheKeepsTheLastGoodRead) {
  FleetOptions options;
  options.hardware = &hw_;
  options.file_system = &fs_;
  options.job_log_cache = std::make_shared<fleet::JobLogCache>();
  ASSERT_TRUE(AddFleetJobLogs({"1000=titan.log"}, options.job_reports).ok());
  options.job_reports[0].model = "llama-3.1-8b";
  options.job_reports[0].seq_len = 8192;
  const std::string telemetry = Telemetry();
  StatusOr<FleetReport> first = AnalyzeFleet(telemetry, "gen.prom", options);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE(first->jobs[0].reported_mfu.has_value());
  fs_.Deny(kTitan);
  StatusOr<FleetReport> second = AnalyzeFleet(telemetry, "gen.prom", options);
  ASSERT_TRUE(second.ok()) << second.status().message();
  ASSERT_TRUE(second->jobs[0].reported_mfu.has_value());
  EXPECT_DOUBLE_EQ(*second->jobs[0].reported_mfu, *first->jobs[0].reported_mfu);
  EXPECT_NE(Find(second->jobs[0], "log_stale"), nullptr);
}

}  // namespace
}  // namespace mfu
