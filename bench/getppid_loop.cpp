// The cheapest system calls in a loop: what tracing costs a call that is no
// I/O at all (the exporter's syscall-mode probes still run on it; the
// file-layer ones never see it). `getppid` by default; `ioctl` is
// ioctl(FIONREAD) on a pipe, the path every ioctl of a traced thread takes
// (a GPU driver's thousands a second), which the syscall probes now look at
// for reflinks (FICLONE). Prints the mean time per call, measured inside the
// process with CLOCK_MONOTONIC.
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  const long calls = argc >= 2 ? std::atol(argv[1]) : 0;
  const char* which = argc == 3 ? argv[2] : "getppid";
  const bool ioctls = std::strcmp(which, "ioctl") == 0;
  if (calls <= 0 || argc > 3 || (!ioctls && std::strcmp(which, "getppid") != 0)) {
    std::fprintf(stderr, "usage: getppid_loop CALLS [getppid|ioctl] (CALLS a positive number)\n");
    return 2;
  }
  int fds[2] = {-1, -1};
  if (ioctls && pipe(fds) != 0) {
    std::perror("getppid_loop: pipe");
    return 1;
  }
  int unread = 0;
  const uint64_t t0 = now_ns();
  // syscall(2) directly: glibc may not cache getppid, but say so explicitly.
  for (long i = 0; i < calls; ++i) {
    if (ioctls)
      ioctl(fds[0], FIONREAD, &unread);
    else
      syscall(SYS_getppid);
  }
  const uint64_t t1 = now_ns();
  std::printf("{\"%s_ns_per_call\": %.1f}\n", which,
              static_cast<double>(t1 - t0) / static_cast<double>(calls));
  return 0;
}
