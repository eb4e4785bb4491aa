// The file-layer records of bpf/jobio.h (folded calls, copies, mmap faults,
// io_uring), filled as the kernel fills them, decoded by JobIoSource and
// stitched: exact figures for each.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "jobio.h"
#include "sources/jobio_source.h"
#include "stitch/page_set.h"
#include "stitch/stitcher.h"

namespace ckpt {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

constexpr uint64_t kUs = 1'000;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kPage = 4096;

class FixedMaxima : public MaximaProvider {
 public:
  StageMax storage(Direction, const std::vector<FileId>&) override { return {1e9, "test"}; }
  StageMax serialize(size_t /*threads*/) override { return {std::nullopt, "unknown"}; }
  StageMax transport(const std::string&) override { return {1e9, "test"}; }
};

// The kernel's encoding of a device (MKDEV): what the records carry.
constexpr uint64_t kKernelDev = (8ull << 20) | 3;
const uint64_t kUserDev = makedev(8, 3);

const std::string kShardA = "/nfs/run/checkpoint-1/shard-0.pt";
const std::string kShardB = "/nfs/backup/checkpoint-1/shard-0.pt";
const std::string kDataset = "/data/train/part-0.arrow";
constexpr uint64_t kInoA = 1000;
constexpr uint64_t kInoB = 2000;
constexpr uint64_t kInoData = 3000;
constexpr uint32_t kTgid = 4242;
constexpr uint32_t kTid = 4243;

ckpt_record_header header(uint32_t kind, uint32_t op, uint64_t start, uint64_t end) {
  ckpt_record_header h{};
  h.kind = kind;
  h.op = op;
  h.tgid = kTgid;
  h.tid = kTid;
  h.start_ns = start;
  h.end_ns = end;
  h.cpu_window_start_ns = start;
  return h;
}

// One call as the kernel records it unfolded.
ckpt_io_record io_record(uint32_t op, uint64_t ino, uint64_t start, uint64_t end, int64_t ret,
                         uint32_t via = CKPT_VIA_SYSCALL) {
  ckpt_io_record r{};
  r.hdr = header(CKPT_REC_IO, op, start, end);
  r.ret = ret;
  r.requested = ret > 0 ? static_cast<uint64_t>(ret) : 0;
  r.dev = kKernelDev;
  r.ino = ino;
  r.fd = 7;
  r.file_type = CKPT_FT_REGULAR;
  r.calls = 1;
  r.via = via;
  r.busy_ns = end - start;
  r.last_start_ns = start;
  return r;
}

ckpt_copy_record copy_record(uint64_t src_ino, uint64_t dst_ino, uint64_t start, uint64_t end,
                             int64_t ret, uint32_t via = CKPT_VIA_COPY_FILE_RANGE) {
  ckpt_copy_record r{};
  r.hdr = header(CKPT_REC_COPY, 0, start, end);
  r.ret = ret;
  r.requested = ret > 0 ? static_cast<uint64_t>(ret) : kMiB;
  r.src_dev = kKernelDev;
  r.src_ino = src_ino;
  r.dst_dev = kKernelDev;
  r.dst_ino = dst_ino;
  r.src_fd = -1;  // the file layer sees no fds
  r.dst_fd = -1;
  r.src_type = CKPT_FT_REGULAR;
  r.dst_type = CKPT_FT_REGULAR;
  r.via = via;
  return r;
}

ckpt_mmap_record mmap_record(uint64_t ino, uint64_t start, uint64_t first_page, uint64_t last_page,
                             uint64_t file_size, uint64_t storage_pages, uint32_t faults) {
  ckpt_mmap_record r{};
  r.hdr = header(CKPT_REC_MMAP, CKPT_OP_READ, start, start + 20 * kUs);
  r.dev = kKernelDev;
  r.ino = ino;
  r.first_page = first_page;
  r.last_page = last_page;
  r.file_size = file_size;
  r.storage_pages = storage_pages;
  r.busy_ns = 15 * kUs;
  r.faults = faults;
  r.page_shift = 12;
  return r;
}

// Folios [first_page, last_page] of the file a store through a shared
// mapping dirtied (bpf/jobio.h, hdr.op CKPT_OP_WRITE): no storage, no time.
ckpt_mmap_record store_record(uint64_t ino, uint64_t start, uint64_t first_page, uint64_t last_page,
                              uint64_t file_size, uint32_t faults) {
  ckpt_mmap_record r = mmap_record(ino, start, first_page, last_page, file_size, 0, faults);
  r.hdr.op = CKPT_OP_WRITE;
  r.busy_ns = 0;
  return r;
}

const StageRecord& stage(const CheckpointRecord& c, std::string_view name) {
  for (const auto& s : c.stages)
    if (s.name == name) return s;
  ADD_FAILURE() << "no stage " << name;
  static StageRecord none;
  return none;
}

const FileIoRecord& file_of(const CheckpointRecord& c, const std::string& path) {
  for (const auto& f : c.file_io)
    if (f.path == path) return f;
  ADD_FAILURE() << "no file " << path;
  static FileIoRecord none;
  return none;
}

class FileLayerRecordsTest : public ::testing::Test {
 protected:
  FileLayerRecordsTest()
      : stitcher_(Config::defaults(), std::make_shared<FixedMaxima>(),
                  StageAvailability{.job_io = true}),
        source_(stitcher_, resolver_) {
    // Opened before these records (their opens were seen): names by identity.
    resolver_.remember(FileId{kUserDev, kInoA}, kShardA);
    resolver_.remember(FileId{kUserDev, kInoB}, kShardB);
    resolver_.remember(FileId{kUserDev, kInoData}, kDataset);
  }
  template <typename R>
  void feed(const R& r) {
    source_.on_record(&r, sizeof(r));
  }
  std::vector<CheckpointRecord> finish() {
    stitcher_.finish();
    return stitcher_.take_checkpoints();
  }
  uint64_t malformed() const {
    for (const auto& d : source_.drops())
      if (d.cause == "malformed_record") return d.count;
    return 0;
  }

