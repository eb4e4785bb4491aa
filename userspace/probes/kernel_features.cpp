#include "probes/kernel_features.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

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

}  // namespace

KernelFeatures KernelFeatures::probe() {
  KernelFeatures f;
  utsname u{};
  if (uname(&u) == 0) f.release = u.release;
  f.btf_vmlinux = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
  check_privilege(f);
  find_cgroup_v2(f);
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
