#include "analysis/fleet/attribution/robust_stats.h"

#include <cmath>

#include <gtest/gtest.h>

namespace ckpt::fleet::attribution {
namespace {

// Quantiles themselves: tests/unit/analysis/fleet/common/percentile_test.cpp.
TEST(RobustStats, MedianAndIqrInterpolateLinearlyAsNumpy) {
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({7}), 7);
  EXPECT_DOUBLE_EQ(interquartile_range({1, 2, 3, 4, 5}), 2);  // 4 - 2
  EXPECT_TRUE(std::isnan(median({})));
}

TEST(RobustStats, StandardDeviationIsThePopulationOne) {
  // mean 1.8; squared deviations 4 x 0.64 + 10.24 = 12.8; / 5 = 2.56.
  EXPECT_DOUBLE_EQ(standard_deviation({1, 1, 1, 1, 5}), 1.6);
  EXPECT_DOUBLE_EQ(standard_deviation({3}), 0);
}

TEST(RobustStats, ScaleIsTheIqrWhenThereIsOne) {
  const auto s = robust_scale({1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(s.centre, 3);
  EXPECT_DOUBLE_EQ(s.scale, 2);
  EXPECT_EQ(s.source, RobustScale::Source::kIqr);
}

TEST(RobustStats, ZeroIqrFallsBackToStdThenMedianThenOne) {
  auto s = robust_scale({1, 1, 1, 1, 5});  // quartiles both 1
  EXPECT_EQ(s.source, RobustScale::Source::kStd);
  EXPECT_DOUBLE_EQ(s.scale, 1.6);
  s = robust_scale({3, 3, 3});
  EXPECT_EQ(s.source, RobustScale::Source::kMedianFraction);
  EXPECT_DOUBLE_EQ(s.scale, 0.003);
  s = robust_scale({0, 0, 0});
  EXPECT_EQ(s.source, RobustScale::Source::kUnit);
  EXPECT_DOUBLE_EQ(s.scale, 1);
}

}  // namespace
}  // namespace ckpt::fleet::attribution
