// The MVA recursion against values worked by hand and its known limits.
#include <gtest/gtest.h>

#include "analysis/projection/mva.h"

namespace ckpt::projection {
namespace {

TEST(Mva, OneCustomerNeverQueues) {
  MvaLadder l(1.0, 0.5);
  MvaPoint p = l.at(1);
  EXPECT_DOUBLE_EQ(p.throughput, 1.0 / 1.5);
  EXPECT_DOUBLE_EQ(p.residence_s, 0.5);
  EXPECT_DOUBLE_EQ(p.cycle_s, 1.5);
}

// Z = 1 s, D = 0.5 s, worked by hand: m=1 R=.5 X=2/3 Q=1/3; m=2 R=2/3 X=1.2
// Q=.8; m=3 R=.9 X=3/1.9.
TEST(Mva, ThreeCustomersByHand) {
  MvaLadder l(1.0, 0.5);
  EXPECT_NEAR(l.at(2).throughput, 1.2, 1e-12);
  EXPECT_NEAR(l.at(2).queue_length, 0.8, 1e-12);
  MvaPoint p = l.at(3);
  EXPECT_NEAR(p.throughput, 3 / 1.9, 1e-12);
  EXPECT_NEAR(p.residence_s, 0.9, 1e-12);
  EXPECT_NEAR(p.utilisation, 0.5 * 3 / 1.9, 1e-12);
  // Fractional: halfway between 2 and 3.
  EXPECT_NEAR(l.at(2.5).throughput, 0.5 * (1.2 + 3 / 1.9), 1e-12);
  // Asked for a smaller population again, it climbs again from 0.
  EXPECT_NEAR(l.at(2).throughput, 1.2, 1e-12);
}

TEST(Mva, ManyCustomersSaturateTheCentreAndQueueBehindIt) {
  MvaLadder l(0.1, 0.01);
  MvaPoint p = l.at(1000);
  EXPECT_NEAR(p.throughput, 100.0, 1e-6);  // 1 / D
  EXPECT_NEAR(p.utilisation, 1.0, 1e-6);
  // Little: all but the ~10 in the delay wait at the centre.
  EXPECT_NEAR(p.queue_length, 1000 - 100 * 0.1, 1e-3);
  EXPECT_NEAR(p.cycle_s, 10.0, 1e-6);
}

TEST(Mva, NoDelayMeansTheCentreAlone) {
  MvaLadder l(0, 0.25);
  EXPECT_DOUBLE_EQ(l.at(1).throughput, 4.0);
  EXPECT_DOUBLE_EQ(l.at(7).throughput, 4.0);
  EXPECT_DOUBLE_EQ(l.at(7).residence_s, 7 * 0.25);
}

TEST(Mva, CalibrationFindsTheDelayThatGivesTheThroughput) {
  // Known: Z = 1, D = 0.5, population 3 gives 3/1.9.
  Calibration c = calibrate_delay(3, 3 / 1.9, 0.5);
  ASSERT_TRUE(c.reachable);
  EXPECT_NEAR(c.delay_s, 1.0, 1e-9);
}

TEST(Mva, CalibrationSaysWhenTheThroughputIsAboveTheCentresMaximum) {
  Calibration c = calibrate_delay(8, 5.0, 0.25);  // the centre allows 4/s
  EXPECT_FALSE(c.reachable);
  EXPECT_EQ(c.delay_s, 0);
}

}  // namespace
}  // namespace ckpt::projection
