// Which file a thread is blocked on, if any, from /proc: the stitcher's
// answer to "is a checkpoint call still in flight?" when a checkpoint has
// been quiet for its gap. The probes record a call when it returns, so a
// call slower than the quiet gap (a write queued behind a saturated NFS
// server's RPC slots) would otherwise close its checkpoint early and start
// a second one when it returns.
//
// /proc/TID/syscall (proc(5)) gives the system call a blocked thread is in
// and its arguments; for a call on a file descriptor, /proc/TID/fd/N names
// the file. Neither read reaches the file system (readlink of an fd is the
// dentry's path, d_path), so a hung server cannot hang the collector; a
// stat() of the file could. Only calls through the syscall boundary are
// seen; a thread stalled in a page fault of a mapped file reports none.
//
// /proc names a call only while its thread sleeps: one woken from a slow
// read and waiting for a CPU (or copying the pages out on one) reads
// "running", like a thread computing in user space (task_current_syscall
// answers -EAGAIN for any TASK_RUNNING task, fs/proc/base.c). Under CPU
// contention that moment can outlast the gap's slack, and a checkpoint then
// closed before its last read came back (a second one-read checkpoint). For
// such a thread the probes say whether it is still inside the traced call it
// left the CPU in (bpf/jobio.h ckpt_parked_call): call_in_progress.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/events.h"
#include "probes/probe_feed.h"

namespace ckpt {

struct BlockedSyscall {
  long number = -1;
  std::array<uint64_t, 6> args{};
};

// One /proc/TID/syscall line: "NR ARG1 ... ARG6 SP PC" (hex arguments) while
// in a call; "-1 SP PC" outside one, "running" on a CPU: nullopt for those
// and for anything malformed.
std::optional<BlockedSyscall> parse_proc_syscall(std::string_view text);

// The argument that is the file descriptor the call moves data on or
// flushes (read, write and their vector/positional forms, fsync, fdatasync,
// sync_file_range, fallocate, sendfile's and copy_file_range's
// destination and source, ftruncate); nullopt for any other call.
std::optional<int> file_fd_of(const BlockedSyscall& call);
// For a copy, the other descriptor (the source), else nullopt.
std::optional<int> second_fd_of(const BlockedSyscall& call);

// What /proc/TID/syscall says of a thread, read from `proc_root` (/proc;
// tests give another). `path`: the file it is blocked in a data call on
// (nullopt when in none, or gone, or its descriptor names no path); a copy
// between two files names the destination when it is one, else the source.
struct ProcCallState {
  bool gone = false;                // no such thread (or the file is unreadable)
  bool running = false;             // TASK_RUNNING: on a CPU or waiting for one, in a call or not
  std::optional<std::string> path;  // blocked in a data call on this file
};
ProcCallState proc_call_state(uint32_t tid, const std::string& proc_root = "/proc");

// How long a thread may have been on a CPU inside a parked call and still
// count as in it. A woken reader copies its last pages out in well under a
// millisecond; one on a CPU for a second without leaving it has most likely
// finished its call unseen (a missed exit, bpf/jobio_file_layer.bpf.h) and
// is computing in user space, which /proc cannot tell apart. A call that
// really is on a CPU that long (a multi-GiB copy out of the page cache, after
// a sleep that parked it) closes its checkpoint as it did before parked calls.
inline constexpr uint64_t kParkedRunningLimitNs = 1'000'000'000;

// The call `tid` is inside, for a quiet checkpoint (Stitcher::
// set_blocked_call_query): the file /proc shows it blocked on; else, while
// /proc says it is running, the files of the call the probes saw it leave the
// CPU in and not yet return from, unless it has been on a CPU in it for
// kParkedRunningLimitNs by `now_ns` (0: now). `feed` null, or one that cannot
// say: /proc's answer alone. nullopt: in no data call that either can name.
std::optional<CallInProgress> call_in_progress(uint32_t tid, const ProbeFeed* feed,
                                               const std::string& proc_root = "/proc",
                                               uint64_t now_ns = 0);

}  // namespace ckpt
