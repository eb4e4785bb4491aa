// The checkpoint the stitcher is assembling, as its parts share it: the core
// fills it from the calls, the failure detectors add live failures to it,
// and each stage builder reads it when it closes. Internal to stitch/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/events.h"
#include "model/records.h"
#include "stitch/page_set.h"

namespace ckpt {

// A server not responding during a checkpoint: flagged at its first major
// timeout, its evidence completed when the checkpoint closes.
struct ServerTrouble {
  size_t failure_index;
  uint64_t timeouts;
  uint64_t first_ns;
  uint64_t last_ns;
};

// Which side of a copy a checkpoint is (stitch/copy_sides.h), or none.
enum class CopySide : uint8_t { None, Load, Save };

struct OpenCheckpoint {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t last_activity_ns = 0;             // end of the last call that extends it
  std::vector<FailureRecord> live_failures;  // stalls seen while calls were in flight
  uint64_t bytes_written = 0;
  uint64_t bytes_read = 0;
  uint64_t write_calls = 0;         // calls, folded ones each counted
  uint64_t read_calls = 0;          // reads and mmap faults
  uint64_t copy_bytes_written = 0;  // of bytes_written: the destination halves of copies
  std::vector<IoEvent> calls;
  // Per file, the pages mmap faults mapped in this checkpoint, and the pages
  // stores through a shared mapping dirtied: each counts once.
  std::unordered_map<FileId, PageSet, FileIdHash> mapped_pages;
  std::unordered_map<FileId, PageSet, FileIdHash> stored_pages;
  // Per file, the bytes counted from pages counted, not placed (syscall
  // mode's installed pages): at most the file's size per checkpoint.
  std::unordered_map<FileId, uint64_t, FileIdHash> counted_mapped_bytes;
  std::unordered_set<FileId, FileIdHash> files_touched;
  std::map<std::string, ServerTrouble> server_trouble;
  bool nfs_stall_flagged = false;
  CopySide copy_side = CopySide::None;

  // Adds a call (an mmap event's bytes already counted against
  // mapped_pages): its window, its counts, its file. The first call of an
  // empty checkpoint sets start_ns, end_ns and last_activity_ns first.
  void add(IoEvent&& ev);
};

// A call's file: its identity, or for a call without one (the process was
// gone before its path could be resolved) a stand-in derived from the path.
inline FileId call_key(const IoEvent& ev) {
  return ev.file.known() ? ev.file : FileId{0, std::hash<std::string>()(ev.path) | 1};
}

inline bool is_data_op(IoOp op) { return !is_metadata_op(op); }

}  // namespace ckpt
