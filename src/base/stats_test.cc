#include "base/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/strings.h"

namespace mfu::base {
namespace {

TEST(Median, OddCountIsTheMiddleValue) {
  EXPECT_EQ(Median({3, 1, 2}, 0), 2);
  EXPECT_EQ(Median({5}, 0), 5);
}

TEST(Median, EvenCountAveragesTheTwoMiddleValues) {
  EXPECT_EQ(Median({4, 1, 3, 2}, 0), 2.5);
  EXPECT_EQ(Median({10, 20}, 0), 15);
}

TEST(Median, EmptyGivesTheCallersValue) {
  EXPECT_EQ(Median({}, 0), 0);
  EXPECT_TRUE(std::isnan(Median({}, std::numeric_limits<double>::quiet_NaN())));
}

TEST(StartsWithNoCase, IgnoresTheCaseOfTheText) {
  EXPECT_TRUE(StartsWithNoCase("HTTP://host", "http://"));
  EXPECT_TRUE(StartsWithNoCase("amd_gpu_power", "amd_"));
  EXPECT_FALSE(StartsWithNoCase("htt", "http"));
  EXPECT_FALSE(StartsWithNoCase("ftp://host", "http://"));
}

}  // namespace
}  // namespace mfu::base
