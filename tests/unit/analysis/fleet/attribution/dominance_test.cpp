#include "analysis/fleet/attribution/dominance.h"

#include <gtest/gtest.h>

namespace ckpt::fleet::attribution {
namespace {

TEST(FractionalRanks, LargestFirstTiesShareTheirMeanRank) {
  EXPECT_EQ(fractional_ranks({5, 3, 3, 1}), (std::vector<double>{1, 2.5, 2.5, 4}));
  EXPECT_EQ(fractional_ranks({2, 2, 2}), (std::vector<double>{2, 2, 2}));
}

TEST(KendallW, PerfectAgreementIsOneReversedIsZero) {
  EXPECT_DOUBLE_EQ(*kendall_w({{1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}}), 1.0);
  EXPECT_DOUBLE_EQ(*kendall_w({{1, 2, 3}, {3, 2, 1}}), 0.0);
}

TEST(KendallW, TieCorrectionByHand) {
  // Rank sums 4.5, 4.5, 10, 11; mean m(n+1)/2 = 7.5; S = 9 + 9 + 6.25 + 12.25
  // = 36.5. Ties: rater 3 has one pair, 2^3 - 2 = 6. W = 12 * 36.5 /
  // (9 * (64 - 4) - 3 * 6) = 438 / 522.
  const auto w = kendall_w({{1, 2, 3, 4}, {2, 1, 4, 3}, {1.5, 1.5, 3, 4}});
  ASSERT_TRUE(w);
  EXPECT_NEAR(*w, 438.0 / 522.0, 1e-12);
}

TEST(KendallW, UndefinedForOneRaterOrOneItemOrAllTied) {
  EXPECT_FALSE(kendall_w({{1, 2, 3}}));
  EXPECT_FALSE(kendall_w({{1}, {1}}));
  EXPECT_FALSE(kendall_w({{1.5, 1.5}, {1.5, 1.5}}));
}

TEST(Jaccard, IntersectionOverUnion) {
  EXPECT_DOUBLE_EQ(jaccard({"a", "b", "c"}, {"b", "c", "d"}), 0.5);
  EXPECT_DOUBLE_EQ(jaccard({"a"}, {"b"}), 0.0);
  EXPECT_DOUBLE_EQ(jaccard({}, {}), 1.0);
}

// Three failures: two of XID 79 ranking x first, one of XID 48 ranking z first.
std::vector<EventRanking> three_failures() {
  return {{.type = "79", .metrics = {"x", "y", "z"}, .values = {3, 2, 1}},
          {.type = "79", .metrics = {"x", "z", "y"}, .values = {3, 2, 1}},
          {.type = "48", .metrics = {"z", "y", "x"}, .values = {3, 2, 1}}};
}

TEST(Dominance, ByHand) {
  const auto d = dominance(three_failures(), 2);
  EXPECT_EQ(d.events, 3u);
  EXPECT_DOUBLE_EQ(d.max_rank1_share, 2.0 / 3);
  EXPECT_EQ(d.max_rank1_metric, "x");
  // Type 79: mean ranks x 1, y 2.5, z 2.5 -> top 2 {x, y} (tie by name).
  // Type 48: {z, y}. Jaccard = |{y}| / |{x, y, z}| = 1/3.
  ASSERT_EQ(d.types.size(), 2u);
  EXPECT_EQ(d.types[0].type, "48");
  EXPECT_EQ(d.types[0].top, (std::vector<std::string>{"z", "y"}));
  EXPECT_EQ(d.types[1].top, (std::vector<std::string>{"x", "y"}));
  ASSERT_TRUE(d.mean_top_k_overlap);
  EXPECT_DOUBLE_EQ(*d.mean_top_k_overlap, 1.0 / 3);
  // Ranks x: 1, 1, 3; y: 2, 3, 2; z: 3, 2, 1. Sums 5, 7, 6; mean 6; S = 2;
  // W = 12 * 2 / (9 * (27 - 3)) = 24 / 216.
  EXPECT_EQ(d.kendall_w_metrics, 3u);
  ASSERT_TRUE(d.kendall_w);
  EXPECT_NEAR(*d.kendall_w, 24.0 / 216.0, 1e-12);
}

TEST(Dominance, KendallWOnlyOverMetricsEveryFailureHas) {
  std::vector<EventRanking> events = {
      {.type = "79", .metrics = {"a", "only_here", "b"}, .values = {3, 2, 1}},
      {.type = "79", .metrics = {"a", "b"}, .values = {5, 4}}};
  const auto d = dominance(events, 10);
  EXPECT_EQ(d.kendall_w_metrics, 2u);
  EXPECT_DOUBLE_EQ(*d.kendall_w, 1.0);
  EXPECT_FALSE(d.mean_top_k_overlap);  // one type
}

TEST(Standings, CountsSharesAndMeanRanks) {
  const auto s = metric_standings(three_failures(), 2);
  ASSERT_EQ(s.size(), 3u);
  // All three are twice in a top 2; by mean rank x 5/3, z 2, y 7/3.
  EXPECT_EQ(s[0].metric, "x");
  EXPECT_EQ(s[0].top_k_count, 2u);
  EXPECT_DOUBLE_EQ(s[0].top_k_share, 2.0 / 3);
  EXPECT_EQ(s[0].rank1_count, 2u);
  EXPECT_DOUBLE_EQ(s[0].mean_rank, 5.0 / 3);
  EXPECT_EQ(s[0].events_ranked, 3u);
  EXPECT_EQ(s[1].metric, "z");
  EXPECT_DOUBLE_EQ(s[1].mean_rank, 2.0);
  EXPECT_EQ(s[2].metric, "y");
  EXPECT_DOUBLE_EQ(s[2].mean_rank, 7.0 / 3);
}

}  // namespace
}  // namespace ckpt::fleet::attribution
