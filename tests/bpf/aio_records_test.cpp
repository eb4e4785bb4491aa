// Linux AIO (io_submit/io_getevents, what libaio and DeepSpeed's async I/O
// use; bpf/jobio_aio.bpf.h): the test process traces itself, submits
// requests whose sizes it knows through the raw system calls (no libaio), and
// reads back the records. Every request is one data call with via
// CKPT_VIA_AIO and its exact bytes, from its submission to its reaping; a
// wait that blocks with requests out is announced in flight before its
// completions; a
// refused request is a failed call, one the kernel did not take is nothing;
// a file ruled out is summed, not recorded; requests never reaped are
// counted lost at their process' exit.
// In every probe mode this kernel allows (syscall here; the file layer where
// fentry attaches, as in the tests/vm guests).
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/clock.h"
#include "jobio.h"
#include "probes/kernel_features.h"
#include "probes/probe_manager.h"
#include "tests/bpf/harness.h"
#include "tests/bpf/self_trace.h"

namespace ckpt::test {
namespace {

constexpr size_t kMiB = 1 << 20;

long io_setup(unsigned nr, aio_context_t* ctx) { return syscall(SYS_io_setup, nr, ctx); }
long io_destroy(aio_context_t ctx) { return syscall(SYS_io_destroy, ctx); }
long io_submit(aio_context_t ctx, long nr, iocb** iocbpp) {
  return syscall(SYS_io_submit, ctx, nr, iocbpp);
}
long io_getevents(aio_context_t ctx, long min_nr, long nr, io_event* events) {
  return syscall(SYS_io_getevents, ctx, min_nr, nr, events, nullptr);
}

iocb request(int fd, uint16_t opcode, void* buf, size_t len, int64_t offset) {
  iocb cb{};
  cb.aio_fildes = static_cast<uint32_t>(fd);
  cb.aio_lio_opcode = opcode;
  cb.aio_buf = reinterpret_cast<uint64_t>(buf);
  cb.aio_nbytes = len;
  cb.aio_offset = offset;
  return cb;
}

// Page-aligned buffers, as O_DIRECT needs.
struct AlignedBuffer {
  explicit AlignedBuffer(size_t n) : size(n) {
    void* p = nullptr;
    EXPECT_EQ(posix_memalign(&p, 4096, n), 0);
    data = static_cast<char*>(p);
    std::memset(data, 'a', n);
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  char* data = nullptr;
  size_t size = 0;
};

class AioRecords : public ::testing::TestWithParam<RequestedProbeMode> {
 protected:
  void SetUp() override {
    if (const std::string why = cannot_trace_here(GetParam()); !why.empty()) GTEST_SKIP() << why;
    auto started = trace_this_process(GetParam(), [this](const void* d, size_t n) { add(d, n); });
    ASSERT_TRUE(started) << started.error().message;
    probes_ = std::move(*started);
    ASSERT_EQ(io_setup(64, &ctx_), 0) << std::strerror(errno);
  }

  void TearDown() override {
    if (ctx_) io_destroy(ctx_);
  }

  void add(const void* data, size_t size) {
    ckpt_record_header h{};
    ASSERT_GE(size, sizeof(h));
    std::memcpy(&h, data, sizeof(h));
    if ((h.kind == CKPT_REC_IO || h.kind == CKPT_REC_IO_START) && size >= sizeof(ckpt_io_record))
      io_.push_back(*static_cast<const ckpt_io_record*>(data));
    if (h.kind == CKPT_REC_IO || h.kind == CKPT_REC_IO_START || h.kind == CKPT_REC_CALL_END)
      order_.push_back(h);
    else if (h.kind == CKPT_REC_OTHER_IO && size >= sizeof(ckpt_other_io_record))
      other_.push_back(*static_cast<const ckpt_other_io_record*>(data));
  }

  void drain() { test::drain(*probes_); }

