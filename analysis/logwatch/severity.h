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

// BGL's Level field (Oliner and Stearley, DSN 2007, list them from least to
// most severe: INFO, WARNING, SEVERE, ERROR, FAILURE, FATAL) onto syslog
// levels: INFO 6 info, WARNING 4 warning, SEVERE 3 err, ERROR 3 err,
// FAILURE 2 crit, FATAL 2 crit ("critical conditions": the node or its job
// cannot go on). nullopt for any other text.
std::optional<Severity> bgl_level(std::string_view level);

}  // namespace ckpt::logwatch
