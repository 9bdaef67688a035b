// ComputeGoodput on hand-built event logs. Every expected bucket is
// computed by hand in the comments from the event times; the buckets must
// sum to the wall time exactly (==), summed in the documented order.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "mfu/goodput.h"

namespace mfu {
namespace {

using K = GoodputEventKind;
using C = BadputCategory;

GoodputEvent Ev(K kind, double t, int64_t step = -1, double duration = kLogNaN) {
  GoodputEvent e;
  e.kind = kind;
  e.time_s = t;
  e.step = step;
  e.duration_s = duration;
  e.source = "test";
  return e;
}

// Steps first..last of `duration` each, back to back, the first ending at `end`.
void Steps(std::vector<GoodputEvent>& ev, int64_t first, int64_t last, double end, double duration, double base = 0) {
  for (int64_t s = first; s <= last; ++s)
    ev.push_back(Ev(K::kStep, base + end + static_cast<double>(s - first) * duration, s, duration));
}

double Bucket(const GoodputReport& r, C c) {
  return r.badput_s[static_cast<size_t>(c)];
}

// The documented order: productive, then every category in enum order.
double Sum(const GoodputReport& r) {
  double s = r.productive_s;
  for (double b : r.badput_s)
    s += b;
  return s;
}

TEST(GoodputAccountingTest, BlockingCheckpointsNoFailure) {
  std::vector<GoodputEvent> ev = {Ev(K::kJobStart, 0), Ev(K::kInitBegin, 0), Ev(K::kInitEnd, 10)};
  Steps(ev, 1, 5, 20, 10);  // [10,20] .. [50,60]
  ev.push_back(Ev(K::kCheckpointSaveBegin, 60));
  ev.push_back(Ev(K::kCheckpointSaveEnd, 65, 5));
  Steps(ev, 6, 7, 75, 10);  // [65,75], [75,85]
  ev.push_back(Ev(K::kJobEnd, 90));
  StatusOr<GoodputReport> r = ComputeGoodput(ev);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->wall_s, 90.0);
  EXPECT_EQ(r->productive_s, 70.0);                 // 7 steps x 10 s
  EXPECT_EQ(Bucket(*r, C::kInitialization), 10.0);  // [0,10]
  EXPECT_EQ(Bucket(*r, C::kCheckpointSave), 5.0);   // [60,65]
  EXPECT_EQ(Bucket(*r, C::kOther), 5.0);            // [85,90]
  EXPECT_EQ(Bucket(*r, C::kWastedProgress), 0.0);
  EXPECT_EQ(Sum(*r), r->wall_s);
  EXPECT_EQ(r->attempts, 1);
  EXPECT_EQ(r->interruptions, 0);
  EXPECT_EQ(r->checkpoints, 1);
  EXPECT_EQ(r->checkpoint_time_s, 5.0);
  EXPECT_EQ(r->steps, 7);
  EXPECT_DOUBLE_EQ(r->ettr, 70.0 / 90.0);
  EXPECT_TRUE(std::isnan(r->mtbf_s));
}

// Google's rule: the first step of a segment is charged the segment's mean
// step time (10 s from steps 2-4), the rest of its 30 s gap is startup.
TEST(GoodputAccountingTest, FirstStepExcessIsStartup) {
  std::vector<GoodputEvent> ev = {Ev(K::kJobStart, 0), Ev(K::kStep, 30, 1), Ev(K::kStep, 40, 2),
                                  Ev(K::kStep, 50, 3), Ev(K::kStep, 60, 4), Ev(K::kJobEnd, 60)};
  StatusOr<GoodputReport> r = ComputeGoodput(ev);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->productive_s, 40.0);
  EXPECT_EQ(Bucket(*r, C::kInitialization), 20.0);
  EXPECT_EQ(Sum(*r), r->wall_s);
}

// Attempt 1 saves step 3 and dies after step 6; attempt 2 restores step 3
// and redoes 4-7. By hand: productive 30 + 40, wasted 30 (steps 4-6),
// save 5, other 5 + 5, idle 30, restore 10, init 5 = 160.
std::vector<GoodputEvent> FailureBetweenCheckpoints(double base) {
  std::vector<GoodputEvent> ev = {Ev(K::kJobStart, base + 0)};
  Steps(ev, 1, 3, 10, 10, base);  // [0,30]
  ev.push_back(Ev(K::kCheckpointSaveBegin, base + 30));
  ev.push_back(Ev(K::kCheckpointSaveEnd, base + 35, 3));
  Steps(ev, 4, 6, 45, 10, base);  // [35,65]
  ev.push_back(Ev(K::kJobFailed, base + 70));
  ev.back().detail = "NODE_FAIL";
  ev.push_back(Ev(K::kJobStart, base + 100));
  ev.push_back(Ev(K::kCheckpointRestoreBegin, base + 100));
  ev.push_back(Ev(K::kCheckpointRestoreEnd, base + 110, 3));
  Steps(ev, 4, 7, 125, 10, base);  // [115,155]
  ev.push_back(Ev(K::kJobEnd, base + 160));
  return ev;
}