  PathResolver resolver_;
  Stitcher stitcher_;
  JobIoSource source_;
};

// sendfile(socket, checkpoint): the upload of a checkpoint. Its destination
// half is a socket, which holds no file data: no unrecognised I/O.
TEST_F(FileLayerRecordsTest, ASocketAtTheOtherEndOfACopyIsNoUnrecognisedFile) {
  constexpr uint64_t kSocketIno = 900;
  ckpt_copy_record r =
      copy_record(kInoA, kSocketIno, 10 * kMs, 12 * kMs, 32 * kMiB, CKPT_VIA_SENDFILE);
  r.dst_type = CKPT_FT_UNKNOWN;
  feed(r);
  auto cps = finish();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(file_of(cps[0], kShardA).bytes_read, 32 * kMiB);
  const UnrecognisedIoRecord io = stitcher_.unrecognised_io();
  EXPECT_EQ(io.bytes(), 0u) << "a socket is no file";
  EXPECT_EQ(io.files, 0u);
  // A regular file at the other end is one.
  ckpt_copy_record to_file = copy_record(kInoA, kSocketIno, 20 * kMs, 22 * kMs, 32 * kMiB);
  Stitcher again(Config::defaults(), std::make_shared<FixedMaxima>(),
                 StageAvailability{.job_io = true});
  PathResolver resolver;
  JobIoSource source(again, resolver);
  source.on_record(&to_file, sizeof(to_file));
  again.finish();
  EXPECT_EQ(again.unrecognised_io().bytes_written, 32 * kMiB);
}

TEST_F(FileLayerRecordsTest, AFoldedRecordOfAHundredSmallWritesCountsEveryCall) {
  // 100 writes of 4 KiB, 2 us each, one every 10 us from t = 10 ms: the last
  // starts at 10.990 ms and ends at 10.992 ms. Between them the thread
  // computed 500 us (cpu_ns) since its window opened at 9 ms.
  ckpt_io_record r = io_record(CKPT_OP_WRITE, kInoA, 10 * kMs, 10 * kMs + 992 * kUs,
                               static_cast<int64_t>(100 * 4 * kKiB));
  r.calls = 100;
  r.busy_ns = 100 * 2 * kUs;
  r.last_start_ns = 10 * kMs + 990 * kUs;
  r.hdr.cpu_window_start_ns = 9 * kMs;
  r.hdr.cpu_ns = 500 * kUs;
  feed(r);
  auto cps = finish();
  ASSERT_EQ(cps.size(), 1u);
  const auto& c = cps[0];
  EXPECT_EQ(c.direction, Direction::Save);
  EXPECT_EQ(c.bytes, 409600u);
  const auto& f = file_of(c, kShardA);
  EXPECT_EQ(f.write_calls, 100u) << "a folded record is 100 calls, not one";
  EXPECT_EQ(f.bytes_written, 409600u);
  EXPECT_EQ(f.busy_ns, 200 * kUs) << "summed call time, not the record's span";
  // host_io is busy for the calls' summed time (200 us from the first
  // start), not the 992 us they were spread over.
  EXPECT_EQ(stage(c, kStageHostIo).busy_ns, 200 * kUs);
  // The CPU window ends at the last call's start (10.990 ms): its 500 us sit
  // in [10.490, 10.990) ms, inside the checkpoint. Ending it at the first
  // start (10 ms) would put them all before the checkpoint.
  EXPECT_EQ(stage(c, kStageSerialize).busy_ns, 500 * kUs);
  EXPECT_THAT(c.bytes_by_via, ElementsAre(Pair("syscall", 409600u)));
  auto calls = stitcher_.take_io_calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].calls, 100u);
  EXPECT_EQ(calls[0].busy_ns, 200 * kUs);
  EXPECT_EQ(calls[0].via, "syscall");
}

