#include "stitch/stitcher.h"

#include <cerrno>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "stitch/intervals.h"

namespace ckpt {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kMiB = 1 << 20;

class FixedMaxima : public MaximaProvider {
 public:
  StageMax storage(Direction d, const std::vector<FileId>&) override {
    return d == Direction::Save ? StageMax{write_Bps, "test:write"}
                                : StageMax{read_Bps, "test:read"};
  }
  StageMax serialize(size_t /*threads*/) override {
    return StageMax{serialize_Bps, serialize_Bps ? "test:ser" : "unknown"};
  }
  // host_io's: as fast as the storage here, so the fractions read alike.
  StageMax page_cache(Direction d, size_t /*threads*/) override {
    return d == Direction::Save ? StageMax{write_Bps, "test:page cache write"}
                                : StageMax{read_Bps, "test:page cache read"};
  }
  StageMax transport(const std::string&) override { return StageMax{transport_Bps, "test:link"}; }

  std::optional<double> write_Bps = 1e9;
  std::optional<double> read_Bps = 2e9;
  std::optional<double> serialize_Bps;
  std::optional<double> transport_Bps = 1e9;
};

// A small language for event streams with known answers.
class StreamBuilder {
 public:
  explicit StreamBuilder(Stitcher& s) : s_(s) {}

  void open(uint32_t tid, const std::string& path, FileId id, uint64_t t0, uint64_t t1,
            int64_t ret = 3) {
    IoEvent e = base(tid, IoOp::Open, t0, t1);
    e.path = path;
    e.file = id;
    e.ret = ret;
    s_.on_event(std::move(e));
  }
  void data(uint32_t tid, IoOp op, const std::string& path, FileId id, uint64_t t0, uint64_t t1,
            int64_t ret, uint64_t cpu_ns = 0, uint64_t cpu_from = 0) {
    IoEvent e = base(tid, op, t0, t1);
    e.path = path;
    e.file = id;
    e.ret = ret;
    e.requested = ret > 0 ? static_cast<uint64_t>(ret) : 0;
    e.cpu_window_start_ns = cpu_from;
    e.cpu_ns = cpu_ns;
    s_.on_event(std::move(e));
  }
  void meta(uint32_t tid, IoOp op, const std::string& path, uint64_t t0, uint64_t t1,
            const std::string& path2 = "", int64_t ret = 0) {
    IoEvent e = base(tid, op, t0, t1);
    e.path = path;
    e.path2 = path2;
    e.ret = ret;
    e.is_directory = op == IoOp::Mkdir;
    s_.on_event(std::move(e));
  }
  void tcp(uint64_t t, uint64_t acked, uint64_t received, uint32_t retrans = 0,
           TcpEvent::Kind kind = TcpEvent::Kind::Sample, uint64_t zero_window_ns = 0,
           uint32_t backlog = 0) {
    TcpEvent e;
    e.kind = kind;
    e.time_ns = t;
    e.cookie = 77;
    e.local = "10.0.0.2:900";
    e.remote = "10.0.0.9:2049";
    e.bytes_acked = acked;
    e.bytes_received = received;
    e.total_retrans = retrans;
    e.zero_window_ns = zero_window_ns;
    e.backlog = backlog;
    e.in_flight = backlog;
    s_.on_event(std::move(e));
  }

 private:
  static IoEvent base(uint32_t tid, IoOp op, uint64_t t0, uint64_t t1) {
    IoEvent e;
    e.tgid = 100;
    e.tid = tid;
    e.op = op;
    e.start_ns = t0;
    e.end_ns = t1;
    e.cpu_window_start_ns = t0;
    return e;
  }
  Stitcher& s_;
};

const StageRecord& stage(const CheckpointRecord& c, std::string_view name) {
  for (const auto& s : c.stages)
    if (s.name == name) return s;
  ADD_FAILURE() << "no stage " << name;
  static StageRecord none;
  return none;
}

bool has_stage(const CheckpointRecord& c, std::string_view name) {
  for (const auto& s : c.stages)
    if (s.name == name) return true;
  return false;
}

class StitcherTest : public ::testing::Test {
 protected:
  StitcherTest() { config_ = Config::defaults(); }
  Stitcher make(StageAvailability a = {true, false}) { return Stitcher(config_, maxima_, a); }

  Config config_;
  std::shared_ptr<FixedMaxima> maxima_ = std::make_shared<FixedMaxima>();
};

const std::string kShard0 = "/nfs/run/checkpoint-1/shard-0.pt";
const std::string kShard1 = "/nfs/run/checkpoint-1/shard-1.pt";
const FileId kId0{42, 1000};
const FileId kId1{42, 1001};

CallStartEvent in_flight(uint32_t tid, IoOp op, const std::string& path, FileId id,
                         uint64_t start_ns) {
  CallStartEvent c;
  c.start_ns = start_ns;
  c.tgid = 100;
  c.tid = tid;
  c.op = op;
  c.file = id;
  c.path = path;
  return c;
}

// The probes record a call when it returns: a write slower than the quiet
// gap (queued behind a saturated server) must not close its checkpoint and
// open a second one when it returns. The probes announce it (a start record,
// bpf/jobio.h CKPT_REC_IO_START, when it first leaves the CPU); until its
// record comes, the checkpoint stays open.
TEST_F(StitcherTest, ACallSlowerThanTheQuietGapKeepsItsCheckpointOpen) {
  const uint64_t gap = config_.checkpoint.quiet_gap_ns;
  const uint64_t T = 1000 * kMs;
  auto save_with_a_slow_write = [&](bool announced) {
    Stitcher s = make();
    StreamBuilder b(s);
    b.open(7, kShard0, kId0, T, T + 1 * kMs);
    b.data(7, IoOp::Write, kShard0, kId0, T + 2 * kMs, T + 3 * kMs, kMiB);
    b.open(8, kShard1, kId1, T + 3 * kMs, T + 4 * kMs);
    b.data(9, IoOp::Write, kShard0, kId0, T + 4 * kMs, T + 5 * kMs, kMiB);
    // Thread 8's write of shard 1 starts at T+5 ms and takes three gaps;
    // thread 9 then waits in a write of a file that is no checkpoint's.
    if (announced) {
      s.on_event(in_flight(8, IoOp::Write, kShard1, kId1, T + 5 * kMs));
      s.on_event(in_flight(9, IoOp::Write, "/nfs/run/train.log", FileId{42, 5}, T + 6 * kMs));
    }
    std::vector<CheckpointRecord> closed;
    for (uint64_t now = T + 100 * kMs; now < T + 3 * gap; now += 100 * kMs) {
      s.advance(now);
      for (auto& c : s.take_checkpoints()) closed.push_back(std::move(c));
    }
    b.data(8, IoOp::Write, kShard1, kId1, T + 5 * kMs, T + 3 * gap, kMiB);
    s.advance(T + 5 * gap);
    for (auto& c : s.take_checkpoints()) closed.push_back(std::move(c));
    return closed;
  };
  const auto kept = save_with_a_slow_write(true);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].bytes, 3 * kMiB);
  EXPECT_EQ(kept[0].files, 2u);
  EXPECT_EQ(kept[0].end_ns, T + 3 * gap);
  EXPECT_TRUE(kept[0].failures.empty());
  // Without the start record (a replay of records that had none): split.
  const auto split = save_with_a_slow_write(false);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0].bytes, 2 * kMiB);
  EXPECT_EQ(split[1].bytes, kMiB);
}

