// The jobio programs on this kernel, record by record (bpf/jobio.h): the test
// process traces itself, makes calls whose answers it knows, and reads back
// what the kernel reported, before any decoding or stitching. Folding, the
// verdict map, copies between files, page faults on a mapping and the per-CPU
// hot slot's hand-overs between threads are checked against the calls made.
// The file-layer mode is checked the same way in the VM guests (tests/vm);
// here the kernel picks its mode (`auto`).
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
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

// Every record the jobio ring buffer delivered, by kind, as the kernel laid it out.
struct Records {
  std::vector<ckpt_io_record> io;
  std::vector<ckpt_io_record> starts;  // CKPT_REC_IO_START: calls announced in flight
  std::vector<ckpt_copy_record> copies;
  std::vector<ckpt_mmap_record> mmaps;
  std::vector<ckpt_path_record> paths;
  std::vector<ckpt_record_header> arrival;  // every record's header, in ring order
  size_t other = 0;

  void add(const void* data, size_t size) {
    ckpt_record_header h{};
    ASSERT_GE(size, sizeof(h));
    std::memcpy(&h, data, sizeof(h));
    arrival.push_back(h);
    if (h.kind == CKPT_REC_IO_START && size >= sizeof(ckpt_io_record)) {
      starts.push_back(*static_cast<const ckpt_io_record*>(data));
    } else if (h.kind == CKPT_REC_IO && size >= sizeof(ckpt_io_record)) {
      io.push_back(*static_cast<const ckpt_io_record*>(data));
    } else if (h.kind == CKPT_REC_COPY && size >= sizeof(ckpt_copy_record)) {
      copies.push_back(*static_cast<const ckpt_copy_record*>(data));
    } else if (h.kind == CKPT_REC_MMAP && size >= sizeof(ckpt_mmap_record)) {
      mmaps.push_back(*static_cast<const ckpt_mmap_record*>(data));
    } else if (h.kind == CKPT_REC_PATH && size >= sizeof(ckpt_path_record)) {
      paths.push_back(*static_cast<const ckpt_path_record*>(data));
    } else {
      ++other;
    }
  }
};

// The probes, tracing this very process (its tgid set by hand, as `attach` does).
class JobIoRecords : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!is_root()) GTEST_SKIP() << "needs root to load eBPF programs";
    auto started = trace_this_process(RequestedProbeMode::Auto,
                                      [this](const void* d, size_t n) { records_.add(d, n); });
    ASSERT_TRUE(started) << started.error().message;
    probes_ = std::move(*started);
  }

  // Everything up to now reported.
  void drain() { test::drain(*probes_); }

  static std::vector<ckpt_io_record> on_file(const std::vector<ckpt_io_record>& records,
                                             const FileIdentity& f, uint32_t op) {
    std::vector<ckpt_io_record> out;
    for (const auto& r : records)
      if (r.dev == f.kernel_dev && r.ino == f.ino && r.hdr.op == op) out.push_back(r);
    return out;
  }
  std::vector<ckpt_io_record> io_on(const FileIdentity& f, uint32_t op) const {
    return on_file(records_.io, f, op);
  }
  // The calls announced in flight (bpf/jobio.h CKPT_REC_IO_START) on `f`.
  std::vector<ckpt_io_record> starts_on(const FileIdentity& f, uint32_t op) const {
    return on_file(records_.starts, f, op);
  }

  void expect_no_drops() const {
    for (const auto& d : probes_->drops()) EXPECT_EQ(d.count, 0u) << d.source << "." << d.cause;
  }

  ScratchDir dir_;
  Records records_;
  std::unique_ptr<ProbeManager> probes_;
};

