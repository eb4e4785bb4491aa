// Whether a flush the file-layer probes saw begin has since returned unseen.
// Its exit program can be skipped (bpf/jobio_file_layer.bpf.h, "A missed
// exit": another tool changed the function's trampoline while the call
// slept), and then no record says the call ended: its checkpoint would stay
// open and the flush be flagged as a stall a minute later. /proc/TID/syscall
// (proc(5)) settles it: a thread blocked in a system call that cannot be
// running that flush has left it. On a CPU, outside any call, gone or
// unreadable is not known: a thread killed mid-save flushes its files from
// its exit, outside any system call, and may hang there.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "model/events.h"
#include "sources/blocked_call.h"

namespace ckpt {

// Whether a thread now blocked in `call` cannot be inside a flush `op`
// (close, fsync, ftruncate) it began earlier: true unless `call` is one
// that can run it (close: close, close_range, dup2, dup3, exit, exit_group,
// execve, execveat; fsync: fsync, fdatasync, msync, sync_file_range;
// ftruncate: ftruncate; each of them: io_uring_enter). False for other ops.
bool flush_returned(const BlockedSyscall& call, IoOp op);

// flush_returned for what /proc/TID/syscall shows now under `proc_root`;
// false when the thread is on a CPU, outside any system call, gone, or the
// file is unreadable.
bool flush_returned_unseen(uint32_t tid, IoOp op, const std::string& proc_root = "/proc");

// What a live stitcher asks of a flush in flight (Stitcher::
// set_flush_returned_query) for probes in `probe_mode` (as the trace names
// it): flush_returned_unseen where a call's exit can be missed, the file
// layer; none (an empty function) in syscall mode, where every exit is seen.
std::function<bool(uint32_t tid, IoOp op)> flush_returned_query(std::string_view probe_mode);

}  // namespace ckpt
