#include "analysis/fleet/common/counter.h"

#include <cmath>

#include <gtest/gtest.h>

namespace ckpt::fleet {
namespace {

TEST(CounterIncrease, DifferenceWhileRising) {
  EXPECT_EQ(counter_increase(10, 15), 5);
  EXPECT_EQ(counter_increase(10, 10), 0);
}

// Prometheus reads a drop as a restart from zero: 100 -> 4 rose by 4.
TEST(CounterIncrease, ADecreaseIsAReset) {
  EXPECT_EQ(counter_increase(100, 4), 4);
  EXPECT_EQ(counter_increase(100, 0), 0);
}

TEST(CounterIncrease, NanInNanOut) {
  EXPECT_TRUE(std::isnan(counter_increase(NAN, 4)));
  EXPECT_TRUE(std::isnan(counter_increase(4, NAN)));
}

}  // namespace
}  // namespace ckpt::fleet