TEST_F(JobIoRecords, SmallWritesFoldLargeOnesKeepTheirOwnRecord) {
  const std::string small = dir_ / "small.pt";
  const std::string large = dir_ / "large.pt";
  std::vector<char> buf(1 << 20, 'x');
  int fd = open(small.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(write(fd, buf.data(), 4096), 4096);
  close(fd);
  fd = open(large.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(write(fd, buf.data(), buf.size()), 1 << 20);
  close(fd);
  drain();

  uint64_t calls = 0, bytes = 0, requested = 0;
  const auto folded = io_on(identity_of(small), CKPT_OP_WRITE);
  for (const auto& r : folded) {
    calls += r.calls;
    bytes += static_cast<uint64_t>(r.ret);
    requested += r.requested;
    EXPECT_EQ(r.via, CKPT_VIA_SYSCALL);
    EXPECT_LE(r.hdr.start_ns, r.last_start_ns);
    EXPECT_LE(r.last_start_ns, r.hdr.end_ns);
    EXPECT_LE(r.busy_ns, r.hdr.end_ns - r.hdr.start_ns);
  }
  EXPECT_EQ(calls, 100u);
  EXPECT_EQ(bytes, 100u * 4096);
  EXPECT_EQ(requested, 100u * 4096);
  // 100 calls of microseconds each fold into a few records, not 100.
  EXPECT_LT(folded.size(), 20u);

  const auto big = io_on(identity_of(large), CKPT_OP_WRITE);
  ASSERT_EQ(big.size(), 4u);
  for (const auto& r : big) {
    EXPECT_EQ(r.calls, 1u);
    EXPECT_EQ(r.ret, 1 << 20);
    EXPECT_EQ(r.busy_ns, r.hdr.end_ns - r.hdr.start_ns);
    EXPECT_EQ(r.last_start_ns, r.hdr.start_ns);
  }
  expect_no_drops();
}

TEST_F(JobIoRecords, AFileRuledOutCostsNoRecordButItsFailuresStillCount) {
  const std::string path = dir_ / "notes.txt";
  std::vector<char> buf(4096, 'n');
  int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const FileIdentity f = identity_of(path);
  drain();  // the open's record first: it clears any verdict on this inode
  probes_->set_file_verdict(f.user, false);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(write(fd, buf.data(), buf.size()), 4096);
  // A call that fails inside vfs_read (seen in both modes): reading a file
  // opened write-only.
  ASSERT_EQ(read(fd, buf.data(), buf.size()), -1);
  ASSERT_EQ(errno, EBADF);
  close(fd);
  drain();
  EXPECT_TRUE(io_on(f, CKPT_OP_WRITE).empty()) << "a ruled-out file's writes were reported";
  const auto failed = io_on(f, CKPT_OP_READ);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].ret, -EBADF);

  // Opening it again clears the verdict in the kernel (inode numbers are
  // reused): its calls are candidates again until user space decides.
  fd = open(path.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, buf.data(), buf.size()), 4096);
  close(fd);
  drain();
  uint64_t calls = 0;
  for (const auto& r : io_on(f, CKPT_OP_WRITE)) calls += r.calls;
  EXPECT_EQ(calls, 1u);
  expect_no_drops();
}

// A thread caches the verdict of the file it last asked about; a verdict
// written or forgotten in the middle of its calls on that file must still
// take effect at its next call (bpf/jobio_state.bpf.h thread_file_verdict).
TEST_F(JobIoRecords, AVerdictChangedBetweenCallsOnOneFdTakesEffectAtTheNextCall) {
  const std::string path = dir_ / "later-ruled-out.txt";
  std::vector<char> buf(4096, 'v');
  int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const FileIdentity f = identity_of(path);
  auto write_calls = [&]() {
    uint64_t calls = 0;
    for (const auto& r : io_on(f, CKPT_OP_WRITE)) calls += r.calls;
    return calls;
  };
  // Undecided: reported, and the thread now holds that verdict.
  for (int i = 0; i < 10; ++i) ASSERT_EQ(write(fd, buf.data(), buf.size()), 4096);
  drain();
  EXPECT_EQ(write_calls(), 10u);

  probes_->set_file_verdict(f.user, false);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(write(fd, buf.data(), buf.size()), 4096);
  drain();
  EXPECT_EQ(write_calls(), 10u) << "writes after the verdict 'other' were reported";

  // The exporter forgets its "other" verdicts when a client starts tracing.
  probes_->forget_other_verdicts();
  for (int i = 0; i < 5; ++i) ASSERT_EQ(write(fd, buf.data(), buf.size()), 4096);
  close(fd);
  drain();
  EXPECT_EQ(write_calls(), 15u) << "writes after the verdict was forgotten were not reported";
  expect_no_drops();
}

