// Durations of `fleet attribute`'s flags, read by the fleet-wide
// fleet::parse_duration_s (analysis/fleet/common/wall_time.h: "90", "90s",
// "15m", "1h", "2d", "1w").
#pragma once

#include <string>

#include "common/expected.h"

namespace ckpt::fleet::attribution {

// Seconds; the error names the flag and the value. allow_zero: "0" (with or
// without a unit) is 0, for the windows that may be empty (--gap, --before,
// --after); otherwise a duration is > 0.
Expected<double> parse_duration_flag(const std::string& text, const std::string& flag,
                                     bool allow_zero);

}  // namespace ckpt::fleet::attribution
