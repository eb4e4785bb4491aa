// The generic sessions CSV, for schedulers without Slurm's records
// (Backend.AI and others): a header, then one row per session (RFC 4180
// quoting; extra columns ignored). Columns:
//   session_id, name, chain_id (empty: not part of a retry chain),
//   attempt (1, 2, ...), trigger (auto | manual: who started this attempt),
//   status (success | failure | cancelled), submit_time, start_time,
//   end_time (ISO 8601; empty when it never happened), nodes and
//   excluded_nodes (node names separated by whitespace).
// A UTF-8 byte order mark before the header is skipped.
// Every name in excluded_nodes is one exclusion of that node.
#pragma once

#include <string_view>

#include "analysis/fleet/records/records.h"
#include "common/expected.h"

namespace ckpt::fleet::records {

// Errors name the file, the line and the column.
Expected<void> read_sessions_csv(std::string_view text, std::string_view file, Records& records);

// After every --sessions file is read: each chain's attempts run 1..n with no
// number twice (across files too) and none missing, and each attempt starts
// no earlier than the one before it ended (an overlap would be a negative
// retry interval). Errors name the FILE:LINE of the rows involved.
Expected<void> check_sessions_chains(const Records& records);

}  // namespace ckpt::fleet::records
