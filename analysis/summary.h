// The per-checkpoint summary of a trace, in two renderings: JSON for tools
// (a fixed contract, see summary_json) and a table for people.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/records.h"

namespace ckpt {

// The machine-readable summary. Other tools rely on these keys; new keys may
// be added, existing ones are never renamed or retyped:
//
//   {"job": {"command": [..], "mode", "node", "kernel", "ckptscope_version",
//            "exit_code": int|null, "exit_signal": int|null, "traced",
//            "trace_warning", "start_wall_ns", "duration_ns": uint|null,
//            "root_pids": [..]},
//    "checkpoints": [{"id", "direction": "save"|"load", "start_ns", "end_ns",
//                     "start_offset_ns" (signed, from job start),
//                     "duration_ns": uint|null (null when end < start),
//                     "bytes", "files", "bottleneck": string|null,
//                     "stages": [{"name", "bytes", "busy_ns", "bandwidth_Bps",
//                                 "max_Bps": number|null, "max_source",
//                                 "fraction_of_max": number|null}],
//                     "absent_stages": [names of kAllStages not measured],
//                     "failures": [{"kind", "time_ns", "evidence"}]}],
//    "failures": [{"kind", "time_ns", "evidence", "checkpoint_id": uint|null}],
//    "connections": [{"cookie", "remote", "local", "first_ns", "last_ns",
//                     "bytes_sent", "bytes_received", "retransmits",
//                     "zero_window_ns", "resets", "link_max_Bps": number|null,
//                     "link_max_source"}],
//    "drops": {"<source>.<cause>": count, ..., "total": count}}
//
// Top-level "failures" are the job-level ones (outside any checkpoint).
// Strings are made valid UTF-8 (invalid bytes become U+FFFD) so the result
// always dumps.
nlohmann::json summary_json(const Trace& trace);

// The terminal rendering: the job, then per checkpoint a header line and one
// row per stage in pipeline order (kAllStages), then failures, connections
// and drops. Fits 100 columns except for long evidence and addresses.
std::string summary_table(const Trace& trace);

}  // namespace ckpt
