#include "analysis/fleet/common/percentile.h"

#include <cmath>

#include <gtest/gtest.h>

namespace ckpt::fleet {
namespace {

// Expected values are numpy.percentile's (default method "linear"), e.g.
// numpy.percentile([1, 2, 3, 4], 25) == 1.75; written out here because the
// tests use the stdlib only. Each is also checkable by hand: position
// p * (n - 1) into the sorted sample, interpolated between its neighbours.
TEST(PercentileLinear, MatchesNumpy) {
  EXPECT_DOUBLE_EQ(percentile_linear({1, 2, 3, 4}, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(percentile_linear({4, 3, 2, 1}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(percentile_linear({15, 20, 35, 40, 50}, 0.4), 29.0);
  EXPECT_DOUBLE_EQ(percentile_linear({10, 7, 4, 3, 2, 1}, 0.5), 3.5);
  EXPECT_DOUBLE_EQ(percentile_linear({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9.1);
  EXPECT_DOUBLE_EQ(percentile_linear({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.95), 9.55);
  EXPECT_DOUBLE_EQ(percentile_linear({7}, 0.99), 7);
  EXPECT_DOUBLE_EQ(percentile_linear({3, 1, 2}, 0), 1);
  EXPECT_DOUBLE_EQ(percentile_linear({3, 1, 2}, 1), 3);
}

TEST(PercentileLinear, NanForEmptyBadPOrNanValues) {
  EXPECT_TRUE(std::isnan(percentile_linear({}, 0.5)));
  EXPECT_TRUE(std::isnan(percentile_linear({1, 2}, 1.5)));
  EXPECT_TRUE(std::isnan(percentile_linear({1, 2}, -0.1)));
  EXPECT_TRUE(std::isnan(percentile_linear({1, 2}, NAN)));
  EXPECT_TRUE(std::isnan(percentile_linear({1, NAN, 2}, 0.5)));
}

// The nearest-rank examples of en.wikipedia.org/wiki/Percentile ("The
// nearest-rank method"): sample 15, 20, 35, 40, 50.
TEST(PercentileNearestRank, MatchesTheWorkedExamples) {
  const std::vector<double> sample = {50, 35, 20, 15, 40};
  EXPECT_EQ(percentile_nearest_rank(sample, 0.05), 15);
  EXPECT_EQ(percentile_nearest_rank(sample, 0.30), 20);
  EXPECT_EQ(percentile_nearest_rank(sample, 0.40), 20);
  EXPECT_EQ(percentile_nearest_rank(sample, 0.50), 35);
  EXPECT_EQ(percentile_nearest_rank(sample, 1.00), 50);
  EXPECT_EQ(percentile_nearest_rank(sample, 0), 15);
  EXPECT_TRUE(std::isnan(percentile_nearest_rank({}, 0.5)));
  EXPECT_TRUE(std::isnan(percentile_nearest_rank(sample, 2)));
}

}  // namespace
}  // namespace ckpt::fleet