TEST_F(FileLayerRecordsTest, ARecordOfZeroCallsIsMalformed) {
  ckpt_io_record r = io_record(CKPT_OP_WRITE, kInoA, 10 * kMs, 11 * kMs, 4096);
  r.calls = 0;
  feed(r);
  ckpt_io_record bad_via = io_record(CKPT_OP_WRITE, kInoA, 10 * kMs, 11 * kMs, 4096, 9);
  feed(bad_via);
  EXPECT_EQ(malformed(), 2u);
  EXPECT_TRUE(finish().empty());
}

TEST_F(FileLayerRecordsTest, IoUringRequestsAreReadsAndWritesByTheirVia) {
  // A load: 2 MiB through io_uring (no fd: a fixed file), 1 MiB through read(2).
  ckpt_io_record uring =
      io_record(CKPT_OP_READ, kInoA, 10 * kMs, 12 * kMs, 2 * kMiB, CKPT_VIA_IO_URING);
  uring.fd = -1;
  feed(uring);
  feed(io_record(CKPT_OP_READ, kInoA, 12 * kMs, 13 * kMs, kMiB));
  auto cps = finish();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].direction, Direction::Load);
  EXPECT_EQ(cps[0].bytes, 3 * kMiB);
  EXPECT_EQ(file_of(cps[0], kShardA).read_calls, 2u);
  EXPECT_THAT(cps[0].bytes_by_via, ElementsAre(Pair("syscall", kMiB), Pair("io_uring", 2 * kMiB)));
  auto calls = stitcher_.take_io_calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].via, "io_uring");
  EXPECT_EQ(calls[0].path, kShardA) << "resolved by identity, with no fd";
}

// DeepSpeed's async save through Linux AIO (bpf/jobio_aio.bpf.h): 16
// requests of 1 MiB, 8 reaped at once, then the thread waits in io_getevents
// for the other 8 for three quiet gaps (a saturated NFS server). The wait is
// announced (an IO_START via aio): one save of 16 MiB, all via aio, its host_io
// busy from the first submission to the last reaping. Without the
// announcement the save is cut in two.
TEST_F(FileLayerRecordsTest, AnAioSaveWaitingPastTheQuietGapIsOneSave) {
  const uint64_t gap = Config::defaults().checkpoint.quiet_gap_ns;
  const uint64_t T = 1000 * kMs;
  auto save = [&](bool announced) {
    PathResolver resolver;
    resolver.remember(FileId{kUserDev, kInoA}, kShardA);
    Stitcher s(Config::defaults(), std::make_shared<FixedMaxima>(),
               StageAvailability{.job_io = true});
    JobIoSource source(s, resolver);
    for (uint64_t i = 0; i < 8; ++i) {
      ckpt_io_record r = io_record(CKPT_OP_WRITE, kInoA, T, T + 10 * kMs, kMiB, CKPT_VIA_AIO);
      source.on_record(&r, sizeof(r));
    }
    if (announced) {
      ckpt_io_record wait = io_record(CKPT_OP_WRITE, kInoA, T + 11 * kMs, 0, 0, CKPT_VIA_AIO);
      wait.hdr.kind = CKPT_REC_IO_START;
      wait.requested = 0;
      wait.busy_ns = 0;
      source.on_record(&wait, sizeof(wait));
    }
    std::vector<CheckpointRecord> closed;
    for (uint64_t now = T + 100 * kMs; now < T + 3 * gap; now += 100 * kMs) {
      s.advance(now);
      for (auto& c : s.take_checkpoints()) closed.push_back(std::move(c));
    }
    for (uint64_t i = 0; i < 8; ++i) {
      ckpt_io_record r = io_record(CKPT_OP_WRITE, kInoA, T + kMs, T + 3 * gap, kMiB, CKPT_VIA_AIO);
      source.on_record(&r, sizeof(r));
    }
    s.finish();
    for (auto& c : s.take_checkpoints()) closed.push_back(std::move(c));
    return closed;
  };
  const auto kept = save(true);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].direction, Direction::Save);
  EXPECT_EQ(kept[0].bytes, 16 * kMiB);
  EXPECT_THAT(kept[0].bytes_by_via, ElementsAre(Pair("aio", 16 * kMiB)));
  EXPECT_EQ(kept[0].end_ns, T + 3 * gap);
  EXPECT_EQ(stage(kept[0], "host_io").busy_ns, 3 * gap);
  EXPECT_TRUE(kept[0].failures.empty());
  const auto split = save(false);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0].bytes, 8 * kMiB);
}

