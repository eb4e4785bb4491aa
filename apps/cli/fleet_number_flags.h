// Numeric flags that must be a finite number in a range (issue 22): CLI11
// reads "nan", "inf" and "1e999" into a double without complaint, and a NaN
// passes every `x < lo` test, so a threshold of NaN silently means "never".
// Header-only, so both ckptscope and ckptscope-fleet can use it with no
// library of their own; the error never prints a 300-digit bound.
#pragma once

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace ckpt::cli {

inline constexpr double kNoUpperBound = std::numeric_limits<double>::infinity();

// "a finite number in [0, 1]", "a finite number >= 0".
inline std::string finite_range_text(double lo, double hi) {
  if (hi == kNoUpperBound) return fmt::format("a finite number >= {}", lo);
  return fmt::format("a finite number in [{}, {}]", lo, hi);
}

// Empty when `value` is finite and in [lo, hi], else why not.
inline std::string finite_in_range_error(double value, double lo, double hi) {
  if (std::isfinite(value) && value >= lo && value <= hi) return {};
  return fmt::format("{}: must be {}", value, finite_range_text(lo, hi));
}

// The whole text as a double (std::from_chars: no locale, no exceptions);
// nullopt when it is not one number or overflows.
inline std::optional<double> parse_double(std::string_view text) {
  if (text.starts_with('+')) text.remove_prefix(1);  // from_chars takes no '+'
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// A CLI11 check: `->check(finite_in(0, 1))`. A failing value is a usage
// error (exit 2), as every other bad flag.
inline CLI::Validator finite_in(double lo, double hi = kNoUpperBound) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        const auto value = parse_double(text);
        if (!value)
          return fmt::format("{}: not a number a double holds (must be {})", text,
                             finite_range_text(lo, hi));
        return finite_in_range_error(*value, lo, hi);
      },
      finite_range_text(lo, hi), "FINITE_IN");
}

}  // namespace ckpt::cli