// A load's last read waits out the gap for its pages (then, woken, for a
// CPU): announced by its file's identity alone (the file layer names no fd),
// it keeps the load open. One on a file the checkpoint never touched and no
// verdict names a checkpoint's does not, nor one on a file decided not to be
// a checkpoint's; a fault on a mapped buffer inside the read ends nothing.
TEST_F(StitcherTest, AReadStillInFlightKeepsItsLoadOpen) {
  const uint64_t gap = config_.checkpoint.quiet_gap_ns;
  const uint64_t T = 1000 * kMs;
  const FileId kLog{42, 5};
  auto load_with_a_slow_last_read = [&](std::optional<FileId> announced_on) {
    Stitcher s = make();
    StreamBuilder b(s);
    b.open(7, kShard0, kId0, T, T + 1 * kMs);
    b.meta(7, IoOp::Open, "/nfs/run/train.log", T + 1 * kMs, T + 1 * kMs);
    b.data(7, IoOp::Read, kShard0, kId0, T + 1 * kMs, T + 300 * kMs, kMiB);
    b.data(7, IoOp::Read, kShard0, kId0, T + 300 * kMs, T + 600 * kMs, kMiB);
    // The last read starts at T+600 ms and returns two gaps later.
    if (announced_on) s.on_event(in_flight(7, IoOp::Read, "", *announced_on, T + 600 * kMs));
    // Its destination is a mapped file's page: a fault inside the read.
    IoEvent fault;
    fault.tgid = 100;
    fault.tid = 7;
    fault.op = IoOp::Mmap;
    fault.via = IoVia::Mmap;
    fault.start_ns = fault.end_ns = fault.cpu_window_start_ns = T + 700 * kMs;
    fault.file = FileId{42, 9};
    fault.path = "/dev/shm/staging.bin";
    fault.mmap = MmapPages{0, 0, 4096, 0, 12};
    fault.ret = 4096;
    s.on_event(std::move(fault));
    std::vector<CheckpointRecord> closed;
    for (uint64_t now = T + 700 * kMs; now < T + 2 * gap + 600 * kMs; now += 100 * kMs) {
      s.advance(now);
      for (auto& c : s.take_checkpoints()) closed.push_back(std::move(c));
    }
    b.data(7, IoOp::Read, kShard0, kId0, T + 600 * kMs, T + 2 * gap + 600 * kMs, kMiB);
    s.advance(T + 5 * gap);
    for (auto& c : s.take_checkpoints()) closed.push_back(std::move(c));
    return closed;
  };
  const auto kept = load_with_a_slow_last_read(kId0);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].direction, Direction::Load);
  EXPECT_EQ(kept[0].bytes, 3 * kMiB);
  EXPECT_EQ(kept[0].end_ns, T + 2 * gap + 600 * kMs);
  for (const auto& other : {std::optional<FileId>{}, std::optional<FileId>{kLog}}) {
    const auto split = load_with_a_slow_last_read(other);
    ASSERT_EQ(split.size(), 2u) << (other ? "a call on a file not the checkpoint's" : "no call");
    EXPECT_EQ(split[0].bytes, 2 * kMiB);
    EXPECT_EQ(split[1].bytes, kMiB);
  }
}

// A copy in flight is the checkpoint's when either of its files is one (its
// source here: a load of a checkpoint into a scratch file); a path call in
// flight when its names are (a rename of a temporary name onto a
// checkpoint's, slow on NFS).
TEST_F(StitcherTest, ACopyOrARenameInFlightKeepsItsCheckpointOpen) {
  const uint64_t gap = config_.checkpoint.quiet_gap_ns;
  const uint64_t T = 1000 * kMs;
  {
    Stitcher s = make();
    StreamBuilder b(s);
    b.data(7, IoOp::Read, kShard0, kId0, T, T + 10 * kMs, kMiB);
    CallStartEvent copy = in_flight(7, IoOp::Write, "/scratch/x.bin", FileId{42, 9}, T + 20 * kMs);
    copy.via = IoVia::CopyFileRange;
    copy.copy_source = kId1;
    copy.copy_source_path = kShard1;
    s.on_event(std::move(copy));
    s.advance(T + 3 * gap);
    EXPECT_TRUE(s.take_checkpoints().empty()) << "closed under a copy of its file";
  }
  {
    Stitcher s = make();
    StreamBuilder b(s);
    b.data(7, IoOp::Write, kShard0 + ".tmp", kId0, T, T + 10 * kMs, kMiB);
    CallStartEvent rename = in_flight(7, IoOp::Rename, kShard0 + ".tmp", FileId{}, T + 20 * kMs);
    rename.path2 = kShard0;
    s.on_event(std::move(rename));
    s.advance(T + 3 * gap);
    EXPECT_TRUE(s.take_checkpoints().empty()) << "closed under a rename onto a checkpoint's name";
    b.meta(7, IoOp::Rename, kShard0 + ".tmp", T + 20 * kMs, T + 3 * gap, kShard0);
    s.advance(T + 5 * gap);
    const auto cps = s.take_checkpoints();
    ASSERT_EQ(cps.size(), 1u);
    EXPECT_EQ(cps[0].end_ns, T + 3 * gap);
  }
}

// A copy's two halves as the jobio source makes them from one copy record.
std::pair<IoEvent, IoEvent> copy_halves(IoVia via, uint32_t tid, uint64_t t0, uint64_t t1,
                                        int64_t ret, uint64_t n) {
  IoEvent src;
  src.tgid = 100;
  src.tid = tid;
  src.op = IoOp::Read;
  src.via = via;
  src.start_ns = src.cpu_window_start_ns = t0;
  src.end_ns = t1;
  src.file = FileId{42, 2000 + n};
  src.path = "/nfs/run/checkpoint-1/shard-" + std::to_string(n) + ".pt";
  src.ret = ret;
  IoEvent dst = src;
  dst.op = IoOp::Write;
  dst.file = FileId{42, 3000 + n};
  dst.path = "/nfs/run/checkpoint-2/shard-" + std::to_string(n) + ".pt";
  dst.copy_source = src.file;
  return {std::move(src), std::move(dst)};
}

