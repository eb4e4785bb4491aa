// Human formatting for terminal output. Binary units (KiB = 1024 B) for bytes
// and bandwidths, three significant digits ("1.50 GiB", "12.3 MiB", "512 KiB")
// so columns stay narrow and comparable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ckpt {

// "0 B", "512 B", "1.50 KiB", "12.3 MiB", "512 GiB", up to EiB.
std::string format_bytes(uint64_t bytes);

// "0 B/s", "512 B/s", "1.88 GiB/s"; "n/a" for NaN, infinite or negative rates.
std::string format_bandwidth(double bytes_per_second);

// "850 ns", "12.3 us", "4.56 ms", "3.21 s", "2m 03s", "1h 02m 03s".
std::string format_duration(uint64_t ns);

// A signed offset in seconds with two decimals: "+12.40 s", "-0.25 s".
std::string format_offset_s(int64_t ns);

// A fraction as a percentage with one decimal: 0.931 -> "93.1%".
std::string format_percent(double fraction);

// CLOCK_REALTIME nanoseconds as "2024-05-01 12:00:00 UTC".
std::string format_wall_time_utc(uint64_t wall_ns);

// Unix seconds from external records (Prometheus, schedulers), rounded to the
// nearest second, as format_wall_time_utc writes them; "n/a" when not finite
// or past what gmtime can represent. Times before 1970 are negative.
std::string format_unix_time_utc(double unix_s);

// The same instant in RFC 3339 for machine-read output (JSON):
// "2026-01-31T12:00:00Z"; "n/a" as format_unix_time_utc.
std::string format_unix_time_rfc3339(double unix_s);

// argv for display, quoted the way a POSIX shell would need it:
// {"python", "a b", "it's"} -> "python 'a b' 'it'\''s'". Control characters
// use bash's $'...' form so one argument never breaks a line.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace ckpt
