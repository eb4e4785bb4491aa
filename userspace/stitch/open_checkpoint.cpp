#include "stitch/open_checkpoint.h"

#include <algorithm>

namespace ckpt {
namespace {

// open(2) access and creation bits (uapi asm-generic/fcntl.h).
constexpr uint32_t kOpenAccessMode = 03;
constexpr uint32_t kOpenCreate = 0100;
constexpr uint32_t kOpenTruncate = 01000;

// Calls that move data or change the tree: they keep a checkpoint going.
// A stat, a failed lookup or a read-only open (a job polling for a file)
// join a checkpoint but do not extend it.
bool extends_checkpoint(const IoEvent& ev) {
  if (is_data_op(ev.op)) return true;
  if (ev.ret < 0) return false;
  switch (ev.op) {
    case IoOp::Mkdir:
    case IoOp::Rename:
    case IoOp::Unlink:
      return true;
    case IoOp::Open:
      return (ev.flags & kOpenAccessMode) != 0 || (ev.flags & (kOpenCreate | kOpenTruncate)) != 0;
    default:
      return false;
  }
}

}  // namespace

void OpenCheckpoint::add(IoEvent&& ev) {
  if (calls.empty() && start_ns == 0 && end_ns == 0) {
    start_ns = ev.start_ns;
    end_ns = ev.end_ns;
    last_activity_ns = ev.start_ns;
  }
  start_ns = std::min(start_ns, ev.start_ns);
  // Only calls that move data or change the tree keep a checkpoint going and
  // stretch its window: a job polling for a file (stat, a read-only open)
  // joins it but neither holds it open nor lengthens it.
  if (extends_checkpoint(ev)) {
    end_ns = std::max(end_ns, ev.end_ns);
    last_activity_ns = std::max(last_activity_ns, ev.end_ns);
  }
  if (ev.op == IoOp::Write) {
    write_calls += ev.calls;
    bytes_written += ev.bytes_moved();
    if (ev.copy_source) copy_bytes_written += ev.bytes_moved();
  } else if (is_read_direction(ev.op)) {
    read_calls += ev.calls;
    bytes_read += ev.bytes_moved();
  }
  if (is_data_op(ev.op) && !ev.is_directory) files_touched.insert(call_key(ev));
  calls.push_back(std::move(ev));
}

}  // namespace ckpt