// A copy the storage made (an NFS 4.2 COPY, a reflink): a load and a save
// of its bytes, via its own name, charged to no stage of the node (host_io,
// serialize count none of it); a reflink the file system refused first (GNU
// cp's first try on ext4), or a copy_file_range across file systems (EXDEV),
// is no failure; one the storage failed is.
TEST_F(StitcherTest, ACopyTheStorageMadeChargesNoStageOfTheNode) {
  const uint64_t T = 1000 * kMs;
  for (IoVia via : {IoVia::ServerCopy, IoVia::Reflink}) {
    Stitcher s = make();
    auto [refused_src, refused_dst] =
        copy_halves(IoVia::Reflink, 7, T, T + 1 * kMs, -EOPNOTSUPP, 0);
    s.on_event(std::move(refused_src));
    s.on_event(std::move(refused_dst));
    for (uint64_t n = 0; n < 2; ++n) {
      auto [src, dst] = copy_halves(via, 7, T + (2 + 10 * n) * kMs, T + (10 + 10 * n) * kMs,
                                    static_cast<int64_t>(3 * kMiB), n);
      s.on_event(std::move(src));
      s.on_event(std::move(dst));
    }
    s.advance(T + 10'000 * kMs);
    auto cps = s.take_checkpoints();
    ASSERT_EQ(cps.size(), 2u) << to_string(via);
    for (const auto& c : cps) {
      EXPECT_EQ(c.bytes, 6 * kMiB);
      ASSERT_EQ(c.bytes_by_via.size(), 1u);
      EXPECT_EQ(c.bytes_by_via[0].first, to_string(via));
      EXPECT_EQ(c.bytes_by_via[0].second, 6 * kMiB);
      EXPECT_EQ(stage(c, kStageHostIo).bytes, 0u);
      EXPECT_EQ(stage(c, kStageHostIo).busy_ns, 0u);
      EXPECT_EQ(stage(c, kStageSerialize).bytes, 0u);
      EXPECT_TRUE(c.failures.empty()) << c.failures[0].evidence;
    }
  }
  {
    // GNU cp from tmpfs to NFS: copy_file_range refused across file systems
    // (EXDEV), then read and write; the refusal is no failure.
    Stitcher s = make();
    auto [src, dst] = copy_halves(IoVia::CopyFileRange, 7, T, T + 1 * kMs, -EXDEV, 0);
    s.on_event(std::move(src));
    s.on_event(std::move(dst));
    StreamBuilder b(s);
    b.data(7, IoOp::Read, "/nfs/run/checkpoint-1/shard-0.pt", FileId{42, 2000}, T + 2 * kMs,
           T + 3 * kMs, kMiB);
    b.data(7, IoOp::Write, "/nfs/run/checkpoint-2/shard-0.pt", FileId{42, 3000}, T + 3 * kMs,
           T + 4 * kMs, kMiB);
    s.advance(T + 10'000 * kMs);
    for (const auto& c : s.take_checkpoints())
      EXPECT_TRUE(c.failures.empty()) << c.failures[0].evidence;
  }
  Stitcher s = make();
  auto [src, dst] = copy_halves(IoVia::Reflink, 7, T, T + 1 * kMs, -EIO, 0);
  s.on_event(std::move(src));
  s.on_event(std::move(dst));
  s.advance(T + 10'000 * kMs);
  auto cps = s.take_checkpoints();
  ASSERT_FALSE(cps.empty());
  ASSERT_FALSE(cps[0].failures.empty()) << "a reflink the storage failed (EIO)";
  EXPECT_EQ(cps[0].failures[0].kind, kFailureEio);
}

// rsync: the sender (one process) reads a shard while the receiver (another)
// writes it under a temporary name; those writes come in only when the
// rename decides them, after reads that began later. Writes that started
// while the burst's reads were still running are the same copy; a load that
// starts after a save's calls have all ended is a checkpoint of its own.
TEST_F(StitcherTest, DataMovingTheOtherWayWhileTheBurstRanIsTheSameCopy) {
  const uint64_t T = 1000 * kMs;
  {
    Stitcher s = make();
    StreamBuilder b(s);
    b.data(7, IoOp::Read, kShard0, kId0, T, T + 10 * kMs, 4 * kMiB);
    b.data(7, IoOp::Read, kShard1, kId1, T + 10 * kMs, T + 20 * kMs, 4 * kMiB);
    b.data(8, IoOp::Write, "/nfs/run/checkpoint-2/shard-0.pt", FileId{42, 9}, T + 1 * kMs,
           T + 12 * kMs, 4 * kMiB);
    b.data(8, IoOp::Write, "/nfs/run/checkpoint-2/shard-1.pt", FileId{42, 10}, T + 12 * kMs,
           T + 21 * kMs, 4 * kMiB);
    s.advance(T + 10'000 * kMs);
    auto cps = s.take_checkpoints();
    ASSERT_EQ(cps.size(), 2u) << "one copy: a load and a save";
    EXPECT_EQ(cps[0].direction, Direction::Load);
    EXPECT_EQ(cps[0].bytes, 8 * kMiB);
    EXPECT_EQ(cps[1].direction, Direction::Save);
    EXPECT_EQ(cps[1].bytes, 8 * kMiB);
  }
  Stitcher s = make();
  StreamBuilder b(s);
  b.data(7, IoOp::Write, kShard0, kId0, T, T + 10 * kMs, 4 * kMiB);
  b.data(7, IoOp::Read, kShard1, kId1, T + 11 * kMs, T + 20 * kMs, 4 * kMiB);
  s.advance(T + 10'000 * kMs);
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 2u) << "a save, then a load";
  EXPECT_EQ(cps[0].direction, Direction::Save);
  EXPECT_EQ(cps[1].direction, Direction::Load);
}

// A call that never returns (a hard-mounted server gone for good) holds its
// checkpoint open up to checkpoint.in_flight_limit_s after it started: the
// stall is said at stall_s, the checkpoint ends at the limit with it, and
// the call's record, when it comes at last, is that checkpoint's stall (both
// halves of a copy), never a checkpoint of its own.
TEST_F(StitcherTest, ACallInFlightPastTheLimitEndsItsCheckpointWithAStall) {
  config_.checkpoint.stall_ns = 5000 * kMs;
  config_.checkpoint.in_flight_limit_ns = 20'000 * kMs;
  const uint64_t T = 1000 * kMs;
  Stitcher s = make();
  StreamBuilder b(s);
  b.data(7, IoOp::Write, kShard0, kId0, T, T + 10 * kMs, kMiB);
  s.on_event(in_flight(7, IoOp::Write, kShard1, kId1, T + 20 * kMs));
  CallStartEvent copy = in_flight(8, IoOp::Write, kShard1 + ".bak", FileId{42, 1002}, T + 30 * kMs);
  copy.via = IoVia::CopyFileRange;
  copy.copy_source = kId0;
  copy.copy_source_path = kShard0;
  s.on_event(std::move(copy));
  std::vector<CheckpointRecord> closed;
  uint64_t closed_at = 0;
  for (uint64_t now = T + 100 * kMs; now < T + 25'000 * kMs; now += 100 * kMs) {
    s.advance(now);
    for (auto& c : s.take_checkpoints()) {
      closed.push_back(std::move(c));
      if (!closed_at) closed_at = now;
    }
  }
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_GE(closed_at, T + 20 * kMs + 20'000 * kMs) << "closed before the in-flight limit";
  EXPECT_LE(closed_at, T + 30 * kMs + 20'000 * kMs + 100 * kMs);
  EXPECT_EQ(closed[0].bytes, kMiB);
  ASSERT_EQ(closed[0].failures.size(), 2u);
  for (const auto& f : closed[0].failures) {
    EXPECT_EQ(f.kind, "stall");
    EXPECT_THAT(f.evidence, HasSubstr("has not returned after"));
  }
  // The copy's stall names both of its files.
  EXPECT_TRUE(std::any_of(closed[0].failures.begin(), closed[0].failures.end(), [](const auto& f) {
    return f.evidence.find(kShard1 + ".bak <- " + kShard0) != std::string::npos;
  }));
  // The server comes back: both calls return, long after.
  b.data(7, IoOp::Write, kShard1, kId1, T + 20 * kMs, T + 30'000 * kMs, kMiB);
  IoEvent src;
  src.tgid = 100;
  src.tid = 8;
  src.op = IoOp::Read;
  src.via = IoVia::CopyFileRange;
  src.start_ns = src.cpu_window_start_ns = T + 30 * kMs;
  src.end_ns = T + 31'000 * kMs;
  src.file = kId0;
  src.path = kShard0;
  src.ret = static_cast<int64_t>(kMiB);
  IoEvent dst = src;
  dst.op = IoOp::Write;
  dst.file = FileId{42, 1002};
  dst.path = kShard1 + ".bak";
  dst.copy_source = kId0;
  s.on_event(std::move(src));
  s.on_event(std::move(dst));
  s.finish();
  EXPECT_TRUE(s.take_checkpoints().empty()) << "a late call made a checkpoint of its own";
  const auto late = s.take_failures();
  ASSERT_EQ(late.size(), 2u);
  for (const auto& f : late) {
    EXPECT_EQ(f.kind, "stall");
    EXPECT_EQ(f.checkpoint_id, closed[0].id);
    EXPECT_THAT(f.evidence, HasSubstr("ended without it"));
  }
  EXPECT_THAT(late[0].evidence, HasSubstr(kShard1));
  // A later save is a checkpoint as ever.
  Stitcher again = make();
  StreamBuilder b2(again);
  b2.data(7, IoOp::Write, kShard0, kId0, T, T + 10 * kMs, kMiB);
  again.finish();
  EXPECT_EQ(again.take_checkpoints().size(), 1u);
}

TEST_F(StitcherTest, OneSaveWithKnownAnswers) {
  Stitcher s = make();
  StreamBuilder b(s);
  const uint64_t T = 1000 * kMs;
  b.meta(7, IoOp::Mkdir, "/nfs/run/checkpoint-1", T, T + 1 * kMs);
  b.open(7, kShard0, kId0, T + 1 * kMs, T + 2 * kMs);
  // Three 1 MiB writes of 1 ms each, each after 1 ms of CPU (pickling).
  b.data(7, IoOp::Write, kShard0, kId0, T + 3 * kMs, T + 4 * kMs, kMiB, 1 * kMs, T + 2 * kMs);
  b.data(7, IoOp::Write, kShard0, kId0, T + 5 * kMs, T + 6 * kMs, kMiB, 1 * kMs, T + 4 * kMs);
  b.data(7, IoOp::Write, kShard0, kId0, T + 7 * kMs, T + 8 * kMs, kMiB, 1 * kMs, T + 6 * kMs);
  b.data(7, IoOp::Fsync, kShard0, kId0, T + 8 * kMs, T + 10 * kMs, 0);
  b.data(7, IoOp::Close, kShard0, kId0, T + 10 * kMs, T + 11 * kMs, 0);
  // A file that is not a checkpoint: ignored entirely.
  b.data(7, IoOp::Write, "/nfs/run/train.log", FileId{42, 5}, T + 9 * kMs, T + 9 * kMs + 10, 100);
  s.advance(T + 11 * kMs + config_.checkpoint.quiet_gap_ns / 2);
  EXPECT_TRUE(s.take_checkpoints().empty()) << "closed before the quiet gap";
  s.advance(T + 11 * kMs + config_.checkpoint.quiet_gap_ns + 200 * kMs);
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  const auto& c = cps[0];
  EXPECT_EQ(c.id, 1u);
  EXPECT_EQ(c.direction, Direction::Save);
  EXPECT_EQ(c.start_ns, T);
  EXPECT_EQ(c.end_ns, T + 11 * kMs);
  EXPECT_EQ(c.bytes, 3 * kMiB);
  EXPECT_EQ(c.files, 1u);
  ASSERT_EQ(c.file_io.size(), 1u);
  EXPECT_EQ(c.file_io[0].path, kShard0);
  EXPECT_EQ(c.file_io[0].bytes_written, 3 * kMiB);
  EXPECT_EQ(c.file_io[0].write_calls, 3u);

  const auto& io = stage(c, kStageHostIo);
  EXPECT_EQ(io.bytes, 3 * kMiB);
  EXPECT_EQ(io.busy_ns, 6 * kMs);  // 3 writes + fsync 2 + close 1
  EXPECT_DOUBLE_EQ(io.bandwidth_Bps(), 3.0 * kMiB / 0.006);
  EXPECT_DOUBLE_EQ(*io.fraction_of_max(), 3.0 * kMiB / 0.006 / 1e9);
  EXPECT_EQ(io.max_source, "test:page cache write");

  const auto& md = stage(c, kStageMetadata);
  EXPECT_EQ(md.busy_ns, 2 * kMs);  // mkdir + open
  EXPECT_EQ(md.bytes, 0u);

  const auto& ser = stage(c, kStageSerialize);
  EXPECT_EQ(ser.busy_ns, 3 * kMs);
  EXPECT_EQ(ser.bytes, 3 * kMiB);
  EXPECT_FALSE(ser.max_Bps);
  EXPECT_FALSE(ser.fraction_of_max());

  EXPECT_FALSE(has_stage(c, kStageTransport)) << "not traced: absent, not zero";
  EXPECT_FALSE(has_stage(c, kStageGpuCopy));
  EXPECT_EQ(c.bottleneck, "host_io");
  EXPECT_TRUE(c.failures.empty());

  auto calls = s.take_io_calls();
  EXPECT_EQ(calls.size(), 7u);  // mkdir, open, 3 writes, fsync, close
  for (const auto& call : calls) EXPECT_EQ(call.checkpoint_id, 1u);
}

TEST_F(StitcherTest, QuietGapSeparatesCheckpointsAndLoadsAreLoads) {
  Stitcher s = make();
  StreamBuilder b(s);
  const uint64_t gap = config_.checkpoint.quiet_gap_ns;
  b.data(1, IoOp::Write, kShard0, kId0, 0 + 10, 10 * kMs, 4096);
  b.data(1, IoOp::Write, kShard0, kId0, 20 * kMs, 30 * kMs, 4096);
  // Second burst: a quiet gap later, reads only.
  uint64_t t = 30 * kMs + gap + 1;
  b.data(2, IoOp::Read, kShard0, kId0, t, t + 5 * kMs, 8192);
  b.data(2, IoOp::Read, kShard1, kId1, t + 5 * kMs, t + 6 * kMs, 100);
  b.data(2, IoOp::Read, kShard1, kId1, t + 6 * kMs, t + 7 * kMs, 0);  // EOF
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].direction, Direction::Save);
  EXPECT_EQ(cps[0].bytes, 8192u);
  EXPECT_EQ(cps[0].files, 1u);
  EXPECT_EQ(cps[1].direction, Direction::Load);
  EXPECT_EQ(cps[1].bytes, 8292u);
  EXPECT_EQ(cps[1].files, 2u);
  EXPECT_EQ(stage(cps[1], kStageHostIo).max_source, "test:page cache read");
  EXPECT_EQ(cps[1].id, 2u);
}

TEST_F(StitcherTest, SaveFollowedAtOnceByLoadIsTwoCheckpoints) {
  Stitcher s = make();
  StreamBuilder b(s);
  b.data(1, IoOp::Write, kShard0, kId0, 1 * kMs, 2 * kMs, 1000);
  b.data(1, IoOp::Read, kShard1, kId1, 3 * kMs, 4 * kMs, 500);  // other file, other way
  b.data(1, IoOp::Read, kShard0, kId0, 5 * kMs, 6 * kMs, 1000);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].bytes, 1000u);
  EXPECT_EQ(cps[1].direction, Direction::Load);
  EXPECT_EQ(cps[1].bytes, 1500u);
}

TEST_F(StitcherTest, ParallelWritersCountWallTimeOnce) {
  Stitcher s = make();
  StreamBuilder b(s);
  // Two threads writing for the same 10 ms: busy is 10 ms, bandwidth doubles.
  b.data(1, IoOp::Write, kShard0, kId0, 0 + 1, 10 * kMs + 1, kMiB);
  b.data(2, IoOp::Write, kShard1, kId1, 0 + 1, 10 * kMs + 1, kMiB);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(stage(cps[0], kStageHostIo).busy_ns, 10 * kMs);
  EXPECT_EQ(cps[0].files, 2u);
  EXPECT_DOUBLE_EQ(stage(cps[0], kStageHostIo).bandwidth_Bps(), 2.0 * kMiB / 0.010);
}

TEST_F(StitcherTest, RenameCommitIsOneFile) {
  Stitcher s = make();
  StreamBuilder b(s);
  const std::string tmp = kShard0 + ".tmp";
  b.open(1, tmp, kId0, 1 * kMs, 2 * kMs);
  b.data(1, IoOp::Write, tmp, kId0, 2 * kMs, 3 * kMs, 5000);
  b.data(1, IoOp::Close, tmp, kId0, 3 * kMs, 4 * kMs, 0);
  IoEvent rename;
  rename.tgid = 100;
  rename.tid = 1;
  rename.op = IoOp::Rename;
  rename.start_ns = 4 * kMs;
  rename.end_ns = 5 * kMs;
  rename.path = tmp;
  rename.path2 = kShard0;
  rename.file = kId0;
  s.on_event(std::move(rename));
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].files, 1u);
  EXPECT_EQ(cps[0].file_io[0].path, kShard0) << "named after the commit";
  EXPECT_EQ(stage(cps[0], kStageMetadata).busy_ns, 2 * kMs);
}

TEST_F(StitcherTest, MetadataProbesAloneAreNotACheckpoint) {
  Stitcher s = make();
  StreamBuilder b(s);
  b.meta(1, IoOp::Stat, "/nfs/run/checkpoint-1", 1 * kMs, 2 * kMs, "", -ENOENT);
  b.meta(1, IoOp::Stat, kShard0, 2 * kMs, 3 * kMs, "", -ENOENT);
  s.finish();
  EXPECT_TRUE(s.take_checkpoints().empty());
  EXPECT_TRUE(s.take_failures().empty()) << "ENOENT while probing is normal";
}

TEST_F(StitcherTest, FailuresAreFlaggedWithEvidence) {
  Stitcher s = make();
  StreamBuilder b(s);
  b.data(1, IoOp::Write, kShard0, kId0, 1 * kMs, 2 * kMs, 4096);
  b.data(1, IoOp::Write, kShard0, kId0, 2 * kMs, 3 * kMs, -ENOSPC);
  b.data(1, IoOp::Close, kShard0, kId0, 3 * kMs, 4 * kMs, -EIO);
  // ENOSPC on a file outside any checkpoint is the job's failure.
  b.data(1, IoOp::Write, "/var/log/train.log", FileId{1, 2}, 5 * kMs, 6 * kMs, -ENOSPC);
  b.data(1, IoOp::Read, "/etc/hosts", FileId{1, 3}, 5 * kMs, 6 * kMs, -EBADF);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  ASSERT_EQ(cps[0].failures.size(), 2u);
  EXPECT_EQ(cps[0].failures[0].kind, "enospc");
  EXPECT_EQ(cps[0].failures[0].time_ns, 3 * kMs);
  EXPECT_THAT(cps[0].failures[0].evidence, HasSubstr("write(" + kShard0 + ") = -ENOSPC"));
  EXPECT_EQ(cps[0].failures[0].checkpoint_id, 1u);
  EXPECT_EQ(cps[0].failures[1].kind, "eio");
  EXPECT_THAT(cps[0].failures[1].evidence, HasSubstr("close("));
  auto job = s.take_failures();
  ASSERT_EQ(job.size(), 1u);
  EXPECT_EQ(job[0].kind, "enospc");
  EXPECT_THAT(job[0].evidence, HasSubstr("/var/log/train.log"));
  EXPECT_FALSE(job[0].checkpoint_id);
}

TEST_F(StitcherTest, FailedSaveWithNoBytesIsStillACheckpoint) {
  Stitcher s = make();
  StreamBuilder b(s);
  b.open(1, kShard0, kId0, 1 * kMs, 2 * kMs, -EDQUOT);
  b.data(1, IoOp::Write, kShard1, kId1, 2 * kMs, 3 * kMs, -EDQUOT);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].direction, Direction::Save);
  EXPECT_EQ(cps[0].bytes, 0u);
  ASSERT_EQ(cps[0].failures.size(), 2u);
  EXPECT_EQ(cps[0].failures[0].kind, "edquot");
}