  // A file opened with O_DIRECT on the scratch directory's disk (ext4 here;
  // a file system without O_DIRECT fails the test, naming it).
  int open_direct(const std::string& path, int flags = O_CREAT | O_RDWR | O_TRUNC) {
    int fd = open(path.c_str(), flags | O_DIRECT, 0644);
    EXPECT_GE(fd, 0) << path << ": O_DIRECT open failed: " << std::strerror(errno)
                     << " (set CKPTSCOPE_TEST_TMP to a directory on a disk file system)";
    return fd;
  }

  // `path` written whole with `buf` (and synced), then opened with
  // O_DIRECT: ext4 makes a direct write that extends its file wait inside
  // io_submit (IOMAP_DIO_FORCE_WAIT), one within it does not.
  int written_whole(const std::string& path, const AlignedBuffer& buf) {
    int plain = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    EXPECT_GE(plain, 0) << path;
    EXPECT_EQ(write(plain, buf.data, buf.size), static_cast<ssize_t>(buf.size));
    EXPECT_EQ(fsync(plain), 0);
    close(plain);
    return open_direct(path, O_RDWR);
  }

  // 1 MiB direct writes of `buf` over `fd`, one per MiB of it.
  static std::vector<iocb> overwrites(int fd, const AlignedBuffer& buf) {
    std::vector<iocb> writes;
    for (size_t i = 0; i < buf.size / kMiB; ++i)
      writes.push_back(request(fd, IOCB_CMD_PWRITE, buf.data + i * kMiB, kMiB, i * kMiB));
    return writes;
  }

  // Submits `cbs` in one io_submit, then reaps every completion, checking
  // each result is what the request asked for.
  void submit_and_reap(std::vector<iocb>& cbs, long expect_each) {
    std::vector<iocb*> ptrs;
    ptrs.reserve(cbs.size());
    for (auto& cb : cbs) ptrs.push_back(&cb);
    ASSERT_EQ(io_submit(ctx_, static_cast<long>(ptrs.size()), ptrs.data()),
              static_cast<long>(ptrs.size()))
        << std::strerror(errno);
    std::vector<io_event> events(cbs.size());
    long got = 0;
    while (got < static_cast<long>(cbs.size())) {
      long n = io_getevents(ctx_, 1, static_cast<long>(cbs.size()) - got, events.data() + got);
      ASSERT_GT(n, 0) << std::strerror(errno);
      got += n;
    }
    for (const auto& ev : events) EXPECT_EQ(ev.res, expect_each);
  }

  // The completed AIO requests on `f` with op `op`.
  std::vector<ckpt_io_record> aio_calls(const FileIdentity& f, uint32_t op) const {
    std::vector<ckpt_io_record> out;
    for (const auto& r : io_)
      if (r.hdr.kind == CKPT_REC_IO && r.via == CKPT_VIA_AIO && r.dev == f.kernel_dev &&
          r.ino == f.ino && r.hdr.op == op)
        out.push_back(r);
    return out;
  }

  static uint64_t bytes(const std::vector<ckpt_io_record>& calls) {
    uint64_t n = 0;
    for (const auto& r : calls) n += r.ret > 0 ? static_cast<uint64_t>(r.ret) : 0;
    return n;
  }

  uint64_t dropped(std::string_view cause) const {
    uint64_t n = 0;
    for (const auto& d : probes_->drops())
      if (d.source == "jobio" && d.cause == cause) n += d.count;
    return n;
  }

  void expect_no_drops() const {
    for (const auto& d : probes_->drops()) EXPECT_EQ(d.count, 0u) << d.source << "." << d.cause;
  }

