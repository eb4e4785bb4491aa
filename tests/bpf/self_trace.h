// The real-kernel tests in which the test process is the job: it starts the
// job-I/O probes on itself (its tgid set by hand, as `attach` does), makes
// calls whose answers it knows, and reads back what the kernel recorded.
#pragma once

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "common/expected.h"
#include "probes/kernel_features.h"
#include "probes/probe_manager.h"
#include "tests/bpf/fentry_check.h"

namespace ckpt::test {

// Why a test cannot trace in `mode` here ("" when it can): eBPF needs root,
// and the file layer a kernel that attaches fentry programs (decided by an
// independent check, not by the product's feature probe; the tests/vm guests
// run it).
inline std::string cannot_trace_here(RequestedProbeMode mode) {
  if (geteuid() != 0) return "needs root to load eBPF programs";
  if (mode == RequestedProbeMode::FileLayer)
    if (std::string why = fentry_refusal(); !why.empty())
      return why + " (the file layer runs in the tests/vm guests)";
  return "";
}

// Both probe modes, as a parameterised suite runs them: Modes/X.Test/Syscall
// and Modes/X.Test/FileLayer.
inline const auto kBothModes =
    ::testing::Values(RequestedProbeMode::Syscall, RequestedProbeMode::FileLayer);
inline std::string mode_name(const ::testing::TestParamInfo<RequestedProbeMode>& info) {
  return info.param == RequestedProbeMode::Syscall ? "Syscall" : "FileLayer";
}

// A file as the records name it, and as user space does.
struct FileIdentity {
  uint64_t kernel_dev = 0;  // the encoding records carry: major << 20 | minor
  uint64_t ino = 0;
  FileId user;  // what user space names it by
};

inline FileIdentity identity_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path << ": " << std::strerror(errno);
  FileIdentity id;
  id.kernel_dev = (static_cast<uint64_t>(major(st.st_dev)) << 20) | minor(st.st_dev);
  id.ino = st.st_ino;
  id.user = FileId{st.st_dev, st.st_ino};
  return id;
}

// The job-I/O probes in `mode` (no TCP or NFS probes), tracing this process;
// every jobio record goes to `on_record`.
inline Expected<std::unique_ptr<ProbeManager>> trace_this_process(
    RequestedProbeMode mode, std::function<void(const void*, size_t)> on_record) {
  ProbeOptions options;
  options.tcp = false;
  options.nfs = false;
  options.self_tgid = 0;  // this test is the job
  options.probe_mode = mode;
  auto started = ProbeManager::start(
      options, KernelFeatures::probe(), std::move(on_record), [](const void*, size_t) {},
      [](const void*, size_t) {});
  if (!started) return started;
  if (!(*started)->trace_tgid(static_cast<uint32_t>(getpid())))
    return make_error("the probes could not trace this process");
  return started;
}

// Everything recorded up to now delivered: a thread's folds flush when it
// leaves the CPU, which the sleep makes this one do.
inline void drain(ProbeManager& probes) {
  usleep(20'000);
  probes.sync(200);
  for (int i = 0; i < 5; ++i) {
    auto got = probes.poll(50);
    if (!got || *got == 0) break;
  }
}

}  // namespace ckpt::test
