#include "analysis/above_max_note.h"

#include <algorithm>

#include <fmt/format.h>

#include "model/vocabulary.h"

namespace ckpt {
namespace {

// A trace from before the storage stage: host_io was measured against the
// storage's maximum.
bool host_io_against_storage(const CheckpointRecord& c) {
  return std::none_of(c.stages.begin(), c.stages.end(),
                      [](const StageRecord& s) { return s.name == kStageStorage; });
}

// Which calibration sets `stage`'s maximum.
std::string_view recalibrate(std::string_view stage) {
  if (stage == kStageHostIo || stage == kStageSerialize) return "ckptscope calibrate --memory";
  if (stage == kStageGpuCopy) return "ckptscope calibrate";
  return "ckptscope calibrate --storage DIR";
}

}  // namespace

bool calibration_fault(const StageRecord& s) {
  const auto fraction = s.fraction_of_max();
  return fraction && *fraction > kCalibrationFaultFraction;
}

std::vector<std::string> above_max_notes(const CheckpointRecord& c) {
  std::vector<std::string> notes;
  for (const StageRecord& s : c.stages) {
    if (!calibration_fault(s)) continue;
    const std::string head = fmt::format("{} ran at {:.1f}x its maximum ({})", s.name,
                                         *s.fraction_of_max(), s.max_source);
    if (s.name == kStageHostIo && host_io_against_storage(c))
      notes.push_back(head +
                      (c.direction == Direction::Load
                           ? ": this trace measured host_io against the storage's maximum, and the "
                             "page cache served these reads, not the storage"
                           : ": this trace measured host_io against the storage's maximum, and the "
                             "page cache took these buffered writes; the storage got them later"));
    else
      notes.push_back(fmt::format(
          "calibration warning: {}: no stage can pass its maximum, so the maximum is wrong, not "
          "the stage; measure it again ({}, docs/calibrate.md) or correct the config",
          head, recalibrate(s.name)));
  }
  return notes;
}

}  // namespace ckpt