TEST_F(JobIoRecords, CopiesBetweenFilesAreOneRecordNamingBothFiles) {
  const std::string src = dir_ / "src.pt";
  const std::string dst = dir_ / "dst.pt";
  const std::string dst2 = dir_ / "dst2.pt";
  std::vector<char> buf(3 << 20, 'c');
  int in = open(src.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  ASSERT_GE(in, 0);
  ASSERT_EQ(write(in, buf.data(), buf.size()), static_cast<ssize_t>(buf.size()));
  int out = open(dst.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(out, 0);
  loff_t in_off = 0;
  ASSERT_EQ(copy_file_range(in, &in_off, out, nullptr, buf.size(), 0),
            static_cast<ssize_t>(buf.size()));
  int out2 = open(dst2.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(out2, 0);
  off_t off = 0;
  ASSERT_EQ(sendfile(out2, in, &off, 1 << 20), 1 << 20);
  close(in);
  close(out);
  close(out2);
  drain();

  const FileIdentity s = identity_of(src), d = identity_of(dst), d2 = identity_of(dst2);
  std::map<uint32_t, std::vector<ckpt_copy_record>> by_via;
  for (const auto& c : records_.copies)
    if (c.src_ino == s.ino && c.src_dev == s.kernel_dev) by_via[c.via].push_back(c);
  ASSERT_EQ(by_via[CKPT_VIA_COPY_FILE_RANGE].size(), 1u);
  const auto& cfr = by_via[CKPT_VIA_COPY_FILE_RANGE][0];
  EXPECT_EQ(cfr.ret, 3 << 20);
  EXPECT_EQ(cfr.requested, 3u << 20);
  EXPECT_EQ(cfr.dst_ino, d.ino);
  EXPECT_EQ(cfr.dst_dev, d.kernel_dev);
  EXPECT_EQ(cfr.src_type, CKPT_FT_REGULAR);
  EXPECT_EQ(cfr.dst_type, CKPT_FT_REGULAR);
  ASSERT_EQ(by_via[CKPT_VIA_SENDFILE].size(), 1u);
  EXPECT_EQ(by_via[CKPT_VIA_SENDFILE][0].ret, 1 << 20);
  EXPECT_EQ(by_via[CKPT_VIA_SENDFILE][0].dst_ino, d2.ino);
  // The copies moved no bytes through read or write calls of the job.
  EXPECT_TRUE(io_on(d, CKPT_OP_WRITE).empty());
  expect_no_drops();
}

// chdir and fchdir, each with what it named and how it ended: user space
// resolves the relative names after them there (rsync's receiver), never
// through a /proc that has moved on.
TEST_F(JobIoRecords, ChdirAndFchdirAreReportedWithWhatTheyNamed) {
  const std::string before = std::filesystem::current_path();
  std::filesystem::create_directory(dir_ / "sub");
  const int fd = open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(chdir(dir_.path().c_str()), 0);
  ASSERT_EQ(chdir("sub"), 0);
  ASSERT_NE(chdir("no-such-dir"), 0);
  ASSERT_EQ(fchdir(fd), 0);
  ASSERT_EQ(chdir(before.c_str()), 0);
  close(fd);
  drain();

  std::vector<std::pair<std::string, int64_t>> named;
  for (const auto& r : records_.paths) {
    if (r.hdr.op != CKPT_OP_CHDIR || r.hdr.tgid != static_cast<uint32_t>(getpid())) continue;
    EXPECT_LE(r.hdr.start_ns, r.hdr.end_ns);
    std::string path(r.path, strnlen(r.path, std::min<size_t>(r.path_len, CKPT_PATH_MAX)));
    if (path.empty()) {
      EXPECT_EQ(r.dirfd, fd) << "fchdir names its fd";
      named.emplace_back("fd", r.ret);
    } else {
      EXPECT_EQ(r.dirfd, AT_FDCWD);
      named.emplace_back(path, r.ret);
    }
  }
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {dir_.path(), 0}, {"sub", 0}, {"no-such-dir", -ENOENT}, {"fd", 0}, {before, 0}};
  EXPECT_EQ(named, expected);
  expect_no_drops();
}

// A name whose page is not mapped yet when the call starts (a child just
// forked touches its parent's file-backed pages only on use: rsync's
// receiver opens "." so): read again as the call returns, after the
// kernel's own copy of the name faulted the page in.
TEST_F(JobIoRecords, ANameNotYetFaultedInIsReadAsTheCallReturns) {
  const std::string name_file = dir_ / "name.bin";
  const std::string name = dir_ / "no-such-file.pt";
  {
    std::ofstream out(name_file, std::ios::binary);
    out.write(name.c_str(), static_cast<std::streamsize>(name.size() + 1));
  }
  const int fd = open(name_file.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* page = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  ASSERT_NE(page, MAP_FAILED);
  close(fd);
  struct stat st {};
  EXPECT_NE(stat(static_cast<const char*>(page), &st), 0);  // the first touch of the page
  munmap(page, 4096);
  drain();

  size_t seen = 0;
  for (const auto& r : records_.paths) {
    if (r.hdr.op != CKPT_OP_STAT || r.hdr.tgid != static_cast<uint32_t>(getpid())) continue;
    if (r.ret != -ENOENT) continue;
    std::string path(r.path, strnlen(r.path, std::min<size_t>(r.path_len, CKPT_PATH_MAX)));
    EXPECT_EQ(path, name);
    ++seen;
  }
  EXPECT_EQ(seen, 1u);
}

TEST_F(JobIoRecords, FaultsOnAMappingReportTheFilesPagesOnce) {
  const long page = sysconf(_SC_PAGESIZE);
  const std::string path = dir_ / "model.safetensors";
  const size_t size = 256 * static_cast<size_t>(page) + 100;  // 257 pages, the last partial
  {
    std::vector<char> buf(size, 'm');
    int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, buf.data(), buf.size()), static_cast<ssize_t>(size));
    fsync(fd);
    // Out of the page cache, so the faults must read it from storage.
    ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    close(fd);
  }
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  const auto* bytes = static_cast<const volatile char*>(map);
  long sum = 0;
  for (size_t off = 0; off < size; off += static_cast<size_t>(page)) sum += bytes[off];
  sum += bytes[size - 1];
  EXPECT_EQ(sum, 258L * 'm');
  munmap(map, size);
  close(fd);
  drain();

  const FileIdentity f = identity_of(path);
  std::set<uint64_t> pages;
  uint64_t storage = 0;
  uint64_t counted = 0;  // syscall mode: the pages the faults installed, counted
  for (const auto& m : records_.mmaps) {
    if (m.ino != f.ino || m.dev != f.kernel_dev) continue;
    EXPECT_EQ(m.hdr.op, CKPT_OP_READ) << "a private read-only mapping is only read";
    EXPECT_EQ(1ull << m.page_shift, static_cast<uint64_t>(page));
    EXPECT_EQ(m.file_size, size);
    EXPECT_GE(m.faults, 1u);
    for (uint64_t p = m.first_page; p <= m.last_page; ++p) pages.insert(p);
    counted += m.installed_pages;
    storage += m.storage_pages;
  }
  ASSERT_FALSE(pages.empty()) << "no fault on the mapping was reported";
  EXPECT_EQ(*pages.begin(), 0u);
  EXPECT_LE(*pages.rbegin(), 256u);  // never past the end of the file
  if (counted != 0)
    EXPECT_EQ(counted, 257u) << "every page installed once, none past the end of the file";
  else
    EXPECT_EQ(pages.size(), 257u);
  EXPECT_GT(storage, 0u) << "the pages were dropped from the cache: some came from storage";
  EXPECT_LE(storage, 257u);  // pages of this file, each read once
  expect_no_drops();
}

// The written calls and bytes the records give for one file.
struct WriteTotals {
  uint64_t calls = 0;
  uint64_t bytes = 0;
};

WriteTotals write_totals(const std::vector<ckpt_io_record>& records) {
  WriteTotals t;
  for (const auto& r : records) {
    t.calls += r.calls;
    t.bytes += static_cast<uint64_t>(r.ret);
  }
  return t;
}

uint32_t this_tid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

// A thread doing I/O has its state moved into its CPU's hot slot when it is
// switched in (bpf/jobio_state.bpf.h), and its calls still add up exactly. The
// thread looks for itself while it runs: another thread looking would find it
// switched out, its slot handed back, whenever the two share a CPU.
TEST_F(JobIoRecords, AThreadDoingIoWorksInItsCpusHotSlot) {
  const std::string path = dir_ / "hot.bin";
  constexpr int kRounds = 50;
  std::vector<char> buf(4096, 'h');
  int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const uint32_t me = this_tid();
  uint64_t written = 0;
  bool seen = false;
  std::set<uint32_t> owners;  // for the failure message
  for (int round = 0; round < kRounds && !seen; ++round) {
    usleep(200);  // off the CPU and back: a thread that did I/O moves in at switch-in
    for (int i = 0; i < 4; ++i)
      if (pwrite(fd, buf.data(), buf.size(), i * 4096) == 4096) ++written;
    for (uint32_t tid : probes_->threads_in_hot_slots()) {
      owners.insert(tid);
      seen |= tid == me;
    }
  }
  close(fd);
  drain();
  std::string seen_owners;
  for (uint32_t tid : owners) seen_owners += " " + std::to_string(tid);
  EXPECT_TRUE(seen) << "this thread (tid " << me << ") never had its state in a hot slot in "
                    << kRounds << " rounds; owners seen:" << seen_owners;
  const WriteTotals t = write_totals(io_on(identity_of(path), CKPT_OP_WRITE));
  EXPECT_EQ(t.calls, written);
  EXPECT_EQ(t.bytes, written * 4096);
  expect_no_drops();
}

// Threads taking turns on one CPU hand the slot over at every switch: each
// one's calls are still its own, to the call and the byte.
TEST_F(JobIoRecords, ThreadsTakingTurnsOnOneCpuKeepTheirOwnCounts) {
  constexpr int kThreads = 4;
  constexpr int kCalls = 3000;
  std::vector<std::string> paths;
  for (int t = 0; t < kThreads; ++t)
    paths.push_back(dir_ / ("turns-" + std::to_string(t) + ".bin"));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(0, &one);
      if (sched_setaffinity(0, sizeof(one), &one) != 0) ++failures;
      std::vector<char> buf(4096, static_cast<char>('a' + t));
      int fd = open(paths[static_cast<size_t>(t)].c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
      if (fd < 0) {
        ++failures;
        return;
      }
      for (int i = 0; i < kCalls; ++i) {
        if (write(fd, buf.data(), buf.size()) != 4096) ++failures;
        if (i % 3 == 2) sched_yield();  // the next thread on CPU 0 takes the slot
      }
      close(fd);
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);
  drain();
  for (const auto& path : paths) {
    const WriteTotals t = write_totals(io_on(identity_of(path), CKPT_OP_WRITE));
    EXPECT_EQ(t.calls, static_cast<uint64_t>(kCalls)) << path;
    EXPECT_EQ(t.bytes, static_cast<uint64_t>(kCalls) * 4096) << path;
  }
  expect_no_drops();
}

// Anonymous pages that are not there until served through a userfaultfd: a
// call that copies into or out of them sleeps inside the call, on any file
// system.
struct MissingPages {
  int uffd = -1;
  void* region = MAP_FAILED;
  size_t size = 0;
  MissingPages() = default;
  MissingPages(const MissingPages&) = delete;
  MissingPages& operator=(const MissingPages&) = delete;
  ~MissingPages() {
    if (region != MAP_FAILED) munmap(region, size);
    if (uffd >= 0) close(uffd);
  }
};

void make_missing_pages(size_t size, MissingPages& out) {
  out.uffd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  ASSERT_GE(out.uffd, 0) << "userfaultfd: " << std::strerror(errno);
  uffdio_api api{};
  api.api = UFFD_API;
  ASSERT_EQ(ioctl(out.uffd, UFFDIO_API, &api), 0) << std::strerror(errno);
  out.region = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(out.region, MAP_FAILED);
  out.size = size;
  uffdio_register reg{};
  reg.range.start = reinterpret_cast<uint64_t>(out.region);
  reg.range.len = size;
  reg.mode = UFFDIO_REGISTER_MODE_MISSING;
  ASSERT_EQ(ioctl(out.uffd, UFFDIO_REGISTER, &reg), 0) << std::strerror(errno);
}

// A call that sleeps halfway (its thread leaves the CPU inside it, and the
// slot with it) is still reported whole when it returns. The writes copy from
// pages that are not there yet, served by a userfaultfd handler after a
// pause, so every one of them sleeps inside the call, on any file system.
TEST_F(JobIoRecords, CallsThatSleepHalfwayAreReportedWhole) {
  constexpr int kCalls = 40;
  constexpr size_t kPage = 4096;
  MissingPages pages;
  ASSERT_NO_FATAL_FAILURE(make_missing_pages(kCalls * kPage, pages));
  const int uffd = pages.uffd;
  void* region = pages.region;

  std::atomic<bool> stop{false};
  std::thread pager([&] {
    std::vector<char> page(kPage, 'u');
    while (!stop) {
      pollfd p{uffd, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      uffd_msg msg{};
      if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != UFFD_EVENT_PAGEFAULT)
        continue;
      usleep(1000);  // the writer waits inside its write meanwhile
      uffdio_copy copy{};
      copy.dst = msg.arg.pagefault.address & ~(kPage - 1);
      copy.src = reinterpret_cast<uint64_t>(page.data());
      copy.len = kPage;
      ioctl(uffd, UFFDIO_COPY, &copy);
    }
  });
  // Two files in turn: a call that came back to a stale state would be
  // reported on the other file.
  const std::string paths[2] = {dir_ / "sleepy-a.bin", dir_ / "sleepy-b.bin"};
  int fds[2];
  for (int i = 0; i < 2; ++i) {
    fds[i] = open(paths[i].c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fds[i], 0);
  }
  rusage before{};
  rusage after{};
  getrusage(RUSAGE_THREAD, &before);
  int written = 0;
  for (int i = 0; i < kCalls; ++i)
    if (write(fds[i % 2], static_cast<char*>(region) + i * kPage, kPage) ==
        static_cast<ssize_t>(kPage))
      ++written;
  getrusage(RUSAGE_THREAD, &after);
  for (int f : fds) close(f);
  stop = true;
  pager.join();
  drain();
  ASSERT_EQ(written, kCalls);
  EXPECT_GE(after.ru_nvcsw - before.ru_nvcsw, kCalls) << "the writes did not sleep inside the call";
  for (const auto& path : paths) {
    const WriteTotals t = write_totals(io_on(identity_of(path), CKPT_OP_WRITE));
    EXPECT_EQ(t.calls, static_cast<uint64_t>(kCalls / 2)) << path;
    EXPECT_EQ(t.bytes, static_cast<uint64_t>(kCalls / 2) * kPage) << path;
  }
  expect_no_drops();
}

bool pin_to_cpu(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof(one), &one) == 0;
}

