// Whether a call the probes announced in flight (bpf/jobio.h
// CKPT_REC_*_START) has since returned unseen. Its exit program can be
// skipped (bpf/jobio_file_layer.bpf.h, "A missed exit": another tool changed
// the function's trampoline while the call slept), and then no record says
// the call ended: its checkpoint would stay open and the call be flagged as
// a stall. /proc settles it without touching the file system (a stat could
// hang on a dead server):
//   - /proc/TID/syscall (proc(5)): a thread blocked in a system call that
//     cannot be running the call has left it; one outside any system call
//     has left any call but a close (a thread killed mid-save flushes its
//     files from its exit, outside any call, and may hang there);
//   - a thread on a CPU ("running" there, as for any TASK_RUNNING task:
//     task_current_syscall answers -EAGAIN, fs/proc/base.c) has left its call
//     when it has run in user space since it was last asked: its utime
//     (/proc/TID/stat) grew. A thread inside the call accrues system time; a
//     woken one waiting for a CPU accrues neither.
// Gone or unreadable is not known: the thread's exit record ends its call.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "model/events.h"

namespace ckpt {

struct BlockedSyscall {
  long number = -1;
  std::array<uint64_t, 6> args{};
};

// One /proc/TID/syscall line: "NR ARG1 ... ARG6 SP PC" (hex arguments) while
// in a call; "-1 SP PC" outside one, "running" on a CPU: nullopt for those
// and for anything malformed.
std::optional<BlockedSyscall> parse_proc_syscall(std::string_view text);

// The thread's user time (clock ticks) from one /proc/TID/stat line; nullopt
// when malformed. The command name may hold spaces and parentheses.
std::optional<uint64_t> parse_proc_stat_utime(std::string_view text);

// Whether a thread now blocked in `call` cannot be inside the call `op` it
// began through `via`: true unless `call` is one that can run it (a read:
// read, pread64, readv, preadv, preadv2; a copy: its own system call; close:
// close, close_range, dup2, dup3, exit, exit_group, execve, execveat; fsync:
// fsync, fdatasync, msync, sync_file_range; a path call: the calls of its
// name; Linux AIO (via Aio): io_submit, io_getevents, io_pgetevents; any of
// them: io_uring_enter).
bool call_returned(const BlockedSyscall& call, IoOp op, IoVia via);

// Asks /proc under `proc_root` about announced calls, keeping each thread's
// last user time seen between questions.
class UnseenReturnCheck {
 public:
  explicit UnseenReturnCheck(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
  // True when thread `call.tid` has left `call`; false when it is in it or
  // that is not known.
  bool operator()(const CallStartEvent& call);

 private:
  struct UserTime {
    uint64_t call_start_ns = 0;
    uint64_t utime = 0;
  };
  std::string proc_root_;
  std::unordered_map<uint32_t, UserTime> last_utime_;  // by tid, for the call it was asked about
};

// What a live stitcher asks of a call in flight (Stitcher::
// set_call_returned_query) for probes in `probe_mode` (as the trace names
// it): an UnseenReturnCheck where a call's exit can be missed, the file
// layer; none (an empty function) in syscall mode, where every exit is seen.
std::function<bool(const CallStartEvent&)> call_returned_query(std::string_view probe_mode);

}  // namespace ckpt
