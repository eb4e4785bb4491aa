// Wall-clock times in scheduler records as Unix seconds.
#pragma once

#include <optional>
#include <string_view>

#include "common/expected.h"

namespace ckpt::fleet::records {

// A record's time field: the shared strict ISO 8601 reader
// (analysis/fleet/common/wall_time.h; a time without an offset is UTC: sacct
// prints local time without one, and the analyses only subtract times from
// the same scheduler), after trimming blanks. "", "Unknown", "None" and "N/A"
// (Slurm's words for a time that never came) are nullopt.
Expected<std::optional<double>> parse_wall_time(std::string_view text);

}  // namespace ckpt::fleet::records
