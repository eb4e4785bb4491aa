// Shared by the report's builder and renderers; not part of its interface.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/report/report.h"

namespace ckpt::report {

// The checkpoint's series over its window (timeline.cpp).
Timeline build_timeline(const Report& report, const CheckpointReport& checkpoint, size_t bins);

// The rule base (recommendations.cpp, docs/report.md), in its documented order.
std::vector<Recommendation> recommend(const Report& report);

// The ids of every rule, in order (the docs test checks each is documented).
std::vector<std::string_view> recommendation_ids();

const StageRecord* find_stage(const CheckpointRecord& checkpoint, std::string_view name);

// "save #2" as every rendering names a job checkpoint.
std::string checkpoint_label(const CheckpointReport& checkpoint);

// "yes", or "yes (file_layer)" when the trace says how its file I/O was traced.
std::string traced_text(const NodeInfo& node);

// "io_uring 3.0 MiB, mmap 40.1 KiB, syscall 1.0 MiB": which interfaces moved a
// checkpoint's bytes; "" when only syscalls did (or the trace does not say).
std::string via_text(const CheckpointReport& checkpoint);

// "exit 0", "exit 1", "killed by signal 9", "still running or unknown".
std::string exit_text(const NodeInfo& node);

}  // namespace ckpt::report
