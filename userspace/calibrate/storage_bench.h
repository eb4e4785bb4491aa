// The sequential bandwidth of the file system under a directory, as a
// checkpoint sees it: several streams write a file each, in parallel, then
// read them back. O_DIRECT where the file system takes it, so neither
// direction is the page cache's speed; otherwise buffered writes whose
// write-back is kept going and waited for (fdatasync is inside the timing),
// and the cache dropped before the reads, and the result says so. Bounded in
// bytes and in time, refused where the file system has less than twice the
// bytes free, and nothing is left behind: the files are unlinked as soon as
// they are open, and their directory is removed whatever happens.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/expected.h"

namespace ckpt {

struct StorageBenchOptions {
  std::string dir;
  uint64_t bytes = 1ull << 30;  // written in all, split evenly over the streams
  double seconds = 30;          // each direction gets at most half
  unsigned streams = 4;
  uint64_t block_bytes = 1ull << 20;  // one write or read call; a multiple of 4096
  // Set (by a signal handler) to stop early: the files go, an error comes back.
  const std::atomic<bool>* stop = nullptr;
  // The bytes an unprivileged writer may still use under a directory
  // (statvfs f_bavail x f_frsize when not given); a seam for tests.
  std::function<Expected<uint64_t>(const std::string&)> free_bytes;
};

struct StorageBenchResult {
  double write_Bps = 0;
  double read_Bps = 0;
  uint64_t bytes_written = 0;
  uint64_t bytes_read = 0;
  double write_seconds = 0;
  double read_seconds = 0;
  unsigned streams = 0;
  uint64_t block_bytes = 0;
  bool direct = false;
  std::string io;  // "O_DIRECT", or "buffered + fdatasync (O_DIRECT: <why not>)"
  // Of the data read back, the part the page cache still held when the
  // reads began (buffered only; tmpfs keeps it all: its storage is memory).
  double read_cached_fraction = 0;
  std::vector<std::string> notes;  // a phase cut short by the time limit, stale files removed
};

// Free bytes under `dir` from statvfs.
Expected<uint64_t> statvfs_free_bytes(const std::string& dir);

Expected<StorageBenchResult> measure_storage(const StorageBenchOptions& options);

// The prefix of measure_storage's working directories; one left by a run on
// this host whose process is gone is removed by the next run in `dir`.
inline constexpr const char* kBenchDirPrefix = ".ckptscope-calibrate-";

}  // namespace ckpt
