#include "tools/workload/shard_io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tools/workload/pattern.h"
#include "tools/workload/sys.h"

namespace ckpt::workload {
namespace {

// Closes on the failure paths; the success path calls close() itself so that
// a failing close(2) (NFS reports write-back errors there) is seen.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  [[nodiscard]] int get() const { return fd_; }
  int close() {
    const int fd = fd_;
    fd_ = -1;
    // Linux frees the descriptor even when close fails, EINTR included, so
    // a retry could close someone else's descriptor.
    return ::close(fd);
  }

 private:
  int fd_;
};

bool aligned(uint64_t value) { return value % kDirectAlign == 0; }

// O_DIRECT needs the buffer, the file offset and the length aligned. The last
// block of an odd-sized shard (or the rest after a short call) cannot be, so
// the file drops O_DIRECT for the remainder, as real checkpoint writers do
// for their unaligned tail.
std::optional<IoFailure> fit_direct(int fd, bool& direct, uint64_t offset, const std::byte* ptr,
                                    size_t len, const std::string& path) {
  if (!direct) return std::nullopt;
  if (aligned(offset) && aligned(len) && aligned(reinterpret_cast<uintptr_t>(ptr))) {
    return std::nullopt;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return IoFailure{"fcntl F_GETFL", path, errno, ""};
  if (::fcntl(fd, F_SETFL, flags & ~O_DIRECT) != 0) {
    return IoFailure{"fcntl F_SETFL", path, errno, ""};
  }
  direct = false;
  return std::nullopt;
}

IoFailure open_failure(const Options& options, const std::string& path, int err) {
  if (options.o_direct && err == EINVAL) {
    // tmpfs before Linux 6.6, and some FUSE and network filesystems, refuse
    // O_DIRECT at open. That is the user's setup to change, hence exit 2.
    return IoFailure{"--o-direct", "", 0,
                     fmt::format("the filesystem holding {} refuses O_DIRECT (open: {}); run "
                                 "without --o-direct or use another --dir",
                                 path, errno_text(err)),
                     true};
  }
  return IoFailure{"open", path, err, ""};
}

std::optional<IoFailure> save_file_and_stream(const Options& options, const ShardTask& task,
                                              std::span<std::byte> buffer, TcpStream* stream,
                                              const std::atomic<bool>& cancel, Checksum& sum,
                                              FileResult& file, StreamResult& stream_result) {
  const bool to_file = !options.tcp_only;
  const std::string& open_path = file.tmp_path.empty() ? task.path : file.tmp_path;
  int fd_value = -1;
  if (to_file) {
    const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (options.o_direct ? O_DIRECT : 0);
    fd_value = ::open(open_path.c_str(), flags, 0644);
    if (fd_value < 0) return open_failure(options, open_path, errno);
  }
  Fd fd(fd_value);
  bool direct = options.o_direct;

  for (uint64_t offset = 0; offset < task.size;) {
    if (cancel.load(std::memory_order_relaxed)) return std::nullopt;
    const size_t len = static_cast<size_t>(std::min<uint64_t>(buffer.size(), task.size - offset));
    const std::span<std::byte> block = buffer.first(len);
    fill_pattern(task.key, offset, block);
    if (to_file) {
      size_t done = 0;
      while (done < len) {
        const std::byte* ptr = block.data() + done;
        if (auto failure =
                fit_direct(fd.get(), direct, offset + done, ptr, len - done, open_path)) {
          return failure;
        }
        const ssize_t n = ::write(fd.get(), ptr, len - done);
        if (n < 0) {
          if (errno == EINTR) continue;
          return IoFailure{"write", open_path, errno, ""};
        }
        if (n == 0) return IoFailure{"write", open_path, 0, "write(2) wrote 0 bytes"};
        ++file.calls;
        file.bytes += static_cast<uint64_t>(n);
        sum.update({ptr, static_cast<size_t>(n)});
        done += static_cast<size_t>(n);
      }
    }
    if (stream != nullptr) {
      if (auto failure =
              stream->send_all(block, stream_result.bytes_sent, stream_result.send_calls)) {
        return failure;
      }
    }
    offset += len;
  }
  if (!to_file) return std::nullopt;

  if (options.fsyncs(task.checkpoint)) {
    int rc;
    do {
      rc = ::fsync(fd.get());
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) return IoFailure{"fsync", open_path, errno, ""};
    ++file.fsync_calls;
  }
  if (fd.close() != 0 && errno != EINTR) return IoFailure{"close", open_path, errno, ""};
  if (!file.tmp_path.empty() && ::rename(file.tmp_path.c_str(), task.path.c_str()) != 0) {
    return IoFailure{"rename", fmt::format("{} -> {}", file.tmp_path, task.path), errno, ""};
  }
  return std::nullopt;
}

std::optional<IoFailure> evict_file_from_cache(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return IoFailure{"open", path, errno, "evicting it from the page cache"};
  if (int rc = ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED); rc != 0)
    return IoFailure{"posix_fadvise", path, rc, "evicting it from the page cache"};
  return std::nullopt;
}

std::optional<IoFailure> load_file(const Options& options, const ShardTask& task,
                                   ThreadBuffers& buffers, const std::atomic<bool>& cancel,
                                   Checksum& sum, FileResult& file) {
  const int fd_value =
      ::open(task.path.c_str(), O_RDONLY | O_CLOEXEC | (options.o_direct ? O_DIRECT : 0));
  if (fd_value < 0) return open_failure(options, task.path, errno);
  Fd fd(fd_value);
  bool direct = options.o_direct;

  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return IoFailure{"fstat", task.path, errno, ""};
  if (static_cast<uint64_t>(st.st_size) != task.size) {
    return IoFailure{
        "verify", task.path, 0,
        fmt::format("file has {} bytes, the checkpoint saved {}", st.st_size, task.size)};
  }

  const std::span<std::byte> buffer = buffers.io.span();
  const std::span<std::byte> expected = buffers.expected->span();
  for (uint64_t offset = 0; offset < task.size;) {
    if (cancel.load(std::memory_order_relaxed)) return std::nullopt;
    const size_t len = static_cast<size_t>(std::min<uint64_t>(buffer.size(), task.size - offset));
    if (auto failure = fit_direct(fd.get(), direct, offset, buffer.data(), len, task.path)) {
      return failure;
    }
    const ssize_t n = ::read(fd.get(), buffer.data(), len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoFailure{"read", task.path, errno, ""};
    }
    if (n == 0) {
      return IoFailure{
          "verify", task.path, 0,
          fmt::format("file ended at byte {}, the checkpoint saved {}", offset, task.size)};
    }
    const auto got = static_cast<size_t>(n);
    ++file.calls;
    file.bytes += got;
    sum.update(buffer.first(got));
    fill_pattern(task.key, offset, expected.first(got));
    if (std::memcmp(buffer.data(), expected.data(), got) != 0) {
      const auto mismatch = std::mismatch(buffer.begin(), buffer.begin() + got, expected.begin());
      const auto at = offset + static_cast<uint64_t>(mismatch.first - buffer.begin());
      return IoFailure{"verify", task.path, 0,
                       fmt::format("content differs from what was saved at byte {}", at)};
    }
    offset += got;
  }
  if (fd.close() != 0 && errno != EINTR) return IoFailure{"close", task.path, errno, ""};
  return std::nullopt;
}

}  // namespace

