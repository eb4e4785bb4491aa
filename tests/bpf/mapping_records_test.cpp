// Stores through a shared mapping (bpf/jobio_mappings.bpf.h): the test
// process traces itself, writes files through MAP_SHARED mappings whose
// sizes it knows, and reads back the mmap records. Every folio a store turns
// dirty is one write of its pages, clipped to the file; the write faults that
// map those pages are no reads; a write(2)'s own folios are no mapping's; a
// read(2) into a mapped buffer is a store into that file.
// In every probe mode this kernel allows (syscall here; the file layer where
// fentry attaches, as in the tests/vm guests).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "jobio.h"
#include "model/events.h"
#include "probes/kernel_features.h"
#include "probes/probe_manager.h"
#include "tests/bpf/harness.h"
#include "tests/bpf/self_trace.h"

namespace ckpt::test {
namespace {

constexpr size_t kMiB = 1 << 20;

class MappingRecords : public ::testing::TestWithParam<RequestedProbeMode> {
 protected:
  void SetUp() override {
    if (const std::string why = cannot_trace_here(GetParam()); !why.empty()) GTEST_SKIP() << why;
    auto started = trace_this_process(GetParam(), [this](const void* d, size_t n) { add(d, n); });
    ASSERT_TRUE(started) << started.error().message;
    probes_ = std::move(*started);
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  }

  void add(const void* data, size_t size) {
    ckpt_record_header h{};
    ASSERT_GE(size, sizeof(h));
    std::memcpy(&h, data, sizeof(h));
    if (h.kind == CKPT_REC_MMAP && size >= sizeof(ckpt_mmap_record))
      mmaps_.push_back(*static_cast<const ckpt_mmap_record*>(data));
    else if (h.kind == CKPT_REC_IO && size >= sizeof(ckpt_io_record))
      io_.push_back(*static_cast<const ckpt_io_record*>(data));
  }

  void drain() { test::drain(*probes_); }

  // A file of `size` bytes with no data yet (a hole): its pages are
  // created by the faults, as a fresh checkpoint's are.
  static int sized_file(const std::string& path, size_t size) {
    int fd = open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    EXPECT_GE(fd, 0) << path << ": " << std::strerror(errno);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(size)), 0) << std::strerror(errno);
    return fd;
  }

  // `path` written whole by one write(2) of `size` bytes of `fill`, synced.
  static void written_whole(const std::string& path, size_t size, char fill) {
    std::vector<char> buf(size, fill);
    int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
    ASSERT_EQ(write(fd, buf.data(), size), static_cast<ssize_t>(size));
    ASSERT_EQ(fsync(fd), 0);
    close(fd);
  }

  // `size` bytes of `fill` stored through a shared mapping of fd, a page
  // at a time, then synced to the file.
  static void store_through_mapping(int fd, size_t size, char fill) {
    void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT_NE(map, MAP_FAILED) << std::strerror(errno);
    std::memset(map, fill, size);
    ASSERT_EQ(msync(map, size, MS_SYNC), 0) << std::strerror(errno);
    munmap(map, size);
  }

  // The pages the records on `f` with `op` cover, and their bytes clipped to
  // the file, each page once (as user space counts them in one checkpoint: a
  // page writeback cleans mid-store is dirtied, and reported, again).
  struct Covered {
    uint64_t bytes = 0;
    std::set<uint64_t> pages;
    size_t records = 0;
    bool counted = false;  // bytes from installed_pages, not from the ranges
  };
  Covered covered(const FileIdentity& f, uint32_t op) const {
    Covered c;
    uint64_t counted = 0, file_size = 0;
    for (const auto& m : mmaps_) {
      if (m.ino != f.ino || m.dev != f.kernel_dev || m.hdr.op != op) continue;
      ++c.records;
      file_size = m.file_size;
      // Syscall mode counts the pages a read fault installs (bpf/jobio.h).
      counted += m.installed_pages;
      for (uint64_t p = m.first_page; p <= m.last_page; ++p)
        if (c.pages.insert(p).second && m.installed_pages == 0)
          c.bytes += page_range_bytes(p, p, m.file_size, m.page_shift);
      if (op == CKPT_OP_WRITE) {
        EXPECT_EQ(m.storage_pages, 0u) << "a store reads nothing from storage";
        EXPECT_EQ(m.busy_ns, 0u);
      }
    }
    if (counted != 0) {
      c.counted = true;
      c.bytes = std::min(counted * page_, file_size);
    }
    return c;
  }

