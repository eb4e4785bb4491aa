// A trace as Chrome trace-event JSON (the format the Perfetto UI and
// chrome://tracing open): one timeline per checkpoint, one track per stage
// and per traced thread, TCP backlog as counters, failures as instants.
//
// Format: the Trace Event Format document
// (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU):
// "X" complete events (ts, dur in microseconds), "M" metadata events naming
// processes and threads, "C" counter events, "i" instant events.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/records.h"

namespace ckpt {

// Times are microseconds since the job started (job.start_mono_ns); the
// wall-clock start is in otherData.start_wall_utc.
nlohmann::json perfetto_trace(const Trace& trace);

// What a consumer needs of every event: the fields its phase requires, the
// right types, non-negative durations, begin/end pairs matched per track.
// Returns the problems found (empty = valid).
std::vector<std::string> validate_trace_events(const nlohmann::json& trace);

}  // namespace ckpt
