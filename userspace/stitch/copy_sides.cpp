#include "stitch/copy_sides.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

namespace ckpt {

std::optional<std::pair<OpenCheckpoint, OpenCheckpoint>> split_copy_sides(OpenCheckpoint& c) {
  if (c.bytes_read == 0 || c.bytes_written == 0) return std::nullopt;
  const bool kernel_copy = c.copy_bytes_written > 0;
  if (!kernel_copy && std::min(c.bytes_read, c.bytes_written) < kCopySideMinBytes)
    return std::nullopt;
  std::unordered_set<FileId, FileIdHash> read;
  std::unordered_set<FileId, FileIdHash> written;
  for (const auto& ev : c.calls) {
    if (ev.bytes_moved() == 0) continue;
    if (ev.op == IoOp::Write) {
      written.insert(call_key(ev));
    } else if (is_read_direction(ev.op)) {
      read.insert(call_key(ev));
    }
  }
  // A file read and written in one burst (an update in place, a read back
  // of what was written) is no copy's: one checkpoint, as before.
  for (const auto& f : read)
    if (written.contains(f)) return std::nullopt;

  std::pair<OpenCheckpoint, OpenCheckpoint> sides;
  auto& [load, save] = sides;
  for (auto& ev : c.calls) {
    const bool to_load = ev.op == IoOp::Write       ? false
                         : is_read_direction(ev.op) ? true
                                                    : read.contains(call_key(ev));
    (to_load ? load : save).add(std::move(ev));
  }
  load.mapped_pages = std::move(c.mapped_pages);
  save.live_failures = std::move(c.live_failures);
  save.server_trouble = std::move(c.server_trouble);
  save.nfs_stall_flagged = c.nfs_stall_flagged;
  c.calls.clear();
  return sides;
}

}  // namespace ckpt
