#include "analysis/fleet/checkpoints/step_series.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt::fleet::checkpoints {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

StepGrid grid10() { return *make_grid({1000, 1100}, 10); }  // t_k = 1000 + 10k, k = 0..10

TEST(StepGrid, TimesAndIndices) {
  const auto g = grid10();
  EXPECT_EQ(g.last, 10U);
  EXPECT_DOUBLE_EQ(g.time_at(3), 1030);
  EXPECT_EQ(g.index_of(1030.0000001), 3);
  EXPECT_EQ(make_grid({0, 95}, 10)->last, 9U);  // 95 is between steps
}

TEST(StepGrid, TooManyStepsIsAnErrorNamingStepAndRange) {
  // 7 days at 1 ms would be 604.8 million steps (and gigabytes of aggregates);
  // 1e-300 s would overflow any integer (it was cast unchecked).
  for (const double step : {0.001, 1e-300}) {
    auto grid = make_grid({1769860800, 1769860800 + 7 * 86400}, step);
    ASSERT_FALSE(grid) << step;
    EXPECT_THAT(grid.error().message, HasSubstr("--step"));
    EXPECT_THAT(grid.error().message, HasSubstr("1769860800 .. 1770465600"));
    EXPECT_THAT(grid.error().message, HasSubstr("10000000 allowed"));
  }
  EXPECT_FALSE(make_grid({0, 100}, 0));
  EXPECT_FALSE(make_grid({0, 100}, NAN));
  EXPECT_EQ(make_grid({0, 9'999'999}, 1)->last, 9'999'999U);  // exactly the cap
  EXPECT_FALSE(make_grid({0, 10'000'000}, 1));                // one past it
}

TEST(StepsOverlapping, StepsWhoseIntervalOverlapsTheSpan) {
  const auto g = grid10();
  EXPECT_THAT(steps_overlapping(g, 1025, 1050), Pair(3, 5));  // (1020,1030] .. (1040,1050]
  EXPECT_THAT(steps_overlapping(g, 1020, 1050), Pair(3, 5));  // starting at t_2: not step 2
  EXPECT_THAT(steps_overlapping(g, 1020.0000001, 1049.9999999), Pair(3, 5));  // API float noise
  EXPECT_THAT(steps_overlapping(g, 500, 1020), Pair(1, 2));  // before the grid: clamped
  EXPECT_THAT(steps_overlapping(g, -INFINITY, 1020), Pair(1, 2));
  EXPECT_THAT(steps_overlapping(g, 1090, 5000), Pair(10, 10));  // past it: clamped
}

TEST(StepsOverlapping, ZeroLengthSpanIsItsCloseStepsEvenAtTheLastStep) {
  // A close whose _count rose but whose _sum did not: duration 0, start == end
  // == t_k. Its bytes are booked to step k (spread_bytes); its figures must be
  // too, and at k == last it must not name step last + 1 (past the grid).
  const auto g = grid10();
  EXPECT_THAT(steps_overlapping(g, 1050, 1050), Pair(5, 5));
  EXPECT_THAT(steps_overlapping(g, 1100, 1100), Pair(10, 10));
  const double start = 1100 - span_duration_s(0.0);
  EXPECT_THAT(steps_overlapping(g, start, 1100), Pair(10, 10));
  std::vector<double> bytes(11);
  spread_bytes(g, {10, 64, 0.0}, bytes);
  EXPECT_THAT(bytes, ElementsAre(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 64));
  // At real Unix times t_k - kMinSpanS == t_k: the bytes must still be booked.
  const auto unix_grid = *make_grid({1769860800, 1769860800 + 600}, 60);
  std::vector<double> unix_bytes(11);
  spread_bytes(unix_grid, {10, 64, 0.0}, unix_bytes);
  EXPECT_DOUBLE_EQ(unix_bytes[10], 64);
  EXPECT_THAT(steps_overlapping(unix_grid, unix_grid.time_at(10) - span_duration_s(0.0),
                                unix_grid.time_at(10)),
              Pair(10, 10));
}

TEST(SpanDuration, ClampedToAPositiveMinimum) {
  EXPECT_DOUBLE_EQ(span_duration_s(12.5), 12.5);
  EXPECT_DOUBLE_EQ(span_duration_s(0.0), kMinSpanS);
  EXPECT_DOUBLE_EQ(span_duration_s(-3), kMinSpanS);
  EXPECT_DOUBLE_EQ(span_duration_s(NAN), kMinSpanS);
}

TEST(CounterIncreases, IncreasesResetsAndGaps) {
  std::vector<double> per_step(11);
  CounterIncreases increases(grid10());
  auto sink = [&](const Labels&, size_t k, double v) { per_step[k] += v; };
  // 5 at k=0 (start value: no increase), +3, reset to 2 (increase 2), gap, +4.
  increases.add({{{"instance", "a"}}, {{1000, 5}, {1010, 8}, {1020, 2}, {1050, 6}}}, sink);
  // The same series in a later chunk continues from its last value.
  increases.add({{{"instance", "a"}}, {{1060, 6}, {1070, 16}}}, sink);
  // Another series: its own state.
  increases.add({{{"instance", "b"}}, {{1010, 100}, {1020, 101}}}, sink);
  EXPECT_THAT(per_step, ElementsAre(0, 3, 3, 0, 0, 4, 0, 10, 0, 0, 0));
}

TEST(CounterIncreases, IgnoresNaNAndSamplesOffTheGrid) {
  std::vector<double> per_step(11);
  CounterIncreases increases(grid10());
  increases.add({{}, {{990, 1}, {1000, 1}, {1010, NAN}, {1020, 4}, {1200, 50}}},
                [&](const Labels&, size_t k, double v) { per_step[k] += v; });
  EXPECT_THAT(per_step, ElementsAre(0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0));
}

TEST(SpreadBytes, EvenlyOverTheSpanByOverlap) {
  std::vector<double> bytes(11);
  // 250 bytes over 25 s ending at t_5 = 1050: (1025, 1050] -> 5 s of step 3, all
  // of steps 4 and 5 (10 bytes/s).
  spread_bytes(grid10(), {5, 250, 25}, bytes);
  EXPECT_THAT(bytes, ElementsAre(0, 0, 0, 50, 100, 100, 0, 0, 0, 0, 0));
  // A span reaching before the grid loses that part.
  std::vector<double> early(11);
  spread_bytes(grid10(), {1, 40, 40}, early);
  EXPECT_DOUBLE_EQ(early[1], 10);
  EXPECT_DOUBLE_EQ(early[0], 0);
}

TEST(FindBursts, ThresholdIsStrictAndGapsMerge) {
  const std::vector<double> v = {9, 0, 5, 6, 0, 0, 7, 0, 0, 0, 8, 5};
  EXPECT_THAT(find_bursts(v, 5, 0), ElementsAre(Pair(3, 3), Pair(6, 6), Pair(10, 10)));
  EXPECT_THAT(find_bursts(v, 5, 2), ElementsAre(Pair(3, 6), Pair(10, 10)));
  EXPECT_THAT(find_bursts(v, 5, 3), ElementsAre(Pair(3, 10)));
  EXPECT_TRUE(find_bursts(v, 100, 3).empty());
}

}  // namespace
}  // namespace ckpt::fleet::checkpoints
