// Runs the checkpoints: plans the save/load steps, spreads shards over
// processes (shard i to process i % P) and threads, and merges what each
// process measured into one RunResult.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/workload/options.h"
#include "tools/workload/results.h"

namespace ckpt::workload {

struct Step {
  Phase phase = Phase::Save;
  uint32_t checkpoint = 0;  // 1..K, the N in checkpoint-N
};

// Saves of checkpoints 1..K, then loads of 1..K, as --mode asks.
std::vector<Step> plan_steps(const Options& options);

// The directory of checkpoint k under the (absolute) root.
std::string checkpoint_dir(const std::string& root, uint32_t checkpoint);

// Runs every step with --gap-ms of quiet in between. With one process the
// work happens here; otherwise in forked children that the parent starts on
// each step together, so that a checkpoint's bursts from all processes
// overlap and the gaps between checkpoints stay quiet. Stops after the first
// step that failed.
RunResult run_workload(const Options& options, const std::string& root);

}  // namespace ckpt::workload
