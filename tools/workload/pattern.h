// Shard contents: deterministic pseudo-random bytes that are a pure function
// of (seed, checkpoint, shard, offset). A load in a later run, another
// process or another thread regenerates exactly what the save wrote, so
// verification needs no side channel. Random bytes also defeat compression
// and deduplication in the storage under test.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ckpt::workload {

// The stream key of one shard of one checkpoint.
uint64_t shard_key(uint64_t seed, uint32_t checkpoint, uint32_t shard);

// Fills dst with the bytes at [offset, offset + dst.size()) of the stream.
// Any offset and length work, so block sizes need not be multiples of 8.
void fill_pattern(uint64_t key, uint64_t offset, std::span<std::byte> dst);

// A 64-bit, non-cryptographic checksum whose value depends only on the bytes
// fed, not on how they were split into update() calls: a file hashed while
// written in 1 MiB blocks matches the same file hashed while read in 4 KiB.
class Checksum {
 public:
  void update(std::span<const std::byte> data);
  [[nodiscard]] uint64_t digest() const;

 private:
  void mix(uint64_t word);

  uint64_t state_ = 0x9E3779B97F4A7C15ULL;
  uint64_t length_ = 0;
  std::array<std::byte, 8> tail_{};
  size_t tail_size_ = 0;
};

// Burns ms of the calling thread's CPU time doing real work (generating the
// pattern into scratch), the way pickling a state dict costs CPU before the
// first write. Returns the thread CPU time actually spent.
uint64_t burn_cpu(uint64_t ms, uint64_t key, std::span<std::byte> scratch);

}  // namespace ckpt::workload
