// Number formatting shared by every renderer (base/strings.h).

#include "base/strings.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mfu::base {
namespace {

TEST(FormatSi, PicksThePrefix) {
  EXPECT_EQ(FormatSi(1234.0), "1.23k");
  EXPECT_EQ(FormatSi(8.03e9), "8.03G");
  EXPECT_EQ(FormatSi(989.4e12, 4), "989.4T");
  EXPECT_EQ(FormatSi(12.0), "12");
}

TEST(FormatSi, BeyondTheLargestPrefixIsScientific) {
  // 6.03e21 is 6,030 E: printed as "6.03e+03E" before; now plain scientific.
  EXPECT_EQ(FormatSi(6.03e21), "6.03e+21");
  EXPECT_EQ(FormatSi(999e18), "999E");
  EXPECT_EQ(FormatSi(HUGE_VAL), "inf");
}

}  // namespace
}  // namespace mfu::base
