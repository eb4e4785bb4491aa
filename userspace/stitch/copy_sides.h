// A burst that moved data both ways between different files is a copy: cp -r
// or shutil.copytree of a checkpoint between local NVMe and shared storage,
// rsync's two sides, a resharding that reads old shards and writes new ones.
// It is two checkpoints over one window, a load of the files it read and a
// save of the files it wrote, each with its own bytes and stages; never one
// "save" of both directions added together (docs/stitching.md, "Copies").
// Internal to stitch/.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "stitch/open_checkpoint.h"

namespace ckpt {

// Below this the other direction is incidental (a save that first reads a
// small index or "latest" file): the burst stays one checkpoint, named by
// the direction that moved the most.
inline constexpr uint64_t kCopySideMinBytes = 1 << 20;

// The load side and the save side of `c`, in that order, when it is a copy:
// it read and wrote data through no file it both read and wrote, and either
// kernel copies (copy_file_range, sendfile, splice) moved all of it, or each
// way moved at least kCopySideMinBytes. Reads and faults go to the load,
// writes to the save; any other call to the load when it names a file the
// burst read, by identity or path (its open, stat, close), else to the save
// (the tree it builds: mkdir, rename, fsync of what it wrote). Failures
// seen while it ran, and calls still in flight, go with the save; so do the
// window's NFS and TCP failures and its GPU copies, which both sides would
// otherwise claim (Stitcher::emit). nullopt (and `c` untouched): it stays
// one checkpoint.
std::optional<std::pair<OpenCheckpoint, OpenCheckpoint>> split_copy_sides(OpenCheckpoint& c);

}  // namespace ckpt