TEST_F(StitcherTest, StallIsALongCall) {
  config_.checkpoint.stall_ns = 50 * kMs;
  Stitcher s = make();
  StreamBuilder b(s);
  b.data(1, IoOp::Fsync, kShard0, kId0, 1 * kMs, 80 * kMs, 0);
  b.data(1, IoOp::Write, kShard0, kId0, 80 * kMs, 81 * kMs, 10);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  ASSERT_EQ(cps[0].failures.size(), 1u);
  EXPECT_EQ(cps[0].failures[0].kind, "stall");
  EXPECT_THAT(cps[0].failures[0].evidence, HasSubstr("fsync"));
}

TEST_F(StitcherTest, SerializeBoundSaveNamesSerialize) {
  Stitcher s = make();
  StreamBuilder b(s);
  // 40 ms of CPU before each of two 1 ms writes: pickling dominates.
  b.open(1, kShard0, kId0, 0 + 1, 1 * kMs);
  b.data(1, IoOp::Write, kShard0, kId0, 41 * kMs, 42 * kMs, kMiB, 40 * kMs, 1 * kMs);
  b.data(1, IoOp::Write, kShard0, kId0, 82 * kMs, 83 * kMs, kMiB, 40 * kMs, 42 * kMs);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(stage(cps[0], kStageSerialize).busy_ns, 80 * kMs);
  EXPECT_EQ(cps[0].bottleneck, "serialize");
}

