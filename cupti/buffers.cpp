#include "buffers.h"

#include <cupti.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ckpt::cupti {
namespace {

// A whole decimal number in [lo, hi], or 0 (never in range: lo >= 1).
size_t parse_whole(const char* text, size_t lo, size_t hi) {
  if (!text || !*text) return 0;
  for (const char* p = text; *p; ++p)
    if (*p < '0' || *p > '9') return 0;  // no sign, no space, no unit, no hex
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return 0;
  return static_cast<size_t>(v);
}

}  // namespace

BufferConfigResult parse_buffer_config(const char* buffers, const char* buffer_mib) {
  BufferConfigResult r;
  auto refuse = [&r](const std::string& why) {
    if (!r.error.empty()) r.error += "; ";
    r.error += why;
  };
  if (buffers) {
    if (const size_t n = parse_whole(buffers, 1, BufferConfig::kMaxBuffers))
      r.config.max_buffers = n;
    else
      refuse("CKPTSCOPE_CUPTI_BUFFERS=\"" + std::string(buffers) +
             "\" is not a whole number in 1.." + std::to_string(BufferConfig::kMaxBuffers) +
             ": using " + std::to_string(BufferConfig::kDefaultMaxBuffers));
  }
  if (buffer_mib) {
    if (const size_t mib = parse_whole(buffer_mib, 1, BufferConfig::kMaxBufferMib))
      r.config.buffer_bytes = mib << 20;
    else
      refuse("CKPTSCOPE_CUPTI_BUFFER_MIB=\"" + std::string(buffer_mib) +
             "\" is not a whole number in 1.." + std::to_string(BufferConfig::kMaxBufferMib) +
             ": using " + std::to_string(BufferConfig::kDefaultBufferBytes >> 20));
  }
  const size_t total_mib = r.config.max_buffers * (r.config.buffer_bytes >> 20);
  if (total_mib > BufferConfig::kMaxTotalMib) {
    refuse("CKPTSCOPE_CUPTI_BUFFERS x CKPTSCOPE_CUPTI_BUFFER_MIB = " + std::to_string(total_mib) +
           " MiB is more than " + std::to_string(BufferConfig::kMaxTotalMib) +
           " MiB: using the defaults");
    r.config = BufferConfig{};
  }
  return r;
}

BufferPool::BufferPool(BufferConfig config) : config_(config) {
  all_.reserve(config_.max_buffers);
  free_.reserve(config_.max_buffers);
}

BufferPool::~BufferPool() {
  for (uint8_t* b : all_) std::free(b);
}

BufferPool::Buffer BufferPool::acquire() {
  std::lock_guard lock(mu_);
  if (!free_.empty()) {
    uint8_t* b = free_.back();
    free_.pop_back();
    ++outstanding_;
    return {b, config_.buffer_bytes};
  }
  if (all_.size() < config_.max_buffers) {
    // aligned_alloc needs the size to be a multiple of the alignment: whole
    // MiB always are.
    static_assert(ACTIVITY_RECORD_ALIGNMENT == 8);
    auto* b =
        static_cast<uint8_t*>(std::aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, config_.buffer_bytes));
    if (b) {
      all_.push_back(b);
      ++outstanding_;
      return {b, config_.buffer_bytes};
    }
  }
  refused_.fetch_add(1, std::memory_order_relaxed);
  return {};
}

void BufferPool::release(uint8_t* data) {
  if (!data) return;
  std::lock_guard lock(mu_);
  if (std::find(all_.begin(), all_.end(), data) == all_.end() ||
      std::find(free_.begin(), free_.end(), data) != free_.end()) {
    foreign_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  free_.push_back(data);
  --outstanding_;
}

size_t BufferPool::outstanding() const {
  std::lock_guard lock(mu_);
  return outstanding_;
}

size_t BufferPool::allocated() const {
  std::lock_guard lock(mu_);
  return all_.size();
}

}  // namespace ckpt::cupti
