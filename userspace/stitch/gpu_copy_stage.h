// The gpu_copy stage: the D2H copies that lead into a save (those inside it
// and the burst just before it), the H2D copies that follow a load's reads.
// Owns the copies no checkpoint has claimed yet (bounded; kept a minute).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "model/events.h"
#include "model/records.h"
#include "stitch/maxima.h"
#include "stitch/open_checkpoint.h"

namespace ckpt {

class GpuCopyStage {
 public:
  GpuCopyStage(std::shared_ptr<MaximaProvider> maxima, uint64_t quiet_gap_ns)
      : maxima_(std::move(maxima)), quiet_gap_ns_(quiet_gap_ns) {}

  void on_gpu_copy(GpuCopyEvent&& ev);
  // The closing checkpoint's copies as its gpu_copy stage; `rec` gets their
  // detail and its window stretched over them. Claimed copies leave the buffer.
  std::optional<StageRecord> stage(const OpenCheckpoint& c, CheckpointRecord& rec);
  // Drops copies that ended a minute before `horizon_ns`.
  void prune(uint64_t horizon_ns);
  // Copies not kept because the buffer was full.
  [[nodiscard]] DropRecord drops() const;

 private:
  std::shared_ptr<MaximaProvider> maxima_;
  uint64_t quiet_gap_ns_;
  std::deque<GpuCopyEvent> gpu_copies_;
  uint64_t gpu_buffer_full_ = 0;
};

}  // namespace ckpt