// An AIO wait announced in flight that reaps nothing user space is told of
// (it timed out, or reaped requests on files ruled out) ends with its end
// record (CKPT_REC_CALL_END): the save closes at its quiet gap, with no stall.
// Without it the wait would hold the save open as if still out.
TEST_F(FileLayerRecordsTest, AnAioWaitThatReapedNothingEndsWithItsEndRecord) {
  const uint64_t gap = Config::defaults().checkpoint.quiet_gap_ns;
  const uint64_t T = 1000 * kMs;
  auto run = [&](bool ended) {
    PathResolver resolver;
    resolver.remember(FileId{kUserDev, kInoA}, kShardA);
    Stitcher s(Config::defaults(), std::make_shared<FixedMaxima>(),
               StageAvailability{.job_io = true});
    JobIoSource source(s, resolver);
    ckpt_io_record done = io_record(CKPT_OP_WRITE, kInoA, T, T + 10 * kMs, kMiB, CKPT_VIA_AIO);
    source.on_record(&done, sizeof(done));
    ckpt_io_record wait = io_record(CKPT_OP_WRITE, kInoA, T + 11 * kMs, 0, 0, CKPT_VIA_AIO);
    wait.hdr.kind = CKPT_REC_IO_START;
    source.on_record(&wait, sizeof(wait));
    if (ended) {
      ckpt_record_header end = header(CKPT_REC_CALL_END, 0, T + 20 * kMs, T + 20 * kMs);
      source.on_record(&end, sizeof(end));
    }
    std::vector<CheckpointRecord> closed;
    for (uint64_t now = T + 100 * kMs; now < T + 3 * gap; now += 100 * kMs) {
      s.advance(now);
      for (auto& c : s.take_checkpoints()) closed.push_back(std::move(c));
    }
    return closed;
  };
  const auto ended = run(true);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].bytes, kMiB);
  EXPECT_EQ(ended[0].end_ns, T + 10 * kMs);
  EXPECT_TRUE(ended[0].failures.empty());
  EXPECT_TRUE(run(false).empty()) << "still in flight: held open";
  EXPECT_EQ(malformed(), 0u);
}

TEST_F(FileLayerRecordsTest, ACopyBetweenTwoCheckpointFilesIsALoadAndASave) {
  // cp of a checkpoint to a backup: two copy_file_range calls of 1 MiB. Each
  // is a read of its source and a write of its destination: the copy is a
  // load of the source's 2 MiB and a save of the destination's 2 MiB over
  // the same window (stitch/copy_sides.h), never one save of 4 MiB.
  ckpt_copy_record first = copy_record(kInoA, kInoB, 10 * kMs, 12 * kMs, kMiB);
  first.hdr.cpu_window_start_ns = 9 * kMs;
  first.hdr.cpu_ns = 300 * kUs;
  feed(first);
  feed(copy_record(kInoA, kInoB, 12 * kMs, 14 * kMs, kMiB));
  auto cps = finish();
  ASSERT_EQ(cps.size(), 2u);
  const auto& load = cps[0];
  const auto& save = cps[1];
  EXPECT_EQ(load.direction, Direction::Load);
  EXPECT_EQ(load.bytes, 2 * kMiB);
  EXPECT_EQ(load.files, 1u);
  const auto& src = file_of(load, kShardA);
  EXPECT_EQ(src.bytes_read, 2 * kMiB);
  EXPECT_EQ(src.read_calls, 2u);
  EXPECT_EQ(src.bytes_written, 0u);
  EXPECT_EQ(save.direction, Direction::Save);
  EXPECT_EQ(save.bytes, 2 * kMiB);
  EXPECT_EQ(save.files, 1u);
  const auto& dst = file_of(save, kShardB);
  EXPECT_EQ(dst.bytes_written, 2 * kMiB);
  EXPECT_EQ(dst.write_calls, 2u);
  EXPECT_EQ(dst.busy_ns, 4 * kMs);
  EXPECT_GT(save.id, load.id);
  for (const auto& c : cps) {
    EXPECT_EQ(c.start_ns, 10 * kMs);
    EXPECT_EQ(c.end_ns, 14 * kMs);
    EXPECT_THAT(c.bytes_by_via, ElementsAre(Pair("copy_file_range", 2 * kMiB)));
    // The kernel's one call is the time of both sides.
    EXPECT_EQ(stage(c, kStageHostIo).busy_ns, 4 * kMs);
    EXPECT_EQ(stage(c, kStageHostIo).bytes, 2 * kMiB);
    // The window [9, 10) ms closes before the checkpoint: nothing of it counts.
    EXPECT_EQ(stage(c, kStageSerialize).busy_ns, 0u);
  }
  auto calls = stitcher_.take_io_calls();
  ASSERT_EQ(calls.size(), 4u);
  for (const auto& call : calls)
    EXPECT_EQ(call.checkpoint_id, call.op == "read" ? load.id : save.id) << call.op;
}