TEST_F(StitcherTest, SerializeCountsOnlyCheckpointThreadsInsideTheWindow) {
  Stitcher s = make();
  StreamBuilder b(s);
  // Thread 9 spins (a data loader) but never touches the checkpoint.
  CpuEvent other{0, 100 * kMs, 100, 9, 100 * kMs};
  s.on_event(other);
  // Thread 1's window starts long before the checkpoint: clipped to it.
  b.data(1, IoOp::Write, kShard0, kId0, 50 * kMs, 51 * kMs, 10, 5 * kMs, 0);
  CpuEvent after{51 * kMs, 60 * kMs, 100, 1, 2 * kMs};  // after the last I/O: outside
  s.on_event(after);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(stage(cps[0], kStageSerialize).busy_ns, 0u)
      << "CPU before the first call and after the last is outside the checkpoint";
}

TEST_F(StitcherTest, TransportBytesFromConnectionCounters) {
  Stitcher s = make({true, true});
  StreamBuilder b(s);
  const uint64_t interval = config_.tcp_sample_interval_ns;
  b.tcp(0, 1, 0, 0, TcpEvent::Kind::State);  // connection established earlier
  b.data(1, IoOp::Write, kShard0, kId0, 100 * kMs, 101 * kMs, 3000);
  for (int i = 1; i <= 10; ++i) b.tcp(100 * kMs + i * interval, 1 + i * 300, 0);
  b.data(1, IoOp::Close, kShard0, kId0, 100 * kMs + 10 * interval, 100 * kMs + 10 * interval + 1,
         0);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  const auto& t = stage(cps[0], kStageTransport);
  EXPECT_EQ(t.bytes, 3000u);
  EXPECT_EQ(t.busy_ns, 10 * interval - 0 * kMs) << "ten active sample intervals";
  EXPECT_EQ(t.max_source, "test:link");
  auto conns = s.connections();
  ASSERT_EQ(conns.size(), 1u);
  EXPECT_EQ(conns[0].bytes_sent, 3000u);
  EXPECT_EQ(conns[0].remote, "10.0.0.9:2049");
  EXPECT_EQ(s.take_tcp_samples().size(), 11u);
}

