// The cheapest system call in a loop: what tracing costs a call that is no
// I/O at all (the exporter's syscall-mode probes still run on it; the
// file-layer ones never see it). Prints the mean time per call, measured
// inside the process with CLOCK_MONOTONIC.
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  const long calls = argc == 2 ? std::atol(argv[1]) : 0;
  if (calls <= 0) {
    std::fprintf(stderr, "usage: getppid_loop CALLS (a positive number)\n");
    return 2;
  }
  const uint64_t t0 = now_ns();
  // syscall(2) directly: glibc may not cache getppid, but say so explicitly.
  for (long i = 0; i < calls; ++i) syscall(SYS_getppid);
  const uint64_t t1 = now_ns();
  std::printf("{\"getppid_ns_per_call\": %.1f}\n",
              static_cast<double>(t1 - t0) / static_cast<double>(calls));
  return 0;
}
