// A real Slurm on loopback (issue #14 "Must show"): Debian's munged,
// slurmctld and slurmd (22.05), started by the test in a scratch directory
// with ports chosen free and stopped by their PIDs (also when an assertion
// fails). A job submitted with --requeue runs a tiny training loop that
// writes ml-goodput-measurement JSONL step and checkpoint records; the test
// requeues it (scontrol requeue), lets the second attempt resume from its
// last checkpoint, cancels it (scancel), and reads the accounting slurmctld
// wrote: with AccountingStorageType=accounting_storage/none sacct answers
// "Slurm accounting storage is disabled", so the job-completion log
// (JobCompType=jobcomp/filetxt) is what this cluster records. `mfu goodput`
// on that log plus the step file must give the ETTR the test computes by
// hand from the same records: preserved step time / wall, where a step of
// the requeued attempt is preserved when a checkpoint recorded before the
// requeue covers it and the resumed attempt does not repeat it (Google's
// rule), and each attempt's first step is charged the mean of its others.
//
// The binaries come from scripts/install-deps (slurmctld slurmd
// slurm-client munge). Without them the test fails, naming the script,
// unless MFU_SKIP_SLURM_E2E is set.

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fleet_fixture.h"
#include "mfu/file_system.h"
#include "mfu/goodput.h"

