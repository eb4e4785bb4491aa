// A stage faster than its maximum, explained: one wording for the summary
// JSON, the table and the report. Every stage is measured against what it
// can do at most (host_io against the page-cache copy, storage against the
// mount's calibration), so a stage above kCalibrationFaultFraction of its
// maximum says the maximum is wrong: a calibration warning, never a verdict
// on the stage. Traces from before the storage stage measured host_io
// against the storage's maximum: there a page-cache load or a buffered save
// ran above it, and the note says so (docs/calibrate.md).
#pragma once

#include <string>
#include <vector>

#include "model/records.h"

namespace ckpt {

// Fractions up to this are measurement noise around a maximum met.
inline constexpr double kCalibrationFaultFraction = 1.05;

// Whether `s` ran above kCalibrationFaultFraction of its maximum.
bool calibration_fault(const StageRecord& s);

// One sentence per stage of `c` that is a calibration fault, in the
// checkpoint's stage order; none when every stage is within its maximum.
std::vector<std::string> above_max_notes(const CheckpointRecord& c);

}  // namespace ckpt
