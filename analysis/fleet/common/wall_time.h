// Times and durations as the fleet commands read them, all as seconds: wall
// times are Unix seconds (UTC), durations plain seconds. Every parser reads
// the whole text, rejects non-finite and overflowing numbers (std::from_chars,
// no exceptions) and names the text and the expected form in its error.
#pragma once

#include <string_view>

#include "common/expected.h"

namespace ckpt::fleet {

// RFC 3339 / ISO 8601: "YYYY-MM-DD" then "T", "t" or a space, "hh:mm",
// optionally ":ss" and ".fff" (any number of digits), then "Z"/"z", "+hh:mm",
// "-hh:mm", "+hhmm", "-hhmm" or nothing. No zone is read as UTC (sacct prints
// local time without one, and the analyses only subtract times that came from
// the same scheduler). The day is checked against the month (leap years
// included), hours <= 23, minutes <= 59, seconds <= 60 (RFC 3339 5.6 allows a
// leap second; it counts as the next minute's :00), offset hours <= 23 and
// offset minutes <= 59.
Expected<double> parse_iso8601_unix_s(std::string_view text);

// Decimal Unix seconds, "1769860800", "1769860800.5" or "1.7698608e9";
// finite and not negative.
Expected<double> parse_unix_s(std::string_view text);

// A duration: a number ("90", "1.5", "2e3"), optionally followed by one unit,
// s, m, h, d or w (Prometheus's units; one unit per value). Finite and > 0.
Expected<double> parse_duration_s(std::string_view text);

}  // namespace ckpt::fleet
