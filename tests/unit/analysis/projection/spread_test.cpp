// The prediction range against values worked by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/projection/spread.h"

namespace ckpt::projection {
namespace {

TEST(Spread, OneSampleHasNoRange) {
  Range r = prediction_range({4.0});
  EXPECT_EQ(r.value, 4.0);
  EXPECT_EQ(r.low, 4.0);
  EXPECT_EQ(r.high, 4.0);
}

TEST(Spread, ThreeSamplesGiveStudentsInterval) {
  // mean 2, s = 1, t(0.95, 2) = 2.920: 2 +- 2.920 * sqrt(4/3).
  Range r = prediction_range({1, 2, 3});
  EXPECT_DOUBLE_EQ(r.value, 2);
  EXPECT_NEAR(r.high, 2 + 2.920 * std::sqrt(4.0 / 3), 1e-9);
  EXPECT_EQ(r.low, 0);  // the floor
  Range unbounded = prediction_range({1, 2, 3}, -1e300);
  EXPECT_NEAR(unbounded.low, 2 - 2.920 * std::sqrt(4.0 / 3), 1e-9);
}

TEST(Spread, TheRangeHoldsEverySampleAndStaysInItsBounds) {
  Range r = prediction_range({0.95, 0.96, 0.99}, 0, 1);
  EXPECT_LE(r.low, 0.95);
  EXPECT_EQ(r.high, 1.0);
  std::vector<double> many(200, 5.0);
  many.push_back(50.0);
  Range wide = prediction_range(many);
  EXPECT_EQ(wide.high, 50.0);  // an outlier is inside, even past the interval
}

TEST(Spread, MedianAndSpan) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_EQ(median({}), 0);
  Range s = span_of({5, 1, 9});
  EXPECT_EQ(s.value, 5);
  EXPECT_EQ(s.low, 1);
  EXPECT_EQ(s.high, 9);
}

}  // namespace
}  // namespace ckpt::projection
