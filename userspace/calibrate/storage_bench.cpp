#include "calibrate/storage_bench.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "common/clock.h"

namespace ckpt {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kAlign = 4096;
// Buffered writes: write-back is started every this many bytes per stream,
// and the chunk before it waited for, so dirty pages stay bounded and the
// final fdatasync has little left (the pattern of sync_file_range(2)).
constexpr uint64_t kWritebackChunk = 64ull << 20;

std::string human_bytes(uint64_t b) {
  if (b >= (1ull << 40)) return fmt::format("{:.1f} TiB", static_cast<double>(b) / (1ull << 40));
  if (b >= (1ull << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(b) / (1ull << 30));
  if (b >= (1ull << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1ull << 20));
  return fmt::format("{} bytes", b);
}

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "host";
  std::string h = buf;
  for (char& c : h)
    if (c == '/' || c == '-') c = '_';  // '-' separates the name's fields
  return h.empty() ? "host" : h;
}

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<char, AlignedFree>;

Buffer make_buffer(uint64_t bytes, uint64_t seed) {
  void* p = nullptr;
  if (posix_memalign(&p, kAlign, bytes) != 0) return nullptr;
  // Not zeros: compressing or deduplicating storage (ZFS, many arrays)
  // would store next to nothing and report a speed no checkpoint sees.
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  auto* words = static_cast<uint64_t*>(p);
  for (uint64_t i = 0; i < bytes / 8; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    words[i] = x;
  }
  return Buffer(static_cast<char*>(p));
}

// Makes each block's pages differ from every other block's, so that
// block-level deduplication finds nothing either.
void stamp_block(char* buf, uint64_t block_bytes, uint64_t stream, uint64_t block) {
  const uint64_t tag = (stream << 48) ^ block;
  for (uint64_t off = 0; off < block_bytes; off += kAlign) std::memcpy(buf + off, &tag, 8);
}

// The working directory: removed, with whatever is in it, when the run ends.
class WorkDir {
 public:
  explicit WorkDir(std::string path) : path_(std::move(path)) {}
  ~WorkDir() { (void)remove(); }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

