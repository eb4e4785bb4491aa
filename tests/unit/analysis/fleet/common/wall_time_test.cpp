#include "analysis/fleet/common/wall_time.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt::fleet {
namespace {

using ::testing::HasSubstr;

// 2024-02-29T00:00:00Z: `date -u -d 2024-02-29 +%s`.
constexpr double kLeapDay2024 = 1709164800;

TEST(ParseIso8601, ReadsUtcForms) {
  EXPECT_EQ(*parse_iso8601_unix_s("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*parse_iso8601_unix_s("2024-02-29T00:00:00Z"), kLeapDay2024);
  EXPECT_EQ(*parse_iso8601_unix_s("2024-02-29 00:00:00"), kLeapDay2024);  // no zone: UTC
  EXPECT_EQ(*parse_iso8601_unix_s("2024-02-29t00:00z"), kLeapDay2024);    // no seconds
  EXPECT_DOUBLE_EQ(*parse_iso8601_unix_s("2024-02-29T00:00:01.25Z"), kLeapDay2024 + 1.25);
  // 2000 is a leap year (divisible by 400): `date -u -d 2000-02-29 +%s`.
  EXPECT_EQ(*parse_iso8601_unix_s("2000-02-29T00:00:00Z"), 951782400);
}

TEST(ParseIso8601, SubtractsTheOffset) {
  // 02:00+02:00, 02:00+0200 and 2024-02-28T21:30-02:30 are all midnight UTC.
  EXPECT_EQ(*parse_iso8601_unix_s("2024-02-29T02:00:00+02:00"), kLeapDay2024);
  EXPECT_EQ(*parse_iso8601_unix_s("2024-02-29T02:00:00+0200"), kLeapDay2024);
  EXPECT_EQ(*parse_iso8601_unix_s("2024-02-28T21:30:00-02:30"), kLeapDay2024);
  EXPECT_EQ(*parse_iso8601_unix_s("2024-02-29T23:59:00+23:59"), kLeapDay2024);
}

TEST(ParseIso8601, RejectsDaysTheMonthDoesNotHave) {
  for (const char* text : {"2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2023-02-31T00:00:00Z",
                           "2023-04-31T00:00:00Z", "2023-13-01T00:00:00Z", "2023-00-10T00:00:00Z",
                           "2023-01-00T00:00:00Z"}) {
    const auto parsed = parse_iso8601_unix_s(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_THAT(parsed.error().message, HasSubstr(text));
    EXPECT_THAT(parsed.error().message, HasSubstr("YYYY-MM-DDThh:mm"));
  }
}

TEST(ParseIso8601, RejectsBadClockAndOffsets) {
  for (const char* text :
       {"2024-01-01T24:00:00Z", "2024-01-01T10:60:00Z", "2024-01-01T10:00:61Z",
        "2024-01-01T10:00:00+99:99", "2024-01-01T10:00:00+24:00", "2024-01-01T10:00:00+01:60",
        "2024-01-01T10:00:00+1:00", "2024-01-01T10:00:00+01:0", "2024-01-01T10:00:00+010",
        "2024-01-01T10:00:00 +01:00", "2024-01-01T10:00:00ZZ", "2024-01-01T10:00:00.Z",
        "2024-01-01T10:00:0", "2024-01-01", "2024-1-01T10:00:00Z", "24-01-01T10:00:00Z", "",
        "x024-01-01T10:00:00Z", "2024-01-01X10:00:00Z"}) {
    EXPECT_FALSE(parse_iso8601_unix_s(text)) << text;
  }
}

TEST(ParseUnixSeconds, ReadsDecimalAndExponentForms) {
  EXPECT_EQ(*parse_unix_s("1769860800"), 1769860800);
  EXPECT_EQ(*parse_unix_s("1769860800.5"), 1769860800.5);
  EXPECT_EQ(*parse_unix_s("1.7698608e9"), 1769860800);
  EXPECT_EQ(*parse_unix_s("0"), 0);
}

TEST(ParseUnixSeconds, RejectsOverflowNonFiniteAndJunk) {
  const std::string nines(400, '9');
  for (const std::string& text :
       {nines, std::string("1e400"), std::string("inf"), std::string("nan"), std::string("-5"),
        std::string(""), std::string("12x"), std::string("+5"), std::string(" 5")}) {
    const auto parsed = parse_unix_s(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_THAT(parsed.error().message, HasSubstr("Unix seconds"));
  }
}

TEST(ParseDuration, ReadsEveryUnit) {
  EXPECT_EQ(*parse_duration_s("90"), 90);
  EXPECT_EQ(*parse_duration_s("90s"), 90);
  EXPECT_EQ(*parse_duration_s("15m"), 900);
  EXPECT_EQ(*parse_duration_s("1.5h"), 5400);
  EXPECT_EQ(*parse_duration_s("1d"), 86400);
  EXPECT_EQ(*parse_duration_s("1w"), 604800);
  EXPECT_EQ(*parse_duration_s("0.5"), 0.5);
  EXPECT_EQ(*parse_duration_s("2e3s"), 2000);
}

TEST(ParseDuration, RejectsZeroNegativeOverflowAndUnknownUnits) {
  const std::string nines(400, '9');
  for (const std::string& text :
       {std::string("0"), std::string("0s"), std::string("-1m"), std::string("+1m"),
        std::string(""), std::string("m"), std::string("1y"), std::string("1ms"),
        std::string("1h30m"), std::string("inf"), std::string("nan"), std::string("1e308w"),
        nines + "d", std::string("1 m")}) {
    const auto parsed = parse_duration_s(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_THAT(parsed.error().message, HasSubstr("\"" + text + "\" is not a duration"));
  }
}

}  // namespace
}  // namespace ckpt::fleet