// A read that sleeps inside the call (its destination page is missing,
// served by userfaultfd) is announced once, when it first leaves the CPU: a
// start record naming its file, before it returns. Woken while a real-time
// thread holds its CPU (/proc/TID/syscall then says "running") it is not
// announced again, nor has it returned; its record follows the start.
TEST_F(JobIoRecords, AReadThatLeavesTheCpuIsAnnouncedOnceBeforeItReturns) {
  ASSERT_GE(sysconf(_SC_NPROCESSORS_ONLN), 2) << "the reader and its pager need a CPU each";
  constexpr size_t kPage = 4096;
  const std::string path = dir_ / "announced.bin";
  {
    std::vector<char> data(kPage, 'p');
    const int w = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(w, 0);
    ASSERT_EQ(write(w, data.data(), kPage), static_cast<ssize_t>(kPage));
    close(w);
  }
  const FileIdentity id = identity_of(path);
  const int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  MissingPages pages;
  ASSERT_NO_FATAL_FAILURE(make_missing_pages(kPage, pages));
  const int uffd = pages.uffd;
  void* region = pages.region;
  cpu_set_t was{};
  ASSERT_EQ(sched_getaffinity(0, sizeof(was), &was), 0);
  ASSERT_TRUE(pin_to_cpu(1)) << std::strerror(errno);
  struct Unpin {
    cpu_set_t set;
    ~Unpin() { sched_setaffinity(0, sizeof(set), &set); }
  } unpin{was};

  std::atomic<uint32_t> reader_tid{0};
  std::atomic<ssize_t> got{-2};
  std::atomic<bool> release{false};
  std::atomic<int> reader_pin_errno{0};
  std::thread reader([&] {
    if (!pin_to_cpu(0)) {
      reader_pin_errno = errno;
      return;
    }
    reader_tid = this_tid();
    got = pread(fd, region, kPage, 0);
    while (!release) usleep(1000);
  });
  // The read faults on its destination and sleeps in the call.
  pollfd p{uffd, POLLIN, 0};
  const int faulted = poll(&p, 1, 5000);
  if (reader_pin_errno != 0) {
    reader.join();
    FAIL() << "the reader could not pin itself to CPU 0: " << std::strerror(reader_pin_errno);
  }
  ASSERT_EQ(faulted, 1) << "the read never faulted on its destination";
  uffd_msg msg{};
  ASSERT_EQ(read(uffd, &msg, sizeof(msg)), static_cast<ssize_t>(sizeof(msg)));
  const uint32_t tid = reader_tid.load();
  for (int i = 0; i < 100 && starts_on(id, CKPT_OP_READ).empty(); ++i) (void)probes_->poll(50);
  const auto asleep = starts_on(id, CKPT_OP_READ);
  ASSERT_EQ(asleep.size(), 1u) << "the sleeping read was not announced";
  EXPECT_EQ(asleep[0].hdr.tid, tid);
  EXPECT_EQ(asleep[0].hdr.end_ns, 0u) << "in flight: no end";
  EXPECT_EQ(asleep[0].ret, 0);
  EXPECT_EQ(asleep[0].requested, kPage);
  EXPECT_EQ(asleep[0].via, static_cast<uint32_t>(CKPT_VIA_SYSCALL));
  // The file layer sees the file, not the descriptor (bpf/jobio.h).
  EXPECT_EQ(asleep[0].fd, probes_->probe_mode() == "file_layer" ? -1 : fd);
  EXPECT_TRUE(io_on(id, CKPT_OP_READ).empty()) << "a record before the read returned";

  // A real-time thread takes CPU 0; the page served wakes the reader there,
  // where it waits, inside its read.
  std::atomic<bool> hog_on{false};
  std::atomic<bool> hog_failed{false};
  std::atomic<bool> stop_hog{false};
  std::thread hog([&] {
    sched_param rt{};
    rt.sched_priority = 1;
    if (!pin_to_cpu(0) || pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt) != 0) {
      hog_failed = true;
      return;
    }
    hog_on = true;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!stop_hog && std::chrono::steady_clock::now() < until) {
    }
  });
  while (!hog_on && !hog_failed) usleep(1000);
  std::vector<char> page(kPage, 'u');
  uffdio_copy copy{};
  copy.dst = reinterpret_cast<uint64_t>(region);
  copy.src = reinterpret_cast<uint64_t>(page.data());
  copy.len = kPage;
  const int copied = ioctl(uffd, UFFDIO_COPY, &copy);
  usleep(20'000);
  for (int i = 0; i < 3; ++i) (void)probes_->poll(10);
  std::string woken_state;
  {
    std::ifstream in("/proc/" + std::to_string(tid) + "/syscall");
    std::getline(in, woken_state);
  }
  const size_t starts_while_held = starts_on(id, CKPT_OP_READ).size();
  const size_t reads_while_held = io_on(id, CKPT_OP_READ).size();
  const ssize_t got_while_held = got.load();
  stop_hog = true;
  hog.join();
  ASSERT_FALSE(hog_failed) << "no SCHED_FIFO thread: " << std::strerror(errno);
  ASSERT_EQ(copied, 0) << "UFFDIO_COPY: " << std::strerror(errno);
  EXPECT_EQ(got_while_held, -2) << "the read returned while its CPU was held";
  EXPECT_EQ(woken_state, "running") << "/proc did not say running";
  EXPECT_EQ(starts_while_held, 1u) << "announced again";
  EXPECT_EQ(reads_while_held, 0u);

  while (got == -2) usleep(1000);
  EXPECT_EQ(got.load(), static_cast<ssize_t>(kPage));
  release = true;
  reader.join();
  close(fd);
  drain();
  const auto reads = io_on(id, CKPT_OP_READ);
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(reads[0].hdr.tid, tid);
  EXPECT_EQ(reads[0].hdr.start_ns, asleep[0].hdr.start_ns) << "the start names the call's start";
  EXPECT_EQ(starts_on(id, CKPT_OP_READ).size(), 1u) << "once a call";
  // In ring order, the start came before the call's record.
  size_t start_at = SIZE_MAX;
  size_t read_at = SIZE_MAX;
  for (size_t i = 0; i < records_.arrival.size(); ++i) {
    const auto& h = records_.arrival[i];
    if (h.tid != tid || h.start_ns != asleep[0].hdr.start_ns) continue;
    if (h.kind == CKPT_REC_IO_START) start_at = i;
    if (h.kind == CKPT_REC_IO && h.op == CKPT_OP_READ) read_at = i;
  }
  EXPECT_LT(start_at, read_at);
  expect_no_drops();
}