TEST_F(StitcherTest, TransportCountsDataNotTheSynAndFin) {
  Stitcher s = make({true, true});
  // A connection seen from its SYN: bytes_acked ends at data + 2 (SYN, FIN),
  // bytes_sent at the data.
  TcpEvent e;
  e.cookie = 5;
  e.local = "127.0.0.1:0";  // no port while connecting
  e.remote = "127.0.0.1:2049";
  e.kind = TcpEvent::Kind::State;
  e.time_ns = 1;
  s.on_event(e);
  e.local = "127.0.0.1:40000";
  e.kind = TcpEvent::Kind::Sample;
  e.time_ns = 2 * kMs;
  e.bytes_acked = 1 + 1000;
  e.bytes_sent = 1000;
  s.on_event(e);
  e.local = "127.0.0.1:0";  // closed: the port is gone again
  e.kind = TcpEvent::Kind::State;
  e.time_ns = 3 * kMs;
  e.bytes_acked = 1 + 1000 + 1;
  s.on_event(e);
  auto conns = s.connections();
  ASSERT_EQ(conns.size(), 1u);
  EXPECT_EQ(conns[0].bytes_sent, 1000u);
  EXPECT_EQ(conns[0].local, "127.0.0.1:40000");
}

TEST_F(StitcherTest, TransportSaturatedWinsAndStormsAreFlagged) {
  maxima_->transport_Bps = 1e6;  // 1 MB/s link
  Stitcher s = make({true, true});
  StreamBuilder b(s);
  b.tcp(0, 0, 0, 0, TcpEvent::Kind::State);
  b.data(1, IoOp::Write, kShard0, kId0, 1 * kMs, 2 * kMs, 100000);
  // 100 KB over 100 ms = 1 MB/s = 100% of the link, with 40 retransmits.
  for (int i = 1; i <= 10; ++i) b.tcp(i * 10 * kMs, i * 10000, 0, i * 4);
  b.data(1, IoOp::Close, kShard0, kId0, 100 * kMs, 100 * kMs + 1, 0);
  b.tcp(50 * kMs, 50000, 0, 20, TcpEvent::Kind::ResetReceived);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].bottleneck, "transport");
  std::vector<std::string> kinds;
  for (const auto& f : cps[0].failures) kinds.push_back(f.kind);
  EXPECT_THAT(kinds, ::testing::UnorderedElementsAre("tcp_retransmit_storm", "tcp_reset"));
}

TEST_F(StitcherTest, AFlushStillRunningKeepsTheCheckpointOpen) {
  Stitcher s = make();
  StreamBuilder b(s);
  b.data(1, IoOp::Write, kShard0, kId0, 1 * kMs, 100 * kMs, 1 << 30);
  // close() starts at 100 ms and flushes for 3 s (NFS close-to-open).
  s.on_event(CallStartEvent{100 * kMs, 100, 1, IoOp::Close, kId0, kShard0});
  s.advance(2500 * kMs);
  EXPECT_TRUE(s.take_checkpoints().empty()) << "closed under a running flush";
  b.data(1, IoOp::Close, kShard0, kId0, 100 * kMs, 3100 * kMs, 0);
  s.advance(5000 * kMs);
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].end_ns, 3100 * kMs);
  EXPECT_EQ(stage(cps[0], kStageHostIo).busy_ns, 3099 * kMs);
}