TEST(GoodputAccountingTest, FailureBetweenCheckpointsWastesStepsAfterLastSave) {
  StatusOr<GoodputReport> r = ComputeGoodput(FailureBetweenCheckpoints(0));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->wall_s, 160.0);
  EXPECT_EQ(r->productive_s, 70.0);
  EXPECT_EQ(Bucket(*r, C::kWastedProgress), 30.0);
  EXPECT_EQ(Bucket(*r, C::kCheckpointSave), 5.0);
  EXPECT_EQ(Bucket(*r, C::kIdleBetweenAttempts), 30.0);
  EXPECT_EQ(Bucket(*r, C::kCheckpointRestore), 10.0);
  EXPECT_EQ(Bucket(*r, C::kInitialization), 5.0);  // [110,115]: startup after the restore
  EXPECT_EQ(Bucket(*r, C::kOther), 10.0);          // [65,70] and [155,160]
  EXPECT_EQ(Sum(*r), r->wall_s);
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(r->interruptions, 1);
  EXPECT_EQ(r->wasted_steps, 3);
  EXPECT_EQ(r->steps, 7);
  EXPECT_EQ(r->recovery_s, 55.0);  // failure at 70 -> first step of attempt 2 at 125
  EXPECT_EQ(r->mtbf_s, 130.0);     // running time 160 - 30 idle, one failure
  EXPECT_EQ(r->checkpoint_time_s, 5.0);
  EXPECT_DOUBLE_EQ(r->checkpoint_interval.young_s, std::sqrt(2.0 * 5 * 130));
  EXPECT_DOUBLE_EQ(r->checkpoint_interval.goodput_young, ExpectedGoodput(std::sqrt(2.0 * 5 * 130), 5, 130, 55));
}

// Unix-epoch times with fractions: the buckets still sum to the wall exactly.
TEST(GoodputAccountingTest, BucketsSumExactlyAtEpochTimes) {
  for (double base : {1733011200.123, 1764547199.987654, 0.1, 1e9 + 1.0 / 3}) {
    StatusOr<GoodputReport> r = ComputeGoodput(FailureBetweenCheckpoints(base));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(Sum(*r), r->wall_s) << base;
    EXPECT_NEAR(r->productive_s, 70.0, 1e-6) << base;
    EXPECT_NEAR(Bucket(*r, C::kWastedProgress), 30.0, 1e-6) << base;
  }
}

// A restart from an older checkpoint (step 3, though step 6 was saved):
// Google's rule discards steps 4-7 of attempt 1 when step 4 is seen again.
TEST(GoodputAccountingTest, RestartFromOlderCheckpoint) {
  std::vector<GoodputEvent> ev = {Ev(K::kJobStart, 0)};
  Steps(ev, 1, 7, 10, 10);  // [0,70]
  ev.push_back(Ev(K::kCheckpointSaveEnd, 30, 3, 0));
  ev.push_back(Ev(K::kCheckpointSaveEnd, 60, 6, 0));
  ev.push_back(Ev(K::kJobFailed, 75));
  ev.push_back(Ev(K::kJobStart, 80));
  Steps(ev, 4, 8, 90, 10);  // [80,130]
  ev.push_back(Ev(K::kJobEnd, 130));
  StatusOr<GoodputReport> r = ComputeGoodput(ev);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->productive_s, 80.0);                     // steps 1-3, then 4-8
  EXPECT_EQ(Bucket(*r, C::kWastedProgress), 40.0);      // steps 4-7 of attempt 1
  EXPECT_EQ(Bucket(*r, C::kIdleBetweenAttempts), 5.0);  // [75,80]
  EXPECT_EQ(Bucket(*r, C::kOther), 5.0);                // [70,75]
  EXPECT_EQ(Sum(*r), r->wall_s);
  EXPECT_EQ(r->wasted_steps, 4);
  EXPECT_EQ(r->checkpoint_interval.observed_s, 30.0);  // 30 s of steps between the saves
}

// Async save of step 3: blocking part 2 s after the step, persisted at 40.
TEST(GoodputAccountingTest, AsyncCheckpointBlockingPartOnly) {
  std::vector<GoodputEvent> ev = {Ev(K::kJobStart, 0)};
  Steps(ev, 1, 3, 10, 10);  // [0,30]
  ev.push_back(Ev(K::kCheckpointSaveAsync, 40, 3, 2));
  Steps(ev, 4, 5, 44, 10);  // [34,44], [44,54]
  ev.push_back(Ev(K::kJobFailed, 56));
  StatusOr<GoodputReport> r = ComputeGoodput(ev);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->productive_s, 30.0);
  EXPECT_EQ(Bucket(*r, C::kCheckpointSave), 2.0);   // [30,32]
  EXPECT_EQ(Bucket(*r, C::kWastedProgress), 20.0);  // steps 4, 5
  EXPECT_EQ(Bucket(*r, C::kOther), 4.0);            // [32,34], [54,56]
  EXPECT_EQ(Sum(*r), r->wall_s);
  EXPECT_EQ(r->checkpoint_time_s, 2.0);
}

