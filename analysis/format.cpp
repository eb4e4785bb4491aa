#include "analysis/format.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <iterator>
#include <string_view>

namespace ckpt {
namespace {

// Three significant digits. The thresholds sit at the rounding points, so
// 9.996 prints "10.0" rather than "10.00".
std::string three_digits(double v) {
  if (v < 9.995) return fmt::format("{:.2f}", v);
  if (v < 99.95) return fmt::format("{:.1f}", v);
  return fmt::format("{:.0f}", v);
}

// Binary-scaled value with a unit suffix. Moves up a unit from 1023.5, where
// zero decimals would otherwise print "1024 KiB".
std::string scaled(double v, std::string_view per) {
  static constexpr std::string_view kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && v >= 1023.5) {
    v /= 1024.0;
    ++unit;
  }
  return fmt::format("{} {}{}", three_digits(v), kUnits[unit], per);
}

bool is_shell_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("@%+=:,./-_").find(c) != std::string_view::npos;
}

bool is_control(char c) {
  auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

std::string shell_quote(const std::string& arg) {
  bool safe = !arg.empty();
  bool control = false;
  for (char c : arg) {
    safe = safe && is_shell_safe(c);
    control = control || is_control(c);
  }
  if (safe) return arg;
  std::string out;
  if (control) {
    out = "$'";
    for (char c : arg) {
      switch (c) {
        case '\n':
          out += "\\n";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\'':
          out += "\\'";
          break;
        default:
          if (is_control(c)) {
            out += fmt::format("\\x{:02x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
          } else {
            out.push_back(c);
          }
      }
    }
  } else {
    out = "'";
    for (char c : arg) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out.push_back(c);
      }
    }
  }
  out.push_back('\'');
  return out;
}

}  // namespace

std::string format_bytes(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  return scaled(static_cast<double>(bytes), "");
}

std::string format_bandwidth(double bytes_per_second) {
  if (!std::isfinite(bytes_per_second) || bytes_per_second < 0) return "n/a";
  if (bytes_per_second == 0) return "0 B/s";
  return scaled(bytes_per_second, "/s");
}

std::string format_duration(uint64_t ns) {
  const double v = static_cast<double>(ns);
  if (v < 999.5) return fmt::format("{} ns", ns);
  if (v < 999.5e3) return three_digits(v / 1e3) + " us";
  if (v < 999.5e6) return three_digits(v / 1e6) + " ms";
  if (v < 59.95e9) return three_digits(v / 1e9) + " s";
  const uint64_t s = (ns + 500'000'000) / 1'000'000'000;
  if (s < 3600) return fmt::format("{}m {:02}s", s / 60, s % 60);
  return fmt::format("{}h {:02}m {:02}s", s / 3600, (s / 60) % 60, s % 60);
}

std::string format_offset_s(int64_t ns) {
  return fmt::format("{:+.2f} s", static_cast<double>(ns) / 1e9);
}

std::string format_percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  return fmt::format("{:.1f}%", fraction * 100.0);
}

std::string format_wall_time_utc(uint64_t wall_ns) {
  const auto seconds = static_cast<std::time_t>(wall_ns / 1'000'000'000);
  std::tm tm{};
  char buf[64];
  if (gmtime_r(&seconds, &tm) == nullptr ||
      std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm) == 0) {
    return fmt::format("{} ns since the epoch", wall_ns);
  }
  return buf;
}

std::string format_unix_time_utc(double unix_s) {
  // +-1e15 s (31 million years) keeps the cast to time_t defined and gmtime's
  // year within int.
  if (!std::isfinite(unix_s) || std::fabs(unix_s) > 1e15) return "n/a";
  const auto seconds = static_cast<std::time_t>(std::llround(unix_s));
  std::tm tm{};
  char buf[64];
  if (gmtime_r(&seconds, &tm) == nullptr ||
      std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm) == 0) {
    return "n/a";
  }
  return buf;
}

std::string format_unix_time_rfc3339(double unix_s) {
  if (!std::isfinite(unix_s) || std::fabs(unix_s) > 1e15) return "n/a";  // as above
  const auto seconds = static_cast<std::time_t>(std::llround(unix_s));
  std::tm tm{};
  char buf[64];
  if (gmtime_r(&seconds, &tm) == nullptr ||
      std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
    return "n/a";
  }
  return buf;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out.push_back(' ');
    out += shell_quote(arg);
  }
  return out;
}

}  // namespace ckpt
