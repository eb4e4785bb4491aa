// What this kernel offers the probes, probed once in main and passed down
// (libbpf-tools' habit: one cached feature probe, kernel differences in one
// place). Nothing else in the collector inspects the kernel for features.
#pragma once

#include <set>
#include <string>

#include "common/expected.h"

namespace ckpt {

struct KernelFeatures {
  std::string release;       // uname -r
  bool btf_vmlinux = false;  // /sys/kernel/btf/vmlinux: CO-RE and tp_btf need it
  bool tracefs = false;      // the events directory, for syscalls:* tracepoints
  std::string tracefs_path;  // where it is (we mount it when nothing has)
  std::string tracefs_note;  // what we did or why it is missing
  bool cgroup_v2 = false;
  std::string cgroup_v2_root;  // e.g. /sys/fs/cgroup or /sys/fs/cgroup/unified
  // Tracing programs need CAP_BPF and CAP_PERFMON (v5.8+) or CAP_SYS_ADMIN.
  bool bpf_privileged = false;
  std::string privilege_note;  // why not, in words
  // fentry/fexit programs load and attach (a minimal one on vfs_read, as
  // libbpf-tools' fentry_can_attach): the file-layer probe mode needs them.
  // Some kernels (this project's CI host) refuse with EPERM even as root.
  bool trampolines = false;
  std::string trampoline_note;  // why not: the call that failed and its errno
  // The vmlinux BTF the program selection reads (probes/jobio_programs.h):
  // the FUNCs it looks up that this kernel has (jobio_btf_functions()), and
  // every tracepoint (the X of a btf_trace_X typedef).
  std::set<std::string> btf_functions;
  std::set<std::string> btf_tracepoints;
  // The nfsv4 module was loaded when the probe ran: its tracepoints (NFS
  // 4.2's nfs4_copy and nfs4_clone, when it has them) are in
  // btf_tracepoints, read from its own BTF.
  bool nfs4_module = false;
  // Parameters of btf_trace_io_uring_complete's prototype, the leading
  // context pointer included: 4 = (ctx, req, cqe) (6.15+), 8 = (ctx, req,
  // user_data, res, cflags, extra1, extra2) (6.1 to 6.14); 0 = not found.
  int io_uring_complete_params = 0;
  // Parameters of btf_trace_balance_dirty_pages, the context pointer
  // included: 13 = (wb, thresh, bg_thresh, dirty, bdi_thresh, bdi_dirty,
  // dirty_ratelimit, task_ratelimit, dirtied, period, pause, start_time)
  // (6.1), 9 = (wb, dtc, dirty_ratelimit, task_ratelimit, dirtied, period,
  // pause, start_time) (later); pause is the second last either way.
  int balance_dirty_pages_params = 0;
  // CONFIG_HZ (probes/kernel_hz.h): balance_dirty_pages' pause is in
  // jiffies. 0 = not known; hz_note says why.
  uint32_t hz = 0;
  std::string hz_note;

  // kSkip: no fentry program is tried (trampolines stays false, the note
  // says why). Trying one attaches it to vfs_read and detaches it, and each
  // patches vfs_read's call site (text_poke_bp's int3 dance, on every CPU):
  // a caller that asked for the syscall probes has no use for the answer.
  enum class Trampolines { kTry, kSkip };
  static KernelFeatures probe(Trampolines trampolines = Trampolines::kTry);
};

// Whether the NFS client's and sunrpc's tracepoints can be traced now: both
// present (built in, or modules loaded) with BTF for their types. Modules
// come and go with mounts, so this is asked again while a trace runs. The
// error says what is missing, in words.
Expected<void> nfs_tracing_available(const std::string& sysfs_root = "/sys");

}  // namespace ckpt
