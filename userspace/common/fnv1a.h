// FNV-1a (64-bit): a hash that is the same on every platform and standard
// library (std::hash is not), for checksums written to files and seeds that
// must reproduce. http://www.isthe.com/chongo/tech/comp/fnv/
#pragma once

#include <cstdint>
#include <string_view>

namespace ckpt {

inline constexpr std::uint64_t kFnv1aOffset = 1469598103934665603ULL;
inline constexpr std::uint64_t kFnv1aPrime = 1099511628211ULL;

// One value folded into a running hash (start from kFnv1aOffset).
constexpr std::uint64_t fnv1a_step(std::uint64_t hash, std::uint64_t value) {
  return (hash ^ value) * kFnv1aPrime;
}

constexpr std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash = kFnv1aOffset) {
  for (unsigned char c : bytes) hash = fnv1a_step(hash, c);
  return hash;
}

}  // namespace ckpt
