// The storage stage: what the storage itself did for a checkpoint's files,
// apart from the job's file calls copying to and from the page cache
// (host_io). A load served from the cache reaches no storage; a buffered
// save reaches it at writeback (its fsync, or later). Bytes, time and the
// fraction of the storage's maximum are of what got there.
//
// Local files (a block device of their own): the bytes each call made the
// device read or write, bpf/jobio_storage.bpf.h (read misses and their
// readahead, an fsync's writeback, O_SYNC and O_DIRECT data, pages a mapping
// faulted in from storage), over the time the device had those bios in
// flight (StorageBusyEvent: readahead runs on after the call that started
// it), every fsync's (a device flush even with nothing dirty) and the time
// writes slept in balance_dirty_pages for the storage to take dirty pages;
// a device
// with no busy interval on record falls back to the calls that moved bytes
// on it. NFS files: the NFS client's page
// RPCs, the nfs_client stage's very bytes and time, so the two never count
// the same bytes twice. A checkpoint with neither (tmpfs only) has no stage.
// docs/stitching.md "The page cache and the storage". Internal to stitch/.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "model/records.h"
#include "stitch/exclusive.h"
#include "stitch/intervals.h"
#include "stitch/maxima.h"
#include "stitch/open_checkpoint.h"

namespace ckpt {

// A file on a block device of its own (major != 0); anonymous devices are
// NFS, tmpfs, FUSE, overlay, btrfs.
bool on_block_device(const FileId& file);

class StorageStage {
 public:
  explicit StorageStage(std::shared_ptr<MaximaProvider> maxima) : maxima_(std::move(maxima)) {}

  void on_busy(const StorageBusyEvent& ev);
  // The storage stage of the closing checkpoint, after the NFS stages (whose
  // nfs_client stage, if any, is in `stages`); adds its spans: by file, a
  // device's busy intervals under FileId{dev, 0} (device_key).
  std::optional<StageRecord> stage(const OpenCheckpoint& c, Direction d,
                                   const std::vector<StageRecord>& stages, StageSpans& spans);
  // Drops the busy intervals that ended before `horizon_ns`.
  void prune(uint64_t horizon_ns);

 private:
  std::shared_ptr<MaximaProvider> maxima_;
  std::unordered_map<uint64_t, std::deque<Interval>> busy_;  // by device
};

// The key a device's busy intervals have among the storage stage's spans.
inline FileId device_key(uint64_t dev) { return FileId{dev, 0}; }

// The page-cache bytes a save's write calls left dirty on local files and no
// call of it wrote back (its fsyncs, O_SYNC writes): what writeback still owed
// the storage when it ended. nullopt when no write call dirtied a page.
std::optional<uint64_t> dirty_at_end(const OpenCheckpoint& c);

}  // namespace ckpt
