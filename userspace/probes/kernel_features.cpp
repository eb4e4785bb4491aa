#include "probes/kernel_features.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "probes/jobio_programs.h"
#include "probes/kernel_hz.h"

namespace ckpt {
namespace {

namespace fs = std::filesystem;

void find_cgroup_v2(KernelFeatures& f) {
  std::ifstream mounts("/proc/self/mounts");
  std::string line;
  while (std::getline(mounts, line)) {
    std::istringstream ss(line);
    std::string dev, dir, type;
    ss >> dev >> dir >> type;
    if (type == "cgroup2") {
      f.cgroup_v2 = true;
      f.cgroup_v2_root = dir;
      return;
    }
  }
}

// CapEff from /proc/self/status: no libcap needed for one bit test.
void check_privilege(KernelFeatures& f) {
  std::ifstream status("/proc/self/status");
  std::string line;
  uint64_t caps = 0;
  while (std::getline(status, line))
    if (line.rfind("CapEff:", 0) == 0) caps = std::stoull(line.substr(7), nullptr, 16);
  constexpr int kCapSysAdmin = 21, kCapPerfmon = 38, kCapBpf = 39;
  auto has = [caps](int cap) { return (caps >> cap) & 1u; };
  f.bpf_privileged = has(kCapSysAdmin) || (has(kCapBpf) && has(kCapPerfmon));
  if (!f.bpf_privileged)
    f.privilege_note = fmt::format(
        "loading eBPF needs root or CAP_BPF+CAP_PERFMON, and uid {} has neither (CapEff {:#x})",
        geteuid(), caps);
}

// "EPERM (Operation not permitted)": the errno's name is what a user
// searches for, its text what they read.
std::string errno_text(int err) {
  const char* name = strerrorname_np(err);
  return fmt::format("{} ({})", name ? name : std::to_string(err), std::strerror(err));
}

// The FUNCs the selection asks about, the tracepoints (btf_trace_X typedefs), and
// the arity of io_uring_complete's and balance_dirty_pages' prototypes (the
// typedef points to each).
void read_btf_facts(KernelFeatures& f, const btf* vmlinux) {
  constexpr std::string_view kTracePrefix = "btf_trace_";
  const auto& wanted = jobio_btf_functions();
  const uint32_t n = btf__type_cnt(vmlinux);
  for (uint32_t id = 1; id < n; ++id) {
    const btf_type* t = btf__type_by_id(vmlinux, id);
    if (!t) continue;
    const std::string_view name = btf__name_by_offset(vmlinux, t->name_off);
    if (btf_is_func(t)) {
      if (wanted.contains(name)) f.btf_functions.emplace(name);
    } else if (btf_is_typedef(t) && name.starts_with(kTracePrefix)) {
      f.btf_tracepoints.emplace(name.substr(kTracePrefix.size()));
      int* params = name == "btf_trace_io_uring_complete"     ? &f.io_uring_complete_params
                    : name == "btf_trace_balance_dirty_pages" ? &f.balance_dirty_pages_params
                                                              : nullptr;
      if (!params) continue;
      const btf_type* ptr = btf__type_by_id(vmlinux, t->type);
      const btf_type* proto =
          ptr && btf_is_ptr(ptr) ? btf__type_by_id(vmlinux, ptr->type) : nullptr;
      if (proto && btf_is_func_proto(proto)) *params = btf_vlen(proto);
    }
  }
}

// NFS 4.2's copies (bpf/jobio_storage_copies.bpf.h) are tracepoints of the
// nfsv4 module, in its own BTF; only while it is loaded can they attach.
void read_nfs4_module_facts(KernelFeatures& f, btf* vmlinux) {
  if (access("/sys/kernel/btf/nfsv4", R_OK) != 0) return;
  btf* module = btf__load_module_btf("nfsv4", vmlinux);
  if (!module) return;
  f.nfs4_module = true;
  for (const char* tracepoint : {"nfs4_copy", "nfs4_clone"})
    if (btf__find_by_name_kind(module, fmt::format("btf_trace_{}", tracepoint).c_str(),
                               BTF_KIND_TYPEDEF) > 0)
      f.btf_tracepoints.emplace(tracepoint);
  btf__free(module);
}

// What libbpf-tools' fentry_can_attach does, plus the attach: a two-insn
// fentry program on vfs_read ("r0 = 0; exit"), loaded, attached, closed.
// Some kernels load it and refuse only the attach.
void probe_trampolines(KernelFeatures& f, const btf* vmlinux) {
  if (!f.bpf_privileged) {
    f.trampoline_note = "fentry not tried: " + f.privilege_note;
    return;
  }
  const int btf_id = btf__find_by_name_kind(vmlinux, "vfs_read", BTF_KIND_FUNC);
  if (btf_id <= 0) {
    f.trampoline_note = "fentry not tried: vfs_read is not in the vmlinux BTF";
    return;
  }
  bpf_insn insns[2] = {};
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;  // r0 = 0
  insns[1].code = BPF_JMP | BPF_EXIT;
  LIBBPF_OPTS(bpf_prog_load_opts, opts);
  opts.expected_attach_type = BPF_TRACE_FENTRY;
  opts.attach_btf_id = static_cast<__u32>(btf_id);
  const int prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "ckpt_fentry", "GPL", insns, 2, &opts);
  if (prog < 0) {
    f.trampoline_note =
        "the kernel refuses fentry programs: loading one on vfs_read failed: " + errno_text(errno);
    return;
  }
  int link = bpf_link_create(prog, 0, BPF_TRACE_FENTRY, nullptr);
  if (link < 0 && errno == EINVAL) link = bpf_raw_tracepoint_open(nullptr, prog);  // before 5.10
  const int attach_errno = errno;
  if (link >= 0) close(link);
  close(prog);
  if (link < 0) {
    f.trampoline_note = "the kernel refuses fentry programs: attaching one to vfs_read failed: " +
                        errno_text(attach_errno);
    return;
  }
  f.trampolines = true;
}

}  // namespace

