#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/fleet/prometheus/prometheus_client.h"

namespace ckpt::fleet {
namespace {

constexpr double kNow = 1769860800;  // 2026-01-31T12:00:00Z

TEST(ParseTime, Rfc3339) {
  EXPECT_DOUBLE_EQ(*parse_time("2026-01-31T12:00:00Z", kNow), 1769860800);
  EXPECT_DOUBLE_EQ(*parse_time("2026-01-31T14:00:00+02:00", kNow), 1769860800);
  EXPECT_DOUBLE_EQ(*parse_time("2026-01-31T07:30:00-04:30", kNow), 1769860800);
  EXPECT_DOUBLE_EQ(*parse_time("2026-01-31T12:00:00.25Z", kNow), 1769860800.25);
  EXPECT_DOUBLE_EQ(*parse_time("1970-01-01T00:00:00Z", kNow), 0);
  EXPECT_DOUBLE_EQ(*parse_time("2024-02-29T00:00:00Z", kNow), 1709164800);
}

TEST(ParseTime, UnixSeconds) {
  EXPECT_DOUBLE_EQ(*parse_time("1769860800", kNow), 1769860800);
  EXPECT_DOUBLE_EQ(*parse_time("1769860800.5", kNow), 1769860800.5);
  // The exponent form, as every fleet command reads Unix seconds (finding 13).
  EXPECT_DOUBLE_EQ(*parse_time("1.7698608e9", kNow), 1769860800);
  EXPECT_DOUBLE_EQ(*parse_time("12e3", kNow), 12000);
}

TEST(ParseTime, Iso8601AsEveryFleetCommandReadsIt) {
  // No zone is UTC; seconds optional; +hhmm offsets (parse_iso8601_unix_s).
  EXPECT_DOUBLE_EQ(*parse_time("2026-01-31T12:00:00", kNow), 1769860800);
  EXPECT_DOUBLE_EQ(*parse_time("2026-01-31 12:00", kNow), 1769860800);
  EXPECT_DOUBLE_EQ(*parse_time("2026-01-31T14:00:00+0200", kNow), 1769860800);
}

TEST(ParseTime, RelativeToNow) {
  EXPECT_DOUBLE_EQ(*parse_time("now", kNow), kNow);
  EXPECT_DOUBLE_EQ(*parse_time("now-6h", kNow), kNow - 6 * 3600);
  EXPECT_DOUBLE_EQ(*parse_time("now-30m", kNow), kNow - 1800);
  EXPECT_DOUBLE_EQ(*parse_time("now-45s", kNow), kNow - 45);
  EXPECT_DOUBLE_EQ(*parse_time("now-2d", kNow), kNow - 2 * 86400);
  EXPECT_DOUBLE_EQ(*parse_time("now-1w", kNow), kNow - 7 * 86400);
  EXPECT_DOUBLE_EQ(*parse_time("now+1h", kNow), kNow + 3600);
  // The durations --step takes (parse_duration_s): a bare number is seconds,
  // fractions allowed.
  EXPECT_DOUBLE_EQ(*parse_time("now-90", kNow), kNow - 90);
  EXPECT_DOUBLE_EQ(*parse_time("now-1.5h", kNow), kNow - 5400);
}

TEST(ParseTime, BadValuesNameTheValueAndTheForms) {
  for (const char* bad :
       {"", "yesterday", "2026-01-31", "now-", "now6h", "now-6y", "now--6h", "now-0s", "-5", "nan",
        "inf", "1e400", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z", "2026-01-31T24:00:00Z",
        "2026-02-31T12:00:00Z", "2026-01-31T12:00:00+99:99"}) {
    auto parsed = parse_time(bad, kNow);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_THAT(parsed.error().message, ::testing::HasSubstr("\"" + std::string(bad) + "\""));
    EXPECT_THAT(parsed.error().message, ::testing::HasSubstr("RFC 3339"));
  }
}

TEST(ParseTime, NumbersPastDoublesRangeAreBadTimesNotAnAbort) {
  // std::stod threw std::out_of_range on these: the command aborted (exit 134).
  const std::string nines(400, '9');
  for (const std::string& bad : {nines, nines + ".5", "now-" + nines + "d", "now+" + nines + "s",
                                 // finite, but times 604800 s per week it is not
                                 "now-" + std::string(308, '9') + "w"}) {
    auto parsed = parse_time(bad, kNow);
    ASSERT_FALSE(parsed) << bad.substr(0, 20);
    EXPECT_THAT(parsed.error().message, ::testing::HasSubstr("\"" + bad + "\""));
    EXPECT_THAT(parsed.error().message, ::testing::AnyOf(::testing::HasSubstr("finite"),
                                                         ::testing::HasSubstr("too large")));
  }
  // Long but in range: fine.
  EXPECT_NEAR(*parse_time("2026-01-31T12:00:00." + nines + "Z", kNow), 1769860801, 1e-6);
}

}  // namespace
}  // namespace ckpt::fleet
