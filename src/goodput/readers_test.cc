// Event readers on hand-written sources: progress.txt lines built from
// Megatron's format string, ml-goodput-measurement records with its keys,
// the JSONL round trip, training-log timelines, detection and errors.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "goodput/goodput_readers.h"
#include "goodput/goodput_text.h"
#include "mfu/goodput.h"

namespace mfu {
namespace {

using K = GoodputEventKind;

// 2024-01-22 00:00:00 UTC: 2024-01-01 is 1704067200 (54 years of 365 days
// + 13 leap days since 1970), plus 21 days.
constexpr double kJan22 = 1704067200.0 + 21 * 86400;

// Lines as append_to_progress_log writes them (Megatron-LM
// megatron/training/utils/log_utils.py L114-135 @d98e8a64):
// f"{now:%Y-%m-%d %H:%M:%S}\tJob ID: {job_id}\t# GPUs: {num_gpus}\t{string}\n",
// the save strings of training.py L3722-3753 (Megatron-LM: TFLOP/s/GPU;
// Megatron-Bridge train.py L1237-1277: MODEL_TFLOP/s/GPU).
const char* kProgress =
    "2024-01-22 10:00:00\tJob ID: 4242\t# GPUs: 16\tStarting job\n"
    "2024-01-22 10:30:00\tJob ID: 4242\t# GPUs: 16\tSaved checkpoint\tIteration: 500\tJob throughput: 401.2 "
    "TFLOP/s/GPU\tCumulative throughput: 401.2 TFLOP/s/GPU\tFloating-point operations: 1.16e+19\tTokens (in "
    "billions): 1.05\n"
    "2024-01-22 11:00:00\tJob ID: 4242\t# GPUs: 16\tSaving async checkpoint\tIteration: 1000\tJob throughput: 398.0 "
    "MODEL_TFLOP/s/GPU\tCumulative throughput: 399.6 MODEL_TFLOP/s/GPU\tFloating-point operations: "
    "2.31e+19\tTokens (in billions): 2.10\n"
    "2024-01-22 11:00:20\tJob ID: 4242\t# GPUs: 16\tSaved async checkpoint\tIteration: 1000\n"
    "2024-01-22 11:05:00\tJob ID: 4242\t# GPUs: 16\tDeleted checkpoint\tIteration: 500\n"
    "2024-01-22 11:20:00\tJob ID: 4243\t# GPUs: 16\tStarting job\n";

TEST(ProgressReaderTest, EventsFromTheFormatString) {
  ASSERT_TRUE(goodput_internal::LooksLikeMegatronProgress(kProgress));
  StatusOr<std::vector<GoodputEvent>> ev = ReadGoodputEvents(kProgress, "progress.txt");
  ASSERT_TRUE(ev.ok()) << ev.status().message();
  ASSERT_EQ(ev->size(), 6u);
  EXPECT_EQ((*ev)[0].kind, K::kJobStart);
  EXPECT_EQ((*ev)[0].time_s, kJan22 + 10 * 3600);
  EXPECT_EQ((*ev)[0].attempt, "4242");
  EXPECT_EQ((*ev)[0].line, 1);
  EXPECT_EQ((*ev)[1].kind, K::kStep);
  EXPECT_EQ((*ev)[1].step, 500);
  EXPECT_EQ((*ev)[2].kind, K::kCheckpointSaveEnd);
  EXPECT_EQ((*ev)[2].time_s, kJan22 + 10.5 * 3600);
  EXPECT_EQ((*ev)[3].kind, K::kStep);  // "Saving async checkpoint": iteration 1000 done
  EXPECT_EQ((*ev)[3].step, 1000);
  EXPECT_EQ((*ev)[4].kind, K::kCheckpointSaveAsync);  // persisted
  EXPECT_EQ((*ev)[4].time_s, kJan22 + 11 * 3600 + 20);
  EXPECT_EQ((*ev)[5].kind, K::kJobStart);
  EXPECT_EQ((*ev)[5].attempt, "4243");
  EXPECT_EQ((*ev)[5].line, 6);
}

TEST(ProgressReaderTest, MalformedRecordsNameLineAndField) {
  auto error = [](const char* text) {
    StatusOr<std::vector<GoodputEvent>> ev = ReadGoodputEvents(text, "p.txt", GoodputSourceFormat::kMegatronProgress);
    return ev.ok() ? std::string() : ev.status().message();
  };
  EXPECT_EQ(error("2024-01-22 10:00:00\tJob ID: 1\t# GPUs: 8\tStarting job\n2024-13-22 10:00:00\tJob ID: 1\t# "
                  "GPUs: 8\tStarting job\n"),
            "p.txt:2: timestamp: '2024-13-22 10:00:00' is not a '%Y-%m-%d %H:%M:%S' time");
  EXPECT_EQ(error("2024-01-22 10:00:00\tJob ID: 1\t# GPUs: 8\tSaved checkpoint\tIteration: x\n"),
            "p.txt:1: Iteration: 'x' is not a step number");
  EXPECT_EQ(error("2024-01-22 10:00:00\tJob ID: 1\t# GPUs: 8\tSaved checkpoint\n"),
            "p.txt:1: Iteration: missing after 'Saved checkpoint'");
  EXPECT_EQ(error("2024-01-22 10:00:00 Job ID: 1\n"),
            "p.txt:1: record: expected '<time>\\tJob ID: ..\\t# GPUs: ..\\t<event>' (tab-separated)");
}

// Records as GoodputRecorder writes them (ml-goodput-measurement
// src/goodput.py: record_job_start_time -> {job_name, job_start_time},
// record_step_start_time -> {job_name, step_count, step_start_time}, ...).
const char* kGoogle =
    "{\"job_name\": \"run-1\", \"job_start_time\": 1000.0}\n"
    "{\"job_name\": \"run-1\", \"tpu_init_start_time\": 1000.0}\n"
    "{\"job_name\": \"run-1\", \"tpu_init_end_time\": 1010.0}\n"
    "{\"job_name\": \"run-1\", \"training_prep_start_time\": 1010.0}\n"
    "{\"job_name\": \"run-1\", \"training_prep_end_time\": 1020.0}\n"
    "{\"job_name\": \"run-1\", \"step_count\": 0, \"step_start_time\": 1020.0}\n"
    "{\"job_name\": \"run-1\", \"step_count\": 1, \"step_start_time\": 1050.0}\n"
    "{\"job_name\": \"run-1\", \"data_loading_start_time\": 1055.0}\n"
    "{\"job_name\": \"run-1\", \"data_loading_end_time\": 1057.0}\n"
    "{\"job_name\": \"run-1\", \"step_count\": 2, \"step_start_time\": 1060.0}\n"
    "{\"job_name\": \"run-1\", \"custom_badput_event_type\": \"eval\", \"custom_badput_event_start_time\": 1070.0}\n"
    "{\"job_name\": \"run-1\", \"custom_badput_event_type\": \"eval\", \"custom_badput_event_end_time\": 1075.0}\n"
    "{\"job_name\": \"run-1\", \"step_count\": 3, \"step_start_time\": 1075.0}\n"
    "{\"job_name\": \"run-1\", \"job_end_time\": 1085.0}\n";

TEST(GoodputJsonlTest, GoogleRecordsToEventsAndAccounting) {
  ASSERT_TRUE(goodput_internal::LooksLikeGoodputJsonl(kGoogle));
  StatusOr<std::vector<GoodputEvent>> ev = ReadGoodputEvents(kGoogle, "goodput.jsonl");
  ASSERT_TRUE(ev.ok()) << ev.status().message();
  std::vector<GoodputEvent> steps;
  for (const GoodputEvent& e : *ev) {
    if (e.kind == K::kStep)
      steps.push_back(e);
  }
  // A step ends where the next starts; the last at job_end_time.
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[0].time_s, 1050.0);
  EXPECT_EQ(steps[0].duration_s, 30.0);
  EXPECT_EQ(steps[1].duration_s, 10.0);
  EXPECT_EQ(steps[2].duration_s, 15.0);
  EXPECT_EQ(steps[3].time_s, 1085.0);
  EXPECT_EQ(steps[3].duration_s, 10.0);
  StatusOr<GoodputReport> r = ComputeGoodput(*ev);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // By hand: wall 85. Steps: 0 [1020,1050] charged the mean of steps 1-3
  // ((10 + 15 + 10) / 3 = 35/3 s), the rest of the step is startup; init
  // [1000,1020]; data loading [1055,1057]; eval [1070,1075] inside step 2.
  const double first = 35.0 / 3;
  EXPECT_NEAR(r->productive_s, first + 10 - 2 + 15 - 5 + 10, 1e-9);
  EXPECT_NEAR(r->badput_s[static_cast<size_t>(BadputCategory::kInitialization)], 20 + (30 - first), 1e-9);
  EXPECT_EQ(r->badput_s[static_cast<size_t>(BadputCategory::kDataLoading)], 2.0);
  EXPECT_EQ(r->badput_s[static_cast<size_t>(BadputCategory::kEvaluation)], 5.0);
  EXPECT_EQ(r->wall_s, 85.0);
  double sum = r->productive_s;
  for (double b : r->badput_s)
    sum += b;
  EXPECT_EQ(sum, r->wall_s);
}

TEST(GoodputJsonlTest, RunningJobsLastStepIsNotCounted) {
  const char* text =
      "{\"job_name\": \"j\", \"job_start_time\": 0}\n"
      "{\"job_name\": \"j\", \"step_count\": 0, \"step_start_time\": 5}\n"
      "{\"job_name\": \"j\", \"step_count\": 1, \"step_start_time\": 15}\n";
  StatusOr<std::vector<GoodputEvent>> ev = ReadGoodputEvents(text, "j.jsonl");
  ASSERT_TRUE(ev.ok());
  int steps = 0;
  for (const GoodputEvent& e : *ev)
    steps += e.kind == K::kStep ? 1 : 0;
  EXPECT_EQ(steps, 1);  // step 0 ended at 15; step 1 is still running
}

TEST(GoodputJsonlTest, MalformedRecordsNameLineAndField) {
  auto error = [](const char* text) {
    StatusOr<std::vector<GoodputEvent>> ev = ReadGoodputEvents(text, "g.jsonl", GoodputSourceFormat::kGoodputJsonl);
    return ev.ok() ? std::string() : ev.status().message();
  };
  EXPECT_EQ(error("{\"job_name\": \"j\", \"job_start_time\": 0}\n{\"job_name\": \"j\", \"step_count\": 1, "
                  "\"step_start_time\": \"soon\"}\n"),
            "g.jsonl:2: step_start_time: not a number");
  EXPECT_EQ(error("{\"job_name\": \"j\", \"step_start_time\": 3}\n"),
            "g.jsonl:1: step_count: missing on a step record");
  EXPECT_EQ(error("{\"job_name\": \"j\", \"job_start_time\": 0}\n{\"job_name\": \n"),
            "g.jsonl:2: record: not valid JSON");
  EXPECT_EQ(error("[1, 2]\n"), "g.jsonl:1: record: not a JSON object");
  EXPECT_EQ(error("{\"job_name\": 7, \"job_start_time\": 0}\n"), "g.jsonl:1: job_name: not a string");
  EXPECT_EQ(error("{\"job_name\": \"j\", \"step_count\": -4, \"step_end_time\": 3}\n"),
            "g.jsonl:1: step_count: not a non-negative integer");
}

TEST(GoodputJsonlTest, RoundTripIsLossless) {
  std::vector<GoodputEvent> in;
  auto add = [&](K kind, double t, int64_t step, double d, const char* attempt, const char* detail) {
    GoodputEvent e;
    e.kind = kind;
    e.time_s = t;
    e.step = step;
    e.duration_s = d;
    e.attempt = attempt;
    e.detail = detail;
    in.push_back(e);
  };
  add(K::kQueued, 1733011100.5, -1, kLogNaN, "77", "");
  add(K::kJobStart, 1733011200.123456, -1, kLogNaN, "77", "");
  add(K::kInitBegin, 1733011200.2, -1, kLogNaN, "77", "");
  add(K::kInitEnd, 1733011230.7, -1, kLogNaN, "77", "");
  add(K::kCheckpointRestoreBegin, 1733011231, -1, kLogNaN, "77", "");
  add(K::kCheckpointRestoreEnd, 1733011241, 100, kLogNaN, "77", "");
  add(K::kStep, 1733011251.1, 101, 1.0 / 3, "77", "");
  add(K::kStep, 1733011261.2, 102, kLogNaN, "77", "");
  add(K::kDataLoadingBegin, 1733011262, -1, kLogNaN, "77", "");
  add(K::kDataLoadingEnd, 1733011263, -1, kLogNaN, "77", "");
  add(K::kCheckpointSaveBegin, 1733011264, 102, kLogNaN, "77", "");
  add(K::kCheckpointSaveEnd, 1733011270, 102, 6, "77", "");
  add(K::kCheckpointSaveAsync, 1733011280, 102, 0.25, "77", "Saved async checkpoint");
  add(K::kCustomBegin, 1733011281, -1, kLogNaN, "77", "eval");
  add(K::kCustomEnd, 1733011290, -1, kLogNaN, "77", "eval");
  add(K::kJobFailed, 1733011300, -1, kLogNaN, "77", "NODE_FAIL");
  add(K::kJobEnd, 1733011400, -1, kLogNaN, "", "");
  const std::string text = WriteGoodputJsonl(in);
  StatusOr<std::vector<GoodputEvent>> out = ReadGoodputEvents(text, "rt.jsonl");
  ASSERT_TRUE(out.ok()) << out.status().message() << "\n" << text;
  ASSERT_EQ(out->size(), in.size()) << text;
  for (size_t i = 0; i < in.size(); ++i) {
    const GoodputEvent &a = in[i], &b = (*out)[i];
    EXPECT_EQ(a.kind, b.kind) << i;
    EXPECT_EQ(a.time_s, b.time_s) << i;
    EXPECT_EQ(a.step, b.step) << i;
    EXPECT_EQ(std::isnan(a.duration_s), std::isnan(b.duration_s)) << i;
    if (!std::isnan(a.duration_s)) {
      EXPECT_EQ(a.duration_s, b.duration_s) << i;
    }
    EXPECT_EQ(a.attempt, b.attempt) << i;
    EXPECT_EQ(a.detail, b.detail) << i;
    EXPECT_EQ(b.line, static_cast<int64_t>(i + 1));
  }
}

TEST(TimelineEventsTest, AttemptsStepsAndEvents) {
  LogTimeline t;
  t.origin = "train.log";
  t.attempts = 2;
  auto step = [&](int64_t n, int64_t line, int32_t attempt, double time, double step_time) {
    LogStep s;
    s.step = n;
    s.line = line;
    s.attempt = attempt;
    s.time_s = time;
    s.step_time_s = step_time;
    s.steps_covered = 10;
    t.steps.push_back(s);
  };
  step(10, 5, 0, 1100, 10);  // 10 steps of 10 s
  step(20, 6, 0, 1200, 10);
  step(20, 11, 1, 1500, 10);
  LogEvent save;
  save.kind = LogEventKind::kCheckpointSave;
  save.line = 7;
  save.step = 20;
  save.duration_s = 4;  // no timestamp: at the end of step 20 (line 6)
  t.events.push_back(save);
  LogEvent fail;
  fail.kind = LogEventKind::kFailure;
  fail.line = 8;
  fail.time_s = 1250;
  fail.detail = "NCCL watchdog timeout";
  t.events.push_back(fail);
  std::vector<GoodputEvent> ev = GoodputEventsFromTimeline(t);
  // save, failure, start (attempt 0, synthesized at 1100 - 100), 2 steps,
  // start (attempt 1 at 1400), 1 step.
  ASSERT_EQ(ev.size(), 7u);
  EXPECT_EQ(ev[0].kind, K::kCheckpointSaveEnd);
  EXPECT_EQ(ev[0].time_s, 1200.0);
  EXPECT_EQ(ev[0].duration_s, 4.0);
  EXPECT_EQ(ev[1].kind, K::kJobFailed);
  EXPECT_EQ(ev[1].detail, "NCCL watchdog timeout");
  EXPECT_EQ(ev[2].kind, K::kJobStart);
  EXPECT_EQ(ev[2].time_s, 1000.0);
  EXPECT_EQ(ev[3].kind, K::kStep);
  EXPECT_EQ(ev[3].duration_s, 100.0);
  EXPECT_EQ(ev[5].kind, K::kJobStart);
  EXPECT_EQ(ev[5].time_s, 1400.0);
  EXPECT_EQ(ev[5].attempt, "1");
  StatusOr<GoodputReport> r = ComputeGoodput(ev);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(r->interruptions, 1);
  // Step 20 was saved before the failure, but the restart redid it: wasted
  // by the repeated step number.
  EXPECT_EQ(r->wasted_steps, 1);
}

TEST(TimelineEventsTest, NoTimestampsAccumulateStepTimes) {
  LogTimeline t;
  t.origin = "nano.log";
  for (int64_t i = 1; i <= 3; ++i) {
    LogStep s;
    s.step = i;
    s.line = i;
    s.step_time_s = 2;
    t.steps.push_back(s);
  }
  std::vector<GoodputEvent> ev = GoodputEventsFromTimeline(t);
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].kind, K::kJobStart);
  EXPECT_EQ(ev[0].time_s, 0.0);
  EXPECT_EQ(ev[3].time_s, 6.0);
  EXPECT_NE(ev[3].detail.find("accumulated"), std::string::npos);
}

TEST(GoodputEventsTest, NothingRecognizedAndTimestamps) {
  StatusOr<std::vector<GoodputEvent>> ev = ReadGoodputEvents("hello\nworld\n", "x.txt");
  ASSERT_FALSE(ev.ok());
  EXPECT_NE(ev.status().message().find("x.txt: not a goodput event source"), std::string::npos);
  EXPECT_EQ(*goodput_internal::ParseTimestamp("1970-01-01 00:00:00"), 0.0);
  EXPECT_EQ(*goodput_internal::ParseTimestamp("2024-01-22T10:00:00Z"), kJan22 + 36000);
  EXPECT_FALSE(goodput_internal::ParseTimestamp("2024-01-22 10:00"));
}

}  // namespace
}  // namespace mfu
