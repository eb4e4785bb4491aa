// The shared side's splits against schedules worked by hand.
#include <gtest/gtest.h>

#include "analysis/projection/shares.h"

namespace ckpt::projection {
namespace {

TEST(Shares, EightNodesTwoAtATime) {
  // 96 RPCs each at 96/s, the shared side 192/s: evenly 24/s each, 4 s;
  // in turn two by two, done at 1, 2, 3 and 4 s.
  Shares s = split_shares(8, 96, 96, 192);
  EXPECT_DOUBLE_EQ(s.even_window_s, 4.0);
  ASSERT_TRUE(s.in_turn_mean_s && s.in_turn_last_s);
  EXPECT_NEAR(*s.in_turn_mean_s, 2.5, 1e-9);
  EXPECT_NEAR(*s.in_turn_last_s, 4.0, 1e-9);
}

TEST(Shares, TheNextInLineGetsWhatIsLeft) {
  // 100 RPCs at 100/s, shared 250/s, 3 nodes: two at 100 and one at 50
  // until 1 s, then it alone at 100 for its last 50: done at 1.5 s.
  Shares s = split_shares(3, 100, 100, 250);
  EXPECT_NEAR(s.even_window_s, 1.2, 1e-12);
  EXPECT_NEAR(*s.in_turn_mean_s, (1 + 1 + 1.5) / 3, 1e-9);
  EXPECT_NEAR(*s.in_turn_last_s, 1.5, 1e-9);
}

TEST(Shares, BelowTheKneeEveryNodeRunsAtItsOwnRate) {
  Shares s = split_shares(2, 100, 100, 250);
  EXPECT_DOUBLE_EQ(s.even_window_s, 1.0);
  EXPECT_NEAR(*s.in_turn_mean_s, 1.0, 1e-9);
  EXPECT_NEAR(*s.in_turn_last_s, 1.0, 1e-9);
}

TEST(Shares, TooManyStepsLeavesTheInTurnSplitOut) {
  Shares s = split_shares(100'000'000, 10, 1, 100);
  EXPECT_DOUBLE_EQ(s.even_window_s, 10'000'000);
  EXPECT_FALSE(s.in_turn_mean_s);
}

TEST(Shares, NothingToSplitIsZero) {
  EXPECT_EQ(split_shares(0, 10, 1, 1).even_window_s, 0);
  EXPECT_EQ(split_shares(2, 10, 0, 1).even_window_s, 0);
}

}  // namespace
}  // namespace ckpt::projection
