#include "stitch/copy_sides.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

namespace ckpt {

std::optional<std::pair<OpenCheckpoint, OpenCheckpoint>> split_copy_sides(OpenCheckpoint& c) {
  if (c.bytes_read == 0 || c.bytes_written == 0) return std::nullopt;
  // Nothing but kernel copies (cp -r, copytree of small files): a copy
  // whatever its size. Otherwise each way must be more than incidental (a
  // save that also copies in a small config file stays one save).
  const bool only_kernel_copies =
      c.copy_bytes_written == c.bytes_written && c.bytes_read == c.bytes_written;
  if (!only_kernel_copies && std::min(c.bytes_read, c.bytes_written) < kCopySideMinBytes)
    return std::nullopt;
  std::unordered_set<FileId, FileIdHash> read;
  std::unordered_set<FileId, FileIdHash> written;
  std::unordered_set<std::string> read_paths;  // a stat names a file by path only
  for (const auto& ev : c.calls) {
    if (ev.bytes_moved() == 0) continue;
    if (ev.op == IoOp::Write) {
      written.insert(call_key(ev));
    } else if (is_read_direction(ev.op)) {
      read.insert(call_key(ev));
      if (!ev.path.empty()) read_paths.insert(ev.path);
    }
  }
  // A file read and written in one burst (an update in place, a read back
  // of what was written) is no copy's: one checkpoint, as before.
  for (const auto& f : read)
    if (written.contains(f)) return std::nullopt;

  std::pair<OpenCheckpoint, OpenCheckpoint> sides;
  auto& [load, save] = sides;
  for (auto& ev : c.calls) {
    bool to_load = is_read_direction(ev.op);
    if (ev.op != IoOp::Write && !to_load)
      to_load = read.contains(call_key(ev)) || read_paths.contains(ev.path);
    (to_load ? load : save).add(std::move(ev));
  }
  load.copy_side = CopySide::Load;
  save.copy_side = CopySide::Save;
  load.mapped_pages = std::move(c.mapped_pages);
  load.counted_mapped_bytes = std::move(c.counted_mapped_bytes);
  save.stored_pages = std::move(c.stored_pages);
  save.live_failures = std::move(c.live_failures);
  save.server_trouble = std::move(c.server_trouble);
  save.nfs_stall_flagged = c.nfs_stall_flagged;
  c.calls.clear();
  return sides;
}

}  // namespace ckpt
