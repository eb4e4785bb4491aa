// The terminal table (report_text.cpp) on a report whose figures are known:
// times as UTC (format_unix_time_utc), fractions as percentages
// (format_percent), unknown figures as "n/a".
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/fleet/checkpoints/checkpoints.h"
#include "analysis/format.h"

namespace ckpt::fleet::checkpoints {
namespace {

using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Report one_load() {
  Report r;
  r.prometheus_url = "http://prom:9090";
  r.source = "ckptscope";
  r.range = {1769860800, 1769864400};  // 2026-01-31 12:00 .. 13:00 UTC
  r.step_s = 60;
  r.load_max = {700e9, "flag"};
  r.save_max = {std::nullopt, "unknown"};
  Checkpoint c;
  c.direction = "load";
  c.workload = "llm";
  c.start_unix_s = 1769862600.4;  // 12:30:00.4 rounds to 12:30:00
  c.end_unix_s = 1769862720.4;
  c.bytes = 18.06e12;
  c.fraction_of_max = Percentiles{0.215, 0.2149, 0.25, 0.2999, 0.3};
  c.rpc_queue_seconds_per_rpc = {0.05, 0.002};
  c.rpc_backlog = {kNaN, kNaN};
  r.checkpoints.push_back(c);
  Checkpoint save = c;
  save.direction = "save";
  save.fraction_of_max.reset();
  r.checkpoints.push_back(save);
  return r;
}

TEST(ReportText, TimesPercentagesAndUnknowns) {
  const std::string text = to_text(one_load());
  EXPECT_THAT(text, HasSubstr("2026-01-31 12:00:00 UTC to 2026-01-31 13:00:00 UTC, step 60 s"));
  EXPECT_THAT(text, HasSubstr("load 700.0 GB/s (flag), save unknown"));
  EXPECT_THAT(text, HasSubstr("load  llm                  2026-01-31 12:30:00 UTC     120   "
                              "18060.0   21.5%   21.5%   25.0%   30.0%   30.0%      50.00        "
                              "n/a\n"));
  EXPECT_THAT(text, HasSubstr("save  llm                  2026-01-31 12:30:00 UTC     120   "
                              "18060.0     n/a     n/a     n/a     n/a     n/a"));
}

TEST(FormatUnixTimeUtc, RoundsAndRejectsWhatGmtimeCannotShow) {
  EXPECT_EQ(format_unix_time_utc(0), "1970-01-01 00:00:00 UTC");
  EXPECT_EQ(format_unix_time_utc(1769860800.5), "2026-01-31 12:00:01 UTC");
  EXPECT_EQ(format_unix_time_utc(-86400), "1969-12-31 00:00:00 UTC");
  EXPECT_EQ(format_unix_time_utc(kNaN), "n/a");
  EXPECT_EQ(format_unix_time_utc(INFINITY), "n/a");
  EXPECT_EQ(format_unix_time_utc(1e300), "n/a");
}

}  // namespace
}  // namespace ckpt::fleet::checkpoints
