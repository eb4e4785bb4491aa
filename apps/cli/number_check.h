// The check every numeric flag of ours uses, instead of CLI::Range,
// CLI::PositiveNumber and CLI::NonNegativeNumber (issue 22):
// - CLI::Range lets NaN through (every comparison with NaN is false), so
//   `--threshold nan` passed and `--duration nan` meant "no limit";
// - it takes inf and 1e400 (which converts to inf) as numbers;
// - it prints its bounds with std::to_string, so PositiveNumber's upper
//   bound is the 309 digits of DBL_MAX;
// - CLI11 reads "-1" into an unsigned flag as 18446744073709551615.
// number_in() refuses all four with a sentence naming the value and the
// bounds, written the way a user would write them ("0 to 1", "1e+09").
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace ckpt::cli {

enum class LowerBound { kIncluded, kExcluded };

// "from 0 to 1", "more than 0, at most 1e+09".
template <typename T>
std::string range_text(T min, T max, LowerBound lower) {
  if (lower == LowerBound::kExcluded) return fmt::format("more than {}, at most {}", min, max);
  return fmt::format("from {} to {}", min, max);
}

// A CLI11 validator: the flag's value must convert to T, be finite (for a
// floating-point T) and lie in [min, max] (or (min, max]).
template <typename T>
CLI::Validator number_in(T min, T max, LowerBound lower = LowerBound::kIncluded) {
  static_assert(std::is_arithmetic_v<T>);
  const std::string bounds = range_text(min, max, lower);
  const char* kind = std::is_floating_point_v<T> ? "a number" : "a whole number";
  auto check = [min, max, lower, bounds, kind](std::string& input) -> std::string {
    T value{};
    const bool negative_text = input.find_first_not_of(" \t") != std::string::npos &&
                               input[input.find_first_not_of(" \t")] == '-';
    if (!CLI::detail::lexical_cast(input, value) || (std::is_unsigned_v<T> && negative_text))
      return fmt::format("{} is not {} {}", input, kind, bounds);
    if constexpr (std::is_floating_point_v<T>) {
      if (!std::isfinite(value))
        return fmt::format("{} is not a finite number (must be {})", input, bounds);
    }
    const bool below = lower == LowerBound::kExcluded ? !(value > min) : value < min;
    if (below || value > max) return fmt::format("{} is out of range: must be {}", input, bounds);
    return {};
  };
  // --help shows it after the type: "FLOAT:[0, 1]", "FLOAT:(0, 1e+09]".
  return {check, fmt::format("{}{}, {}]", lower == LowerBound::kExcluded ? '(' : '[', min, max)};
}

// Positive and finite, at most `max`.
template <typename T>
CLI::Validator positive_up_to(T max) {
  return number_in<T>(T{0}, max, LowerBound::kExcluded);
}

}  // namespace ckpt::cli