// The job dies at 38, before the async save of step 3 is persisted (40):
// nothing is preserved.
TEST(GoodputAccountingTest, AsyncCheckpointNotPersistedBeforeFailure) {
  std::vector<GoodputEvent> ev = {Ev(K::kJobStart, 0)};
  Steps(ev, 1, 3, 10, 10);
  ev.push_back(Ev(K::kCheckpointSaveAsync, 40, 3, 2));
  ev.push_back(Ev(K::kJobFailed, 38));
  StatusOr<GoodputReport> r = ComputeGoodput(ev);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->wall_s, 38.0);
  EXPECT_EQ(r->productive_s, 0.0);
  EXPECT_EQ(Bucket(*r, C::kWastedProgress), 30.0);
  EXPECT_EQ(Bucket(*r, C::kCheckpointSave), 2.0);
  EXPECT_EQ(Bucket(*r, C::kOther), 6.0);
  EXPECT_EQ(Sum(*r), r->wall_s);
}

// Two sources see one attempt (sacct's start at 0, the log's at 2); a step
// number going back without a recorded start is an interruption.
TEST(GoodputAccountingTest, MergedSourcesAndStepRegression) {
  std::vector<GoodputEvent> ev = {Ev(K::kQueued, -50), Ev(K::kJobStart, 0), Ev(K::kJobStart, 2)};
  Steps(ev, 1, 4, 12, 10);   // [2,12] .. [32,42]
  Steps(ev, 3, 5, 200, 10);  // restart at step 3 (over a minute later): [190,200] .. [210,220]
  ev.push_back(Ev(K::kJobEnd, 220));
  ev.push_back(Ev(K::kJobEnd, 221));
  StatusOr<GoodputReport> r = ComputeGoodput(ev);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->start_s, 0.0);  // queue time before the first attempt is not wall
  EXPECT_EQ(r->wall_s, 221.0);
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(r->interruptions, 1);
  EXPECT_EQ(r->productive_s, 50.0);                 // steps 1, 2 and 3, 4, 5
  EXPECT_EQ(Bucket(*r, C::kWastedProgress), 20.0);  // steps 3, 4 of the first run
  EXPECT_EQ(Sum(*r), r->wall_s);
}

TEST(GoodputAccountingTest, EffectiveMfuAndErrors) {
  GoodputOptions options;
  options.steady_state_mfu = 0.4;
  StatusOr<GoodputReport> r = ComputeGoodput(FailureBetweenCheckpoints(0), options);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->effective_mfu, 0.4 * 70.0 / 160.0);
  EXPECT_FALSE(ComputeGoodput({}).ok());
  std::vector<GoodputEvent> no_steps = {Ev(K::kJobStart, 0), Ev(K::kJobEnd, 10)};
  StatusOr<GoodputReport> none = ComputeGoodput(no_steps);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no training step"), std::string::npos);
  std::vector<GoodputEvent> nan_time = {Ev(K::kStep, std::nan(""), 1)};
  EXPECT_FALSE(ComputeGoodput(nan_time).ok());
}

// One attempt fails in the instant the next starts (a Slurm requeue: both
// are job 50). The end is the open attempt's, and step 3, stamped at that
// instant, is its last step: 2 attempts, 1 interruption, nothing lost
// without checkpoints. Read in time order with starts first, the end would
// close the new attempt and step 4 open a third.
TEST(GoodputAccountingTest, EndAtTheInstantTheNextAttemptStarts) {
  std::vector<GoodputEvent> ev = {Ev(K::kJobStart, 0)};
  Steps(ev, 1, 3, 10, 10);  // [0,10] .. [20,30]
  ev.push_back(Ev(K::kJobStart, 30));
  ev.push_back(Ev(K::kJobFailed, 30));
  Steps(ev, 4, 5, 40, 10);  // [30,40], [40,50]
  ev.push_back(Ev(K::kJobEnd, 50));
  for (GoodputEvent& e : ev)
    e.attempt = "50";
  StatusOr<GoodputReport> r = ComputeGoodput(ev);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(r->interruptions, 1);
  EXPECT_EQ(r->wall_s, 50.0);
  EXPECT_EQ(r->productive_s, 50.0);
  EXPECT_EQ(Bucket(*r, C::kIdleBetweenAttempts), 0.0);
  EXPECT_EQ(Sum(*r), r->wall_s);
}

// A still-running job: the wall runs to `now_s`.
TEST(GoodputAccountingTest, RunningJobUntilNow) {
  std::vector<GoodputEvent> ev = {Ev(K::kJobStart, 0)};
  Steps(ev, 1, 3, 10, 10);
  GoodputOptions options;
  options.now_s = 50;
  StatusOr<GoodputReport> r = ComputeGoodput(ev, options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->wall_s, 50.0);
  EXPECT_EQ(r->productive_s, 30.0);
  EXPECT_EQ(Bucket(*r, C::kOther), 20.0);
  EXPECT_EQ(Sum(*r), r->wall_s);
}

}  // namespace
}  // namespace mfu
