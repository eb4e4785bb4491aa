#include "analysis/fleet/attribution/counter_rate.h"

#include <cmath>

#include <gtest/gtest.h>

namespace ckpt::fleet::attribution {
namespace {

TEST(CounterRate, RateOverTheWindowWithAReset) {
  // 0, 10, 20, then a restart at 5, then 15: reset-corrected totals
  // 0, 10, 20, 25, 35.
  const std::vector<Sample> raw = {{0, 0}, {10, 10}, {20, 20}, {30, 5}, {40, 15}};
  const auto rates = counter_rate(raw, 20);
  ASSERT_EQ(rates.size(), 3u);
  EXPECT_DOUBLE_EQ(rates[0].time_s, 20);
  EXPECT_DOUBLE_EQ(rates[0].value, 1.0);   // (20 - 0) / 20
  EXPECT_DOUBLE_EQ(rates[1].value, 0.75);  // (25 - 10) / 20
  EXPECT_DOUBLE_EQ(rates[2].value, 0.75);  // (35 - 20) / 20
}

TEST(CounterRate, AWindowNeedsTwoSamples) {
  const std::vector<Sample> raw = {{0, 0}, {10, 10}, {40, 40}, {50, std::nan("")}, {60, 70}};
  const auto rates = counter_rate(raw, 20);
  // At 40 the window [20, 40] holds one sample: no rate, as Prometheus's
  // rate() needs two. At 60 it holds 40 and 60: (70 - 40) / 20.
  ASSERT_EQ(rates.size(), 1u);
  EXPECT_DOUBLE_EQ(rates[0].time_s, 60);
  EXPECT_DOUBLE_EQ(rates[0].value, 1.5);
}

TEST(CounterRate, EmptyInEmptyOut) { EXPECT_TRUE(counter_rate({}, 60).empty()); }

TEST(CounterTypes, FromMetadataThenFromTheName) {
  const std::map<std::string, std::string> types = {{"requests", "counter"},
                                                    {"latency", "histogram"},
                                                    {"temp", "gauge"},
                                                    {"odd_total", "gauge"},
                                                    {"legacy", "unknown"}};
  EXPECT_TRUE(is_counter("requests_total", types));
  EXPECT_TRUE(is_counter("requests", types));
  EXPECT_TRUE(is_counter("latency_sum", types));
  EXPECT_TRUE(is_counter("latency_count", types));
  EXPECT_FALSE(is_counter("temp", types));
  EXPECT_FALSE(is_counter("odd_total", types));
  EXPECT_FALSE(is_counter("legacy", types));
  // No metadata (backfilled data has none): OpenMetrics suffixes.
  EXPECT_TRUE(is_counter("bytes_total", {}));
  EXPECT_TRUE(is_counter("rpc_seconds_sum", {}));
  EXPECT_TRUE(is_counter("rpc_seconds_count", {}));
  EXPECT_FALSE(is_counter("DCGM_FI_DEV_GPU_TEMP", {}));
}

}  // namespace
}  // namespace ckpt::fleet::attribution
