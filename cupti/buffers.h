// The activity buffers handed to CUPTI: bounded in number and size, aligned
// as CUPTI requires, and reused.
//
// CUPTI asks for an empty buffer whenever it needs one
// (CUpti_BuffersCallbackRequestFunc) and hands it back full, or at a flush,
// through the completion callback. cupti_activity.h: "The callback function
// can decline the request by setting *buffer to NULL. In this case CUPTI may
// drop activity records" (and counts them: cuptiActivityGetNumDroppedRecords).
// That is what happens past the cap: a job whose copies outrun the flush
// loses records, counted, rather than gaining unbounded memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace ckpt::cupti {

struct BufferConfig {
  static constexpr size_t kDefaultBufferBytes = size_t{4} << 20;  // 4 MiB: ~43,000 copy records
  static constexpr size_t kDefaultMaxBuffers = 16;
  // Bounds for the environment's values: at least one buffer of 1 MiB, at
  // most 1 GiB in all.
  static constexpr size_t kMaxBuffers = 1024;
  static constexpr size_t kMaxBufferMib = 256;
  static constexpr size_t kMaxTotalMib = 1024;

  size_t buffer_bytes = kDefaultBufferBytes;
  size_t max_buffers = kDefaultMaxBuffers;
};

struct BufferConfigResult {
  BufferConfig config;  // the defaults where a value was refused
  std::string error;    // empty when every value given was valid
};

// CKPTSCOPE_CUPTI_BUFFERS (how many at most) and CKPTSCOPE_CUPTI_BUFFER_MIB
// (each one's size), either null when unset. A value that is not a whole
// number in range is refused, named in `error`, and its default kept.
BufferConfigResult parse_buffer_config(const char* buffers, const char* buffer_mib);

class BufferPool {
 public:
  // What CUPTI asked for: CUPTI records are ACTIVITY_RECORD_ALIGNMENT (8)
  // aligned, and it requires the buffer to be too (cupti_activity.h).
  struct Buffer {
    uint8_t* data = nullptr;
    size_t size = 0;
  };

  explicit BufferPool(BufferConfig config);
  // Frees every buffer: only when CUPTI holds none (the library never
  // destroys its pool; tests do, once every buffer is back).
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer for CUPTI: a returned one if any, else a new one while fewer
  // than max_buffers exist. Past the cap (or when memory runs out) an empty
  // Buffer, counted in refused().
  Buffer acquire();
  // A buffer CUPTI handed back: kept for the next acquire(). A pointer this
  // pool did not hand out is ignored (and counted in foreign()).
  void release(uint8_t* data);

  [[nodiscard]] const BufferConfig& config() const { return config_; }
  [[nodiscard]] uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }
  [[nodiscard]] uint64_t foreign() const { return foreign_.load(std::memory_order_relaxed); }
  [[nodiscard]] size_t outstanding() const;  // held by CUPTI now
  [[nodiscard]] size_t allocated() const;    // ever allocated (at most max_buffers)

 private:
  const BufferConfig config_;
  mutable std::mutex mu_;
  std::vector<uint8_t*> all_;   // every buffer allocated
  std::vector<uint8_t*> free_;  // returned, ready for reuse
  size_t outstanding_ = 0;
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> foreign_{0};
};

}  // namespace ckpt::cupti
