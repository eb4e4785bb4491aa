// Slurm job states (sacct(1) "JOB STATE CODES") as outcomes.
#pragma once

#include <string>
#include <string_view>

#include "analysis/fleet/records/records.h"

namespace ckpt::fleet::records {

// The base state of a sacct State field: "CANCELLED by 1234" → "CANCELLED",
// "completed" → "COMPLETED".
std::string base_slurm_state(std::string_view state);

// COMPLETED → success; CANCELLED → cancelled; PENDING, RUNNING, SUSPENDED…
// → unfinished; every other end (FAILED, NODE_FAIL, TIMEOUT, OUT_OF_MEMORY,
// PREEMPTED, BOOT_FAIL, DEADLINE, and REQUEUED: a run sacct -D shows that
// ended and was queued again) → failure. False when the word is not a Slurm state.
bool slurm_outcome(std::string_view base_state, Outcome& outcome);

}  // namespace ckpt::fleet::records
