#include "tools/workload/pattern.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "tools/workload/sys.h"

namespace ckpt::workload {
namespace {

// SplitMix64's finaliser: cheap, and every input bit affects every output bit,
// so consecutive word indices give unrelated words.
constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

constexpr uint64_t word_at(uint64_t key, uint64_t index) {
  return mix64(key + index * 0x9E3779B97F4A7C15ULL);
}

}  // namespace

uint64_t shard_key(uint64_t seed, uint32_t checkpoint, uint32_t shard) {
  return mix64(mix64(seed) ^ ((static_cast<uint64_t>(checkpoint) << 32) | shard));
}

void fill_pattern(uint64_t key, uint64_t offset, std::span<std::byte> dst) {
  std::byte* out = dst.data();
  size_t left = dst.size();
  uint64_t index = offset / 8;
  const size_t skew = offset % 8;
  if (skew != 0 && left > 0) {
    const uint64_t word = word_at(key, index++);
    const size_t n = std::min(left, 8 - skew);
    std::memcpy(out, reinterpret_cast<const std::byte*>(&word) + skew, n);
    out += n;
    left -= n;
  }
  while (left >= 8) {
    const uint64_t word = word_at(key, index++);
    std::memcpy(out, &word, 8);
    out += 8;
    left -= 8;
  }
  if (left > 0) {
    const uint64_t word = word_at(key, index);
    std::memcpy(out, &word, left);
  }
}

void Checksum::mix(uint64_t word) {
  state_ = std::rotl(state_ ^ (word * 0x87C37B91114253D5ULL), 31) * 0x4CF5AD432745937FULL;
}

void Checksum::update(std::span<const std::byte> data) {
  const std::byte* in = data.data();
  size_t left = data.size();
  length_ += left;
  if (tail_size_ > 0) {
    const size_t n = std::min(left, 8 - tail_size_);
    std::memcpy(tail_.data() + tail_size_, in, n);
    tail_size_ += n;
    in += n;
    left -= n;
    if (tail_size_ < 8) return;
    uint64_t word;
    std::memcpy(&word, tail_.data(), 8);
    mix(word);
    tail_size_ = 0;
  }
  while (left >= 8) {
    uint64_t word;
    std::memcpy(&word, in, 8);
    mix(word);
    in += 8;
    left -= 8;
  }
  std::memcpy(tail_.data(), in, left);
  tail_size_ = left;
}

uint64_t Checksum::digest() const {
  uint64_t state = state_;
  if (tail_size_ > 0) {
    uint64_t word = 0;
    std::memcpy(&word, tail_.data(), tail_size_);
    state = std::rotl(state ^ (word * 0x87C37B91114253D5ULL), 31) * 0x4CF5AD432745937FULL;
  }
  // Folding in the length keeps a trailing zero byte from going unnoticed.
  return mix64(state ^ length_);
}

uint64_t burn_cpu(uint64_t ms, uint64_t key, std::span<std::byte> scratch) {
  if (ms == 0) return 0;
  const uint64_t budget = ms * 1'000'000ULL;
  const uint64_t start = thread_cpu_ns();
  // Small chunks keep the overshoot past the budget to microseconds.
  const size_t chunk = std::min<size_t>(scratch.size(), 64 * 1024);
  uint64_t offset = 0;
  uint64_t spent = 0;
  while (spent < budget) {
    fill_pattern(key ^ 0x5EC0DEULL, offset, scratch.first(chunk));
    offset += chunk;
    spent = thread_cpu_ns() - start;
  }
  return spent;
}

}  // namespace ckpt::workload
