// number_in(): what CLI::Range let through (NaN, inf, 1e400, -1 into an
// unsigned) is refused, and its bounds read as a person writes them.
#include "apps/cli/number_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ckpt::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The message CLI11 gives for `--flag value`, "" when it is accepted.
template <typename T>
std::string parse_error(const CLI::Validator& check, const std::string& value) {
  CLI::App app;
  T target{};
  app.add_option("--flag", target)->check(check);
  std::vector<std::string> args = {value, "--flag"};  // parse() takes them in reverse
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(NumberCheck, NanInfAndOverflowAreRefused) {
  const auto unit = number_in(0.0, 1.0);
  for (const char* bad : {"nan", "NaN", "-nan", "inf", "-inf", "1e400"})
    EXPECT_THAT(parse_error<double>(unit, bad), HasSubstr("not a finite number")) << bad;
  EXPECT_EQ(parse_error<double>(unit, "0.5"), "");
  EXPECT_EQ(parse_error<double>(unit, "0"), "");
  EXPECT_EQ(parse_error<double>(unit, "1"), "");
  EXPECT_THAT(parse_error<double>(unit, "1.5"), HasSubstr("out of range: must be from 0 to 1"));
  EXPECT_THAT(parse_error<double>(unit, "abc"), HasSubstr("abc is not a number"));
}

TEST(NumberCheck, BoundsAreReadable) {
  // CLI::PositiveNumber printed DBL_MAX's 309 digits.
  const std::string e = parse_error<double>(positive_up_to(315'360'000.0), "1e11");
  EXPECT_THAT(e, HasSubstr("must be more than 0, at most 315360000"));
  EXPECT_LT(e.size(), 120u) << e;
  EXPECT_THAT(parse_error<double>(positive_up_to(10.0), "0"), HasSubstr("more than 0"));
  EXPECT_EQ(parse_error<double>(positive_up_to(10.0), "1e-9"), "");
}

TEST(NumberCheck, WholeNumbersAndUnsigned) {
  EXPECT_THAT(parse_error<int>(number_in(1, 100), "0"), HasSubstr("must be from 1 to 100"));
  EXPECT_THAT(parse_error<int>(number_in(1, 100), "2.5"), HasSubstr("not a whole number"));
  EXPECT_EQ(parse_error<int>(number_in(1, 100), "100"), "");
  // strtoull reads "-1" as 18446744073709551615.
  const auto any = number_in(std::uint64_t{0}, UINT64_MAX);
  EXPECT_THAT(parse_error<std::uint64_t>(any, "-1"), HasSubstr("not a whole number"));
  EXPECT_EQ(parse_error<std::uint64_t>(any, "42"), "");
  EXPECT_THAT(parse_error<std::uint64_t>(any, "42"), Not(HasSubstr("range")));
}

}  // namespace
}  // namespace ckpt::cli
