// Kubeflow PyTorchJobs (`kubectl get pytorchjob NAME -o json`, or a List of
// them from `kubectl get pytorchjobs -o json`): one job is one retry chain.
// status.conditions[] (type Created, Running, Restarting, Succeeded, Failed;
// lastTransitionTime) in order: a Running starts an attempt, each Restarting
// ends one and is an automatic retry; the job succeeded when a Succeeded
// condition has status "True". The training operator keeps one condition per
// type (updated in place), so a live object shows at most one Restarting:
// records that keep every transition (an exported history) count them all.
#pragma once

#include <string_view>

#include "analysis/fleet/records/records.h"
#include "common/expected.h"

namespace ckpt::fleet::records {

// Errors name the file, the item and the field.
Expected<void> read_pytorchjobs(std::string_view text, std::string_view file, Records& records);

}  // namespace ckpt::fleet::records