std::optional<IoFailure> evict_file(const std::string& path) { return evict_file_from_cache(path); }

void AlignedBuffer::Free::operator()(std::byte* p) const { std::free(p); }

std::optional<AlignedBuffer> AlignedBuffer::allocate(size_t size) {
  void* p = nullptr;
  if (posix_memalign(&p, kDirectAlign, std::max<size_t>(size, 1)) != 0) return std::nullopt;
  return AlignedBuffer(static_cast<std::byte*>(p), size);
}

std::optional<IoFailure> save_shard(const Options& options, const ShardTask& task,
                                    ThreadBuffers& buffers, TcpStream* stream,
                                    const std::atomic<bool>& cancel, FileResult& file,
                                    StreamResult& stream_result) {
  file.shard = stream_result.shard = task.shard;
  file.pid = stream_result.pid = static_cast<int32_t>(getpid());
  file.tid = stream_result.tid = static_cast<int32_t>(gettid());
  file.path = task.path;
  if (options.rename_commit) file.tmp_path = task.path + ".tmp";
  file.o_direct = options.o_direct;

  file.serialize_cpu_ns = burn_cpu(options.serialize_ms, task.key, buffers.io.span());

  file.start_ns = stream_result.start_ns = monotonic_ns();
  Checksum sum;
  auto failure = save_file_and_stream(options, task, buffers.io.span(), stream, cancel, sum, file,
                                      stream_result);
  file.end_ns = stream_result.end_ns = monotonic_ns();
  file.checksum = sum.digest();
  file.complete = !failure && file.bytes == task.size;
  return failure;
}

std::optional<IoFailure> load_shard(const Options& options, const ShardTask& task,
                                    ThreadBuffers& buffers, const std::atomic<bool>& cancel,
                                    FileResult& file) {
  file.shard = task.shard;
  file.pid = static_cast<int32_t>(getpid());
  file.tid = static_cast<int32_t>(gettid());
  file.path = task.path;
  file.o_direct = options.o_direct;

  file.start_ns = monotonic_ns();
  Checksum sum;
  auto failure = load_file(options, task, buffers, cancel, sum, file);
  file.end_ns = monotonic_ns();
  file.checksum = sum.digest();
  file.complete = !failure && file.bytes == task.size;
  return failure;
}

}  // namespace ckpt::workload
