// The Slurm accounting readers on records in Slurm's own formats:
//   sacct --parsable2: sacct(1) of slurm-client 22.05.8 (Debian bookworm,
//     /usr/share/man/man1/sacct.1.gz): '|'-delimited, header line, JobID
//     "JobID[.JobStep]", arrays "123_4", het jobs "123+0", times
//     YYYY-MM-DDTHH:MM:SS or Unknown, Elapsed [DD-[HH:]]MM:SS, -D one row per
//     requeued attempt, the JOB STATE CODES list.
//   jobcomp/filetxt: JOB_FORMAT of src/plugins/jobcomp/filetxt/
//     jobcomp_filetxt.c (SchedMD/slurm at
//     07df9429be3b1d81e0ce1c769432c4f180fabb91).
// Times are read in the process's time zone (Slurm prints local time): the
// tests run in UTC. Expected epochs are `date -u -d 2026-12-01T10:00:00 +%s`
// = 1796119200, and offsets from it counted by hand; an attempt's end is the
// end of the whole second Slurm logged ("+ 1").

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "goodput/goodput_readers.h"
#include "goodput/slurm_fields.h"

namespace mfu::goodput_internal {
namespace {

constexpr double kT0 = 1796119200;  // 2026-12-01T10:00:00 UTC

class SlurmReaders : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

struct Expect {
  GoodputEventKind kind;
  double time_s;
  std::string detail;
};

// A job (or attempt) start `offset_s` after kT0, and its end at the close
// of the second `offset_s` after kT0.
Expect Start(double offset_s, std::string detail = "") {
  return {GoodputEventKind::kJobStart, kT0 + offset_s, std::move(detail)};
}
Expect End(GoodputEventKind kind, double offset_s, std::string detail) {
  return {kind, kT0 + offset_s + 1, std::move(detail)};
}

// Job 4242 (sacct) / 4243 (jobcomp), as both readers see it: submitted at
// 10:00, run from 10:00:30 for an hour and requeued; submitted again at
// 11:00:40, run from 11:05:40 for two hours, ended by a node failure
// (`node_fail`: the state as the reader details it).
std::vector<Expect> RequeuedThenNodeFail(std::string node_fail) {
  return {{GoodputEventKind::kQueued, kT0, ""},
          Start(30, "nodes=2 node[01-02]"),
          End(GoodputEventKind::kJobFailed, 3630, "REQUEUED"),
          {GoodputEventKind::kQueued, kT0 + 3640, ""},
          Start(3940, "nodes=2 node[01-02]"),
          End(GoodputEventKind::kJobFailed, 11140, std::move(node_fail))};
}

void ExpectEvents(const std::vector<GoodputEvent>& got, const std::vector<Expect>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(GoodputEventKindId(got[i].kind), std::string(GoodputEventKindId(want[i].kind))) << i;
    EXPECT_DOUBLE_EQ(got[i].time_s, want[i].time_s) << i;
    EXPECT_EQ(got[i].detail, want[i].detail) << i;
  }
}

// sacct -P -D -o JobID,JobName,State,Submit,Start,End,Elapsed,Restarts,
// ExitCode,NodeList,NNodes: a job requeued twice (REQUEUED, then NODE_FAIL,
// then COMPLETED), its steps folded into it.
TEST_F(SlurmReaders, SacctRequeuedAttemptsAndSteps) {
  const std::string text =
      "JobID|JobName|State|Submit|Start|End|Elapsed|Restarts|ExitCode|NodeList|NNodes\n"
      "4242|train|REQUEUED|2026-12-01T10:00:00|2026-12-01T10:00:30|2026-12-01T11:00:30|01:00:00|0|0:0|node[01-02]|2\n"
      "4242.batch|batch|CANCELLED|2026-12-01T10:00:30|2026-12-01T10:00:30|2026-12-01T11:00:30|01:00:00|0|0:15|"
      "node01|1\n"
      "4242.extern|extern|COMPLETED|2026-12-01T10:00:30|2026-12-01T10:00:30|2026-12-01T11:00:30|01:00:00|0|0:0|"
      "node[01-02]|2\n"
      "4242|train|NODE_FAIL|2026-12-01T11:00:40|2026-12-01T11:05:40|2026-12-01T13:05:40|02:00:00|1|0:0|node[01-02]|2\n"
      "4242|train|COMPLETED|2026-12-01T13:06:00|2026-12-01T13:10:00|2026-12-01T14:10:00|01:00:00|2|0:0|node[03-04]|2\n";
  auto events = ReadSacct(text, "run.sacct");
  ASSERT_TRUE(events.ok()) << events.status().message();
  std::vector<Expect> want = RequeuedThenNodeFail("NODE_FAIL");
  want.push_back({GoodputEventKind::kQueued, kT0 + 11160, ""});
  want.push_back(Start(11400, "nodes=2 node[03-04]"));
  want.push_back(End(GoodputEventKind::kJobEnd, 15000, "COMPLETED"));
  ExpectEvents(*events, want);
  for (const GoodputEvent& e : *events) {
    EXPECT_EQ(e.attempt, "4242");
    EXPECT_EQ(e.source, "run.sacct");
  }
  EXPECT_EQ((*events)[0].line, 2);
  EXPECT_EQ((*events)[3].line, 5);
  EXPECT_EQ((*events)[8].line, 6);
}

// Any column order; --parsable's trailing '|'; the states of sacct(1)'s
// JOB STATE CODES, long and short, "CANCELLED by <uid>".
TEST_F(SlurmReaders, SacctColumnOrderAndStates) {
  const std::string text =
      "End|State|Start|JobID|\n"
      "2026-12-01T10:10:00|CANCELLED by 1000|2026-12-01T10:00:00|1|\n"
      "2026-12-01T10:10:00|TIMEOUT|2026-12-01T10:00:00|2|\n"
      "2026-12-01T10:10:00|PREEMPTED|2026-12-01T10:00:00|3|\n"
      "2026-12-01T10:10:00|OUT_OF_MEMORY|2026-12-01T10:00:00|4|\n"
      "Unknown|RUNNING|2026-12-01T10:00:00|5|\n"
      "Unknown|PENDING|Unknown|6|\n"
      "2026-12-01T10:10:00|CD|2026-12-01T10:00:00|7|\n"
      "2026-12-01T10:10:00|F|2026-12-01T10:00:00|8|\n";
  // Each ended row is a start at 10:00 and an end at the close of 10:10:00;
  // RUNNING has no end yet, PENDING never started and has no event at all.
  const std::pair<const char*, GoodputEventKind> ended[] = {{"CANCELLED by 1000", GoodputEventKind::kJobEnd},
                                                            {"TIMEOUT", GoodputEventKind::kJobFailed},
                                                            {"PREEMPTED", GoodputEventKind::kJobFailed},
                                                            {"OUT_OF_MEMORY", GoodputEventKind::kJobFailed},
                                                            {"RUNNING", GoodputEventKind::kJobStart},
                                                            {"CD", GoodputEventKind::kJobEnd},
                                                            {"F", GoodputEventKind::kJobFailed}};
  std::vector<Expect> want;
  for (const auto& [state, end] : ended) {
    want.push_back(Start(0));
    if (end != GoodputEventKind::kJobStart)
      want.push_back(End(end, 600, state));
  }
  auto events = ReadSacct(text, "s");
  ASSERT_TRUE(events.ok()) << events.status().message();
  ExpectEvents(*events, want);
}

// Array tasks keep their id; a heterogeneous job's components are one
// attempt (earliest start, latest end, a failed component fails it);
// AllocTRES gives the node count; a non-zero ExitCode follows the state.
TEST_F(SlurmReaders, SacctArraysHetJobsAndExitCodes) {
  const std::string text =
      "JobID|State|Start|End|ExitCode|AllocTRES|NodeList\n"
      "900_3|FAILED|2026-12-01T10:00:00|2026-12-01T10:01:00|1:0|billing=8,cpu=8,node=1|n1\n"
      "901+0|COMPLETED|2026-12-01T10:00:00|2026-12-01T10:05:00|0:0|cpu=4,node=1|n1\n"
      "901+1|NODE_FAIL|2026-12-01T10:00:02|2026-12-01T10:06:00|0:0|cpu=4,node=1|n2\n"
      "901+1.0|NODE_FAIL|2026-12-01T10:00:02|2026-12-01T10:06:00|0:0|cpu=4,node=1|n2\n";
  auto events = ReadSacct(text, "s");
  ASSERT_TRUE(events.ok()) << events.status().message();
  ExpectEvents(*events, {
                            Start(0, "nodes=1 n1"),
                            End(GoodputEventKind::kJobFailed, 60, "FAILED (exit 1:0)"),
                            Start(0, "nodes=1 n1"),
                            End(GoodputEventKind::kJobFailed, 360, "NODE_FAIL"),
                        });
  EXPECT_EQ((*events)[0].attempt, "900_3");
  EXPECT_EQ((*events)[2].attempt, "901");
}

// Elapsed ([DD-[HH:]]MM:SS) gives the end of an ended attempt whose End is
// missing: 1-02:03:04 = 86400 + 7200 + 180 + 4 = 93784 s. A job listed only
// by its steps is one attempt spanning them, in the batch step's state. A
// Restarts count beyond the rows listed says the earlier attempts are
// missing (sacct without -D).
TEST_F(SlurmReaders, SacctElapsedStepsOnlyAndRestarts) {
  const std::string text =
      "JobID|State|Start|End|Elapsed|Restarts\n"
      "10|FAILED|2026-12-01T10:00:00|Unknown|1-02:03:04|0\n"
      "11.batch|FAILED|2026-12-01T10:00:00|2026-12-01T10:30:00|30:00|0\n"
      "11.0|COMPLETED|2026-12-01T10:00:05|2026-12-01T10:20:00|19:55|0\n"
      "12|COMPLETED|2026-12-01T10:00:00|2026-12-01T11:00:00|01:00:00|3\n";
  auto events = ReadSacct(text, "s");
  ASSERT_TRUE(events.ok()) << events.status().message();
  ExpectEvents(*events, {
                            Start(0),
                            End(GoodputEventKind::kJobFailed, 93784, "FAILED"),
                            Start(0),
                            End(GoodputEventKind::kJobFailed, 1800, "FAILED"),
                            Start(0, "requeued 3 times; the earlier attempts are not listed (sacct -D lists them)"),
                            End(GoodputEventKind::kJobEnd, 3600, "COMPLETED"),
                        });
}

TEST_F(SlurmReaders, SacctErrorsNameOriginLineAndColumn) {
  auto error = [](const std::string& text) { return ReadSacct(text, "x.sacct").status().message(); };
  EXPECT_EQ(error("JobID|State|Start\n1|COMPLETED|Unknown\n"),
            "x.sacct:1: header has no 'End' column (sacct --parsable2 output needs JobID, State, Start and End: sacct "
            "-P -D -o JobID,State,Submit,Start,End,...)");
  const std::string header = "JobID|State|Start|End|Elapsed\n";
  EXPECT_EQ(error(header + "1|COMPLETED|2026-13-01T00:00:00|Unknown|00:01\n"),
            "x.sacct:2: column 'Start': '2026-13-01T00:00:00' is not a time (YYYY-MM-DDTHH:MM:SS, Unknown or None)");
  EXPECT_EQ(error(header + "\n1|COMPLETED|Unknown|Unknown\n"),
            "x.sacct:3: 4 fields, the header has 5 (a '|' inside a field?)");
  EXPECT_EQ(error(header + "1|DONE|Unknown|Unknown|00:01\n"),
            "x.sacct:2: column 'State': 'DONE' is not a Slurm job state");
  EXPECT_EQ(error(header + "abc|COMPLETED|Unknown|Unknown|00:01\n"),
            "x.sacct:2: column 'JobID': 'abc' is not a job id (123, 123.batch, 123_4, 123+0)");
  EXPECT_EQ(error(header + "1|COMPLETED|Unknown|Unknown|1:2:3:4\n"),
            "x.sacct:2: column 'Elapsed': '1:2:3:4' is not an elapsed time ([DD-[HH:]]MM:SS)");
  EXPECT_EQ(error(header + "1|COMPLETED|2026-12-01T10:00:00|2026-12-01T09:00:00|00:01\n"),
            "x.sacct:2: column 'End': before Start");
  EXPECT_EQ(error(""), "x.sacct: empty, no sacct header line");
  EXPECT_EQ(ReadSacct(header + "1|PENDING|Unknown|Unknown|00:00\n", "x.sacct").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadSacct(header + "1|DONE|x|y|z\n", "x.sacct").status().code(), StatusCode::kParse);
}

TEST_F(SlurmReaders, SlurmTimesAndElapsed) {
  EXPECT_EQ(*ParseSlurmTime("2026-12-01T10:00:00").value(), kT0);
  EXPECT_EQ(*ParseSlurmTime("2026-12-01T10:00:00Z").value(), kT0);
  EXPECT_EQ(*ParseSlurmTime("2026-12-01T12:00:00+02:00").value(), kT0);
  EXPECT_EQ(*ParseSlurmTime("2024-02-29T00:00:00Z").value(), 1709164800);  // date -u -d 2024-02-29 +%s
  EXPECT_FALSE(ParseSlurmTime("Unknown").value().has_value());
  EXPECT_FALSE(ParseSlurmTime("None").value().has_value());
  EXPECT_FALSE(ParseSlurmTime("unknown").value().has_value());
  EXPECT_FALSE(ParseSlurmTime("2025-02-29T00:00:00").ok());
  EXPECT_FALSE(ParseSlurmTime("2026-12-01 10:00").ok());
  EXPECT_FALSE(ParseSlurmTime("2026-12-01T10:00:00+2").ok());
  EXPECT_EQ(ParseSlurmElapsed("00:59").value(), 59);
  EXPECT_EQ(ParseSlurmElapsed("01:00:00").value(), 3600);
  EXPECT_EQ(ParseSlurmElapsed("2-00:00:01").value(), 172801);
  EXPECT_FALSE(ParseSlurmElapsed("61:00").ok());
  EXPECT_FALSE(ParseSlurmElapsed("-1:00").ok());
  EXPECT_EQ(SlurmStateName("CANCELLED+").value(), "CANCELLED");
  EXPECT_EQ(SlurmStateName("oom").value(), "OUT_OF_MEMORY");
  EXPECT_FALSE(SlurmStateName("DONE").has_value());
}

// Lines in jobcomp_filetxt.c's JOB_FORMAT: a job requeued (REQUEUED), then
// failed on a node (NODE_FAIL); an array task; one cancelled while pending
// (StartTime Unknown: no attempt). A job name and a directory with spaces.
TEST_F(SlurmReaders, JobCompRecords) {
  const std::string text =
      "JobId=4243 UserId=alice(1000) GroupId=alice(1000) Name=llama train JobState=REQUEUED Partition=gpu "
      "TimeLimit=UNLIMITED StartTime=2026-12-01T10:00:30 EndTime=2026-12-01T11:00:30 NodeList=node[01-02] NodeCnt=2 "
      "ProcCnt=16 WorkDir=/home/alice/run 1 ReservationName= Tres=cpu=16,mem=64G,node=2,billing=16 Account=ml "
      "QOS=normal WcKey= Cluster=c1 SubmitTime=2026-12-01T10:00:00 EligibleTime=2026-12-01T10:00:00 "
      "DerivedExitCode=0:0 ExitCode=0:0 \n"
      "JobId=4243 UserId=alice(1000) GroupId=alice(1000) Name=llama train JobState=NODE_FAIL Partition=gpu "
      "TimeLimit=UNLIMITED StartTime=2026-12-01T11:05:40 EndTime=2026-12-01T13:05:40 NodeList=node[01-02] NodeCnt=2 "
      "ProcCnt=16 WorkDir=/home/alice/run 1 ReservationName= Tres=cpu=16,mem=64G,node=2,billing=16 Account=ml "
      "QOS=normal WcKey= Cluster=c1 SubmitTime=2026-12-01T11:00:40 EligibleTime=2026-12-01T11:00:40 "
      "DerivedExitCode=0:0 ExitCode=0:9 \n"
      "JobId=4250 UserId=bob(1001) GroupId=bob(1001) Name=sweep JobState=COMPLETED Partition=gpu TimeLimit=60 "
      "StartTime=2026-12-01T10:00:00 EndTime=2026-12-01T10:01:00 NodeList=node03 NodeCnt=1 ProcCnt=8 WorkDir=/w "
      "ReservationName= Tres=cpu=8,node=1 Account= QOS=normal WcKey= Cluster=c1 SubmitTime=unknown "
      "EligibleTime=unknown ArrayJobId=4249 ArrayTaskId=1 DerivedExitCode=0:0 ExitCode=0:0 \n"
      "JobId=4251 UserId=bob(1001) GroupId=bob(1001) Name=x JobState=CANCELLED Partition=gpu TimeLimit=60 "
      "StartTime=Unknown EndTime=2026-12-01T10:02:00 NodeList=(null) NodeCnt=0 ProcCnt=0 WorkDir=/w "
      "ReservationName= Tres= Account= QOS=normal WcKey= Cluster=c1 SubmitTime=2026-12-01T10:01:00 "
      "EligibleTime=2026-12-01T10:01:00 DerivedExitCode=0:0 ExitCode=0:0 \n";
  ASSERT_TRUE(LooksLikeSlurmJobComp(text));
  EXPECT_FALSE(LooksLikeSacct(text));
  auto events = ReadSlurmJobComp(text, "jobcomp.log");
  ASSERT_TRUE(events.ok()) << events.status().message();
  std::vector<Expect> want = RequeuedThenNodeFail("NODE_FAIL (exit 0:9)");
  want.push_back(Start(0, "nodes=1 node03"));
  want.push_back(End(GoodputEventKind::kJobEnd, 60, "COMPLETED"));
  want.push_back({GoodputEventKind::kQueued, kT0 + 60, ""});
  ExpectEvents(*events, want);
  EXPECT_EQ((*events)[0].attempt, "4243");
  EXPECT_EQ((*events)[6].attempt, "4249_1");
  EXPECT_EQ((*events)[3].line, 2);
}

TEST_F(SlurmReaders, JobCompErrorsNameOriginLineAndField) {
  auto error = [](const std::string& text) { return ReadSlurmJobComp(text, "jc.log").status().message(); };
  EXPECT_EQ(error("JobId=1 JobState=COMPLETED StartTime=2026-12-01T10:00:00\n"), "jc.log:1: field 'EndTime' missing");
  EXPECT_EQ(error("\nJobId=1 JobState=WEIRD StartTime=Unknown EndTime=Unknown\n"),
            "jc.log:2: field 'JobState': 'WEIRD' is not a Slurm job state");
  EXPECT_EQ(error("JobId=1 JobState=FAILED StartTime=2026-12-01T10:00:00 EndTime=yesterday\n"),
            "jc.log:1: field 'EndTime': 'yesterday' is not a time (YYYY-MM-DDTHH:MM:SS, Unknown or None)");
  EXPECT_EQ(error("JobId=x1 JobState=FAILED StartTime=Unknown EndTime=Unknown\n"),
            "jc.log:1: field 'JobId': 'x1' is not a job id");
  EXPECT_EQ(error("JobId=1 JobState=FAILED StartTime=Unknown EndTime=Unknown\nhello\n"),
            "jc.log:2: not a jobcomp/filetxt record (JobId=... JobState=... StartTime=... EndTime=...)");
  EXPECT_EQ(ReadSlurmJobComp("", "jc.log").status().message(), "jc.log: no jobcomp/filetxt record");
}

// The end of the second is capped by the next attempt of the same job
// starting in that second; slurmctld 22.05 logs a requeued attempt to
// jobcomp as PENDING (seen with the real daemons in
// tests/e2e/goodput_slurm_e2e_test.cc): a requeue, a failure.
TEST_F(SlurmReaders, EndOfSecondCappedAndRequeueLoggedAsPending) {
  auto sacct = ReadSacct(
      "JobID|State|Start|End\n"
      "50|NODE_FAIL|2026-12-01T10:00:00|2026-12-01T10:00:10\n"
      "50|COMPLETED|2026-12-01T10:00:10|2026-12-01T10:00:20\n",
      "s");
  ASSERT_TRUE(sacct.ok()) << sacct.status().message();
  ExpectEvents(*sacct, {
                           Start(0),
                           {GoodputEventKind::kJobFailed, kT0 + 10, "NODE_FAIL"},
                           Start(10),
                           End(GoodputEventKind::kJobEnd, 20, "COMPLETED"),
                       });
  auto jobcomp = ReadSlurmJobComp(
      "JobId=1 UserId=root(0) GroupId=root(0) Name=job.sh JobState=PENDING Partition=debug TimeLimit=UNLIMITED "
      "StartTime=2026-12-01T10:00:00 EndTime=2026-12-01T10:00:04 NodeList=vm NodeCnt=1 ProcCnt=2 WorkDir=/tmp "
      "ReservationName= Tres=cpu=1,mem=1M,node=1,billing=1 Account= QOS= WcKey= Cluster=unknown "
      "SubmitTime=2026-12-01T09:59:59 EligibleTime=2026-12-01T09:59:59 DerivedExitCode=0:0 ExitCode=0:0 \n",
      "jc");
  ASSERT_TRUE(jobcomp.ok()) << jobcomp.status().message();
  ExpectEvents(*jobcomp, {
                             {GoodputEventKind::kQueued, kT0 - 1, ""},
                             Start(0, "nodes=1 vm"),
                             End(GoodputEventKind::kJobFailed, 4, "REQUEUED (logged as PENDING)"),
                         });
}

TEST_F(SlurmReaders, Detection) {
  EXPECT_TRUE(LooksLikeSacct("JobID|JobName|State|Start|End\n1|a|COMPLETED|Unknown|Unknown\n"));
  EXPECT_TRUE(LooksLikeSacct("\n  jobidraw|state|\n"));
  EXPECT_FALSE(LooksLikeSacct("JobID State Start\n"));
  EXPECT_FALSE(LooksLikeSacct("a|b|c\n"));
  EXPECT_FALSE(LooksLikeSacct(""));
  EXPECT_FALSE(LooksLikeSlurmJobComp("JobID|State\n"));
  EXPECT_FALSE(LooksLikeSlurmJobComp("{\"step\": 1}\n"));
}

}  // namespace
}  // namespace mfu::goodput_internal
