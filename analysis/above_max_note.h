// A stage faster than its maximum, explained: one wording for the summary
// JSON and the table. A fraction above 1 is a true figure, not an error, but
// read alone it looks like one. Most often it is host_io on a load read from
// the page cache (a load soon after its save), or on a save whose buffered
// writes the page cache took and the storage got later; otherwise the
// maximum is lower than what the node can do (docs/calibrate.md).
#pragma once

#include <string>
#include <vector>

#include "model/records.h"

namespace ckpt {

// Fractions up to this are measurement noise around a maximum met, not
// worth a note.
inline constexpr double kAboveMaxNoteFraction = 1.05;

// One sentence per stage of `c` above kAboveMaxNoteFraction of its maximum,
// in the checkpoint's stage order; none when every stage is within it.
std::vector<std::string> above_max_notes(const CheckpointRecord& c);

}  // namespace ckpt
