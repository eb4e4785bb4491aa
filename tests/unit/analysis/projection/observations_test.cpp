#include "analysis/projection/observations.h"

#include <gtest/gtest.h>

namespace ckpt::projection {
namespace {

Measured row(uint32_t nodes, uint64_t rpcs, double execute_ms) {
  Measured m;
  m.nodes = nodes;
  m.rpcs = rpcs;
  m.rpc_execute_ms = execute_ms;
  return m;
}

TEST(ChargeService, WaitIsExecuteLessTheServiceAndTheRiseIsTakenAgain) {
  std::vector<Measured> rows = {row(1, 16, 30), row(2, 32, 50), row(4, 64, 110)};
  charge_service(rows, 0);
  EXPECT_DOUBLE_EQ(rows[1].rpc_wait_ms, 50);
  EXPECT_DOUBLE_EQ(rows[2].rpc_wait_rise_ms, 80);
  charge_service(rows, 0.010);
  EXPECT_DOUBLE_EQ(rows[0].rpc_wait_ms, 20);
  EXPECT_DOUBLE_EQ(rows[1].rpc_wait_ms, 40);
  EXPECT_DOUBLE_EQ(rows[2].rpc_wait_ms, 100);
  EXPECT_DOUBLE_EQ(rows[0].rpc_wait_rise_ms, 0);
  EXPECT_DOUBLE_EQ(rows[2].rpc_wait_rise_ms, 80);
}

// A scale that saw no data RPC has no wait: the service is not charged to it.
TEST(ChargeService, AScaleWithoutRpcsWaitsNothing) {
  std::vector<Measured> rows = {row(1, 0, 0), row(2, 32, 50)};
  charge_service(rows, 0.010);
  EXPECT_DOUBLE_EQ(rows[0].rpc_wait_ms, 0);
  EXPECT_DOUBLE_EQ(rows[1].rpc_wait_ms, 40);
  EXPECT_DOUBLE_EQ(rows[1].rpc_wait_rise_ms, 40);
}

TEST(ChargeService, NoRowsIsNoWork) {
  std::vector<Measured> rows;
  charge_service(rows, 0.010);
  EXPECT_TRUE(rows.empty());
}

}  // namespace
}  // namespace ckpt::projection
