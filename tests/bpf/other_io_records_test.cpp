// The kernel's sums of calls on files user space ruled out (bpf/jobio.h
// ckpt_other_io_record, docs/stitching.md "Unrecognised I/O"): the test
// process traces itself, rules its own files out by hand (set_file_verdict),
// makes calls whose bytes it knows, and reads back what the kernel reported.
// The sums must be exact to the byte and the call, cost no record per call
// (two files in turn included), survive a third file evicting the oldest,
// count both sides of a copy, come out at close and at a thread's exit, and
// stop while paused (the exporter with no client).
// In every probe mode this kernel allows (syscall here; the file layer where
// fentry attaches, as in the tests/vm guests).
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "jobio.h"
#include "probes/kernel_features.h"
#include "probes/probe_manager.h"
#include "tests/bpf/harness.h"
#include "tests/bpf/self_trace.h"

namespace ckpt::test {
namespace {

// What the records say about one file.
struct Sums {
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t read_calls = 0;
  uint64_t write_calls = 0;
  size_t records = 0;
  size_t io_records = 0;    // ckpt_io_record of successful data calls on it
  size_t copy_records = 0;  // ckpt_copy_record naming it
};

class OtherIoRecords : public ::testing::TestWithParam<RequestedProbeMode> {
 protected:
  void SetUp() override {
    if (const std::string why = cannot_trace_here(GetParam()); !why.empty()) GTEST_SKIP() << why;
    auto started = trace_this_process(GetParam(), [this](const void* d, size_t n) { add(d, n); });
    ASSERT_TRUE(started) << started.error().message;
    probes_ = std::move(*started);
  }

  void add(const void* data, size_t size) {
    ckpt_record_header h{};
    ASSERT_GE(size, sizeof(h));
    std::memcpy(&h, data, sizeof(h));
    if (h.kind == CKPT_REC_OTHER_IO) {
      ASSERT_EQ(size, sizeof(ckpt_other_io_record));
      other_.push_back(*static_cast<const ckpt_other_io_record*>(data));
      order_.push_back(h.kind);
    } else if (h.kind == CKPT_REC_PATH && h.op == CKPT_OP_RENAME) {
      order_.push_back(h.kind);
    } else if (h.kind == CKPT_REC_IO && size >= sizeof(ckpt_io_record)) {
      io_.push_back(*static_cast<const ckpt_io_record*>(data));
    } else if (h.kind == CKPT_REC_COPY && size >= sizeof(ckpt_copy_record)) {
      copies_.push_back(*static_cast<const ckpt_copy_record*>(data));
    }
  }

  // Everything up to now reported (folds flush when this thread leaves the CPU).
  void drain() { test::drain(*probes_); }

  // Opens `path` (created, truncated), reports the open, then rules the
  // file out: from now on its successful calls are summed, not recorded.
  int open_ruled_out(const std::string& path, int flags = O_CREAT | O_RDWR | O_TRUNC) {
    int fd = open(path.c_str(), flags, 0644);
    EXPECT_GE(fd, 0) << path;
    drain();  // the open's record first: it clears any verdict on the inode
    probes_->set_file_verdict(identity_of(path).user, false);
    return fd;
  }

  Sums sums(const FileIdentity& f) const {
    Sums s;
    for (const auto& r : other_) {
      if (r.dev != f.kernel_dev || r.ino != f.ino) continue;
      ++s.records;
      s.bytes_read += r.bytes_read;
      s.bytes_written += r.bytes_written;
      s.read_calls += r.read_calls;
      s.write_calls += r.write_calls;
      EXPECT_EQ(r.hdr.cpu_ns, 0u);
      EXPECT_LE(r.hdr.start_ns, r.hdr.end_ns);
      EXPECT_EQ(r.hdr.tgid, static_cast<uint32_t>(getpid()));
    }
    for (const auto& r : io_)
      if (r.dev == f.kernel_dev && r.ino == f.ino && r.ret > 0 &&
          (r.hdr.op == CKPT_OP_READ || r.hdr.op == CKPT_OP_WRITE))
        ++s.io_records;
    for (const auto& c : copies_)
      if ((c.src_dev == f.kernel_dev && c.src_ino == f.ino) ||
          (c.dst_dev == f.kernel_dev && c.dst_ino == f.ino))
        ++s.copy_records;
    return s;
  }

  void expect_no_drops() const {
    for (const auto& d : probes_->drops()) EXPECT_EQ(d.count, 0u) << d.source << "." << d.cause;
  }

