// `sinfo -R`: why nodes are down or drained. Each line is one drain event
// (REASON USER TIMESTAMP NODELIST, sinfo's default "%50E %9u %19H %N"); every
// node in its NODELIST counts one exclusion. The same event in several
// snapshots (same node, reason and timestamp) counts once.
#pragma once

#include <string>
#include <string_view>

#include "analysis/fleet/records/records.h"
#include "common/expected.h"

namespace ckpt::fleet::records {

// Free-text reasons to a small vocabulary, first match wins:
// kill_task_failed, not_responding, gpu_xid ("xid 79", "Xid:48"),
// gpu_error (gpu, ecc, nvlink, nvidia, dcgm), health_check (nhc, "health
// check"), memory, network (infiniband, "ib ", link, network), storage (nfs,
// lustre, gpfs, disk, filesystem), reboot, maintenance (maint, upgrade,
// admin, "by admin"), other.
std::string normalise_drain_reason(std::string_view reason);

// Also accepts "|"-separated output with a header (sinfo -R -o "%E|%u|%H|%N").
// Errors name the file, the line and the field.
Expected<void> read_sinfo_reasons(std::string_view text, std::string_view file, Records& records);

}  // namespace ckpt::fleet::records
