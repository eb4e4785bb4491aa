// What the storage did inside a call (bpf/jobio_storage.bpf.h), on this
// host's own disk: a read of a file evicted from the page cache makes the
// device read the whole file (its storage_bytes), the same read again makes
// it read nothing; a buffered write leaves its bytes dirty (dirtied_bytes)
// and the fsync after it writes them (storage_bytes); an O_DIRECT read's
// bytes are all the storage's; and the device's busy intervals
// (CKPT_REC_STORAGE_BUSY) carry the bios' bytes. In every probe mode this
// kernel allows. The scratch directory must be on a block device (not tmpfs):
// the test fails, saying so, where it is not.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "jobio.h"
#include "probes/kernel_features.h"
#include "probes/probe_manager.h"
#include "tests/bpf/harness.h"
#include "tests/bpf/self_trace.h"

namespace ckpt::test {
namespace {

constexpr size_t kSize = 64u << 20;  // far past a readahead window
constexpr size_t kCall = 1u << 20;

class StorageRecords : public ::testing::TestWithParam<RequestedProbeMode> {
 protected:
  void SetUp() override {
    if (const std::string why = cannot_trace_here(GetParam()); !why.empty()) GTEST_SKIP() << why;
    struct stat st {};
    ASSERT_EQ(stat(dir_.path().c_str(), &st), 0);
    ASSERT_NE(major(st.st_dev), 0u) << dir_.path()
                                    << " is on no block device (tmpfs?): set CKPTSCOPE_TEST_TMP "
                                       "to a directory on a disk";
    auto started = trace_this_process(GetParam(), [this](const void* d, size_t n) { add(d, n); });
    ASSERT_TRUE(started) << started.error().message;
    probes_ = std::move(*started);
  }

  void add(const void* data, size_t size) {
    ckpt_record_header h{};
    ASSERT_GE(size, sizeof(h));
    std::memcpy(&h, data, sizeof(h));
    if (h.kind == CKPT_REC_IO && h.tgid == static_cast<uint32_t>(getpid())) {
      ASSERT_EQ(size, sizeof(ckpt_io_record));
      calls_.push_back(*static_cast<const ckpt_io_record*>(data));
    }
    if (h.kind == CKPT_REC_STORAGE_BUSY) {
      ASSERT_EQ(size, sizeof(ckpt_storage_busy_record));
      busy_.push_back(*static_cast<const ckpt_storage_busy_record*>(data));
    }
  }

  struct Sums {
    uint64_t bytes = 0;
    uint64_t storage = 0;
    uint64_t dirtied = 0;
  };
  // The records of `op` on `path` since `from` (an index into calls_).
  Sums sums(const std::string& path, uint32_t op, size_t from = 0) const {
    const FileIdentity f = identity_of(path);
    Sums s;
    for (size_t i = from; i < calls_.size(); ++i) {
      const auto& c = calls_[i];
      if (c.dev != f.kernel_dev || c.ino != f.ino || c.hdr.op != op) continue;
      s.bytes += c.ret > 0 ? static_cast<uint64_t>(c.ret) : 0;
      s.storage += c.storage_bytes;
      s.dirtied += c.dirtied_bytes;
    }
    return s;
  }

  // A file of kSize written, fsync'd and evicted from the page cache.
  void write_cold(const std::string& path) {
    std::vector<char> buf(kCall, 's');
    const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0) << path;
    for (size_t done = 0; done < kSize; done += kCall)
      ASSERT_EQ(write(fd, buf.data(), kCall), static_cast<ssize_t>(kCall));
    ASSERT_EQ(fsync(fd), 0);
    ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    close(fd);
  }

  static void read_all(const std::string& path, int flags = 0) {
    void* buf = nullptr;
    ASSERT_EQ(posix_memalign(&buf, 4096, kCall), 0);
    const int fd = open(path.c_str(), O_RDONLY | flags);
    ASSERT_GE(fd, 0) << path;
    ssize_t n = 0;
    size_t total = 0;
    while ((n = read(fd, buf, kCall)) > 0) total += static_cast<size_t>(n);
    EXPECT_EQ(total, kSize);
    close(fd);
    free(buf);
  }