  ScratchDir dir_;
  std::vector<ckpt_other_io_record> other_;
  std::vector<uint32_t> order_;  // the kinds of the sums' and the renames' records, as they came
  std::vector<ckpt_io_record> io_;
  std::vector<ckpt_copy_record> copies_;
  std::unique_ptr<ProbeManager> probes_;
};

TEST_P(OtherIoRecords, TwentyMibThroughAFileRuledOutSumToTheByte) {
  const std::string path = dir_ / "out-model_state.dat";
  int fd = open_ruled_out(path);
  ASSERT_GE(fd, 0);
  std::vector<char> buf(1 << 20, 's');
  // 20 MiB: 1024 writes of 4 KiB, then 16 of 1 MiB.
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(write(fd, buf.data(), 4096), 4096);
  for (int i = 0; i < 16; ++i) ASSERT_EQ(write(fd, buf.data(), buf.size()), 1 << 20);
  // Then 1 MiB read back, and one read at the end of the file (0 bytes: nothing to count).
  ASSERT_EQ(pread(fd, buf.data(), buf.size(), 0), 1 << 20);
  ASSERT_EQ(pread(fd, buf.data(), 10, 20 << 20), 0);
  close(fd);
  drain();
  const Sums s = sums(identity_of(path));
  EXPECT_EQ(s.bytes_written, 20u << 20);
  EXPECT_EQ(s.write_calls, 1040u);
  EXPECT_EQ(s.bytes_read, 1u << 20);
  EXPECT_EQ(s.read_calls, 1u);
  EXPECT_EQ(s.io_records, 0u) << "a ruled-out file's calls were recorded one by one";
  // The close reports the sums (an older one only if a switch found them a
  // second old): a few records, not one per call.
  EXPECT_GE(s.records, 1u);
  EXPECT_LE(s.records, 3u);
  expect_no_drops();
}

TEST_P(OtherIoRecords, TwoFilesInTurnCostNoRecordPerCall) {
  const std::string in_path = dir_ / "dataset.dat";
  const std::string out_path = dir_ / "features.dat";
  std::vector<char> buf(4096, 't');
  {
    int fd = open(in_path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    for (int i = 0; i < 500; ++i) ASSERT_EQ(write(fd, buf.data(), buf.size()), 4096);
    close(fd);
  }
  int in = open_ruled_out(in_path, O_RDONLY);
  int out = open_ruled_out(out_path);
  ASSERT_GE(in, 0);
  ASSERT_GE(out, 0);
  for (int i = 0; i < 500; ++i) {
    ASSERT_EQ(read(in, buf.data(), buf.size()), 4096);
    ASSERT_EQ(write(out, buf.data(), buf.size()), 4096);
  }
  close(in);
  close(out);
  drain();
  const Sums r = sums(identity_of(in_path));
  const Sums w = sums(identity_of(out_path));
  EXPECT_EQ(r.bytes_read, 500u * 4096);
  EXPECT_EQ(r.read_calls, 500u);
  EXPECT_EQ(r.bytes_written, 0u);
  EXPECT_EQ(w.bytes_written, 500u * 4096);
  EXPECT_EQ(w.write_calls, 500u);
  EXPECT_LE(r.records, 3u);
  EXPECT_LE(w.records, 3u);
  expect_no_drops();
}

TEST_P(OtherIoRecords, AThirdFileReportsTheOldestAndTheSumsStayExact) {
  std::vector<std::string> paths;
  std::vector<int> fds;
  for (const char* name : {"a.dat", "b.dat", "c.dat"}) {
    paths.push_back(dir_ / name);
    fds.push_back(open_ruled_out(paths.back()));
    ASSERT_GE(fds.back(), 0);
  }
  std::vector<char> buf(8192, 'r');
  for (int round = 0; round < 100; ++round)
    for (size_t f = 0; f < fds.size(); ++f)
      ASSERT_EQ(write(fds[f], buf.data(), 1000 * (f + 1)), static_cast<ssize_t>(1000 * (f + 1)));
  for (int fd : fds) close(fd);
  drain();
  for (size_t f = 0; f < paths.size(); ++f) {
    const Sums s = sums(identity_of(paths[f]));
    EXPECT_EQ(s.bytes_written, 100u * 1000 * (f + 1)) << paths[f];
    EXPECT_EQ(s.write_calls, 100u) << paths[f];
  }
  expect_no_drops();
}

TEST_P(OtherIoRecords, ACopyBetweenFilesRuledOutIsAReadAndAWrite) {
  const std::string src = dir_ / "src.dat";
  const std::string dst = dir_ / "dst.dat";
  const std::string dst2 = dir_ / "dst2.dat";
  std::vector<char> buf(3 << 20, 'c');
  {
    int fd = open(src.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, buf.data(), buf.size()), static_cast<ssize_t>(buf.size()));
    close(fd);
  }
  int in = open_ruled_out(src, O_RDONLY);
  int out = open_ruled_out(dst);
  int out2 = open_ruled_out(dst2);
  loff_t in_off = 0;
  ASSERT_EQ(copy_file_range(in, &in_off, out, nullptr, buf.size(), 0),
            static_cast<ssize_t>(buf.size()));
  off_t off = 0;
  ASSERT_EQ(sendfile(out2, in, &off, 1 << 20), 1 << 20);
  close(in);
  close(out);
  close(out2);
  drain();
  const Sums s = sums(identity_of(src));
  const Sums d = sums(identity_of(dst));
  const Sums d2 = sums(identity_of(dst2));
  EXPECT_EQ(s.bytes_read, (3u << 20) + (1u << 20));
  EXPECT_EQ(s.read_calls, 2u);
  EXPECT_EQ(d.bytes_written, 3u << 20);
  EXPECT_EQ(d2.bytes_written, 1u << 20);
  EXPECT_EQ(s.copy_records + d.copy_records + d2.copy_records, 0u)
      << "a copy neither side of which can be a checkpoint was recorded";
  expect_no_drops();
}

TEST_P(OtherIoRecords, AThreadThatExitsReportsWhatItStillHeld) {
  const std::string path = dir_ / "held.dat";
  int fd = open_ruled_out(path);
  ASSERT_GE(fd, 0);
  std::thread writer([fd] {
    std::vector<char> buf(1 << 20, 'h');
    for (int i = 0; i < 2; ++i)
      if (write(fd, buf.data(), buf.size()) != 1 << 20) return;
  });
  writer.join();
  drain();  // the fd is still open: only the thread's exit reported the sums
  const Sums s = sums(identity_of(path));
  EXPECT_EQ(s.bytes_written, 2u << 20);
  EXPECT_EQ(s.write_calls, 2u);
  close(fd);
  expect_no_drops();
}

// A rename may make a file ruled out a checkpoint's (docs/stitching.md,
// "Decided late"): the renaming thread's sums come before the rename's own
// record, the file still open, so user space has them when it decides.
TEST_P(OtherIoRecords, ARenameReportsTheThreadsSumsFirst) {
  const std::string path = dir_ / "state.raw";
  int fd = open_ruled_out(path);
  ASSERT_GE(fd, 0);
  const FileIdentity id = identity_of(path);
  std::vector<char> buf(1 << 20, 'r');
  for (int i = 0; i < 8; ++i) ASSERT_EQ(write(fd, buf.data(), buf.size()), 1 << 20);
  ASSERT_EQ(rename(path.c_str(), (dir_ / "ckpt-final.pt").c_str()), 0);
  drain();
  const Sums s = sums(id);
  EXPECT_EQ(s.bytes_written, 8u << 20);
  EXPECT_EQ(s.write_calls, 8u);
  ASSERT_EQ(order_.size(), 2u) << "one record of sums, then the rename";
  EXPECT_EQ(order_[0], static_cast<uint32_t>(CKPT_REC_OTHER_IO));
  EXPECT_EQ(order_[1], static_cast<uint32_t>(CKPT_REC_PATH));
  close(fd);
  expect_no_drops();
}

// The exporter pauses the sums while no client traces: then a call on a file
// ruled out costs the check and is neither summed nor recorded; resumed, the
// calls after count.
TEST_P(OtherIoRecords, PausedTheCallsAreNotSummed) {
  const std::string path = dir_ / "paused.dat";
  int fd = open_ruled_out(path);
  ASSERT_GE(fd, 0);
  std::vector<char> buf(1 << 20, 'p');
  probes_->pause_other_io(true);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(write(fd, buf.data(), buf.size()), 1 << 20);
  probes_->pause_other_io(false);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(write(fd, buf.data(), buf.size()), 1 << 20);
  close(fd);
  drain();
  const Sums s = sums(identity_of(path));
  EXPECT_EQ(s.bytes_written, 3u << 20);
  EXPECT_EQ(s.write_calls, 3u);
  EXPECT_EQ(s.io_records, 0u);
  expect_no_drops();
}

INSTANTIATE_TEST_SUITE_P(Modes, OtherIoRecords, kBothModes, mode_name);

}  // namespace
}  // namespace ckpt::test