// A data call asking for at least announce_min_bytes (4 MiB) is announced as
// it starts, even when it never leaves the CPU (served from the page cache,
// as a 2 GiB read(2) can be for longer than a quiet gap); a small one that
// never leaves the CPU costs no start record. Each read is tried until one
// ran without a context switch of its thread (getrusage), so that what is
// checked is the entry, not a switch.
TEST_F(JobIoRecords, ALargeCallIsAnnouncedAsItStartsASmallOneOnTheCpuIsNot) {
  const std::string large = dir_ / "large.bin";
  const std::string small = dir_ / "small.bin";
  std::vector<char> buf(8 << 20, 'l');
  for (const auto& [path, bytes] :
       {std::pair{large, buf.size()}, std::pair{small, size_t{65536}}}) {
    const int w = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(w, 0);
    ASSERT_EQ(write(w, buf.data(), bytes), static_cast<ssize_t>(bytes));
    close(w);
  }
  auto switches = [] {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_nvcsw + u.ru_nivcsw;
  };
  // One read of `bytes` from `path`, in the page cache, repeated until the
  // thread kept its CPU through it; the start records it made.
  auto read_on_the_cpu = [&](const std::string& path, size_t bytes) -> std::optional<size_t> {
    const FileIdentity id = identity_of(path);
    for (int attempt = 0; attempt < 20; ++attempt) {
      const int fd = open(path.c_str(), O_RDONLY);
      if (fd < 0) return std::nullopt;
      drain();
      const size_t before = starts_on(id, CKPT_OP_READ).size();
      const long s0 = switches();
      const ssize_t n = pread(fd, buf.data(), bytes, 0);
      const long s1 = switches();
      close(fd);
      drain();
      if (n != static_cast<ssize_t>(bytes)) return std::nullopt;
      if (s1 == s0) return starts_on(id, CKPT_OP_READ).size() - before;
    }
    return std::nullopt;
  };
  const auto large_starts = read_on_the_cpu(large, buf.size());
  ASSERT_TRUE(large_starts) << "no 8 MiB read without a context switch in 20 tries";
  EXPECT_EQ(*large_starts, 1u) << "an 8 MiB read was not announced as it started";
  const auto small_starts = read_on_the_cpu(small, 65536);
  ASSERT_TRUE(small_starts) << "no 64 KiB read without a context switch in 20 tries";
  EXPECT_EQ(*small_starts, 0u) << "a 64 KiB read on the CPU was announced";
  expect_no_drops();
}

}  // namespace
}  // namespace ckpt::test