namespace {

using mfu_fleet_test::ChildProcess;
using mfu_fleet_test::ReadWhole;
using mfu_fleet_test::RunTool;
using mfu_fleet_test::TempDir;
using mfu_fleet_test::ToolResult;

constexpr const char* kSlurmctld = "/usr/sbin/slurmctld";
constexpr const char* kSlurmd = "/usr/sbin/slurmd";
constexpr const char* kMunged = "/usr/sbin/munged";
constexpr const char* kSbatch = "/usr/bin/sbatch";
constexpr const char* kScontrol = "/usr/bin/scontrol";
constexpr const char* kSqueue = "/usr/bin/squeue";
constexpr const char* kScancel = "/usr/bin/scancel";
constexpr const char* kSinfo = "/usr/bin/sinfo";

bool Exists(const std::string& path) {
  return access(path.c_str(), X_OK) == 0;
}

// Polls `done` every 100 ms for up to `timeout_s`.
bool WaitFor(const std::function<bool()>& done, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

std::string Strip(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      out.push_back(line);
  return out;
}

// The training loop of the job: 0.5 s of initialization, steps of 0.3 s, a
// 0.2 s blocking checkpoint every 4 steps; an attempt resumes after the
// step of the last checkpoint. Each record is one short append. The first
// attempt runs 10 steps, a later one 6, then it idles until Slurm stops it:
// the requeue and the cancel never land between a checkpoint file and its
// record (a load-dependent race when the loop ran until killed).
std::string JobScript(const std::string& dir) {
  return "#!/bin/sh\n"
         "d=" +
         dir +
         "\n"
         "f=$d/steps.jsonl\n"
         "step=$(cat $d/ckpt 2>/dev/null || echo 0)\n"
         "a=attempt-${SLURM_RESTART_COUNT:-0}\n"
         "limit=6; [ \"$a\" = attempt-0 ] && limit=10\n"
         "n=0\n"
         "sleep 0.5\n"
         "while :; do\n"
         "  s=$(date +%s.%N); sleep 0.3; e=$(date +%s.%N); step=$((step+1))\n"
         "  echo \"{\\\"job_name\\\":\\\"$a\\\",\\\"step_count\\\":$step,\\\"step_start_time\\\":$s,"
         "\\\"step_end_time\\\":$e}\" >> $f\n"
         "  if [ $((step % 4)) -eq 0 ]; then\n"
         "    s=$(date +%s.%N); sleep 0.2; echo $step > $d/ckpt.tmp; mv $d/ckpt.tmp $d/ckpt; e=$(date +%s.%N)\n"
         "    echo \"{\\\"job_name\\\":\\\"$a\\\",\\\"step_count\\\":$step,\\\"checkpoint_save_start_time\\\":$s,"
         "\\\"checkpoint_save_end_time\\\":$e}\" >> $f\n"
         "  fi\n"
         "  n=$((n+1)); [ $n -ge $limit ] && exec sleep 1000\n"
         "done\n";
}

// A one-node cluster in a scratch directory; every daemon a ChildProcess
// (SIGTERM, then SIGKILL, by PID). Members are destroyed in reverse:
// slurmd, slurmctld, munged.
class SlurmCluster {
 public:
  explicit SlurmCluster(const TempDir& dir) : dir_(dir.path()) {}
  ~SlurmCluster() {
    // A job still running would outlive its slurmd: cancel it first.
    if (!job_id_.empty() && ctld_ != nullptr && ctld_->running()) {
      Tool({kScancel, job_id_});
      WaitFor([&] { return Strip(Tool({kSqueue, "-h", "-j", job_id_, "-o", "%T"}).output).empty(); }, 15);
    }
  }
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  // Starts munged, slurmctld and slurmd; "" on success, else why.
  std::string Start() {
    const std::string key = dir_ + "/munge.key";
    {
      std::random_device random;
      std::string bytes(1024, '\0');
      for (char& c : bytes)
        c = static_cast<char>(random());
      std::ofstream(key, std::ios::binary) << bytes;
      chmod(key.c_str(), 0400);
    }
    const std::string socket = dir_ + "/munge.sock";
    munged_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{kMunged, "-F", "-f", "--socket=" + socket, "--key-file=" + key,
                                 "--pid-file=" + dir_ + "/munged.pid", "--log-file=" + dir_ + "/munged.log",
                                 "--seed-file=" + dir_ + "/munged.seed"},
        dir_ + "/munged.out", dir_ + "/munged.err");
    if (!WaitFor([&] { return std::filesystem::exists(socket); }, 10))
      return "munged did not create its socket: " + munged_->Stderr();

    char host[256] = {};
    gethostname(host, sizeof host - 1);
    host_ = host;
    const passwd* pw = getpwuid(getuid());
    const std::string user = pw != nullptr ? pw->pw_name : "root";
    const int ctld_port = mfu_fleet_test::FreePort();
    int slurmd_port = mfu_fleet_test::FreePort();
    while (slurmd_port == ctld_port)
      slurmd_port = mfu_fleet_test::FreePort();
    std::filesystem::create_directories(dir_ + "/state");
    std::filesystem::create_directories(dir_ + "/spool");
    conf_ = dir_ + "/slurm.conf";
    std::ofstream(conf_) << "ClusterName=mfutest\n"
                         << "SlurmctldHost=localhost(127.0.0.1)\n"
                         << "SlurmctldPort=" << ctld_port << "\nSlurmdPort=" << slurmd_port << "\n"
                         << "SlurmUser=" << user << "\nSlurmdUser=" << user << "\n"
                         << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << socket << "\n"
                         << "StateSaveLocation=" << dir_ << "/state\nSlurmdSpoolDir=" << dir_ << "/spool\n"
                         << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\nSlurmdPidFile=" << dir_ << "/slurmd.pid\n"
                         << "SlurmctldLogFile=" << dir_ << "/slurmctld.log\nSlurmdLogFile=" << dir_ << "/slurmd.log\n"
                         << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
                         << "JobAcctGatherType=jobacct_gather/none\n"
                         << "AccountingStorageType=accounting_storage/none\n"
                         << "JobCompType=jobcomp/filetxt\nJobCompLoc=" << dir_ << "/jobcomp.log\n"
                         << "MpiDefault=none\nSwitchType=switch/none\nSchedulerType=sched/builtin\n"
                         << "SelectType=select/linear\nReturnToService=2\n"
                         << "NodeName=" << host_
                         << " NodeAddr=127.0.0.1 CPUs=" << std::max(1u, std::thread::hardware_concurrency())
                         << " State=UNKNOWN\n"
                         << "PartitionName=debug Nodes=" << host_ << " Default=YES MaxTime=INFINITE State=UP\n";
    setenv("SLURM_CONF", conf_.c_str(), 1);
    ctld_ = std::make_unique<ChildProcess>(std::vector<std::string>{kSlurmctld, "-D", "-f", conf_},
                                           dir_ + "/slurmctld.out", dir_ + "/slurmctld.err");
    slurmd_ = std::make_unique<ChildProcess>(std::vector<std::string>{kSlurmd, "-D", "-f", conf_, "-N", host_},
                                             dir_ + "/slurmd.out", dir_ + "/slurmd.err");
    const bool idle = WaitFor(
        [&] {
          return Strip(Tool({kSinfo, "-h", "-n", host_, "-o", "%T"}).output) == "idle";
        },
        30);
    if (!idle)
      return "the node did not become idle within 30 s: " + Logs();
    return "";
  }

  ToolResult Tool(const std::vector<std::string>& argv) const { return RunTool(argv, "", 20); }

  // "STATE" of the job ("" once it is gone).
  std::string JobState() const { return Strip(Tool({kSqueue, "-h", "-j", job_id_, "-o", "%T"}).output); }

  std::string Logs() const {
    std::string out;
    for (const char* f : {"slurmctld.log", "slurmctld.err", "slurmd.log", "slurmd.err", "munged.err"}) {
      std::string text = ReadWhole(dir_ + "/" + f);
      if (text.size() > 1500)
        text = text.substr(text.size() - 1500);
      out += std::string("\n--- ") + f + "\n" + text;
    }
    return out;
  }

  std::string job_id_;

 private:
  std::string dir_, host_, conf_;
  std::unique_ptr<ChildProcess> munged_, ctld_, slurmd_;
};

double Seconds(const nlohmann::json& j, const char* key) {
  return j.at(key).get<double>();
}

// "2026-12-01T23:08:02" in UTC (the daemons run with TZ=UTC).
double UtcTime(const std::string& text) {
  std::tm tm{};
  strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  return static_cast<double>(timegm(&tm));
}

std::string Field(const std::string& record, const std::string& key) {
  const std::string padded = " " + record;
  const size_t at = padded.find(" " + key + "=");
  if (at == std::string::npos)
    return "";
  const size_t begin = at + key.size() + 1;
  return record.substr(begin, record.find(' ', begin) - begin);
}

struct StepRecord {
  int64_t step;
  double start, end;
};

TEST(GoodputSlurmE2e, RequeuedAndCancelledJobEttrMatchesItsTimeline) {
  const char* binaries[] = {kSlurmctld, kSlurmd, kMunged, kSbatch, kScontrol, kSqueue, kScancel, kSinfo};
  for (const char* b : binaries) {
    if (!Exists(b)) {
      if (std::getenv("MFU_SKIP_SLURM_E2E") != nullptr)
        GTEST_SKIP() << b << " is missing and MFU_SKIP_SLURM_E2E is set";
      FAIL() << b
             << " is missing: run scripts/install-deps (slurmctld slurmd slurm-client munge), or set "
                "MFU_SKIP_SLURM_E2E=1 to skip this test";
    }
  }
  setenv("TZ", "UTC", 1);  // the daemons' local time, which jobcomp logs, and mfu's
  tzset();
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  chmod(dir.path().c_str(), 0755);  // munged wants its socket's directory searchable
  SlurmCluster cluster(dir);
  const std::string started = cluster.Start();
  ASSERT_EQ(started, "");

  const std::string script = dir.Write("train.sh", JobScript(dir.path()));
  chmod(script.c_str(), 0755);
  const std::string steps_file = dir.path() + "/steps.jsonl";
  const std::string jobcomp = dir.path() + "/jobcomp.log";
  ToolResult submitted =
      cluster.Tool({kSbatch, "--requeue", "--parsable", "-o", dir.path() + "/job.out", "-D", dir.path(), script});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  cluster.job_id_ = Strip(submitted.output);
  auto step_lines = [&](const std::string& attempt) {
    int n = 0;
    for (const std::string& line : Lines(ReadWhole(steps_file)))
      n += line.find("\"" + attempt + "\"") != std::string::npos && line.find("step_end_time") != std::string::npos;
    return n;
  };

  // Attempt 0: ten steps (checkpoints after steps 4 and 8), then requeued.
  ASSERT_TRUE(WaitFor([&] { return step_lines("attempt-0") >= 10; }, 40)) << cluster.Logs();
  const std::time_t requeued_at = std::time(nullptr);
  ToolResult requeued = cluster.Tool({kScontrol, "requeue", cluster.job_id_});
  ASSERT_EQ(requeued.exit_code, 0) << requeued.output;
  // A requeued job waits for its BeginTime (slurmctld delays it ~2 min):
  // released early, the idle time between attempts stays a few seconds.
  // Not in the second of the requeue: slurmd revokes the old credential
  // with a whole-second time, and a launch credential made in that same
  // second counts as revoked ("Killing non-startable batch JobId=1: Job
  // credential revoked", seen under load when the release came at once).
  ASSERT_TRUE(WaitFor([&] { return cluster.JobState() == "PENDING"; }, 30)) << cluster.Logs();
  while (std::time(nullptr) < requeued_at + 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ToolResult released = cluster.Tool({kScontrol, "update", "JobId=" + cluster.job_id_, "StartTime=now"});
  ASSERT_EQ(released.exit_code, 0) << released.output;

  // Attempt 1: resumes after step 8, six steps, then cancelled.
  ASSERT_TRUE(WaitFor([&] { return step_lines("attempt-1") >= 6; }, 60)) << cluster.JobState() << cluster.Logs();
  ToolResult cancelled = cluster.Tool({kScancel, cluster.job_id_});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.output;
  ASSERT_TRUE(WaitFor([&] { return Lines(ReadWhole(jobcomp)).size() >= 2 && cluster.JobState().empty(); }, 30))
      << cluster.Logs();

  // The accounting as slurmctld wrote it: two records of the job.
  const std::vector<std::string> records = Lines(ReadWhole(jobcomp));
  ASSERT_EQ(records.size(), 2u) << ReadWhole(jobcomp);
  EXPECT_EQ(Field(records[0], "JobId"), cluster.job_id_);
  EXPECT_EQ(Field(records[1], "JobState"), "CANCELLED") << records[1];
  const double start0 = UtcTime(Field(records[0], "StartTime")), end0 = UtcTime(Field(records[0], "EndTime"));
  const double start1 = UtcTime(Field(records[1], "StartTime")), end1 = UtcTime(Field(records[1], "EndTime"));

  // The step file, by attempt.
  std::map<std::string, std::vector<StepRecord>> steps;
  std::map<std::string, std::vector<std::pair<int64_t, double>>> saves;  // step, save end
  double last_record = 0;
  for (const std::string& line : Lines(ReadWhole(steps_file))) {
    const nlohmann::json j = nlohmann::json::parse(line);
    const std::string attempt = j.at("job_name").get<std::string>();
    if (j.contains("step_end_time")) {
      steps[attempt].push_back(
          {j.at("step_count").get<int64_t>(), Seconds(j, "step_start_time"), Seconds(j, "step_end_time")});
      last_record = std::max(last_record, Seconds(j, "step_end_time"));
    } else {
      saves[attempt].emplace_back(j.at("step_count").get<int64_t>(), Seconds(j, "checkpoint_save_end_time"));
      last_record = std::max(last_record, Seconds(j, "checkpoint_save_end_time"));
    }
  }
  ASSERT_GE(steps["attempt-0"].size(), 10u);
  ASSERT_GE(steps["attempt-1"].size(), 6u);
  ASSERT_FALSE(saves["attempt-0"].empty());

  // By hand. Slurm logs whole seconds: an attempt ends when its second is
  // over (docs/goodput.md), so the wall runs from the first StartTime to the
  // last EndTime + 1 s or the last record, whichever is later.
  const double wall = std::max(end1 + 1, last_record) - start0;
  int64_t saved = -1;
  for (const auto& [step, at] : saves["attempt-0"])
    if (at <= end0 + 1)
      saved = std::max(saved, step);
  const int64_t resumed_at = steps["attempt-1"].front().step;
  EXPECT_EQ(resumed_at, saved + 1) << "the second attempt resumes after the last checkpoint";
  auto productive = [](const std::vector<StepRecord>& s, const std::function<bool(int64_t)>& preserved) {
    double mean_rest = 0;
    for (size_t i = 1; i < s.size(); ++i)
      mean_rest += (s[i].end - s[i].start) / static_cast<double>(s.size() - 1);
    double sum = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      const double d = i == 0 ? std::min(s[0].end - s[0].start, mean_rest) : s[i].end - s[i].start;
      if (preserved(s[i].step))
        sum += d;
    }
    return sum;
  };
  const double productive_s = productive(steps["attempt-0"], [&](int64_t s) { return s <= saved && s < resumed_at; }) +
                              productive(steps["attempt-1"], [](int64_t) { return true; });
  const double expected_ettr = productive_s / wall;

  // The timeline as the test made it: the requeue came after ten steps, the
  // cancel after six more; Slurm's records agree with the job's own clock.
  EXPECT_LE(start0, steps["attempt-0"].front().start);
  EXPECT_GE(end0 + 1, steps["attempt-0"].back().end);
  EXPECT_LE(start1, steps["attempt-1"].front().start);
  EXPECT_GT(start1, end0 - 1);

  // The library on the same files (the accounting mfu goodput prints).
  mfu::RealFileSystem fs;
  std::vector<mfu::GoodputEvent> events;
  for (const std::string& file : {jobcomp, steps_file}) {
    auto read = mfu::ReadGoodputEventsFile(fs, file);
    ASSERT_TRUE(read.ok()) << read.status().message();
    events.insert(events.end(), read->begin(), read->end());
  }
  auto accounted = mfu::ComputeGoodput(events);
  ASSERT_TRUE(accounted.ok()) << accounted.status().message();
  EXPECT_EQ(accounted->attempts, 2);
  EXPECT_EQ(accounted->interruptions, 1);
  EXPECT_NEAR(accounted->wall_s, wall, 1e-6);
  EXPECT_NEAR(accounted->productive_s, productive_s, 1e-6);
  EXPECT_NEAR(accounted->ettr, expected_ettr, 1e-9);

  ToolResult mfu = RunTool({MFU_BINARY, "goodput", "--json", jobcomp, steps_file}, "", 30);
  ASSERT_EQ(mfu.exit_code, 0) << mfu.output;
  const nlohmann::json report = nlohmann::json::parse(mfu.output);
  EXPECT_EQ(report.at("attempts").get<int64_t>(), 2) << mfu.output;
  EXPECT_EQ(report.at("interruptions").get<int64_t>(), 1) << mfu.output;
  EXPECT_NEAR(report.at("wall_s").get<double>(), wall, 1e-6) << mfu.output;
  EXPECT_NEAR(report.at("productive_s").get<double>(), productive_s, 1e-6) << mfu.output;
  EXPECT_NEAR(report.at("ettr").get<double>(), expected_ettr, 1e-9) << mfu.output;
  std::printf(
      "slurm e2e: job %s, attempts [%.0f, %.0f] and [%.0f, %.0f], wall %.3f s, productive %.3f s, "
      "ETTR %.4f (mfu %.4f), saved through step %lld\n",
      cluster.job_id_.c_str(), start0, end0, start1, end1, wall, productive_s, expected_ettr,
      report.at("ettr").get<double>(), static_cast<long long>(saved));
}

}  // namespace