TEST_F(FileLayerRecordsTest, ACopyFromADatasetIntoACheckpointIsASaveOnly) {
  feed(copy_record(kInoData, kInoA, 10 * kMs, 12 * kMs, static_cast<int64_t>(3 * kMiB),
                   CKPT_VIA_SENDFILE));
  auto cps = finish();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].direction, Direction::Save);
  EXPECT_EQ(cps[0].bytes, 3 * kMiB);
  ASSERT_EQ(cps[0].file_io.size(), 1u);
  EXPECT_EQ(cps[0].file_io[0].path, kShardA);
  EXPECT_EQ(cps[0].file_io[0].bytes_written, 3 * kMiB);
  EXPECT_THAT(cps[0].bytes_by_via, ElementsAre(Pair("sendfile", 3 * kMiB)));
}

TEST_F(FileLayerRecordsTest, AFailedCopyCarriesTheErrorOnBothHalves) {
  struct Capture : EventSink {
    void on_event(Event&& e) override { events.push_back(std::move(e)); }
    std::vector<Event> events;
  } sink;
  JobIoSource src(sink, resolver_);
  ckpt_copy_record r = copy_record(kInoData, kInoA, 10 * kMs, 12 * kMs, -ENOSPC);
  r.hdr.cpu_ns = 100 * kUs;
  src.on_record(&r, sizeof(r));
  ASSERT_EQ(sink.events.size(), 2u);
  const auto& read = std::get<IoEvent>(sink.events[0]);
  const auto& write = std::get<IoEvent>(sink.events[1]);
  EXPECT_EQ(read.op, IoOp::Read);
  EXPECT_EQ(read.path, kDataset);
  EXPECT_EQ(read.ret, -ENOSPC);
  EXPECT_EQ(read.cpu_ns, 100 * kUs);
  EXPECT_EQ(write.op, IoOp::Write);
  EXPECT_EQ(write.path, kShardA);
  EXPECT_EQ(write.ret, -ENOSPC);
  EXPECT_EQ(write.cpu_ns, 0u) << "the CPU window goes on the first half only";
  EXPECT_EQ(write.via, IoVia::CopyFileRange);
  EXPECT_EQ(write.busy_ns, 2 * kMs);
  EXPECT_EQ(write.calls, 1u);
}

TEST_F(FileLayerRecordsTest, MmapCountsDistinctPagesOncePerLoadClippedToTheFile) {
  // A file of 10 pages and 100 bytes (41060 bytes: 11 pages, the last one
  // partial), mapped and read through page faults with fault-around.
  constexpr uint64_t kSize = 10 * kPage + 100;
  feed(mmap_record(kInoA, 10 * kMs, 0, 3, kSize, 4, 1));   // pages 0-3: 16384 new
  feed(mmap_record(kInoA, 11 * kMs, 2, 7, kSize, 2, 2));   // 4-7 new: 16384
  feed(mmap_record(kInoA, 12 * kMs, 8, 15, kSize, 5, 1));  // 8, 9, 10 (100 B); 11-15 past EOF
  feed(mmap_record(kInoA, 13 * kMs, 0, 1, kSize, 0, 1));   // touched again: nothing new
  auto cps = finish();
  ASSERT_EQ(cps.size(), 1u);
  const auto& c = cps[0];
  EXPECT_EQ(c.direction, Direction::Load);
  EXPECT_EQ(c.bytes, kSize) << "each page once, the last one up to the file's size";
  const auto& f = file_of(c, kShardA);
  EXPECT_EQ(f.bytes_read, kSize);
  EXPECT_EQ(f.mmap_bytes, kSize);
  EXPECT_EQ(f.read_calls, 5u) << "faults are the calls";
  // Storage pages, clipped to the bytes each record counted: 4 pages,
  // 2 pages, then 5 pages clipped to the 8292 bytes of pages 8-10.
  EXPECT_EQ(f.storage_bytes, 4 * kPage + 2 * kPage + (2 * kPage + 100));
  EXPECT_THAT(c.bytes_by_via, ElementsAre(Pair("mmap", kSize)));
  auto calls = stitcher_.take_io_calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].op, "mmap");
  EXPECT_EQ(calls[0].bytes, 4 * kPage);
  EXPECT_EQ(calls[1].bytes, 4 * kPage);
  EXPECT_EQ(calls[1].calls, 2u);
  EXPECT_EQ(calls[2].bytes, 2 * kPage + 100);
  EXPECT_EQ(calls[2].storage_bytes, 2 * kPage + 100);
  EXPECT_EQ(calls[3].bytes, 0u);
  EXPECT_EQ(calls[3].busy_ns, 15 * kUs);
}

