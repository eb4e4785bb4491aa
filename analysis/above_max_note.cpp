#include "analysis/above_max_note.h"

#include <fmt/format.h>

#include "model/vocabulary.h"

namespace ckpt {

std::vector<std::string> above_max_notes(const CheckpointRecord& c) {
  std::vector<std::string> notes;
  for (const StageRecord& s : c.stages) {
    const auto fraction = s.fraction_of_max();
    if (!fraction || *fraction <= kAboveMaxNoteFraction) continue;
    const std::string head =
        fmt::format("{} ran at {:.1f}x its maximum ({})", s.name, *fraction, s.max_source);
    if (s.name == kStageHostIo && c.direction == Direction::Load)
      notes.push_back(head +
                      ": the page cache served these reads, not the storage (a load soon after "
                      "its save, or files read before); the storage's speed shows on a load "
                      "whose files are not cached");
    else if (s.name == kStageHostIo)
      notes.push_back(head +
                      ": the page cache took these buffered writes and the storage gets them "
                      "later; a save that fsyncs its files (as a checkpoint should) waits for the "
                      "storage inside the checkpoint");
    else
      notes.push_back(head +
                      ": this node did better than the maximum says; measure it again "
                      "(ckptscope calibrate, docs/calibrate.md) or correct the config");
  }
  return notes;
}

}  // namespace ckpt
