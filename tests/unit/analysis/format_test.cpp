// Human formatting: exact strings, including the unit and rounding edges.
#include "analysis/format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace ckpt {
namespace {

TEST(FormatBytesTest, BinaryUnitsWithThreeSignificantDigits) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1), "1 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(10 * 1024), "10.0 KiB");
  EXPECT_EQ(format_bytes(123 * 1024 + 700), "124 KiB");
  EXPECT_EQ(format_bytes(1023 * 1024), "1023 KiB");
  EXPECT_EQ(format_bytes(3ull << 30), "3.00 GiB");
  EXPECT_EQ(format_bytes(5ull << 40), "5.00 TiB");
  EXPECT_EQ(format_bytes(std::numeric_limits<uint64_t>::max()), "16.0 EiB");
}

TEST(FormatBytesTest, RoundingNeverPrints1024OrFourDecimals) {
  EXPECT_EQ(format_bytes(1024 * 1024 - 1), "1.00 MiB");    // 1023.999 KiB
  EXPECT_EQ(format_bytes(1024 * 1024 - 600), "1023 KiB");  // 1023.41 KiB
  EXPECT_EQ(format_bytes(10234), "9.99 KiB");              // 9.994 KiB
  EXPECT_EQ(format_bytes(10235), "10.0 KiB");  // 9.995 KiB rounds up: one decimal, not "10.00"
  EXPECT_EQ(format_bytes(102348), "99.9 KiB");
  EXPECT_EQ(format_bytes(102349), "100 KiB");  // 99.95 KiB
}

TEST(FormatBandwidthTest, RatesAndUnknowns) {
  EXPECT_EQ(format_bandwidth(0), "0 B/s");
  EXPECT_EQ(format_bandwidth(0.5), "0.50 B/s");
  EXPECT_EQ(format_bandwidth(512), "512 B/s");
  EXPECT_EQ(format_bandwidth(1024), "1.00 KiB/s");
  EXPECT_EQ(format_bandwidth(250.0 * 1024 * 1024), "250 MiB/s");
  EXPECT_EQ(format_bandwidth(1073741824.0), "1.00 GiB/s");
  EXPECT_EQ(format_bandwidth(1.25e9), "1.16 GiB/s");
  EXPECT_EQ(format_bandwidth(std::nan("")), "n/a");
  EXPECT_EQ(format_bandwidth(std::numeric_limits<double>::infinity()), "n/a");
  EXPECT_EQ(format_bandwidth(-1), "n/a");
}

TEST(FormatDurationTest, FromNanosecondsToHours) {
  EXPECT_EQ(format_duration(0), "0 ns");
  EXPECT_EQ(format_duration(999), "999 ns");
  EXPECT_EQ(format_duration(1000), "1.00 us");
  EXPECT_EQ(format_duration(12'345), "12.3 us");
  EXPECT_EQ(format_duration(999'499), "999 us");
  EXPECT_EQ(format_duration(999'500), "1.00 ms");
  EXPECT_EQ(format_duration(4'560'000), "4.56 ms");
  EXPECT_EQ(format_duration(1'000'000'000), "1.00 s");
  EXPECT_EQ(format_duration(3'210'000'000), "3.21 s");
  EXPECT_EQ(format_duration(59'940'000'000), "59.9 s");
  EXPECT_EQ(format_duration(59'950'000'000), "1m 00s");
  EXPECT_EQ(format_duration(123'000'000'000), "2m 03s");
  EXPECT_EQ(format_duration(3'599'400'000'000), "59m 59s");
  EXPECT_EQ(format_duration(3'723'000'000'000), "1h 02m 03s");
  EXPECT_EQ(format_duration(100ull * 3600 * 1'000'000'000), "100h 00m 00s");
}

TEST(FormatOffsetTest, SignedSecondsWithTwoDecimals) {
  EXPECT_EQ(format_offset_s(0), "+0.00 s");
  EXPECT_EQ(format_offset_s(12'400'000'000), "+12.40 s");
  EXPECT_EQ(format_offset_s(-250'000'000), "-0.25 s");
  EXPECT_EQ(format_offset_s(3'725'104'000'000), "+3725.10 s");
}

TEST(FormatPercentTest, OneDecimal) {
  EXPECT_EQ(format_percent(0), "0.0%");
  EXPECT_EQ(format_percent(0.931), "93.1%");
  EXPECT_EQ(format_percent(0.8), "80.0%");
  EXPECT_EQ(format_percent(1.5), "150.0%");
  EXPECT_EQ(format_percent(std::nan("")), "n/a");
}

TEST(FormatWallTimeTest, UtcFromRealtimeNanoseconds) {
  EXPECT_EQ(format_wall_time_utc(0), "1970-01-01 00:00:00 UTC");
  EXPECT_EQ(format_wall_time_utc(1'714'564'800'999'999'999), "2024-05-01 12:00:00 UTC");
}

TEST(ShellJoinTest, QuotesOnlyWhatTheShellNeeds) {
  EXPECT_EQ(shell_join({}), "");
  EXPECT_EQ(shell_join({"torchrun", "--nproc=8", "train.py", "a/b.yaml", "x=1,y=2", "@f", "50%"}),
            "torchrun --nproc=8 train.py a/b.yaml x=1,y=2 @f 50%");
  EXPECT_EQ(shell_join({"echo", "a b", "it's", "", "$HOME", "*"}),
            "echo 'a b' 'it'\\''s' '' '$HOME' '*'");
  EXPECT_EQ(shell_join({"printf", "x\ny\t'\\", std::string("\x01", 1)}),
            "printf $'x\\ny\\t\\'\\\\' $'\\x01'");
  EXPECT_EQ(shell_join({"naïve"}), "'naïve'");
}

}  // namespace
}  // namespace ckpt