  ScratchDir dir_;
  std::vector<ckpt_io_record> calls_;
  std::vector<ckpt_storage_busy_record> busy_;
  std::unique_ptr<ProbeManager> probes_;
};

TEST_P(StorageRecords, AColdReadIsTheStoragesAndAWarmOneIsNot) {
  const std::string path = dir_ / "shard-0.pt";
  write_cold(path);
  drain(*probes_);
  const size_t cold_from = calls_.size();
  const size_t busy_from = busy_.size();
  read_all(path);
  drain(*probes_);
  const Sums cold = sums(path, CKPT_OP_READ, cold_from);
  EXPECT_EQ(cold.bytes, kSize);
  // The whole file, and at most a little of the file system's own blocks
  // (an extent tree read on the way).
  EXPECT_GE(cold.storage, kSize);
  EXPECT_LE(cold.storage, kSize + (1u << 20));
  // The device was busy with those bios, and said so.
  const FileIdentity f = identity_of(path);
  uint64_t busy_bytes = 0;
  for (size_t i = busy_from; i < busy_.size(); ++i) {
    const auto& b = busy_[i];
    EXPECT_EQ(b.dev, f.kernel_dev);
    EXPECT_GT(b.hdr.end_ns, b.hdr.start_ns);
    busy_bytes += b.bytes;
  }
  EXPECT_GE(busy_bytes, kSize) << "every bio the reads queued, as queued";
  EXPECT_LE(busy_bytes, cold.storage + (1u << 20));

  const size_t warm_from = calls_.size();
  read_all(path);
  drain(*probes_);
  const Sums warm = sums(path, CKPT_OP_READ, warm_from);
  EXPECT_EQ(warm.bytes, kSize);
  EXPECT_EQ(warm.storage, 0u) << "the page cache served it";
  for (const auto& d : probes_->drops()) EXPECT_EQ(d.count, 0u) << d.source << "." << d.cause;
}

TEST_P(StorageRecords, ABufferedWriteIsDirtyUntilItsFsyncWritesItBack) {
  const std::string path = dir_ / "shard-1.pt";
  std::vector<char> buf(kCall, 'w');
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  for (size_t done = 0; done < kSize; done += kCall)
    ASSERT_EQ(write(fd, buf.data(), kCall), static_cast<ssize_t>(kCall));
  ASSERT_EQ(fsync(fd), 0);
  close(fd);
  drain(*probes_);
  const Sums writes = sums(path, CKPT_OP_WRITE);
  EXPECT_EQ(writes.bytes, kSize);
  EXPECT_EQ(writes.dirtied, kSize) << "every page turned dirty once";
  EXPECT_EQ(writes.storage, 0u) << "buffered: nothing reached the device in the writes";
  const Sums flush = sums(path, CKPT_OP_FSYNC);
  EXPECT_GE(flush.storage, kSize) << "the fsync wrote the file back";
  EXPECT_LE(flush.storage, kSize + (1u << 20));
}

TEST_P(StorageRecords, EveryByteOfADirectReadIsTheStorages) {
  const std::string path = dir_ / "shard-2.pt";
  write_cold(path);
  drain(*probes_);
  const size_t from = calls_.size();
  read_all(path, O_DIRECT);
  drain(*probes_);
  const Sums direct = sums(path, CKPT_OP_READ, from);
  EXPECT_EQ(direct.bytes, kSize);
  EXPECT_EQ(direct.storage, kSize);
}

// The node's dirty-page limits, set low for a test and put back as they were
// (vm.dirty_bytes and vm.dirty_ratio exclude each other: writing one clears
// the other, so the one that was set is written back).
class DirtyLimits {
 public:
  DirtyLimits(uint64_t bytes, uint64_t background_bytes) {
    for (const char* k :
         {"dirty_bytes", "dirty_ratio", "dirty_background_bytes", "dirty_background_ratio"})
      saved_.emplace_back(k, read(k));
    write("dirty_background_bytes", background_bytes);
    write("dirty_bytes", bytes);
  }
  ~DirtyLimits() {
    for (const auto& [key, value] : saved_)
      if (value != "0") write(key, std::stoull(value));
  }
  DirtyLimits(const DirtyLimits&) = delete;
  DirtyLimits& operator=(const DirtyLimits&) = delete;

 private:
  static std::string read(const std::string& key) {
    std::ifstream in("/proc/sys/vm/" + key);
    std::string v;
    in >> v;
    return v;
  }
  static void write(const std::string& key, uint64_t value) {
    std::ofstream("/proc/sys/vm/" + key) << value << "\n";
  }
  std::vector<std::pair<std::string, std::string>> saved_;
};

// Writes far past a dirty limit of 4 MiB sleep in balance_dirty_pages: that
// time of the write calls is the storage's (throttle_ns).
TEST_P(StorageRecords, AWriteHeldForDirtyPagesSaysHowLong) {
  const std::string path = dir_ / "shard-3.pt";
  {
    DirtyLimits low(4u << 20, 1u << 20);
    std::vector<char> buf(kCall, 't');
    const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    for (size_t done = 0; done < kSize; done += kCall)
      ASSERT_EQ(write(fd, buf.data(), kCall), static_cast<ssize_t>(kCall));
    close(fd);
  }
  drain(*probes_);
  const FileIdentity f = identity_of(path);
  uint64_t held = 0, calls_time = 0;
  for (const auto& c : calls_) {
    if (c.dev != f.kernel_dev || c.ino != f.ino || c.hdr.op != CKPT_OP_WRITE) continue;
    held += c.throttle_ns;
    calls_time += c.busy_ns;
  }
  EXPECT_GT(held, 0u) << "64 MiB against a 4 MiB dirty limit";
  EXPECT_LE(held, calls_time + 10'000'000u) << "a pause is at most a jiffy past its sleep";
}

INSTANTIATE_TEST_SUITE_P(Modes, StorageRecords, kBothModes, mode_name);

}  // namespace
}  // namespace ckpt::test