  // kB of this process's file and shmem mappings mapped by PMD entries.
  static uint64_t pmd_mapped_kb() {
    std::ifstream in("/proc/self/smaps_rollup");
    uint64_t total = 0;
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string key;
      uint64_t kb = 0;
      if (fields >> key >> kb && (key == "FilePmdMapped:" || key == "ShmemPmdMapped:")) total += kb;
    }
    return total;
  }

  void expect_no_drops() const {
    for (const auto& d : probes_->drops()) EXPECT_EQ(d.count, 0u) << d.source << "." << d.cause;
  }

  ScratchDir dir_;
  std::vector<ckpt_mmap_record> mmaps_;
  std::vector<ckpt_io_record> io_;
  std::unique_ptr<ProbeManager> probes_;
  size_t page_ = 4096;
};

INSTANTIATE_TEST_SUITE_P(Modes, MappingRecords, kBothModes, mode_name);

// 24 MiB and a partial page stored into a hole through a shared mapping: the
// dirtied folios cover the file exactly once, and no page is reported read.
TEST_P(MappingRecords, StoresIntoAHoleAreWritesOfEveryPageOnceAndNoReads) {
  const std::string path = dir_ / "model.safetensors";
  const size_t size = 24 * kMiB + 1000;
  int fd = sized_file(path, size);
  ASSERT_GE(fd, 0);
  store_through_mapping(fd, size, 's');
  close(fd);
  drain();

  const FileIdentity f = identity_of(path);
  const Covered writes = covered(f, CKPT_OP_WRITE);
  ASSERT_GT(writes.records, 0u) << "no store through the mapping was reported";
  EXPECT_EQ(writes.bytes, size) << "each page dirtied once, the last clipped to the file";
  EXPECT_EQ(writes.pages.size(), (size + page_ - 1) / page_);
  const Covered reads = covered(f, CKPT_OP_READ);
  EXPECT_EQ(reads.records, 0u) << "write faults map pages to store to, not to read: " << reads.bytes
                               << " bytes reported read";
  expect_no_drops();
}

// A file written by write(2) and synced, then read through the mapping and
// overwritten through it: the reads are reads, the stores writes of every
// page, and the write(2) calls dirtied no mapping's folios.
TEST_P(MappingRecords, AFileReadThenRewrittenThroughItsMappingIsBoth) {
  const std::string path = dir_ / "optim.pt";
  const size_t size = 8 * kMiB;
  written_whole(path, size, 'w');
  const FileIdentity f = identity_of(path);
  drain();
  EXPECT_EQ(covered(f, CKPT_OP_WRITE).records, 0u) << "write(2)'s folios are the call's";

  int fd = open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  auto* bytes = static_cast<volatile char*>(map);
  long sum = 0;
  for (size_t off = 0; off < size; off += page_) sum += bytes[off];
  EXPECT_EQ(sum, static_cast<long>(size / page_) * 'w');
  for (size_t off = 0; off < size; off += page_) bytes[off] = 'r';
  ASSERT_EQ(msync(map, size, MS_SYNC), 0);
  munmap(map, size);
  close(fd);
  drain();

  // Every page read once: the pages the faults installed (large folios of
  // a file written in one call are mapped whole, without a fault per page).
  const Covered reads = covered(f, CKPT_OP_READ);
  ASSERT_FALSE(reads.pages.empty()) << "the reads through the mapping were not reported";
  EXPECT_EQ(reads.bytes, size);
  const Covered writes = covered(f, CKPT_OP_WRITE);
  EXPECT_EQ(writes.bytes, size) << "every page was stored to once after the file was synced";
  expect_no_drops();
}

