// Shared by the report's builder and renderers; not part of its interface.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/report/report.h"

namespace ckpt::report {

// The checkpoint's series over its window (timeline.cpp).
Timeline build_timeline(const Report& report, const CheckpointReport& checkpoint, size_t bins);

// The checkpoint's timeline: the one the report kept, or else built now
// into `scratch` (ReportOptions::keep_timelines).
const Timeline& timeline_of(const Report& report, const CheckpointReport& checkpoint,
                            Timeline& scratch);

// How many failures each job checkpoint has, at its CheckpointReport::index
// (1, 2, ...; 0 unused): counted once for all, not once per checkpoint.
std::vector<size_t> failures_per_checkpoint(const Report& report);

// The rule base (recommendations.cpp, docs/report.md), in its documented order.
std::vector<Recommendation> recommend(const Report& report);

// The ids of every rule, in order (the docs test checks each is documented).
std::vector<std::string_view> recommendation_ids();

const StageRecord* find_stage(const CheckpointRecord& checkpoint, std::string_view name);

// "save #2" as every rendering names a job checkpoint.
std::string checkpoint_label(const CheckpointReport& checkpoint);

// A checkpoint's fraction of the storage's maximum as every rendering shows
// it: "21.5%", "125.7% (calibration warning: above the maximum)" past 105%
// (analysis/above_max_note.h), or `unknown` when the maximum is.
std::string storage_fraction_text(const CheckpointReport& checkpoint, std::string_view unknown);

// "yes", or "yes (file_layer)" when the trace says how its file I/O was traced.
std::string traced_text(const NodeInfo& node);

// "io_uring 3.0 MiB, mmap 40.1 KiB, syscall 1.0 MiB": which interfaces moved a
// checkpoint's bytes; "" when only syscalls did (or the trace does not say).
std::string via_text(const CheckpointReport& checkpoint);

// "exit 0", "exit 1", "killed by signal 9", "still running or unknown".
std::string exit_text(const NodeInfo& node);

}  // namespace ckpt::report
