// The syscalls jobio.bpf.c traces, by this architecture's numbers: the BPF
// side only sees numbers, user space knows their names (<sys/syscall.h>).
#pragma once

#include <string_view>
#include <vector>

namespace ckpt {

struct TracedSyscall {
  std::string_view name;
  long number;
  unsigned kind;  // enum ckpt_syscall_kind
};

// Every traced syscall this architecture has (arm64 lacks open, creat,
// rename, mkdir, unlink, rmdir, stat and lstat: only their *at forms exist).
const std::vector<TracedSyscall>& traced_syscalls();

}  // namespace ckpt