KernelFeatures KernelFeatures::probe(Trampolines trampolines) {
  KernelFeatures f;
  utsname u{};
  if (uname(&u) == 0) f.release = u.release;
  f.btf_vmlinux = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
  check_privilege(f);
  find_cgroup_v2(f);
  if (auto hz = kernel_hz(f.release))
    f.hz = *hz;
  else
    f.hz_note = hz.error().message;
  if (btf* vmlinux = f.btf_vmlinux ? btf__load_vmlinux_btf() : nullptr) {
    read_btf_facts(f, vmlinux);
    read_nfs4_module_facts(f, vmlinux);
    if (trampolines == Trampolines::kTry)
      probe_trampolines(f, vmlinux);
    else
      f.trampoline_note = "fentry not tried: the syscall probes were asked for";
    btf__free(vmlinux);
  } else {
    f.trampoline_note = "fentry not tried: the vmlinux BTF cannot be read";
  }
  return f;
}

Expected<void> nfs_tracing_available(const std::string& sysfs_root) {
  auto exists = [&](const std::string& rel) {
    return access((sysfs_root + rel).c_str(), F_OK) == 0;
  };
  for (const char* module : {"sunrpc", "nfs"}) {
    const std::string name(module);
    if (!exists("/module/" + name))
      return make_error(fmt::format(
          "the {} module is not loaded (no NFS mount yet): the NFS stages start once one appears",
          name));
    // A loaded module has an initstate file; a built-in one does not, and
    // its types are in vmlinux's BTF.
    const bool built_in = !exists("/module/" + name + "/initstate");
    if (!built_in && !exists("/kernel/btf/" + name))
      return make_error(fmt::format(
          "the {} module has no BTF ({}/kernel/btf/{} missing; the kernel needs "
          "CONFIG_DEBUG_INFO_BTF_MODULES): the NFS stages are off, /proc/self/mountstats still "
          "gives per-mount NFS figures",
          name, sysfs_root, name));
  }
  return {};
}

}  // namespace ckpt
