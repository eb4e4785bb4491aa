#include "analysis/fleet/records/statistics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt::fleet::records {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::Pair;

TEST(Gini, KnownDistributions) {
  EXPECT_DOUBLE_EQ(*gini({1, 1, 1, 1}), 0);
  EXPECT_DOUBLE_EQ(*gini({0, 0, 0, 1}), 0.75);         // (n-1)/n: all on one
  EXPECT_DOUBLE_EQ(*gini({5, 4, 3, 2, 1}), 4.0 / 15);  // 1..n: (n-1)/(3n)
  EXPECT_DOUBLE_EQ(*gini({2, 1, 1, 0, 0, 0, 0}), 9.0 / 14);
  EXPECT_FALSE(gini({0, 0}));
  EXPECT_FALSE(gini({}));
}

TEST(Lorenz, CumulativeSharesOfTheSmallestFirst) {
  EXPECT_THAT(lorenz_curve({3, 0, 1}), ElementsAre(Pair(0.0, 0.0), Pair(DoubleEq(1.0 / 3), 0.0),
                                                   Pair(DoubleEq(2.0 / 3), 0.25), Pair(1.0, 1.0)));
}

Attempt attempt(std::string chain, int number, Trigger trigger, Outcome outcome,
                std::optional<double> start, std::optional<double> end) {
  Attempt a;
  a.chain_id = std::move(chain);
  a.attempt_number = number;
  a.trigger = trigger;
  a.outcome = outcome;
  a.start_unix_s = start;
  a.end_unix_s = end;
  return a;
}

TEST(RetryStats, ChainKindSuccessAndIntervals) {
  Records r;
  // An automatic chain that succeeds on its third attempt, given out of order.
  r.attempts.push_back(attempt("a", 3, Trigger::automatic, Outcome::success, 2000 + 11 * 60, 9000));
  r.attempts.push_back(attempt("a", 1, Trigger::manual, Outcome::failure, 0, 1000));
  r.attempts.push_back(attempt("a", 2, Trigger::automatic, Outcome::failure, 1000 + 10 * 60, 2000));
  // A chain a person retried (and one automatic retry after): manual; fails.
  r.attempts.push_back(attempt("m", 1, Trigger::manual, Outcome::failure, 0, 100));
  r.attempts.push_back(attempt("m", 2, Trigger::manual, Outcome::failure, 100 + 30 * 60, 5000));
  r.attempts.push_back(attempt("m", 3, Trigger::automatic, Outcome::cancelled, std::nullopt, 6000));
  r.attempts.push_back(attempt("", 1, Trigger::manual, Outcome::success, 0, 1));
  auto s = retry_stats(r);
  EXPECT_EQ(s.chains, 2);
  EXPECT_EQ(s.attempts, 6);
  EXPECT_EQ(s.lone_runs, 1);
  EXPECT_EQ(s.automatic.chains, 1);
  EXPECT_EQ(s.automatic.attempts, 3);
  EXPECT_DOUBLE_EQ(*s.automatic.success_rate, 1.0);
  EXPECT_EQ(s.manual.chains, 1);
  EXPECT_EQ(s.manual.attempts, 3);
  EXPECT_DOUBLE_EQ(*s.manual.success_rate, 0.0);
  // Intervals 10, 11 (auto) and 30 (manual; the third attempt has no start).
  EXPECT_EQ(s.intervals.count, 3U);
  EXPECT_DOUBLE_EQ(*s.intervals.median, 11);
  EXPECT_DOUBLE_EQ(*s.intervals.p25, 10.5);
  EXPECT_DOUBLE_EQ(*s.intervals.p75, 20.5);
  EXPECT_DOUBLE_EQ(*s.auto_intervals.median, 10.5);
  EXPECT_THAT(s.chains_by_attempts, ElementsAre(Pair(3, 2)));
}

TEST(RetryStats, NoChainsHasNoRatesOrIntervals) {
  Records r;
  auto s = retry_stats(r);
  EXPECT_EQ(s.chains, 0);
  EXPECT_FALSE(s.automatic.success_rate);
  EXPECT_FALSE(s.intervals.median);
}

TEST(ExclusionStats, PopulationIncludesNodesNeverExcluded) {
  Records r;
  r.nodes = {"n1", "n2", "n3"};
  r.exclusions = {{"n1", "node_fail", ""}, {"n1", "gpu_xid", ""}, {"n4", "node_fail", ""}};
  auto s = exclusion_stats(r, {"n5"}, {1, 3, 5});
  EXPECT_EQ(s.total, 3);
  ASSERT_EQ(s.nodes.size(), 5U);
  EXPECT_EQ(s.nodes[0].node, "n1");
  EXPECT_EQ(s.nodes[0].exclusions, 2);
  EXPECT_DOUBLE_EQ(s.nodes[0].share, 2.0 / 3);
  EXPECT_EQ(s.nodes[1].node, "n4");
  EXPECT_DOUBLE_EQ(s.top_k_share[1], 2.0 / 3);
  EXPECT_DOUBLE_EQ(s.top_k_share[3], 1.0);
  EXPECT_DOUBLE_EQ(s.top_k_share[5], 1.0);
  EXPECT_DOUBLE_EQ(*s.gini, *gini({2, 1, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(*s.gini, 2.0 / 3);
  EXPECT_THAT(s.reasons, ElementsAre(Pair("gpu_xid", 1), Pair("node_fail", 2)));
}

// Attempts numbered 2 (a person) and 5 (automatic): both are retries, so a
// person retried this chain; attempt 2 is not its "first".
TEST(RetryStats, AttemptsAboveOneAreRetriesEvenWithoutAttemptOne) {
  Records r;
  r.attempts.push_back(attempt("c", 5, Trigger::automatic, Outcome::success, 500, 600));
  r.attempts.push_back(attempt("c", 2, Trigger::manual, Outcome::failure, 100, 200));
  auto s = retry_stats(r);
  EXPECT_EQ(s.manual.chains, 1);
  EXPECT_EQ(s.automatic.chains, 0);
  // Unnumbered attempts (0): the later ones in start order are the retries.
  Records u;
  u.attempts.push_back(attempt("u", 0, Trigger::automatic, Outcome::success, 500, 600));
  u.attempts.push_back(attempt("u", 0, Trigger::manual, Outcome::failure, 100, 200));
  EXPECT_EQ(retry_stats(u).automatic.chains, 1);
}

}  // namespace
}  // namespace ckpt::fleet::records