  ScratchDir dir_;
  aio_context_t ctx_ = 0;
  std::vector<ckpt_io_record> io_;         // CKPT_REC_IO and CKPT_REC_IO_START, as they came
  std::vector<ckpt_record_header> order_;  // and CKPT_REC_CALL_END, their headers in order
  std::vector<ckpt_other_io_record> other_;
  std::unique_ptr<ProbeManager> probes_;
};

TEST_P(AioRecords, DirectWritesThenReadsAreOneRecordEachWithEveryByte) {
  const std::string path = dir_ / "shard-0.pt";
  int fd = open_direct(path);
  ASSERT_GE(fd, 0);
  AlignedBuffer buf(16 * kMiB);
  // 16 MiB written as 16 requests of 1 MiB in one io_submit (DeepSpeed's
  // way: its queue depth at once), then read back as two batches of 8.
  std::vector<iocb> writes;
  for (size_t i = 0; i < 16; ++i)
    writes.push_back(request(fd, IOCB_CMD_PWRITE, buf.data + i * kMiB, kMiB, i * kMiB));
  submit_and_reap(writes, kMiB);
  for (size_t batch = 0; batch < 2; ++batch) {
    std::vector<iocb> reads;
    for (size_t i = batch * 8; i < batch * 8 + 8; ++i)
      reads.push_back(request(fd, IOCB_CMD_PREAD, buf.data + i * kMiB, kMiB, i * kMiB));
    submit_and_reap(reads, kMiB);
  }
  close(fd);
  drain();
  const FileIdentity f = identity_of(path);
  const auto w = aio_calls(f, CKPT_OP_WRITE);
  const auto r = aio_calls(f, CKPT_OP_READ);
  EXPECT_EQ(w.size(), 16u);
  EXPECT_EQ(bytes(w), 16 * kMiB);
  EXPECT_EQ(r.size(), 16u);
  EXPECT_EQ(bytes(r), 16 * kMiB);
  for (const auto& c : w) {
    EXPECT_EQ(c.requested, kMiB);
    EXPECT_EQ(c.calls, 1u);
    EXPECT_EQ(c.fd, fd);
    EXPECT_EQ(c.hdr.tgid, static_cast<uint32_t>(getpid()));
    EXPECT_LE(c.hdr.start_ns, c.hdr.end_ns);
    EXPECT_EQ(c.busy_ns, c.hdr.end_ns - c.hdr.start_ns);
  }
  // No write starts after a read of the file began: the reads came later.
  for (const auto& c : r) EXPECT_GE(c.hdr.start_ns, w.back().hdr.start_ns);
  expect_no_drops();
}

TEST_P(AioRecords, BufferedRequestsCompleteInTheSubmissionAndCountTheSame) {
  const std::string path = dir_ / "optim-0.pt";
  int fd = open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  AlignedBuffer buf(3 * kMiB + 12345);
  std::vector<iocb> writes = {request(fd, IOCB_CMD_PWRITE, buf.data, 3 * kMiB, 0),
                              request(fd, IOCB_CMD_PWRITE, buf.data, 12345, 3 * kMiB)};
  std::vector<iocb*> ptrs = {&writes[0], &writes[1]};
  ASSERT_EQ(io_submit(ctx_, 2, ptrs.data()), 2);
  io_event events[2];
  ASSERT_EQ(io_getevents(ctx_, 2, 2, events), 2);
  close(fd);
  drain();
  const auto w = aio_calls(identity_of(path), CKPT_OP_WRITE);
  EXPECT_EQ(bytes(w), 3 * kMiB + 12345);
  // The small one may fold with nothing else: two requests, two calls.
  uint64_t calls = 0;
  for (const auto& c : w) calls += c.calls;
  EXPECT_EQ(calls, 2u);
  expect_no_drops();
}

TEST_P(AioRecords, AWaitWithRequestsOutIsAnnouncedBeforeItsCompletions) {
  const std::string path = dir_ / "model_states.pt";
  AlignedBuffer buf(8 * kMiB);
  int fd = written_whole(path, buf);
  ASSERT_GE(fd, 0);
  std::vector<iocb> writes = overwrites(fd, buf);
  std::vector<iocb*> ptrs;
  for (auto& cb : writes) ptrs.push_back(&cb);
  ASSERT_EQ(io_submit(ctx_, 8, ptrs.data()), 8);
  // One wait for all eight: 8 MiB of direct writes take the disk
  // milliseconds, so the thread leaves the CPU in it.
  io_event events[8];
  ASSERT_EQ(io_getevents(ctx_, 8, 8, events), 8);
  close(fd);
  drain();
  const FileIdentity f = identity_of(path);
  const auto tid = static_cast<uint32_t>(gettid());
  size_t first_start = io_.size();
  size_t first_completion = io_.size();
  for (size_t i = 0; i < io_.size(); ++i) {
    const auto& r = io_[i];
    if (r.hdr.tid != tid || r.dev != f.kernel_dev || r.ino != f.ino || r.via != CKPT_VIA_AIO)
      continue;
    if (r.hdr.kind == CKPT_REC_IO_START && first_start == io_.size()) {
      first_start = i;
      EXPECT_EQ(r.hdr.end_ns, 0u);
      EXPECT_EQ(r.hdr.op, static_cast<uint32_t>(CKPT_OP_WRITE));
    }
    if (r.hdr.kind == CKPT_REC_IO && first_completion == io_.size()) first_completion = i;
  }
  ASSERT_LT(first_start, io_.size()) << "the wait with 8 requests out was not announced";
  ASSERT_LT(first_completion, io_.size());
  EXPECT_LT(first_start, first_completion);
  expect_no_drops();
}

// Only a wait on the context with requests out is announced (DeepSpeed's
// swap threads wait on contexts of their own), and an announced wait that
// times out ends with CKPT_REC_CALL_END after whatever it reaped.
TEST_P(AioRecords, AWaitIsAnnouncedForItsOwnContextAndEndsWithItsEndRecord) {
  const std::string path = dir_ / "optim_states.pt";
  AlignedBuffer buf(8 * kMiB);
  int fd = written_whole(path, buf);
  ASSERT_GE(fd, 0);
  aio_context_t other = 0;
  ASSERT_EQ(io_setup(8, &other), 0);
  std::vector<iocb> writes = overwrites(fd, buf);
  std::vector<iocb*> ptrs;
  for (auto& cb : writes) ptrs.push_back(&cb);
  ASSERT_EQ(io_submit(ctx_, 8, ptrs.data()), 8);
  // 10 ms on the other context, which has nothing out: it blocks, unannounced.
  io_event events[9];
  timespec ten_ms{0, 10'000'000};
  const uint64_t other_from = monotonic_ns();
  ASSERT_EQ(syscall(SYS_io_getevents, other, 1, 1, events, &ten_ms), 0);
  const uint64_t other_to = monotonic_ns();
  // Nine asked of eight: it waits out its 50 ms and returns the eight.
  timespec fifty_ms{0, 50'000'000};
  ASSERT_EQ(syscall(SYS_io_getevents, ctx_, 9, 9, events, &fifty_ms), 8);
  io_destroy(other);
  close(fd);
  drain();
  const auto tid = static_cast<uint32_t>(gettid());
  size_t start = order_.size();
  size_t completion = order_.size();
  size_t end = order_.size();
  for (size_t i = 0; i < order_.size(); ++i) {
    const auto& h = order_[i];
    if (h.tid != tid) continue;
    if (h.kind == CKPT_REC_IO_START) {
      EXPECT_FALSE(h.start_ns >= other_from && h.start_ns <= other_to)
          << "the wait on the other context was announced";
      // (io_submit itself may have blocked and been announced before.)
      if (start == order_.size() && h.start_ns >= other_to) start = i;
    }
    if (h.kind == CKPT_REC_IO && start < order_.size() && completion == order_.size())
      completion = i;
    if (h.kind == CKPT_REC_CALL_END && start < order_.size()) end = i;
  }
  ASSERT_LT(start, order_.size()) << "the wait with 8 requests out was not announced";
  ASSERT_LT(end, order_.size()) << "no end record after the announced wait";
  EXPECT_LT(start, completion);
  EXPECT_LT(completion, end);
  EXPECT_EQ(bytes(aio_calls(identity_of(path), CKPT_OP_WRITE)), 8 * kMiB);
  expect_no_drops();
}

TEST_P(AioRecords, ARefusalIsAFailedCallAndARequestNotTakenIsNothing) {
  const std::string path = dir_ / "shard-1.pt";
  {
    int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    close(fd);
  }
  int ro = open(path.c_str(), O_RDONLY);
  int rw = open(path.c_str(), O_RDWR);
  ASSERT_GE(ro, 0);
  ASSERT_GE(rw, 0);
  AlignedBuffer buf(kMiB);
  // A write through a read-only fd: the kernel refuses it (EBADF), and
  // io_submit fails with it.
  iocb refused = request(ro, IOCB_CMD_PWRITE, buf.data, kMiB, 0);
  iocb* one[] = {&refused};
  ASSERT_EQ(io_submit(ctx_, 1, one), -1);
  ASSERT_EQ(errno, EBADF);
  // A good write, then the refused one: io_submit takes the first and says 1.
  iocb good = request(rw, IOCB_CMD_PWRITE, buf.data, kMiB, 0);
  iocb* two[] = {&good, &refused};
  ASSERT_EQ(io_submit(ctx_, 2, two), 1);
  io_event ev{};
  ASSERT_EQ(io_getevents(ctx_, 1, 1, &ev), 1);
  EXPECT_EQ(ev.res, static_cast<int64_t>(kMiB));
  close(ro);
  close(rw);
  drain();
  const auto w = aio_calls(identity_of(path), CKPT_OP_WRITE);
  size_t failed = 0;
  uint64_t moved = 0;
  for (const auto& c : w) {
    if (c.ret < 0) {
      ++failed;
      EXPECT_EQ(c.ret, -EBADF);
    } else {
      moved += static_cast<uint64_t>(c.ret);
    }
  }
  // The syscall mode sees the refusal io_submit returned; the file layer
  // sees each refusal the kernel made (the second one too).
  if (GetParam() == RequestedProbeMode::Syscall)
    EXPECT_EQ(failed, 1u);
  else
    EXPECT_EQ(failed, 2u);
  EXPECT_EQ(moved, kMiB);
  expect_no_drops();
}

TEST_P(AioRecords, AFileRuledOutIsSummedNotRecorded) {
  const std::string path = dir_ / "dataset-cache.bin";
  int fd = open_direct(path);
  ASSERT_GE(fd, 0);
  drain();  // the open's record first: it clears any verdict on the inode
  const FileIdentity f = identity_of(path);
  probes_->set_file_verdict(f.user, false);
  AlignedBuffer buf(4 * kMiB);
  std::vector<iocb> writes;
  for (size_t i = 0; i < 4; ++i)
    writes.push_back(request(fd, IOCB_CMD_PWRITE, buf.data + i * kMiB, kMiB, i * kMiB));
  submit_and_reap(writes, kMiB);
  close(fd);
  drain();
  EXPECT_TRUE(aio_calls(f, CKPT_OP_WRITE).empty()) << "a ruled-out file's requests were recorded";
  uint64_t written = 0;
  uint64_t calls = 0;
  for (const auto& o : other_)
    if (o.dev == f.kernel_dev && o.ino == f.ino) {
      written += o.bytes_written;
      calls += o.write_calls;
    }
  EXPECT_EQ(written, 4 * kMiB);
  EXPECT_EQ(calls, 4u);
  // Not announced either: nothing out could be a checkpoint's.
  for (const auto& r : io_)
    EXPECT_FALSE(r.hdr.kind == CKPT_REC_IO_START && r.dev == f.kernel_dev && r.ino == f.ino);
  expect_no_drops();
}

TEST_P(AioRecords, RequestsNeverReapedAreCountedLostWhenTheirProcessExits) {
  const std::string path = dir_ / "shard-2.pt";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child (traced: forks are followed) submits two writes and exits
    // without reaping them; the kernel completes them at its exit.
    aio_context_t ctx = 0;
    int fd = open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0 || io_setup(8, &ctx) != 0) _exit(2);
    static char data[65536];
    iocb a = request(fd, IOCB_CMD_PWRITE, data, sizeof(data), 0);
    iocb b = request(fd, IOCB_CMD_PWRITE, data, sizeof(data), sizeof(data));
    iocb* both[] = {&a, &b};
    _exit(io_submit(ctx, 2, both) == 2 ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  drain();
  EXPECT_EQ(dropped("aio_unreaped"), 2u);
  EXPECT_TRUE(aio_calls(identity_of(path), CKPT_OP_WRITE).empty());
}

INSTANTIATE_TEST_SUITE_P(Modes, AioRecords, kBothModes, mode_name);

}  // namespace
}  // namespace ckpt::test