TEST_F(FileLayerRecordsTest, TheNextLoadCountsThePagesAgain) {
  constexpr uint64_t kSize = 8 * kPage;
  feed(mmap_record(kInoA, 10 * kMs, 0, 7, kSize, 8, 1));
  // Past the quiet gap: another load of the same (cached) pages.
  const uint64_t later = 10 * kMs + Config::defaults().checkpoint.quiet_gap_ns + 50 * kMs;
  feed(mmap_record(kInoA, later, 0, 7, kSize, 0, 1));
  auto cps = finish();
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].bytes, kSize);
  EXPECT_EQ(file_of(cps[0], kShardA).storage_bytes, kSize);
  EXPECT_EQ(cps[1].bytes, kSize);
  EXPECT_EQ(file_of(cps[1], kShardA).storage_bytes, 0u) << "all in the page cache";
}

TEST_F(FileLayerRecordsTest, MmapAfterASaveIsANewLoad) {
  feed(io_record(CKPT_OP_WRITE, kInoA, 10 * kMs, 11 * kMs, kMiB));
  feed(mmap_record(kInoB, 12 * kMs, 0, 3, 4 * kPage, 0, 1));
  auto cps = finish();
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].direction, Direction::Save);
  EXPECT_EQ(cps[1].direction, Direction::Load);
  EXPECT_EQ(cps[1].bytes, 4 * kPage);
}

// np.memmap(mode="w+") filled, or a shard written through a mapping: the
// dirtied folios are the save's bytes, written via mmap, each page once per
// save (a page writeback cleaned mid-store and the store dirtied again is
// still one page of the shard), never a read, never past the file; the next
// save counts it again.
TEST_F(FileLayerRecordsTest, StoresThroughAMappingAreASavesWritesViaMmap) {
  constexpr uint64_t kSize = 10 * kPage + 100;
  feed(store_record(kInoA, 10 * kMs, 0, 7, kSize, 8));
  feed(store_record(kInoA, 11 * kMs, 8, 15, kSize, 1));  // a large folio past the end
  feed(store_record(kInoA, 12 * kMs, 0, 0, kSize, 1));   // page 0 again, after writeback
  const uint64_t later = 12 * kMs + Config::defaults().checkpoint.quiet_gap_ns + 50 * kMs;
  feed(store_record(kInoA, later, 0, 1, kSize, 2));  // the next save
  auto cps = finish();
  ASSERT_EQ(cps.size(), 2u);
  const auto& c = cps[0];
  EXPECT_EQ(c.direction, Direction::Save);
  EXPECT_EQ(c.bytes, kSize);
  const auto& f = file_of(c, kShardA);
  EXPECT_EQ(f.bytes_written, kSize);
  EXPECT_EQ(f.bytes_read, 0u);
  EXPECT_EQ(f.mmap_bytes, 0u) << "mmap_bytes are the pages read through a mapping";
  EXPECT_EQ(f.storage_bytes, 0u);
  EXPECT_EQ(f.write_calls, 10u) << "the folios dirtied are the calls";
  EXPECT_THAT(c.bytes_by_via, ElementsAre(Pair("mmap", kSize)));
  EXPECT_EQ(cps[1].direction, Direction::Save);
  EXPECT_EQ(cps[1].bytes, 2 * kPage);
  EXPECT_EQ(malformed(), 0u);
}

// A shard mapped, read through the mapping and stored to in one save (an
// in-place update): its reads and its stores are counted apart, each page
// once in each direction.
TEST_F(FileLayerRecordsTest, PagesReadAndStoredThroughAMappingCountOnceEachWay) {
  constexpr uint64_t kSize = 8 * kPage;
  feed(store_record(kInoA, 10 * kMs, 0, 7, kSize, 8));
  feed(mmap_record(kInoA, 11 * kMs, 0, 7, kSize, 0, 1));
  feed(store_record(kInoA, 12 * kMs, 0, 7, kSize, 8));
  auto cps = finish();
  ASSERT_EQ(cps.size(), 1u);
  const auto& f = file_of(cps[0], kShardA);
  EXPECT_EQ(f.bytes_written, kSize);
  EXPECT_EQ(f.bytes_read, kSize);
  EXPECT_EQ(f.mmap_bytes, kSize);
}

