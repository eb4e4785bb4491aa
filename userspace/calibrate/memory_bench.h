// The node's memory-copy bandwidth, the ceiling of the serialize stage: every
// CPU this process may run on copying at once (a part each, which also faults
// the buffers in where each thread's part will live), then one thread
// copying the whole, far larger than the caches; best of several rounds.
// The buffers are faulted in before the first timed round, and one untimed
// round warms each copy, so neither page faults nor first-touch zeroing are
// in the figure. Bounded in memory: refused when twice the bytes would take
// more than half of what the kernel says is available.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/expected.h"

namespace ckpt {

struct MemoryBenchOptions {
  uint64_t bytes = 256ull << 20;  // copied per round (source and target each this big)
  unsigned rounds = 5;            // timed rounds of each; the best is kept
  unsigned threads = 0;           // 0: every CPU in this process's affinity mask
  // Set (by a signal handler) to stop between rounds: an error comes back.
  const std::atomic<bool>* stop = nullptr;
  // MemAvailable in bytes (/proc/meminfo when not given); a seam for tests.
  std::function<Expected<uint64_t>()> available_bytes;
};

struct MemoryBenchResult {
  double one_thread_Bps = 0;
  double all_threads_Bps = 0;
  unsigned threads = 0;
  uint64_t bytes = 0;
  unsigned rounds = 0;
  std::vector<double> one_thread_rounds;  // each round's figure, in order
  std::vector<double> all_threads_rounds;
  // One thread copying into and out of the page cache as write(2) and
  // read(2) do, from and into a 1 MiB buffer reused call after call:
  // host_io's ceiling. The buffer stays in the CPU's caches, as a job's
  // does, so this outruns a copy between two buffers larger than the caches.
  double page_cache_write_Bps = 0;
  double page_cache_read_Bps = 0;
  std::vector<double> page_cache_write_rounds;
  std::vector<double> page_cache_read_rounds;
};

// MemAvailable from /proc/meminfo, in bytes.
Expected<uint64_t> meminfo_available_bytes();

Expected<MemoryBenchResult> measure_memory_copy(const MemoryBenchOptions& options);

}  // namespace ckpt
