// Saving and loading one shard: the calls whose figures the profiler must
// reproduce. Plain write(2)/read(2) in --block-size pieces, every call
// checked and counted.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "tools/workload/options.h"
#include "tools/workload/results.h"
#include "tools/workload/tcp.h"

namespace ckpt::workload {

// 4096-aligned memory (what O_DIRECT needs), freed with free(3).
class AlignedBuffer {
 public:
  static std::optional<AlignedBuffer> allocate(size_t size);
  [[nodiscard]] std::span<std::byte> span() const { return {data_.get(), size_}; }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  AlignedBuffer(std::byte* data, size_t size) : data_(data), size_(size) {}

  std::unique_ptr<std::byte, Free> data_;
  size_t size_ = 0;
};

// One thread's memory: the I/O buffer, and for loads the expected bytes.
struct ThreadBuffers {
  AlignedBuffer io;
  std::optional<AlignedBuffer> expected;
};

struct ShardTask {
  uint32_t checkpoint = 0;
  uint32_t shard = 0;
  uint64_t size = 0;
  std::string path;  // final path, absolute; "" with --tcp-only
  uint64_t key = 0;  // pattern stream key
};

// Drops the file's clean pages from the page cache (posix_fadvise
// POSIX_FADV_DONTNEED): its next read goes to the storage.
std::optional<IoFailure> evict_file(const std::string& path);

// Saves one shard: serialize burn, then the file (unless --tcp-only) and the
// TCP stream (when stream != nullptr), block by block. file/stream_result are
// filled as far as the work got, also on failure. Stops early, without a
// failure, once cancel is set by a sibling that failed.
std::optional<IoFailure> save_shard(const Options& options, const ShardTask& task,
                                    ThreadBuffers& buffers, TcpStream* stream,
                                    const std::atomic<bool>& cancel, FileResult& file,
                                    StreamResult& stream_result);

// Loads one shard and checks every byte against the pattern.
std::optional<IoFailure> load_shard(const Options& options, const ShardTask& task,
                                    ThreadBuffers& buffers, const std::atomic<bool>& cancel,
                                    FileResult& file);

}  // namespace ckpt::workload
