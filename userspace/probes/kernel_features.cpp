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

}  // namespace ckpt
