// One clock everywhere: CLOCK_MONOTONIC nanoseconds, the clock of
// bpf_ktime_get_ns(). Wall time is read once, at the edge, as an anchor.
#pragma once

#include <time.h>

#include <cstdint>

namespace ckpt {

inline uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace ckpt