TEST_F(StitcherTest, AHungCallIsAStallWhileItHangsAndOnlyOnce) {
  config_.checkpoint.stall_ns = 1000 * kMs;
  Stitcher s = make();
  StreamBuilder b(s);
  b.data(1, IoOp::Write, kShard0, kId0, 1 * kMs, 2 * kMs, 4096);
  s.on_event(CallStartEvent{2 * kMs, 100, 1, IoOp::Fsync, kId0, kShard0});
  s.advance(1500 * kMs);
  EXPECT_TRUE(s.take_checkpoints().empty());
  b.data(1, IoOp::Fsync, kShard0, kId0, 2 * kMs, 2000 * kMs, 0);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  ASSERT_EQ(cps[0].failures.size(), 1u);
  EXPECT_EQ(cps[0].failures[0].kind, "stall");
  EXPECT_THAT(cps[0].failures[0].evidence, HasSubstr("has not returned"));
  EXPECT_EQ(cps[0].failures[0].checkpoint_id, 1u);
}

// A close whose exit program the kernel skipped (file layer: another tool
// changed the trampoline while it slept) never gets its record. Once /proc
// (the query) shows its thread in another call, it no longer holds the
// checkpoint open, nor becomes a stall; while the query cannot tell, it does.
TEST_F(StitcherTest, AFlushWhoseThreadLeftItUnseenEndsNeitherInAStallNorHoldsItsCheckpoint) {
  config_.checkpoint.stall_ns = 5000 * kMs;
  const uint64_t gap = config_.checkpoint.quiet_gap_ns;
  auto save_whose_close_returns_unseen = [&](bool thread_left) {
    Stitcher s = make();
    std::vector<std::pair<uint32_t, IoOp>> asked;
    s.set_call_returned_query([&](const CallStartEvent& call) {
      asked.emplace_back(call.tid, call.op);
      return thread_left;
    });
    StreamBuilder b(s);
    b.data(1, IoOp::Write, kShard0, kId0, 1 * kMs, 100 * kMs, kMiB);
    s.on_event(CallStartEvent{100 * kMs, 100, 1, IoOp::Close, kId0, kShard0});
    std::vector<CheckpointRecord> closed;
    for (uint64_t now = 200 * kMs; now < 10 * gap; now += 100 * kMs) {
      s.advance(now);
      if (now < 100 * kMs + gap) {
        EXPECT_TRUE(asked.empty()) << "asked before a quiet gap";
      }
      for (auto& c : s.take_checkpoints()) closed.push_back(std::move(c));
    }
    EXPECT_FALSE(asked.empty());
    if (!asked.empty()) {
      EXPECT_EQ(asked.front(), std::make_pair(uint32_t{1}, IoOp::Close));
    }
    s.finish();
    for (auto& c : s.take_checkpoints()) closed.push_back(std::move(c));
    return closed;
  };
  auto left = save_whose_close_returns_unseen(true);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].bytes, kMiB);
  EXPECT_EQ(left[0].end_ns, 100 * kMs) << "closed a quiet gap after its last record";
  EXPECT_TRUE(left[0].failures.empty()) << left[0].failures[0].evidence;

  auto unknown = save_whose_close_returns_unseen(false);
  ASSERT_EQ(unknown.size(), 1u);
  ASSERT_EQ(unknown[0].failures.size(), 1u) << "a close still in flight past the stall time";
  EXPECT_EQ(unknown[0].failures[0].kind, "stall");
}

TEST_F(StitcherTest, PollingForAFileDoesNotHoldACheckpointOpen) {
  Stitcher s = make();
  StreamBuilder b(s);
  const uint64_t kS = 1000 * kMs;
  b.data(1, IoOp::Write, kShard0, kId0, 1 * kMs, 10 * kMs, 100);
  for (uint64_t t = 500 * kMs; t < 60 * kS; t += 500 * kMs) {
    b.meta(1, IoOp::Stat, "/nfs/run/checkpoint-1/STOP", t, t + 1, "", -ENOENT);
    s.advance(t + 2);
  }
  b.data(1, IoOp::Write, kShard1, kId1, 60 * kS, 60 * kS + 10 * kMs, 200);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].bytes, 100u);
  EXPECT_EQ(cps[0].end_ns, 10 * kMs + 0) << "the polls before the gap closed it do not stretch it";
  EXPECT_EQ(cps[1].bytes, 200u);
}

TEST_F(StitcherTest, AResetNoCheckpointClaimsIsTheJobs) {
  Stitcher s = make({true, true});
  StreamBuilder b(s);
  b.tcp(10 * kMs, 0, 0, 0, TcpEvent::Kind::ResetReceived);
  s.advance(20 * kMs);
  EXPECT_TRUE(s.take_failures().empty()) << "a checkpoint may still claim it";
  s.advance(5000 * kMs);
  auto job = s.take_failures();
  ASSERT_EQ(job.size(), 1u);
  EXPECT_EQ(job[0].kind, "tcp_reset");
  EXPECT_FALSE(job[0].checkpoint_id);
}