// Syscall mode counts the pages each read fault installed, not their places
// (bpf/jobio.h installed_pages): they are the load's bytes, at most the
// file's size per load (its last page is partial), and the next load counts
// them again.
TEST_F(FileLayerRecordsTest, CountedPagesAreTheLoadsBytesAtMostTheFileOncePerLoad) {
  constexpr uint64_t kSize = 10 * kPage + 100;  // 11 pages, the last partial
  ckpt_mmap_record first = mmap_record(kInoA, 10 * kMs, 0, 0, kSize, 4, 1);
  first.installed_pages = 6;  // fault-around: pages 0-5
  first.busy_ns = 0;
  ckpt_mmap_record rest = mmap_record(kInoA, 11 * kMs, 6, 10, kSize, 0, 2);
  rest.installed_pages = 5;  // the rest, the partial page too
  rest.busy_ns = 0;
  feed(first);
  feed(rest);
  ckpt_mmap_record again = rest;  // mapped again in the same load: no more than the file
  again.hdr = header(CKPT_REC_MMAP, CKPT_OP_READ, 12 * kMs, 12 * kMs);
  feed(again);
  const uint64_t later = 12 * kMs + Config::defaults().checkpoint.quiet_gap_ns + 50 * kMs;
  ckpt_mmap_record next_load = first;
  next_load.hdr = header(CKPT_REC_MMAP, CKPT_OP_READ, later, later);
  feed(next_load);
  auto cps = finish();
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].direction, Direction::Load);
  EXPECT_EQ(cps[0].bytes, kSize);
  const auto& f = file_of(cps[0], kShardA);
  EXPECT_EQ(f.mmap_bytes, kSize);
  EXPECT_EQ(f.storage_bytes, 4 * kPage);
  EXPECT_EQ(f.read_calls, 5u) << "the faults are the calls";
  EXPECT_EQ(cps[1].bytes, 6 * kPage);
  EXPECT_EQ(malformed(), 0u);
}

TEST_F(FileLayerRecordsTest, MalformedStoreRecordsAreCounted) {
  ckpt_mmap_record no_op = store_record(kInoA, 10 * kMs, 0, 3, 4 * kPage, 1);
  no_op.hdr.op = 0;
  feed(no_op);
  ckpt_mmap_record fsync_op = store_record(kInoA, 10 * kMs, 0, 3, 4 * kPage, 1);
  fsync_op.hdr.op = CKPT_OP_FSYNC;
  feed(fsync_op);
  ckpt_mmap_record with_storage = store_record(kInoA, 10 * kMs, 0, 3, 4 * kPage, 1);
  with_storage.storage_pages = 1;
  feed(with_storage);
  ckpt_mmap_record counted = store_record(kInoA, 10 * kMs, 0, 3, 4 * kPage, 1);
  counted.installed_pages = 4;  // stores are placed, never counted
  feed(counted);
  EXPECT_EQ(malformed(), 4u);
  EXPECT_TRUE(finish().empty());
}

TEST_F(FileLayerRecordsTest, MalformedMmapRecordsAreCounted) {
  ckpt_mmap_record no_faults = mmap_record(kInoA, 10 * kMs, 0, 3, 4 * kPage, 0, 0);
  feed(no_faults);
  ckpt_mmap_record reversed = mmap_record(kInoA, 10 * kMs, 5, 3, 8 * kPage, 0, 1);
  feed(reversed);
  ckpt_mmap_record shift = mmap_record(kInoA, 10 * kMs, 0, 3, 8 * kPage, 0, 1);
  shift.page_shift = 64;
  feed(shift);
  EXPECT_EQ(malformed(), 3u);
  EXPECT_TRUE(finish().empty());
}