  // "" once it is gone, else why not. On NFS a file unlinked while open is
  // renamed to .nfsXXXX and deleted by the client after the last close, in
  // the background: the directory empties a moment after the streams close,
  // so a failed removal is tried again for a while.
  std::string remove() {
    if (removed_) return {};
    std::error_code ec;
    for (int attempt = 0; attempt < 100; ++attempt) {
      ec.clear();
      fs::remove_all(path_, ec);
      if (!fs::exists(path_, ec) && !ec) {
        removed_ = true;
        return {};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return ec ? ec.message() : "it is not empty";
  }

 private:
  std::string path_;
  bool removed_ = false;
};

struct Stream {
  int fd = -1;
  std::string name;
  Buffer buf;
  uint64_t written = 0;
  uint64_t read = 0;
  uint64_t end_ns = 0;
  ~Stream() {
    if (fd >= 0) close(fd);
  }
};

// Shared by the threads of one phase: the first error, and whether to stop.
struct Phase {
  std::mutex mu;
  std::string error;
  std::atomic<bool> failed{false};
  const std::atomic<bool>* stop = nullptr;
  uint64_t deadline_ns = 0;

  void fail(std::string message) {
    std::lock_guard lock(mu);
    if (error.empty()) error = std::move(message);
    failed = true;
  }
  [[nodiscard]] bool stopping() const { return failed || (stop && *stop); }
  [[nodiscard]] bool out_of_time() const { return monotonic_ns() >= deadline_ns; }
};

// Stale working directories of this host's runs that were killed.
void remove_stale(const std::string& dir, const std::string& host,
                  std::vector<std::string>& notes) {
  const std::string prefix = std::string(kBenchDirPrefix) + host + "-";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const pid_t pid = static_cast<pid_t>(std::atol(name.c_str() + prefix.size()));
    if (pid <= 0 || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code rm;
    fs::remove_all(e.path(), rm);
    if (!rm)
      notes.push_back("removed " + e.path().string() + ", left by a calibration that was killed");
  }
}

void write_stream(Stream& s, unsigned index, uint64_t share, uint64_t block, bool direct,
                  Phase& phase, std::latch& go) {
  go.wait();
  uint64_t synced_to = 0;  // write-back started up to here (buffered)
  while (s.written < share && !phase.stopping() && !phase.out_of_time()) {
    stamp_block(s.buf.get(), block, index, s.written / block);
    uint64_t done = 0;
    while (done < block) {
      ssize_t n =
          pwrite(s.fd, s.buf.get() + done, block - done, static_cast<off_t>(s.written + done));
      if (n < 0 && errno == EINTR && !phase.stopping()) continue;
      if (n <= 0) {
        if (!phase.stopping())
          phase.fail(fmt::format("write {} at offset {}: {}", s.name, s.written + done,
                                 n == 0 ? "wrote nothing" : std::strerror(errno)));
        return;
      }
      done += static_cast<uint64_t>(n);
    }
    s.written += block;
    if (!direct && s.written - synced_to >= kWritebackChunk) {
      // Start this chunk's write-back; wait for the one before it.
      sync_file_range(s.fd, static_cast<off_t>(synced_to),
                      static_cast<off_t>(s.written - synced_to), SYNC_FILE_RANGE_WRITE);
      if (synced_to >= kWritebackChunk)
        sync_file_range(
            s.fd, static_cast<off_t>(synced_to - kWritebackChunk),
            static_cast<off_t>(kWritebackChunk),
            SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      synced_to = s.written;
    }
  }
  if (phase.stopping()) return;
  // Inside the timing: O_DIRECT can leave data in a volatile device cache
  // (and the size in the journal), buffered writes in the page cache.
  if (fdatasync(s.fd) != 0) {
    phase.fail(fmt::format("fdatasync {}: {}", s.name, std::strerror(errno)));
    return;
  }
  s.end_ns = monotonic_ns();
}

void read_stream(Stream& s, uint64_t block, Phase& phase, std::latch& go) {
  go.wait();
  while (s.read < s.written && !phase.stopping() && !phase.out_of_time()) {
    uint64_t done = 0;
    while (done < block) {
      ssize_t n = pread(s.fd, s.buf.get() + done, block - done, static_cast<off_t>(s.read + done));
      if (n < 0 && errno == EINTR && !phase.stopping()) continue;
      if (n <= 0) {
        if (!phase.stopping())
          phase.fail(
              fmt::format("read {} at offset {}: {}", s.name, s.read + done,
                          n == 0 ? "end of file before what was written" : std::strerror(errno)));
        return;
      }
      done += static_cast<uint64_t>(n);
    }
    s.read += block;
  }
  s.end_ns = monotonic_ns();
}

// The part of the first `bytes` of a file the page cache holds.
double cached_fraction(int fd, uint64_t bytes) {
  if (bytes == 0) return 0;
  void* map = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return 0;
  const long page = sysconf(_SC_PAGESIZE);
  const uint64_t pages = (bytes + static_cast<uint64_t>(page) - 1) / static_cast<uint64_t>(page);
  std::vector<unsigned char> v(pages);
  uint64_t resident = 0;
  if (mincore(map, bytes, v.data()) == 0)
    for (unsigned char c : v) resident += c & 1;
  munmap(map, bytes);
  return static_cast<double>(resident) / static_cast<double>(pages);
}

template <typename Fn>
Expected<uint64_t> run_phase(std::vector<std::unique_ptr<Stream>>& streams, Phase& phase,
                             Fn&& body) {
  std::latch go(1);
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < streams.size(); ++i) {
    streams[i]->end_ns = 0;
    threads.emplace_back([&, i] { body(*streams[i], i, go); });
  }
  const uint64_t start = monotonic_ns();
  go.count_down();
  for (auto& t : threads) t.join();
  if (phase.stop && *phase.stop) return make_error("interrupted");
  if (phase.failed) return make_error(phase.error);
  uint64_t end = start;
  for (const auto& s : streams) end = std::max(end, s->end_ns);
  return std::max<uint64_t>(end - start, 1);
}

}  // namespace

Expected<uint64_t> statvfs_free_bytes(const std::string& dir) {
  struct statvfs v {};
  if (statvfs(dir.c_str(), &v) != 0)
    return make_error(fmt::format("{}: statvfs: {}", dir, std::strerror(errno)));
  return static_cast<uint64_t>(v.f_bavail) * static_cast<uint64_t>(v.f_frsize);
}

Expected<StorageBenchResult> measure_storage(const StorageBenchOptions& o) {
  if (o.streams < 1 || o.streams > 1024)
    return make_error(fmt::format("streams: {} (must be from 1 to 1024)", o.streams));
  if (o.block_bytes < kAlign || o.block_bytes % kAlign != 0 || o.block_bytes > (1ull << 30))
    return make_error(
        fmt::format("block size: {} (must be a multiple of 4096, at most 1 GiB)", o.block_bytes));
  if (o.bytes < o.block_bytes * o.streams)
    return make_error(fmt::format("bytes: {} is less than one {} block for each of {} streams",
                                  human_bytes(o.bytes), human_bytes(o.block_bytes), o.streams));
  if (!(o.seconds > 0)) return make_error("seconds: must be more than 0");
  struct stat st {};
  if (stat(o.dir.c_str(), &st) != 0)
    return make_error(fmt::format("{}: {}", o.dir, std::strerror(errno)));
  if (!S_ISDIR(st.st_mode)) return make_error(fmt::format("{}: not a directory", o.dir));
  auto free = o.free_bytes ? o.free_bytes(o.dir) : statvfs_free_bytes(o.dir);
  if (!free) return free.error();
  if (*free / 2 < o.bytes)
    return make_error(fmt::format(
        "{} has {} free; calibrating with {} needs {} (twice the bytes written, so the file "
        "system is never filled): free some space, give a smaller --bytes or another directory",
        o.dir, human_bytes(*free), human_bytes(o.bytes), human_bytes(2 * o.bytes)));

  StorageBenchResult r;
  r.streams = o.streams;
  r.block_bytes = o.block_bytes;
  const std::string host = hostname();
  remove_stale(o.dir, host, r.notes);
  std::string tmpl =
      (fs::path(o.dir) / fmt::format("{}{}-{}-XXXXXX", kBenchDirPrefix, host, getpid())).string();
  if (!mkdtemp(tmpl.data()))
    return make_error(
        fmt::format("cannot create a directory in {}: {}", o.dir, std::strerror(errno)));
  WorkDir work(tmpl);

  // One file a stream, unlinked once open: the data lives as long as the
  // descriptor, so even a killed run leaves nothing but an empty directory.
  std::vector<std::unique_ptr<Stream>> streams;
  bool direct = true;
  std::string why_not;
  for (unsigned i = 0; i < o.streams; ++i) {
    auto s = std::make_unique<Stream>();
    s->name = (fs::path(work.path()) / fmt::format("stream-{}", i)).string();
    s->buf = make_buffer(o.block_bytes, i + 1);
    if (!s->buf) return make_error(fmt::format("cannot allocate {}", human_bytes(o.block_bytes)));
    const int flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC;
    s->fd = direct ? open(s->name.c_str(), flags | O_DIRECT, 0600) : -1;
    if (direct && s->fd < 0 && errno == EINVAL) {
      direct = false;
      why_not = "open with O_DIRECT: Invalid argument";
    }
    if (s->fd < 0) s->fd = open(s->name.c_str(), flags, 0600);
    if (s->fd < 0) return make_error(fmt::format("{}: {}", s->name, std::strerror(errno)));
    if (direct && i == 0) {
      // Some file systems take the flag at open and refuse the I/O (EINVAL).
      if (pwrite(s->fd, s->buf.get(), o.block_bytes, 0) < 0 && errno == EINVAL) {
        direct = false;
        why_not = "write with O_DIRECT: Invalid argument";
      }
      if (ftruncate(s->fd, 0) != 0)
        return make_error(fmt::format("{}: truncate: {}", s->name, std::strerror(errno)));
    }
    if (unlink(s->name.c_str()) != 0)
      return make_error(fmt::format("{}: unlink: {}", s->name, std::strerror(errno)));
    streams.push_back(std::move(s));
  }
  if (!direct)
    for (auto& s : streams) {
      const int fl = fcntl(s->fd, F_GETFL);
      if (fl < 0 || fcntl(s->fd, F_SETFL, fl & ~O_DIRECT) != 0)
        return make_error(fmt::format("{}: clearing O_DIRECT: {}", s->name, std::strerror(errno)));
    }
  r.direct = direct;
  r.io = direct ? "O_DIRECT" : fmt::format("buffered + fdatasync ({})", why_not);

  const uint64_t share = o.bytes / o.streams / o.block_bytes * o.block_bytes;
  const auto half_ns = static_cast<uint64_t>(o.seconds * 0.5e9);

  Phase write_phase;
  write_phase.stop = o.stop;
  write_phase.deadline_ns = monotonic_ns() + half_ns;
  auto write_ns = run_phase(streams, write_phase, [&](Stream& s, unsigned i, std::latch& go) {
    write_stream(s, i, share, o.block_bytes, direct, write_phase, go);
  });
  if (!write_ns) return write_ns.error();
  for (const auto& s : streams) r.bytes_written += s->written;
  if (r.bytes_written == 0)
    return make_error(
        fmt::format("{}: not one block written in the time limit ({:g} s)", o.dir, o.seconds / 2));
  r.write_seconds = static_cast<double>(*write_ns) / 1e9;
  r.write_Bps = static_cast<double>(r.bytes_written) / r.write_seconds;
  if (r.bytes_written < share * o.streams)
    r.notes.push_back(fmt::format("writes stopped at the time limit ({:g} s) after {} of {}",
                                  o.seconds / 2, human_bytes(r.bytes_written),
                                  human_bytes(share * o.streams)));

  if (!direct) {
    // The data is on storage (fdatasync): the clean pages can be dropped.
    uint64_t cached = 0;
    for (auto& s : streams) {
      posix_fadvise(s->fd, 0, 0, POSIX_FADV_DONTNEED);
      cached += static_cast<uint64_t>(cached_fraction(s->fd, s->written) *
                                      static_cast<double>(s->written));
    }
    r.read_cached_fraction =
        static_cast<double>(cached) / static_cast<double>(std::max<uint64_t>(r.bytes_written, 1));
    if (r.read_cached_fraction > 0.05)
      r.notes.push_back(fmt::format(
          "{:.0f}% of the data stayed in the page cache after it was dropped (tmpfs and the "
          "like keep files in memory): the read figure is partly memory speed",
          r.read_cached_fraction * 100));
  }

  Phase read_phase;
  read_phase.stop = o.stop;
  read_phase.deadline_ns = monotonic_ns() + half_ns;
  auto read_ns = run_phase(streams, read_phase, [&](Stream& s, unsigned, std::latch& go) {
    read_stream(s, o.block_bytes, read_phase, go);
  });
  if (!read_ns) return read_ns.error();
  for (const auto& s : streams) r.bytes_read += s->read;
  if (r.bytes_read == 0)
    return make_error(
        fmt::format("{}: not one block read in the time limit ({:g} s)", o.dir, o.seconds / 2));
  r.read_seconds = static_cast<double>(*read_ns) / 1e9;
  r.read_Bps = static_cast<double>(r.bytes_read) / r.read_seconds;
  if (r.bytes_read < r.bytes_written)
    r.notes.push_back(fmt::format("reads stopped at the time limit ({:g} s) after {} of {}",
                                  o.seconds / 2, human_bytes(r.bytes_read),
                                  human_bytes(r.bytes_written)));
  streams.clear();  // closed: their space is freed, NFS deletes its .nfsXXXX names
  if (std::string why = work.remove(); !why.empty())
    r.notes.push_back(fmt::format("could not remove {}: {}", work.path(), why));
  return r;
}

}  // namespace ckpt
