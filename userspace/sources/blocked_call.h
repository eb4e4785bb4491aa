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
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

// The path of the file `tid` is blocked in a data call on, read from
// `proc_root` (/proc; tests give another): nullopt when it is in none, or
// gone, or its descriptor names no path. A copy between two files names the
// destination when it is one, else the source.
std::optional<std::string> blocked_call_path(uint32_t tid, const std::string& proc_root = "/proc");

}  // namespace ckpt
