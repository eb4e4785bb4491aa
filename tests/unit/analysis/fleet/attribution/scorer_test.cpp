#include "analysis/fleet/attribution/scorer.h"

#include <cmath>

#include <gtest/gtest.h>

namespace ckpt::fleet::attribution {
namespace {

// Baseline [85, 95) holds 1..10 (median 5.5, IQR 7.75 - 3.25 = 4.5); the
// anomaly window [95, 102] sits at 5 except where a test plants a peak.
WindowSpec small_windows() {
  WindowSpec w;
  w.baseline_s = 10;
  w.gap_s = 0;
  w.before_s = 5;
  w.after_s = 2;
  w.min_baseline_samples = 5;
  return w;
}

std::vector<Sample> planted(double peak_time, double peak_value) {
  std::vector<Sample> s;
  for (int t = 80; t <= 110; ++t) {
    double v = 5;
    if (t >= 85 && t < 95) v = t - 84;  // 1..10
    if (t < 85) v = 1000;               // before the baseline: ignored
    if (t > 102) v = -1000;             // after the window: ignored
    if (t == peak_time) v = peak_value;
    s.push_back({static_cast<double>(t), v});
  }
  return s;
}

TEST(Scorer, ScoreIsTheLargestRobustDeviationInTheWindow) {
  const auto score = robust_score(planted(97, 14.5), 100, small_windows());
  ASSERT_TRUE(score);
  EXPECT_DOUBLE_EQ(score->baseline_median, 5.5);
  EXPECT_DOUBLE_EQ(score->baseline_scale, 4.5);
  EXPECT_DOUBLE_EQ(score->score, 2.0);  // |14.5 - 5.5| / 4.5
  EXPECT_DOUBLE_EQ(score->peak_time_s, 97);
  EXPECT_DOUBLE_EQ(score->lead_s, 3);  // before the failure
  EXPECT_EQ(score->sign, 1);
}

TEST(Scorer, DropsAreScoredWithNegativeSignAndAfterTheFailureWithNegativeLead) {
  const auto score = robust_score(planted(101, -8), 100, small_windows());
  ASSERT_TRUE(score);
  EXPECT_DOUBLE_EQ(score->score, 3.0);  // |-8 - 5.5| / 4.5
  EXPECT_DOUBLE_EQ(score->lead_s, -1);
  EXPECT_EQ(score->sign, -1);
}

TEST(Scorer, GapMovesTheBaselineEarlier) {
  auto w = small_windows();
  w.gap_s = 5;  // baseline [80, 90): 1000 x5 then 1..5 -> median 500.5
  const auto score = robust_score(planted(97, 14.5), 100, w);
  ASSERT_TRUE(score);
  EXPECT_DOUBLE_EQ(score->baseline_median, (5 + 1000) / 2.0);
}

TEST(Scorer, TooFewBaselineSamplesOrAnEmptyWindowIsNoScore) {
  auto w = small_windows();
  w.min_baseline_samples = 11;
  EXPECT_FALSE(robust_score(planted(97, 14.5), 100, w));
  std::vector<Sample> baseline_only;
  for (int t = 85; t < 95; ++t) baseline_only.push_back({static_cast<double>(t), 1.0 * t});
  EXPECT_FALSE(robust_score(baseline_only, 100, small_windows()));
}

TEST(Scorer, NonFiniteSamplesAreSkipped) {
  auto s = planted(97, 14.5);
  s.push_back({98.5, std::nan("")});
  const auto score = robust_score(s, 100, small_windows());
  ASSERT_TRUE(score);
  EXPECT_DOUBLE_EQ(score->score, 2.0);
}

TEST(Calibration, RobustZAgainstTheNullsAndExceedancePValue) {
  // Nulls 1..5: median 3, IQR 2.
  auto c = calibrate(7, {5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(c.calibrated, 2.0);
  EXPECT_DOUBLE_EQ(c.p_value, 1.0 / 6);
  EXPECT_EQ(c.null_windows, 5u);
  c = calibrate(3, {5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(c.calibrated, 0);
  EXPECT_DOUBLE_EQ(c.p_value, 4.0 / 6);  // 3, 4, 5 reach it
}

TEST(Calibration, ANoisyMetricStandsLowerThanAQuietOneWithTheSameScore) {
  const auto noisy = calibrate(10, {8, 12, 9, 11, 10});
  const auto quiet = calibrate(10, {0.5, 1, 1.5, 1, 0.8});
  EXPECT_LT(noisy.calibrated, quiet.calibrated);
  EXPECT_GT(noisy.p_value, quiet.p_value);
}

TEST(Calibration, NoNullsIsNaN) {
  const auto c = calibrate(3, {});
  EXPECT_TRUE(std::isnan(c.calibrated));
  EXPECT_TRUE(std::isnan(c.p_value));
  EXPECT_EQ(c.null_windows, 0u);
}

}  // namespace
}  // namespace ckpt::fleet::attribution
