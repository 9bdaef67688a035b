// Checkpoint-interval formulas against published figures and hand
// computations; duration parsing.

#include <gtest/gtest.h>

#include <cmath>

#include "mfu/goodput.h"

namespace mfu {
namespace {

constexpr double kMin = 60, kHour = 3600;

// Young 1974: tau = sqrt(2 delta M). delta = 60 s, M = 2.78 h (Llama 3's
// 54 days x 24 h / 466 interruptions): sqrt(2 * 60 * 10008) = 1095.9 s.
TEST(IntervalsTest, YoungIsSqrtTwoDeltaM) {
  EXPECT_DOUBLE_EQ(YoungInterval(50, 100), 100.0);  // sqrt(2*50*100) = 100
  EXPECT_NEAR(YoungInterval(60, 2.78 * kHour) / kMin, 18.3, 0.05);
  EXPECT_TRUE(std::isnan(YoungInterval(0, 100)));
  EXPECT_TRUE(std::isnan(YoungInterval(10, -1)));
}

// Daly 2006 (FGCS 22, "A higher order estimate of the optimum checkpoint
// interval for restart dumps"), the cases of its figures: delta = 5 min,
// R = 10 min; M = 24 h -> ~117 min, M = 6 h -> ~57 min, M = 15 min -> 9.1 min.
TEST(IntervalsTest, DalyHigherOrderPublishedCases) {
  EXPECT_NEAR(DalyInterval(5 * kMin, 24 * kHour) / kMin, 117, 0.5);
  EXPECT_NEAR(DalyInterval(5 * kMin, 6 * kHour) / kMin, 57, 0.5);
  EXPECT_NEAR(DalyInterval(5 * kMin, 15 * kMin) / kMin, 9.1, 0.05);
  // Hand computation for M = 24 h: sqrt(2*300*86400) = 7200; x = 300/172800;
  // 7200 * (1 + sqrt(x)/3 + x/9) - 300.
  const double x = 300.0 / 172800.0;
  EXPECT_DOUBLE_EQ(DalyInterval(300, 86400), 7200 * (1 + std::sqrt(x) / 3 + x / 9) - 300);
  // delta >= 2M: tau = M.
  EXPECT_DOUBLE_EQ(DalyInterval(200, 100), 100.0);
}

// arXiv:2410.18124: T_c = T_s + sqrt(2 (T_f + T_r) T_s + T_s^2), the period
// including the save; the compute between saves is T_c - T_s. With T_s =
// 60, T_f = 10008, T_r = 600: sqrt(2*10608*60 + 3600).
TEST(IntervalsTest, AvailabilityOptimal) {
  EXPECT_DOUBLE_EQ(AvailabilityOptimalInterval(60, 10008, 600), std::sqrt(2.0 * 10608 * 60 + 3600));
  // T_c maximizes the availability per period, A(T) = (T - T_s) / (T (1 +
  // T_r/T_f) + T^2 / 2T_f): checked against a scan of A, independently.
  const double ts = 60, tf = 10008, tr = 600;
  auto availability = [&](double t) { return (t - ts) / (t * (1 + tr / tf) + t * t / (2 * tf)); };
  double best_t = 0, best_a = -1;
  for (double t = 61; t < 20000; t += 0.01) {
    if (availability(t) > best_a) {
      best_a = availability(t);
      best_t = t;
    }
  }
  EXPECT_NEAR(AvailabilityOptimalInterval(ts, tf, tr) + ts, best_t, 0.02);
  // Tends to Young's when T_s << T_r << T_f.
  const double young = YoungInterval(1, 1e8);
  EXPECT_NEAR(AvailabilityOptimalInterval(1, 1e8, 10) / young, 1.0, 1e-3);
}

// section 2.5 worked example: M = 2.78 h, delta = 60 s, R = 10 min at Young's tau:
// exact Daly G = 0.842 (first order 0.831); delta = 10 s, R = 5 min ->
// tau = 7.5 min, G = 0.925; delta = 300 s, R = 15 min -> tau = 40.8 min,
// G = 0.665. The last two G are the first-order G = 1 - sqrt(2 delta/M) -
// R/M (checked here by hand); the exact model is above them.
TEST(IntervalsTest, ExpectedGoodputWorkedExamples) {
  const double m = 2.78 * kHour;
  EXPECT_NEAR(ExpectedGoodput(YoungInterval(60, m), 60, m, 10 * kMin), 0.842, 0.0005);
  EXPECT_NEAR(YoungInterval(10, m) / kMin, 7.5, 0.05);
  auto first_order = [&](double delta, double r) { return 1 - std::sqrt(2 * delta / m) - r / m; };
  EXPECT_NEAR(first_order(60, 10 * kMin), 0.831, 0.0005);
  EXPECT_NEAR(first_order(10, 5 * kMin), 0.925, 0.0005);
  EXPECT_GT(ExpectedGoodput(YoungInterval(10, m), 10, m, 5 * kMin), first_order(10, 5 * kMin));
  EXPECT_NEAR(YoungInterval(300, m) / kMin, 40.8, 0.05);
  EXPECT_NEAR(first_order(300, 15 * kMin), 0.665, 0.0005);
  EXPECT_GT(ExpectedGoodput(YoungInterval(300, m), 300, m, 15 * kMin), first_order(300, 15 * kMin));
  // No failures in sight: G -> tau / (tau + delta).
  EXPECT_NEAR(ExpectedGoodput(100, 1, 1e12, 0), 100.0 / 101.0, 1e-6);
}

TEST(IntervalsTest, WhatIfStudy) {
  GoodputWhatIfRequest req{2.78 * kHour, 60, 10 * kMin, 30 * kMin};
  StatusOr<GoodputWhatIf> w = GoodputWhatIfStudy(req);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_NEAR(w->intervals.young_s / kMin, 18.3, 0.05);
  EXPECT_NEAR(w->intervals.goodput_young, 0.842, 0.0005);
  EXPECT_DOUBLE_EQ(w->intervals.observed_s, 1800.0);
  EXPECT_DOUBLE_EQ(w->intervals.goodput_observed, ExpectedGoodput(1800, 60, 2.78 * kHour, 600));
  // Daly's interval is the better optimum of the exact model than Young's here.
  EXPECT_GE(w->intervals.goodput_daly, w->intervals.goodput_young - 1e-4);

  StatusOr<GoodputWhatIf> bad = GoodputWhatIfStudy({0, 60, 0, 0});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("parameter 'mtbf'"), std::string::npos);
  EXPECT_FALSE(GoodputWhatIfStudy({100, std::nan(""), 0, 0}).ok());
  EXPECT_FALSE(GoodputWhatIfStudy({100, 1, -1, 0}).ok());
}

TEST(ParseDurationTest, Forms) {
  EXPECT_DOUBLE_EQ(*ParseDuration("24h"), 86400.0);
  EXPECT_DOUBLE_EQ(*ParseDuration("5m"), 300.0);
  EXPECT_DOUBLE_EQ(*ParseDuration("90s"), 90.0);
  EXPECT_DOUBLE_EQ(*ParseDuration("1h30m"), 5400.0);
  EXPECT_DOUBLE_EQ(*ParseDuration("2d"), 172800.0);
  EXPECT_DOUBLE_EQ(*ParseDuration("1500ms"), 1.5);
  EXPECT_DOUBLE_EQ(*ParseDuration("42"), 42.0);
  EXPECT_DOUBLE_EQ(*ParseDuration("2.5h"), 9000.0);
  for (const char* bad : {"", "h", "5x", "1h30", "-5m", "1e3", "abc", "5 m", "..5s"}) {
    StatusOr<double> d = ParseDuration(bad);
    EXPECT_FALSE(d.ok()) << bad;
    if (!d.ok()) {
      EXPECT_NE(d.status().message().find("is not a duration"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace mfu
