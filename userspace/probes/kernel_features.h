// What this kernel offers the probes, probed once in main and passed down
// (libbpf-tools' habit: one cached feature probe, kernel differences in one
// place). Nothing else in the collector inspects the kernel for features.
#pragma once

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

  static KernelFeatures probe();
};

// Whether the NFS client's and sunrpc's tracepoints can be traced now: both
// present (built in, or modules loaded) with BTF for their types. Modules
// come and go with mounts, so this is asked again while a trace runs. The
// error says what is missing, in words.
Expected<void> nfs_tracing_available(const std::string& sysfs_root = "/sys");

}  // namespace ckpt
