// What this machine can do, checked independently of the code under test
// (issue 40): a test skips only for a missing privilege or missing hardware
// or kernel capability, and decides so with these checks, never with the
// answer of the code it tests (a broken feature probe must fail tests, not
// turn them into skips). Each check says why not in words that start with a
// reason listed in tests/allowed_skips.txt; scripts/test.sh fails on a skip
// whose reason is not listed there.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace ckpt::test {

// Empty when the file system holding `dir` takes an O_DIRECT write of one
// aligned 4 KiB block; otherwise why not, starting "the file system refuses
// O_DIRECT" (a storage capability: tmpfs before 6.6, some FUSE and overlay
// mounts). Written with the test's own open and write, not the workload's.
inline std::string odirect_refusal(const std::string& dir) {
  const std::string path = dir + "/.o_direct_check";
  const int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_DIRECT | O_CLOEXEC, 0600);
  if (fd < 0) return "the file system refuses O_DIRECT under " + dir + ": " + std::strerror(errno);
  void* block = nullptr;
  std::string why;
  if (posix_memalign(&block, 4096, 4096) != 0) {
    why = "the file system refuses O_DIRECT: no aligned buffer";
  } else {
    std::memset(block, 0, 4096);
    if (write(fd, block, 4096) != 4096)
      why = "the file system refuses O_DIRECT under " + dir + ": " + std::strerror(errno);
    std::free(block);
  }
  close(fd);
  unlink(path.c_str());
  return why;
}

// Where a cgroup v2 hierarchy is mounted ("" when none is), from
// /proc/self/mountinfo: the fifth field is the mount point, the file
// system type follows the " - " separator.
inline std::string cgroup2_mount_point() {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    const size_t sep = line.find(" - ");
    if (sep == std::string::npos || line.compare(sep + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, sep));
    std::string field;
    for (int i = 0; i < 5 && fields >> field; ++i) {
    }
    return field;
  }
  return {};
}

}  // namespace ckpt::test
