#include "probes/kernel_features.h"

#include <sys/mount.h>
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

bool has_events(const std::string& root) {
  std::error_code ec;
  return fs::is_directory(fs::path(root) / "events", ec);
}

// libbpf attaches syscalls:* tracepoints through perf_event_open, which needs
// the event id from tracefs; a minimal system may not have tracefs mounted.
void find_or_mount_tracefs(KernelFeatures& f) {
  for (const char* root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    if (has_events(root)) {
      f.tracefs = true;
      f.tracefs_path = root;
      return;
    }
  }
  if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0 &&
      has_events("/sys/kernel/tracing")) {
    f.tracefs = true;
    f.tracefs_path = "/sys/kernel/tracing";
    f.tracefs_note = "mounted tracefs at /sys/kernel/tracing";
    return;
  }
  f.tracefs_note =
      fmt::format("tracefs is not mounted and mounting it failed: {}", std::strerror(errno));
}

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
  if (f.bpf_privileged) find_or_mount_tracefs(f);
  find_cgroup_v2(f);
  if (f.tracefs) {
    std::error_code ec;
    for (const auto& entry :
         fs::directory_iterator(fs::path(f.tracefs_path) / "events/syscalls", ec))
      f.syscall_events.insert(entry.path().filename().string());
  }
  return f;
}

}  // namespace ckpt
