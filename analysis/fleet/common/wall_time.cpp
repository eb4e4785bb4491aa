#include "analysis/fleet/common/wall_time.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <optional>
#include <system_error>

#include <fmt/format.h>

namespace ckpt::fleet {
namespace {

constexpr std::string_view kIsoForm =
    "YYYY-MM-DDThh:mm[:ss[.fff]] with Z, +hh:mm, -hh:mm, +hhmm, -hhmm or no zone (UTC)";

// Exactly `width` ASCII digits at `pos`, as an int.
std::optional<int> fixed_digits(std::string_view text, size_t pos, size_t width) {
  if (pos + width > text.size()) return std::nullopt;
  int value = 0;
  for (size_t i = pos; i < pos + width; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

bool is_char(std::string_view text, size_t pos, char expected) {
  return pos < text.size() && text[pos] == expected;
}

// The whole of `text` as a double via from_chars (general format, so
// "1.5", "2e3"); nullopt for anything left over, out-of-range or non-finite.
std::optional<double> whole_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace

Expected<double> parse_iso8601_unix_s(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return make_error(fmt::format("\"{}\" is not an ISO 8601 time{}: expected {}", text,
                                  why.empty() ? "" : fmt::format(" ({})", why), kIsoForm));
  };
  const auto year = fixed_digits(text, 0, 4);
  const auto month = fixed_digits(text, 5, 2);
  const auto day = fixed_digits(text, 8, 2);
  const auto hour = fixed_digits(text, 11, 2);
  const auto minute = fixed_digits(text, 14, 2);
  if (!year || !is_char(text, 4, '-') || !month || !is_char(text, 7, '-') || !day ||
      !(is_char(text, 10, 'T') || is_char(text, 10, 't') || is_char(text, 10, ' ')) || !hour ||
      !is_char(text, 13, ':') || !minute)
    return bad("");
  size_t pos = 16;
  int second = 0;
  double fraction = 0;
  if (is_char(text, pos, ':')) {
    const auto s = fixed_digits(text, pos + 1, 2);
    if (!s) return bad("seconds need two digits");
    second = *s;
    pos += 3;
    if (is_char(text, pos, '.')) {
      double scale = 0.1;
      size_t end = pos + 1;
      for (; end < text.size() && text[end] >= '0' && text[end] <= '9'; ++end, scale /= 10)
        fraction += (text[end] - '0') * scale;
      if (end == pos + 1) return bad("no digits after the decimal point");
      pos = end;
    }
  }
  const std::chrono::year_month_day date{std::chrono::year{*year},
                                         std::chrono::month{static_cast<unsigned>(*month)},
                                         std::chrono::day{static_cast<unsigned>(*day)}};
  if (!date.ok()) return bad(fmt::format("{:04}-{:02} has no day {}", *year, *month, *day));
  if (*hour > 23 || *minute > 59 || second > 60) return bad("hour, minute or second out of range");
  int offset_s = 0;
  const std::string_view zone = text.substr(pos);
  if (zone == "Z" || zone == "z" || zone.empty()) {
    offset_s = 0;
  } else if (zone[0] == '+' || zone[0] == '-') {
    const bool colon = zone.size() == 6 && zone[3] == ':';
    if (!colon && zone.size() != 5) return bad("bad zone offset");
    const auto offset_hours = fixed_digits(zone, 1, 2);
    const auto offset_minutes = fixed_digits(zone, colon ? 4 : 3, 2);
    if (!offset_hours || !offset_minutes) return bad("bad zone offset");
    if (*offset_hours > 23 || *offset_minutes > 59) return bad("zone offset out of range");
    offset_s = (zone[0] == '-' ? -1 : 1) * (*offset_hours * 3600 + *offset_minutes * 60);
  } else {
    return bad("bad zone");
  }
  const auto days = std::chrono::sys_days{date}.time_since_epoch().count();
  // 12:00+02:00 is 10:00Z: subtract the offset.
  return static_cast<double>(days) * 86400.0 + *hour * 3600 + *minute * 60 + second + fraction -
         offset_s;
}

Expected<double> parse_unix_s(std::string_view text) {
  // from_chars takes a leading '-' and "inf"/"nan"; neither is a Unix time here.
  const auto value = whole_number(text);
  if (!value || *value < 0 || text.front() == '-')
    return make_error(
        fmt::format("\"{}\" is not Unix seconds: expected a finite, non-negative decimal number "
                    "(1769860800, 1769860800.5 or 1.7698608e9)",
                    text));
  return *value;
}

Expected<double> parse_duration_s(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return make_error(fmt::format(
        "\"{}\" is not a duration ({}): expected a number > 0 with an optional unit s, m, h, d "
        "or w (90, 90s, 15m, 1.5h, 1d, 1w)",
        text, why));
  };
  if (text.empty()) return bad("empty");
  const char unit = text.back();
  const bool has_unit = unit < '0' || unit > '9';
  double multiplier = 1;
  switch (has_unit ? unit : 's') {
    case 's':
      break;
    case 'm':
      multiplier = 60;
      break;
    case 'h':
      multiplier = 3600;
      break;
    case 'd':
      multiplier = 86400;
      break;
    case 'w':
      multiplier = 7 * 86400;
      break;
    default:
      return bad("unknown unit");
  }
  std::string_view number = text;
  if (has_unit) number.remove_suffix(1);
  if (number.empty() || number.front() == '-' || number.front() == '+') return bad("no number");
  const auto value = whole_number(number);
  if (!value) return bad("not a finite number");
  const double seconds = *value * multiplier;
  if (!std::isfinite(seconds)) return bad("too large");
  if (seconds <= 0) return bad("not > 0");
  return seconds;
}

}  // namespace ckpt::fleet