TEST_F(FileLayerRecordsTest, AMappingMadeBeforeWeAttachedIsNamedByProcMaps) {
  // A file this process maps itself, known to the record only by (dev, ino).
  const std::string dir = ::testing::TempDir() + "/checkpoint-maps";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/mapped.safetensors";
  { std::ofstream(path) << std::string(3 * kPage, 'x'); }
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  struct stat st {};
  ASSERT_EQ(fstat(fd, &st), 0);
  void* map = mmap(nullptr, 3 * kPage, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  ::close(fd);  // the mapping stays: no fd names the file any more

  struct Capture : EventSink {
    void on_event(Event&& e) override { events.push_back(std::move(e)); }
    std::vector<Event> events;
  } sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  ckpt_mmap_record r = mmap_record(st.st_ino, 10 * kMs, 0, 2, 3 * kPage, 0, 1);
  r.hdr.tgid = static_cast<uint32_t>(getpid());
  r.dev = (static_cast<uint64_t>(major(st.st_dev)) << 20) | minor(st.st_dev);
  src.on_record(&r, sizeof(r));
  munmap(map, 3 * kPage);
  ASSERT_EQ(sink.events.size(), 1u);
  const auto& ev = std::get<IoEvent>(sink.events[0]);
  EXPECT_EQ(ev.op, IoOp::Mmap);
  EXPECT_EQ(ev.path, std::filesystem::canonical(path).string());
  EXPECT_EQ(ev.ret, static_cast<int64_t>(3 * kPage)) << "the range as mapped, before stitching";
  ASSERT_TRUE(ev.mmap.has_value());
  EXPECT_EQ(ev.mmap->last_page, 2u);
  std::filesystem::remove_all(dir);
}

TEST(PageSetTest, ReturnsOnlyTheNewPartsAndMerges) {
  PageSet s;
  EXPECT_THAT(s.add(10, 19), ElementsAre(Pair(10u, 19u)));
  EXPECT_THAT(s.add(0, 4), ElementsAre(Pair(0u, 4u)));
  EXPECT_THAT(s.add(3, 25), ElementsAre(Pair(5u, 9u), Pair(20u, 25u)));
  EXPECT_EQ(s.ranges(), 1u);
  EXPECT_TRUE(s.add(0, 25).empty());
  EXPECT_THAT(s.add(26, 26), ElementsAre(Pair(26u, 26u)));
  EXPECT_EQ(s.ranges(), 1u) << "adjacent ranges merge";
  EXPECT_THAT(s.add(30, 31), ElementsAre(Pair(30u, 31u)));
  EXPECT_THAT(s.add(28, UINT64_MAX), ElementsAre(Pair(28u, 29u), Pair(32u, UINT64_MAX)));
  EXPECT_TRUE(s.add(UINT64_MAX, UINT64_MAX).empty());
}

TEST(PageRangeBytesTest, ClipsToTheFileSize) {
  EXPECT_EQ(page_range_bytes(0, 3, 4 * kPage, 12), 4 * kPage);
  EXPECT_EQ(page_range_bytes(0, 3, 3 * kPage + 1, 12), 3 * kPage + 1);
  EXPECT_EQ(page_range_bytes(4, 9, 4 * kPage, 12), 0u) << "wholly past the end";
  EXPECT_EQ(page_range_bytes(0, 0, 0, 12), 0u) << "an empty file";
  EXPECT_EQ(page_range_bytes(0, UINT64_MAX, UINT64_MAX, 12), UINT64_MAX);
}

// ---- verdicts ----

class VerdictTest : public ::testing::Test {
 protected:
  VerdictTest()
      : stitcher_(Config::defaults(), std::make_shared<FixedMaxima>(),
                  StageAvailability{.job_io = true}) {
    stitcher_.set_verdict_listener(
        [this](const FileId& f, bool yes) { heard_.emplace_back(f.ino, yes); });
  }
  void call(IoOp op, const std::string& path, uint64_t ino, const std::string& path2 = "",
            bool directory = false) {
    IoEvent e;
    e.op = op;
    e.tgid = kTgid;
    e.tid = kTid;
    e.start_ns = t_;
    e.end_ns = t_ + kUs;
    t_ += 10 * kUs;
    e.path = path;
    e.path2 = path2;
    e.file = FileId{kUserDev, ino};
    e.is_directory = directory;
    e.ret = op == IoOp::Open ? 3 : op == IoOp::Write ? 4096 : 0;
    stitcher_.on_event(std::move(e));
  }

  Stitcher stitcher_;
  std::vector<std::pair<uint64_t, bool>> heard_;
  uint64_t t_ = 10 * kMs;
};

TEST_F(VerdictTest, TheListenerHearsExactlyTheDecisions) {
  call(IoOp::Open, kShardA, 1);        // a checkpoint file
  call(IoOp::Open, "/etc/passwd", 2);  // not one
  call(IoOp::Open, "/scratch/checkpoint-9/model.staged", 3);
  call(IoOp::Write, "/scratch/checkpoint-9/model.staged", 3);  // decided at its open: nothing new
  call(IoOp::Rename, "/scratch/checkpoint-9/model.staged", 3, "/scratch/checkpoint-9/model.pt");
  call(IoOp::Open, kShardA, 1);                            // opened again: the kernel forgot it
  call(IoOp::Open, "/nfs/run/checkpoint-1", 4, "", true);  // a directory: never
  call(IoOp::Open, "", 5);                                 // unresolved: never
  call(IoOp::Write, "", 6);                                // unresolved: never
  call(IoOp::Write, kShardB, 7);                           // first data call, no entry: decided
  call(IoOp::Write, kShardB, 7);                           // already decided
  // A temporary name (docs/stitching.md, "Decided late"): no checkpoint's
  // yet, but the kernel records its calls for the rename to decide.
  call(IoOp::Open, "/scratch/out/model.safetensors.tmp", 8);
  call(IoOp::Rename, "/scratch/out/model.safetensors.tmp", 8, "/scratch/out/model.safetensors");
  EXPECT_THAT(heard_, ElementsAre(Pair(1u, true), Pair(2u, false), Pair(3u, false), Pair(3u, true),
                                  Pair(1u, true), Pair(7u, true), Pair(8u, true), Pair(8u, true)));
}

}  // namespace
}  // namespace ckpt