TEST_F(StitcherTest, AResetStormIsOneFailurePerServerWithItsCount) {
  Stitcher s = make({true, true});
  StreamBuilder b(s);
  // A server refusing every reconnect for 3 s: 30 resets, outside checkpoints.
  for (int i = 0; i < 30; ++i)
    b.tcp((10 + 100 * i) * kMs, 0, 0, 0,
          i % 3 ? TcpEvent::Kind::ResetReceived : TcpEvent::Kind::ResetSent);
  s.advance(3000 * kMs);
  EXPECT_TRUE(s.take_failures().empty()) << "the storm is still going (within the horizon)";
  s.advance(10'000 * kMs);
  auto job = s.take_failures();
  ASSERT_EQ(job.size(), 1u);
  EXPECT_EQ(job[0].kind, "tcp_reset");
  EXPECT_EQ(job[0].time_ns, 10 * kMs);
  EXPECT_THAT(job[0].evidence,
              HasSubstr("30 resets with 10.0.0.9:2049 over 2.9 s (10 sent, 20 received)"));
}

TEST_F(StitcherTest, ASlowLinkIsBusyWhileDataIsOutstanding) {
  maxima_->transport_Bps = 1e6;
  Stitcher s = make({true, true});
  StreamBuilder b(s);
  b.data(1, IoOp::Write, kShard0, kId0, 0, 1 * kMs, 100000);
  // Acks 100 ms apart on a slow link, data outstanding all along: busy the
  // whole 400 ms, not one 10 ms sample interval before each ack.
  for (int i = 0; i <= 4; ++i)
    b.tcp(i * 100 * kMs, i * 25000, 0, 0, TcpEvent::Kind::Sample, 0, i < 4 ? 60000 : 0);
  b.data(1, IoOp::Close, kShard0, kId0, 399 * kMs, 400 * kMs, 0);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(stage(cps[0], kStageTransport).busy_ns, 400 * kMs);
  EXPECT_EQ(stage(cps[0], kStageTransport).bytes, 100000u);
  EXPECT_EQ(cps[0].bottleneck, "transport");
}

TEST_F(StitcherTest, RestartedCallsAreNotFailures) {
  Stitcher s = make();
  StreamBuilder b(s);
  b.data(1, IoOp::Write, kShard0, kId0, 1 * kMs, 2 * kMs, -512);  // -ERESTARTSYS
  b.data(1, IoOp::Write, kShard0, kId0, 2 * kMs, 3 * kMs, -EINTR);
  b.data(1, IoOp::Write, kShard0, kId0, 3 * kMs, 4 * kMs, 4096);
  b.data(1, IoOp::Write, "/var/log/x.log", FileId{1, 9}, 3 * kMs, 4 * kMs, -EAGAIN);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_TRUE(cps[0].failures.empty());
  EXPECT_TRUE(s.take_failures().empty());
}

TEST(BottleneckTest, Rules) {
  auto st = [](const char* name, uint64_t busy, std::optional<double> max, uint64_t bytes,
               std::optional<uint64_t> own = std::nullopt) {
    StageRecord s;
    s.name = name;
    s.busy_ns = busy;
    s.exclusive_ns = own.value_or(busy);
    s.max_Bps = max;
    s.bytes = bytes;
    return s;
  };
  // The most own time wins.
  EXPECT_EQ(choose_bottleneck({st("serialize", 5, {}, 10), st("host_io", 9, 1e12, 10)}), "host_io");
  // A stage at its maximum for a moment does not beat one that holds the
  // checkpoint far longer: 10 ms at 100% of max against 80 ms of pickling.
  EXPECT_EQ(choose_bottleneck({st("serialize", 80 * kMs, {}, 10'000'000),
                               st("host_io", 10 * kMs, 1e9, 10'000'000)}),
            "serialize");
  // Nested stages about equally busy: the one whose own time it is.
  EXPECT_EQ(choose_bottleneck({st("host_io", 100 * kMs, 1e9, 100'000'000, 5 * kMs),
                               st("transport", 95 * kMs, {}, 95'000'000)}),
            "transport");
  // Own times within 10%: the stage further down, maxima or not.
  EXPECT_EQ(choose_bottleneck({st("host_io", 100 * kMs, 1e9, 1), st("transport", 95 * kMs, {}, 1)}),
            "transport");
  EXPECT_EQ(choose_bottleneck({st("host_io", 100 * kMs, {}, 1), st("transport", 89 * kMs, 1e9, 1)}),
            "host_io");
  // Exact ties go down the pipeline.
  EXPECT_EQ(choose_bottleneck({st("host_io", 5, {}, 1), st("metadata", 5, {}, 0)}), "metadata");
  EXPECT_EQ(choose_bottleneck({st("host_io", 0, {}, 0)}), "");
  EXPECT_EQ(choose_bottleneck({st("host_io", 7, {}, 0, 0)}), "") << "busy, but none of it its own";
  EXPECT_EQ(choose_bottleneck({}), "");
}

TEST(IntervalsTest, UnionClipsAndMerges) {
  std::vector<Interval> iv{{0, 10}, {5, 15}, {20, 30}, {25, 26}, {40, 50}};
  EXPECT_EQ(union_length(iv, 0, 100), 15u + 10u + 10u);
  std::vector<Interval> iv2{{0, 10}, {5, 15}, {20, 30}};
  EXPECT_EQ(union_length(iv2, 8, 22), 7u + 2u);
  std::vector<Interval> empty;
  EXPECT_EQ(union_length(empty, 0, 10), 0u);
}

TEST(FailureKindTest, Errnos) {
  EXPECT_EQ(failure_kind_for_errno(ENOSPC), "enospc");
  EXPECT_EQ(failure_kind_for_errno(EDQUOT), "edquot");
  EXPECT_EQ(failure_kind_for_errno(ESTALE), "estale");
  EXPECT_EQ(failure_kind_for_errno(EIO), "eio");
  EXPECT_EQ(failure_kind_for_errno(ENOENT), "");
}

// Issue 19: nanoGPT's out/ckpt.pt gave "checkpoints: none detected". The
// sources every trainer imports say checkpoint too, and must stay out.
TEST_F(StitcherTest, NanoGptsOutCkptPtIsACheckpointByDefault) {
  Stitcher s = make();
  StreamBuilder b(s);
  const std::string ckpt = "/home/u/nanoGPT/out/ckpt.pt";
  const std::string source = "/usr/lib/python3/dist-packages/torch/utils/checkpoint.py";
  const FileId ckpt_id{42, 2000};
  const FileId source_id{42, 2001};
  b.open(7, source, source_id, 1 * kMs, 2 * kMs);
  b.data(7, IoOp::Read, source, source_id, 2 * kMs, 3 * kMs, 4096);
  const uint64_t T = 10'000 * kMs;
  b.open(7, ckpt, ckpt_id, T, T + 1 * kMs);
  b.data(7, IoOp::Write, ckpt, ckpt_id, T + 1 * kMs, T + 5 * kMs, 8 * kMiB);
  b.data(7, IoOp::Close, ckpt, ckpt_id, T + 5 * kMs, T + 6 * kMs, 0);
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].direction, Direction::Save);
  EXPECT_EQ(cps[0].bytes, 8 * kMiB);
  ASSERT_EQ(cps[0].file_io.size(), 1u);
  EXPECT_EQ(cps[0].file_io[0].path, ckpt);
}

// Hugging Face Trainer 4.36-4.38 staged into tmp-checkpoint-N and renamed it:
// the staged shards count, and the rename is part of the same save.
TEST_F(StitcherTest, HuggingFaceStagingDirectoryIsOneSave) {
  Stitcher s = make();
  StreamBuilder b(s);
  const uint64_t T = 1000 * kMs;
  const std::string staged = "/job/out/tmp-checkpoint-500/optimizer.pt";
  b.meta(7, IoOp::Mkdir, "/job/out/tmp-checkpoint-500", T, T + 1 * kMs);
  b.open(7, staged, kId0, T + 1 * kMs, T + 2 * kMs);
  b.data(7, IoOp::Write, staged, kId0, T + 2 * kMs, T + 4 * kMs, 2 * kMiB);
  b.data(7, IoOp::Close, staged, kId0, T + 4 * kMs, T + 5 * kMs, 0);
  b.meta(7, IoOp::Rename, "/job/out/tmp-checkpoint-500", T + 6 * kMs, T + 7 * kMs,
         "/job/out/checkpoint-500");
  s.finish();
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].bytes, 2 * kMiB);
  EXPECT_EQ(cps[0].end_ns, T + 7 * kMs) << "the rename ends the save";
}

}  // namespace
}  // namespace ckpt
