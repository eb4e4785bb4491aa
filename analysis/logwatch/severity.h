// A log line's severity, as a syslog level (RFC 5424 section 6.2.1; the
// kernel's KERN_* levels are the same numbers): 0 emerg, 1 alert, 2 crit,
// 3 err, 4 warning, 5 notice, 6 info, 7 debug. kmsg records carry it
// (`prio & 7`), syslog lines in `<PRI>`, the journal in PRIORITY, and Loghub's
// BGL in its Level field, mapped by bgl_level() below.
//
// How the detector uses it (detector.h, docs/logwatch.md): a line's novelty
// (new, rare or out-of-order template) is multiplied by its level's weight,
// so the same novelty counts for more at err than at info. No level is
// excluded outright: an NFS "server not responding" (KERN_NOTICE) or an
// NVIDIA Xid (KERN_ERR or KERN_WARNING) that is new scores 0.8 or more.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ckpt::logwatch {

using Severity = std::uint8_t;  // 0 emerg .. 7 debug; larger values read as debug

inline constexpr Severity kSeverityDebug = 7;

// Weight of a level's novelty. emerg..err count in full; notice keeps 0.8 so a
// new NFS line clears the default threshold of 0.5; info and debug are below
// it, so a new info line alone is not reported (lower --threshold to see them).
inline constexpr std::array<double, 8> kSeverityWeight = {1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.45, 0.2};

inline double severity_weight(Severity level) {
  return kSeverityWeight[level > kSeverityDebug ? kSeverityDebug : level];
}

// "emerg", "alert", ... "debug".
std::string_view severity_name(Severity level);
// A syslog level by name or number ("err", "error", "warning", "warn", "3").
std::optional<Severity> parse_severity(std::string_view text);

// A level for a line whose format carries none (raw lines, syslog files
// without `<PRI>`, `dmesg -T`), read from its words, so that a new routine
// line there (a unit started, a device found) weighs as a new info line
// does where levels are given, and a new error as an error:
//   err      a word starting error, fail, fatal, panic, critical, abort,
//            corrupt, timeout, unreachab, segfault, oops or exception, or the
//            phrases "timed out", "not responding", "call trace", "refused";
//   warning  a word starting warn;
//   info     anything else.
// Case-insensitive; a word starts after any character that is no letter.
// Known faults (known_faults.h) alarm whatever their level.
Severity severity_from_words(std::string_view message);

// How an alarm ranks against others for the alert budget
// (alarm_grouper.h): a known fault above any novelty, a novel line at
// warning or worse above one at notice, info or debug.
enum class AlarmRank : std::uint8_t { kBenign = 0, kError = 1, kKnownFault = 2 };
inline constexpr Severity kErrorRankAtOrAbove = 4;  // warning
// "benign", "error", "known_fault".
std::string_view to_string(AlarmRank rank);
// A novel line's rank from its level (nullopt: no level known, ranked as an
// error, so that nothing unknown is ranked down).
inline AlarmRank novelty_rank(std::optional<Severity> level) {
  return !level || *level <= kErrorRankAtOrAbove ? AlarmRank::kError : AlarmRank::kBenign;
}

// BGL's Level field (Oliner and Stearley, DSN 2007, list them from least to
// most severe: INFO, WARNING, SEVERE, ERROR, FAILURE, FATAL) onto syslog
// levels: INFO 6 info, WARNING 4 warning, SEVERE 3 err, ERROR 3 err,
// FAILURE 2 crit, FATAL 2 crit ("critical conditions": the node or its job
// cannot go on). nullopt for any other text.
std::optional<Severity> bgl_level(std::string_view level);

}  // namespace ckpt::logwatch