// A file on a tmpfs mounted huge=always, read through a mapping: its 2 MiB
// folios are mapped by one PMD entry each, with no fault per page and (6.18)
// no filemap tracepoint; every page still counts once.
TEST_P(MappingRecords, PagesMappedByPmdEntriesAreEveryPageOnce) {
  const std::string mnt = dir_ / "huge";
  std::filesystem::create_directories(mnt);
  ASSERT_EQ(mount("tmpfs", mnt.c_str(), "tmpfs", 0, "huge=always,size=64m"), 0)
      << "mounting a huge=always tmpfs at " << mnt << ": " << std::strerror(errno);
  const std::string path = mnt + "/checkpoint-shard.bin";
  const size_t size = 16 * kMiB;
  written_whole(path, size, 'h');
  const FileIdentity f = identity_of(path);
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  // At a 2 MiB boundary, and asked for huge pages (THP "madvise" hosts map
  // none otherwise).
  constexpr size_t kPmd = 2 * kMiB;
  void* room = mmap(nullptr, size + kPmd, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(room, MAP_FAILED);
  auto* at = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(room) + kPmd - 1) & ~(kPmd - 1));
  void* map = mmap(at, size, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
  ASSERT_EQ(map, static_cast<void*>(at)) << std::strerror(errno);
  ASSERT_EQ(madvise(map, size, MADV_HUGEPAGE), 0) << std::strerror(errno);
  const auto* bytes = static_cast<const volatile char*>(map);
  long sum = 0;
  for (size_t off = 0; off < size; off += page_) sum += bytes[off];
  EXPECT_EQ(sum, static_cast<long>(size / page_) * 'h');
  const uint64_t pmd_kb = pmd_mapped_kb();
  munmap(room, size + kPmd);
  close(fd);
  drain();
  umount2(mnt.c_str(), MNT_DETACH);

  ASSERT_GT(pmd_kb, 0u) << "the kernel mapped none of it by PMD entries: the test did not test "
                           "what it says (transparent huge pages off?)";
  EXPECT_EQ(covered(f, CKPT_OP_READ).bytes, size) << pmd_kb << " kB were mapped by PMD entries";
  expect_no_drops();
}

// read(2) from one file into a shared mapping of another: the read is a
// read of its file; its stores into the buffer write the mapped file.
TEST_P(MappingRecords, AReadIntoAMappedBufferWritesTheMappedFile) {
  const std::string src = dir_ / "shard-0.bin";
  const std::string dst = dir_ / "shard-0.copy.bin";
  const size_t size = 4 * kMiB;
  written_whole(src, size, 'c');
  int out = sized_file(dst, size);
  ASSERT_GE(out, 0);
  void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, out, 0);
  ASSERT_NE(map, MAP_FAILED);
  int in = open(src.c_str(), O_RDONLY);
  ASSERT_GE(in, 0);
  size_t done = 0;
  while (done < size) {
    ssize_t n = read(in, static_cast<char*>(map) + done, size - done);
    ASSERT_GT(n, 0) << std::strerror(errno);
    done += static_cast<size_t>(n);
  }
  close(in);
  ASSERT_EQ(msync(map, size, MS_SYNC), 0);
  munmap(map, size);
  close(out);
  drain();

  EXPECT_EQ(covered(identity_of(dst), CKPT_OP_WRITE).bytes, size);
  EXPECT_EQ(covered(identity_of(src), CKPT_OP_WRITE).records, 0u)
      << "a read dirties no file it reads";
  uint64_t read_bytes = 0;
  const FileIdentity s = identity_of(src);
  for (const auto& r : io_)
    if (r.ino == s.ino && r.dev == s.kernel_dev && r.hdr.op == CKPT_OP_READ && r.ret > 0)
      read_bytes += static_cast<uint64_t>(r.ret);
  EXPECT_EQ(read_bytes, size);
  expect_no_drops();
}

}  // namespace
}  // namespace ckpt::test
