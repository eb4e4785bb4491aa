#include "analysis/fleet/prometheus/chunk_plan.h"

#include <cmath>
#include <utility>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt::fleet {
namespace {

TEST(ChunkPlan, SplitsAtMaxPointsWithoutOverlapOrGap) {
  // 0..100 at step 10 is 11 points; 4 per chunk: 0-30, 40-70, 80-100.
  auto chunks = plan_chunks({0, 100}, 10, 4);
  ASSERT_TRUE(chunks);
  ASSERT_EQ(chunks->size(), 3U);
  EXPECT_DOUBLE_EQ((*chunks)[0].from_s, 0);
  EXPECT_DOUBLE_EQ((*chunks)[0].to_s, 30);
  EXPECT_DOUBLE_EQ((*chunks)[1].from_s, 40);
  EXPECT_DOUBLE_EQ((*chunks)[1].to_s, 70);
  EXPECT_DOUBLE_EQ((*chunks)[2].from_s, 80);
  EXPECT_DOUBLE_EQ((*chunks)[2].to_s, 100);
}

TEST(ChunkPlan, ApiCapOf11000PointsPerChunk) {
  // 55 days at 60 s: 79,201 evaluation times.
  const double from = 1769860800;
  const double to = from + 55 * 86400;
  auto chunks = plan_chunks({from, to}, 60, 11000);
  ASSERT_TRUE(chunks);
  ASSERT_EQ(chunks->size(), 8U);  // ceil(79201 / 11000)
  long long points = 0;
  for (size_t i = 0; i < chunks->size(); ++i) {
    const auto& c = (*chunks)[i];
    const long long n = static_cast<long long>((c.to_s - c.from_s) / 60) + 1;
    EXPECT_LE(n, 11000);
    points += n;
    if (i > 0) {
      EXPECT_DOUBLE_EQ(c.from_s, (*chunks)[i - 1].to_s + 60);
    }
  }
  EXPECT_EQ(points, 79201);
  EXPECT_DOUBLE_EQ(chunks->front().from_s, from);
  EXPECT_DOUBLE_EQ(chunks->back().to_s, to);
}

TEST(ChunkPlan, EndBetweenStepsAndSinglePoint) {
  auto chunks = plan_chunks({0, 25}, 10, 2);  // times 0, 10, 20
  ASSERT_TRUE(chunks);
  ASSERT_EQ(chunks->size(), 2U);
  EXPECT_DOUBLE_EQ((*chunks)[1].from_s, 20);
  EXPECT_DOUBLE_EQ((*chunks)[1].to_s, 20);
  auto one = plan_chunks({5, 5}, 10, 11000);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->size(), 1U);
  EXPECT_DOUBLE_EQ((*one)[0].from_s, 5);
  EXPECT_DOUBLE_EQ((*one)[0].to_s, 5);
}

TEST(ChunkPlan, TooManyEvaluationTimesIsOneErrorNamingStepAndRange) {
  // 1e-300 s over an hour: 3.6e303 steps, past every integer type (the count
  // was cast unchecked: no chunk, no query, exit 0). 1 ms over 7 days: 604.8M.
  for (const auto& [range, step] :
       {std::pair{TimeRange{1769860800, 1769864400}, 1e-300},
        std::pair{TimeRange{1769860800, 1769860800 + 7 * 86400}, 0.001}}) {
    auto chunks = plan_chunks(range, step, 11000);
    ASSERT_FALSE(chunks) << step;
    EXPECT_THAT(chunks.error().message, ::testing::HasSubstr("--step"));
    EXPECT_THAT(chunks.error().message,
                ::testing::HasSubstr(fmt::format("{} .. {}", range.from_s, range.to_s)));
    EXPECT_THAT(chunks.error().message, ::testing::HasSubstr("more than the 10000000 allowed"));
  }
  auto at_cap = last_evaluation_index({0, kMaxEvaluationTimes - 1}, 1);
  ASSERT_TRUE(at_cap);
  EXPECT_EQ(*at_cap, kMaxEvaluationTimes - 1);
  EXPECT_FALSE(last_evaluation_index({0, kMaxEvaluationTimes}, 1));
  EXPECT_FALSE(last_evaluation_index({0, INFINITY}, 1));
  EXPECT_FALSE(last_evaluation_index({-1e308, 1e308}, 1));  // to - from overflows to inf
  EXPECT_FALSE(last_evaluation_index({0, 10}, INFINITY));
}

TEST(ChunkPlan, RejectsBadInput) {
  EXPECT_FALSE(plan_chunks({10, 0}, 10, 100));
  EXPECT_FALSE(plan_chunks({0, 10}, 0, 100));
  EXPECT_FALSE(plan_chunks({0, 10}, -1, 100));
  EXPECT_FALSE(plan_chunks({0, 10}, 1, 0));
}

}  // namespace
}  // namespace ckpt::fleet
