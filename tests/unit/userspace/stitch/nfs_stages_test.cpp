// NFS stages with known answers: a save whose pages go out as WRITE and
// COMMIT RPCs, a load read back with READ_PLUS, RPC errors and timeouts, and
// the queue verdict.
#include <algorithm>
#include <cerrno>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "stitch/stitcher.h"

namespace ckpt {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t T = 5'000 * kMs;
const std::string kServer = "10.0.0.9:2049";
const std::string kShard = "/nfs/run/checkpoint-1/shard-0.pt";
const std::string kShard1 = "/nfs/run/checkpoint-1/shard-1.pt";
const FileId kFile{53, 777};

class Maxima : public MaximaProvider {
 public:
  StageMax storage(Direction d, const std::vector<FileId>&) override {
    return d == Direction::Save ? StageMax{1e9, "test:storage-write"}
                                : StageMax{2e9, "test:storage-read"};
  }
  StageMax serialize(size_t /*threads*/) override { return {}; }
  StageMax transport(const std::string&) override { return StageMax{transport_Bps, "test:link"}; }
  std::optional<double> transport_Bps = 4e9;
};

class NfsStagesTest : public ::testing::Test {
 protected:
  NfsStagesTest() : config_(Config::defaults()) {}

  Stitcher make(bool nfs = true, bool transport = false) {
    return Stitcher(config_, maxima_, StageAvailability{true, transport, nfs});
  }

  static void call(Stitcher& s, IoOp op, uint64_t t0, uint64_t t1, int64_t ret,
                   const std::string& path = kShard, FileId file = kFile) {
    IoEvent e;
    e.tgid = 100;
    e.tid = 100;
    e.op = op;
    e.start_ns = t0;
    e.end_ns = t1;
    e.path = path;
    e.file = file;
    e.ret = ret;
    s.on_event(std::move(e));
  }
  // Process 100 exits at t with `code` (task->exit_code encoding).
  static void exit_by(Stitcher& s, uint64_t t, int32_t code,
                      std::optional<std::vector<FileId>> open_for_write = std::nullopt) {
    ProcEvent e;
    e.kind = ProcEvent::Kind::Exit;
    e.time_ns = t;
    e.tgid = e.tid = 100;
    e.exit_code = code;
    e.comm = "python";
    e.open_for_write = std::move(open_for_write);
    s.on_event(std::move(e));
  }
  static void nfs_io(Stitcher& s, NfsIoKind kind, uint64_t t0, uint64_t t1, uint64_t bytes,
                     int32_t status = 0, FileId file = kFile) {
    NfsIoEvent e;
    e.kind = kind;
    e.start_ns = t0;
    e.end_ns = t1;
    e.file = file;
    e.count = bytes;
    e.result_count = status < 0 ? 0 : bytes;
    e.status = status;
    s.on_event(std::move(e));
  }
  // An RPC that started at t0, queued `queue`, waited `rtt` for the reply.
  static void rpc(Stitcher& s, const std::string& op, uint64_t t0, uint64_t queue, uint64_t rtt,
                  std::optional<NfsIoKind> io, uint64_t bytes, int32_t status = 0,
                  uint64_t sending_wait = 0, uint64_t backlog_wait = 0, uint32_t client = 4,
                  FileId file = kFile) {
    RpcEvent e;
    e.kind = RpcEvent::Kind::Done;
    e.start_ns = t0;
    e.queue_ns = queue;
    e.rtt_ns = rtt;
    e.execute_ns = queue + rtt;
    e.time_ns = t0 + queue + rtt;
    e.op = op;
    e.vers = 4;
    e.client_id = client;
    e.xid = 0x1234;
    e.ntrans = 1;
    e.status = status;
    e.bytes_sent = io == NfsIoKind::Write ? bytes + 200 : 150;
    e.bytes_recv = io == NfsIoKind::Read ? bytes + 100 : 120;
    e.wait_ns[kRpcQueueSending] = sending_wait;
    e.wait_ns[kRpcQueueBacklog] = backlog_wait;
    e.wait_ns[kRpcQueuePending] = rtt;
    e.server = kServer;
    e.io = io;
    if (io) {
      e.file = file;
      e.io_count = bytes;
    }
    s.on_event(std::move(e));
  }
  // Four 1 MiB writes; writeback sends them as four WRITE RPCs of 1 MiB
  // (RPC i: start 10+10i ms, queue (i+1) ms, rtt 4 ms), the fsync a COMMIT
  // whose page I/O count is `commit_count`.
  static void four_writes_and_their_rpcs(Stitcher& s, uint64_t commit_count) {
    for (int i = 0; i < 4; ++i)
      call(s, IoOp::Write, T + i * kMs, T + i * kMs + 100'000, static_cast<int64_t>(kMiB));
    for (uint64_t i = 0; i < 4; ++i) {
      const uint64_t t0 = T + (10 + 10 * i) * kMs;
      rpc(s, "WRITE", t0, (i + 1) * kMs, 4 * kMs, NfsIoKind::Write, kMiB, 0, (i + 1) * kMs);
      nfs_io(s, NfsIoKind::Write, t0, t0 + (i + 5) * kMs, kMiB);
    }
    rpc(s, "COMMIT", T + 60 * kMs, 0, 2 * kMs, NfsIoKind::Commit, commit_count);
  }
  std::vector<CheckpointRecord> close(Stitcher& s) {
    s.advance(T + 10'000 * kMs);
    return s.take_checkpoints();
  }

  Config config_;
  std::shared_ptr<Maxima> maxima_ = std::make_shared<Maxima>();
};

const StageRecord* find_stage(const CheckpointRecord& c, std::string_view name) {
  for (const auto& s : c.stages)
    if (s.name == name) return &s;
  return nullptr;
}

// Four 1 MiB writes; writeback sends them as four WRITE RPCs of 1 MiB, the
// fsync a COMMIT. Known answers for every NFS figure.
TEST_F(NfsStagesTest, SaveOverNfsWithKnownAnswers) {
  Stitcher s = make();
  four_writes_and_their_rpcs(s, 0);
  nfs_io(s, NfsIoKind::Commit, T + 60 * kMs, T + 62 * kMs, 0);
  rpc(s, "GETATTR", T + 63 * kMs, 0, 1 * kMs, std::nullopt, 0);
  // Another client's RPC (another mount): not this checkpoint's.
  rpc(s, "WRITE", T + 20 * kMs, 0, 1 * kMs, std::nullopt, 0, 0, 0, 0, /*client=*/9);
  call(s, IoOp::Fsync, T + 59 * kMs, T + 63 * kMs, 0);
  call(s, IoOp::Close, T + 63 * kMs, T + 64 * kMs, 0);

  auto cps = close(s);
  ASSERT_EQ(cps.size(), 1u);
  const auto& c = cps[0];
  ASSERT_TRUE(c.nfs.has_value());
  const auto& n = *c.nfs;
  EXPECT_EQ(n.io_rpcs, 5u);  // 4 WRITE + 1 COMMIT
  EXPECT_EQ(n.io_bytes, 4 * kMiB);
  EXPECT_EQ(n.servers, std::vector<std::string>{kServer});
  ASSERT_EQ(n.rpc_ops.size(), 3u);
  EXPECT_EQ(n.rpc_ops[0].op, "WRITE");
  EXPECT_EQ(n.rpc_ops[0].count, 4u);
  EXPECT_EQ(n.rpc_ops[0].queue_ns, (1 + 2 + 3 + 4) * kMs);
  EXPECT_EQ(n.rpc_ops[0].rtt_ns, 16 * kMs);
  EXPECT_EQ(n.rpc_ops[0].bytes_sent, 4 * (kMiB + 200));
  EXPECT_EQ(n.rpc_ops[1].op, "COMMIT");
  EXPECT_EQ(n.rpc_ops[2].op, "GETATTR");
  // Queue waits of the 5 I/O RPCs: 0, 1, 2, 3, 4 ms.
  EXPECT_EQ(n.queue_wait.count, 5u);
  EXPECT_EQ(n.queue_wait.p50_ns, 2 * kMs);
  EXPECT_EQ(n.queue_wait.max_ns, 4 * kMs);
  EXPECT_EQ(n.queue_wait.mean_ns, 2 * kMs);
  EXPECT_EQ(n.rtt.p50_ns, 4 * kMs);
  EXPECT_FALSE(n.tcp_in_flight_max) << "transport probes off: unknown, not 0";

  const auto* client = find_stage(c, kStageNfsClient);
  const auto* queue = find_stage(c, kStageRpcQueue);
  const auto* rtt = find_stage(c, kStageRpcRtt);
  ASSERT_TRUE(client && queue && rtt);
  EXPECT_EQ(client->bytes, 4 * kMiB);
  // WRITE i runs [10+10i, 15+11i] ms: 5+6+7+8 ms, plus the 2 ms COMMIT.
  EXPECT_EQ(client->busy_ns, 28 * kMs);
  EXPECT_EQ(client->max_source, "test:storage-write");
  EXPECT_EQ(queue->busy_ns, 10 * kMs);
  EXPECT_EQ(queue->max_source, "test:link");
  EXPECT_EQ(rtt->busy_ns, 4 * 4 * kMs + 2 * kMs);
  // Pipeline order: the NFS stages sit between metadata and transport, the
  // storage stage (what reached the server: the client's WRITEs, once)
  // before them.
  std::vector<std::string> names;
  for (const auto& st : c.stages) names.push_back(st.name);
  EXPECT_THAT(names, ::testing::ElementsAre("serialize", "host_io", "metadata", "storage",
                                            "nfs_client", "rpc_queue", "rpc_rtt"));
  const StageRecord* storage = nullptr;
  for (const auto& st : c.stages)
    if (st.name == kStageStorage) storage = &st;
  ASSERT_TRUE(storage);
  EXPECT_EQ(storage->bytes, client->bytes);
  EXPECT_EQ(storage->busy_ns, client->busy_ns);
  EXPECT_EQ(storage->exclusive_ns, 0u) << "its time is the client's";
  EXPECT_TRUE(c.failures.empty());
}

TEST_F(NfsStagesTest, LoadCountsReadPlusAndOnlyThisCheckpointsFiles) {
  Stitcher s = make();
  call(s, IoOp::Read, T, T + 30 * kMs, static_cast<int64_t>(2 * kMiB));
  rpc(s, "READ_PLUS", T + kMs, 0, 5 * kMs, NfsIoKind::Read, kMiB);
  nfs_io(s, NfsIoKind::Read, T + kMs, T + 6 * kMs, kMiB);
  rpc(s, "READ_PLUS", T + 7 * kMs, 0, 5 * kMs, NfsIoKind::Read, kMiB);
  nfs_io(s, NfsIoKind::Read, T + 7 * kMs, T + 12 * kMs, kMiB);
  // Another file's read (not touched by the job's calls): not counted.
  nfs_io(s, NfsIoKind::Read, T + 7 * kMs, T + 12 * kMs, kMiB, 0, FileId{53, 999});
  auto cps = close(s);
  ASSERT_EQ(cps.size(), 1u);
  ASSERT_TRUE(cps[0].nfs);
  EXPECT_EQ(cps[0].direction, Direction::Load);
  EXPECT_EQ(cps[0].nfs->io_bytes, 2 * kMiB);
  EXPECT_EQ(cps[0].nfs->io_rpcs, 2u);
  EXPECT_EQ(find_stage(cps[0], kStageNfsClient)->busy_ns, 10 * kMs);
  EXPECT_EQ(find_stage(cps[0], kStageNfsClient)->max_source, "test:storage-read");
}

TEST_F(NfsStagesTest, LocalFilesHaveNoNfsStagesAndNoProbesMeansAbsent) {
  {
    Stitcher s = make();
    call(s, IoOp::Write, T, T + kMs, 4096);
    auto cps = close(s);
    ASSERT_EQ(cps.size(), 1u);
    EXPECT_FALSE(cps[0].nfs);
    EXPECT_EQ(find_stage(cps[0], kStageNfsClient), nullptr);
  }
  {
    Stitcher s = make(/*nfs=*/false);
    call(s, IoOp::Write, T, T + kMs, 4096);
    rpc(s, "WRITE", T, 0, kMs, NfsIoKind::Write, 4096);
    nfs_io(s, NfsIoKind::Write, T, T + kMs, 4096);
    auto cps = close(s);
    ASSERT_EQ(cps.size(), 1u);
    EXPECT_FALSE(cps[0].nfs);
  }
}

TEST_F(NfsStagesTest, RpcStorageErrorsAreFlaggedOncePerFileWithACount) {
  Stitcher s = make();
  call(s, IoOp::Write, T, T + kMs, static_cast<int64_t>(kMiB));
  for (int i = 0; i < 3; ++i)
    rpc(s, "WRITE", T + (2 + i) * kMs, 0, kMs, NfsIoKind::Write, kMiB / 4, -ENOSPC);
  rpc(s, "WRITE", T + 6 * kMs, 0, kMs, NfsIoKind::Write, kMiB / 4);
  // ENOENT on a LOOKUP is normal: counted as an error, not flagged.
  rpc(s, "LOOKUP", T + 7 * kMs, 0, kMs, std::nullopt, 0, -ENOENT);
  call(s, IoOp::Close, T + 8 * kMs, T + 9 * kMs, -ENOSPC);
  auto cps = close(s);
  ASSERT_EQ(cps.size(), 1u);
  const auto& f = cps[0].failures;
  auto rpc_failures = std::count_if(f.begin(), f.end(),
                                    [](const FailureRecord& r) { return r.kind == "rpc_enospc"; });
  ASSERT_EQ(rpc_failures, 1);
  const auto& r = *std::find_if(f.begin(), f.end(),
                                [](const FailureRecord& x) { return x.kind == "rpc_enospc"; });
  EXPECT_EQ(r.time_ns, T + 3 * kMs);  // the first failed RPC's end
  EXPECT_THAT(r.evidence, HasSubstr(kShard));
  EXPECT_THAT(r.evidence, HasSubstr("ENOSPC"));
  EXPECT_THAT(r.evidence, HasSubstr(kServer));
  EXPECT_THAT(r.evidence, HasSubstr("3 RPCs failed"));
  EXPECT_TRUE(std::any_of(f.begin(), f.end(), [](const FailureRecord& x) {
    return x.kind == "enospc";
  })) << "the job's own failed close";
  ASSERT_TRUE(cps[0].nfs);
  const auto& ops = cps[0].nfs->rpc_ops;
  auto lookup = std::find_if(ops.begin(), ops.end(), [](auto& o) { return o.op == "LOOKUP"; });
  ASSERT_NE(lookup, ops.end());
  EXPECT_EQ(lookup->errors, 1u);
}

TEST_F(NfsStagesTest, ServerNotRespondingIsFlaggedLiveAndCompletedAtClose) {
  Stitcher s = make();
  call(s, IoOp::Write, T, T + kMs, static_cast<int64_t>(kMiB));
  CallStartEvent fsync;
  fsync.start_ns = T + 2 * kMs;
  fsync.tgid = fsync.tid = 100;
  fsync.op = IoOp::Fsync;
  fsync.file = kFile;
  fsync.path = kShard;
  s.on_event(CallStartEvent(fsync));
  for (int i = 1; i <= 3; ++i) {
    RpcEvent t;
    t.kind = RpcEvent::Kind::Timeout;
    t.time_ns = T + i * 1000 * kMs;
    t.execute_ns = i * 1000 * kMs;
    t.op = "WRITE";
    t.server = kServer;
    t.timeouts = static_cast<uint32_t>(i);
    t.client_id = 4;
    s.on_event(std::move(t));
  }
  // The server answers at T+5 s; the fsync returns.
  rpc(s, "WRITE", T + 2 * kMs, 0, 4998 * kMs, NfsIoKind::Write, kMiB);
  nfs_io(s, NfsIoKind::Write, T + 2 * kMs, T + 5000 * kMs, kMiB);
  call(s, IoOp::Fsync, T + 2 * kMs, T + 5001 * kMs, 0);
  s.advance(T + 9000 * kMs);
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  const auto& f = cps[0].failures;
  auto it = std::find_if(f.begin(), f.end(), [](const FailureRecord& x) {
    return x.kind == "nfs_server_not_responding";
  });
  ASSERT_NE(it, f.end());
  EXPECT_EQ(it->time_ns, T + 1000 * kMs);
  EXPECT_THAT(it->evidence, HasSubstr(kServer));
  EXPECT_THAT(it->evidence, HasSubstr("3 major timeout(s) over 2.0 s"));
  EXPECT_THAT(it->evidence, HasSubstr("responding again 4.0 s after the first timeout"));
  EXPECT_EQ(
      std::count_if(f.begin(), f.end(),
                    [](const FailureRecord& x) { return x.kind == "nfs_server_not_responding"; }),
      1);
  EXPECT_EQ(cps[0].nfs->rpc_ops[0].major_timeouts, 0u) << "the finished RPC reported 0";
}

TEST_F(NfsStagesTest, TimeoutOutsideCheckpointsIsAJobFailureOncePerMinute) {
  Stitcher s = make();
  for (int i = 0; i < 3; ++i) {
    RpcEvent t;
    t.kind = RpcEvent::Kind::Timeout;
    t.time_ns = T + i * 30'000 * kMs;
    t.op = "GETATTR";
    t.server = kServer;
    s.on_event(std::move(t));
  }
  auto f = s.take_failures();
  ASSERT_EQ(f.size(), 2u);  // at 0 s and 60 s
  EXPECT_EQ(f[1].time_ns, T + 60'000 * kMs);
}

TEST_F(NfsStagesTest, TotalsByServerAndVersionForTheMountstatsCrossCheck) {
  Stitcher s = make();
  rpc(s, "WRITE", T, kMs, kMs, NfsIoKind::Write, kMiB);
  rpc(s, "WRITE", T, kMs, kMs, NfsIoKind::Write, kMiB, -EIO);
  RpcEvent t;
  t.kind = RpcEvent::Kind::Timeout;
  t.time_ns = T;
  t.op = "WRITE";
  t.server = kServer;
  t.vers = 4;
  s.on_event(std::move(t));
  auto totals = s.rpc_totals();
  ASSERT_EQ(totals.size(), 1u);
  EXPECT_EQ(totals[0].server, kServer);
  EXPECT_EQ(totals[0].vers, 4u);
  ASSERT_EQ(totals[0].ops.size(), 1u);
  EXPECT_EQ(totals[0].ops[0].count, 2u) << "a timeout is not a finished RPC";
  EXPECT_EQ(totals[0].ops[0].errors, 1u);
  EXPECT_EQ(totals[0].ops[0].queue_ns, 2 * kMs);
}

TEST(QueueVerdictTest, AQueueIsAttributedToWhatItWaitedOn) {
  std::vector<StageRecord> stages(3);
  stages[0].name = "rpc_queue";
  stages[1].name = "rpc_rtt";
  stages[2].name = "transport";
  using Waits = std::vector<std::pair<std::string, uint64_t>>;
  EXPECT_EQ(attribute_queue_verdict("rpc_queue", stages, Waits{{"sending", 9}, {"backlog", 1}}),
            "transport");
  EXPECT_EQ(attribute_queue_verdict("rpc_queue", stages, Waits{{"sending", 1}, {"backlog", 9}}),
            "rpc_rtt");
  EXPECT_EQ(attribute_queue_verdict("rpc_queue", stages, Waits{}), "rpc_queue")
      << "no evidence: the queue itself";
  EXPECT_EQ(attribute_queue_verdict("host_io", stages, Waits{{"sending", 9}}), "host_io");
  stages.pop_back();  // transport not measured
  EXPECT_EQ(attribute_queue_verdict("rpc_queue", stages, Waits{{"sending", 9}}), "rpc_queue");
}

TEST(DurationStatsTest, NearestRankPercentiles) {
  std::vector<uint64_t> v;
  for (uint64_t i = 100; i >= 1; --i) v.push_back(i);
  DurationStats d = duration_stats(v);
  EXPECT_EQ(d.count, 100u);
  EXPECT_EQ(d.p50_ns, 50u);
  EXPECT_EQ(d.p90_ns, 90u);
  EXPECT_EQ(d.p99_ns, 99u);
  EXPECT_EQ(d.max_ns, 100u);
  EXPECT_EQ(d.mean_ns, 51u);  // 50.5 rounded
  std::vector<uint64_t> one{7};
  EXPECT_EQ(duration_stats(one).p99_ns, 7u);
  std::vector<uint64_t> none;
  EXPECT_EQ(duration_stats(none).count, 0u);
}

}  // namespace
}  // namespace ckpt

namespace ckpt {
namespace {

TEST_F(NfsStagesTest, AProcessKilledMidSaveLeavesPartialFilesFlagged) {
  Stitcher s = make(/*nfs=*/false);
  const FileId other{53, 778};
  call(s, IoOp::Write, T, T + kMs, static_cast<int64_t>(kMiB));
  // A second file written and closed: complete, not flagged.
  call(s, IoOp::Write, T + 2 * kMs, T + 3 * kMs, 4096, kShard1, other);
  call(s, IoOp::Close, T + 4 * kMs, T + 5 * kMs, 0, kShard1, other);
  exit_by(s, T + 6 * kMs, 9);  // SIGKILL
  auto cps = close(s);
  ASSERT_EQ(cps.size(), 1u);
  ASSERT_EQ(cps[0].failures.size(), 1u);
  const auto& f = cps[0].failures[0];
  EXPECT_EQ(f.kind, "partial_save");
  EXPECT_EQ(f.time_ns, T + 6 * kMs);
  EXPECT_THAT(f.evidence, HasSubstr(kShard));
  EXPECT_THAT(f.evidence, HasSubstr("signal 9"));
  EXPECT_THAT(f.evidence, ::testing::Not(HasSubstr("shard-1.pt")));
}

TEST_F(NfsStagesTest, ANormalExitIsNotAPartialSave) {
  Stitcher s = make(/*nfs=*/false);
  call(s, IoOp::Write, T, T + kMs, 4096);
  exit_by(s, T + 2 * kMs, 1 << 8);  // exit(1): a status, not a signal
  auto cps = close(s);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_TRUE(cps[0].failures.empty());
}

}  // namespace
}  // namespace ckpt

namespace ckpt {
namespace {

TEST_F(NfsStagesTest, TheKernelsOpenFileListDecidesWhatIsPartial) {
  Stitcher s = make(/*nfs=*/false);
  const FileId other{53, 778};
  call(s, IoOp::Write, T, T + kMs, static_cast<int64_t>(kMiB));
  call(s, IoOp::Write, T + 2 * kMs, T + 3 * kMs, 4096, kShard1, other);
  // No close(2) for either (the shell closed shard-0 with dup2); the kernel
  // says only shard-1 was still open for writing at the death.
  exit_by(s, T + 6 * kMs, 9, std::vector<FileId>{other});
  auto cps = close(s);
  ASSERT_EQ(cps.size(), 1u);
  ASSERT_EQ(cps[0].failures.size(), 1u);
  EXPECT_THAT(cps[0].failures[0].evidence, HasSubstr("shard-1.pt"));
  EXPECT_THAT(cps[0].failures[0].evidence, ::testing::Not(HasSubstr("shard-0.pt")));
}

}  // namespace
}  // namespace ckpt

namespace ckpt {
namespace {

// A write(2) blocked on a dead server is no flush call, but the NFS client
// owes the server its pages: the checkpoint stays open, stalls are flagged
// while it hangs, and the server's timeouts belong to it.
TEST_F(NfsStagesTest, OutstandingNfsIoHoldsTheCheckpointOpenAndStalls) {
  config_.checkpoint.stall_ns = 2000 * kMs;
  Stitcher s = make();
  call(s, IoOp::Write, T, T + kMs, static_cast<int64_t>(kMiB));
  NfsIoEvent start;
  start.kind = NfsIoKind::Write;
  start.start_ns = T + 2 * kMs;
  start.file = kFile;
  start.count = kMiB;
  start.id = 0xabc;
  start.started = true;
  s.on_event(NfsIoEvent(start));
  s.advance(T + 1500 * kMs);
  EXPECT_TRUE(s.take_checkpoints().empty()) << "closed while its pages are still owed";
  s.advance(T + 2500 * kMs);
  RpcEvent t;
  t.kind = RpcEvent::Kind::Timeout;
  t.time_ns = T + 3000 * kMs;
  t.op = "WRITE";
  t.server = kServer;
  s.on_event(std::move(t));
  s.advance(T + 5000 * kMs);
  EXPECT_TRUE(s.take_checkpoints().empty());
  EXPECT_TRUE(s.take_failures().empty()) << "the timeout is the checkpoint's, not the job's";
  // The server is back: the WRITE completes.
  rpc(s, "WRITE", T + 2 * kMs, 0, 5998 * kMs, NfsIoKind::Write, kMiB);
  NfsIoEvent done = start;
  done.started = false;
  done.end_ns = T + 6000 * kMs;
  done.result_count = kMiB;
  s.on_event(NfsIoEvent(done));
  s.advance(T + 9000 * kMs);
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  std::vector<std::string> kinds;
  for (const auto& f : cps[0].failures) kinds.push_back(f.kind);
  EXPECT_THAT(kinds, ::testing::ElementsAre("stall", "nfs_server_not_responding"));
  EXPECT_EQ(cps[0].failures[0].time_ns, T + 2500 * kMs);
  EXPECT_THAT(cps[0].failures[0].evidence, HasSubstr("NFS write of " + kShard));
  EXPECT_EQ(cps[0].nfs->io_bytes, kMiB);
}

}  // namespace
}  // namespace ckpt

namespace ckpt {
namespace {

TEST_F(NfsStagesTest, OneHangIsOneStallWhenAFlushAndItsPagesWaitTogether) {
  config_.checkpoint.stall_ns = 2000 * kMs;
  Stitcher s = make();
  call(s, IoOp::Write, T, T + kMs, static_cast<int64_t>(kMiB));
  s.on_event(CallStartEvent{T + 2 * kMs, 100, 100, IoOp::Fsync, kFile, kShard});
  NfsIoEvent start;
  start.kind = NfsIoKind::Write;
  start.start_ns = T + 3 * kMs;
  start.file = kFile;
  start.id = 7;
  start.started = true;
  s.on_event(NfsIoEvent(start));
  s.advance(T + 2500 * kMs);
  NfsIoEvent done = start;
  done.started = false;
  done.end_ns = T + 4000 * kMs;
  s.on_event(NfsIoEvent(done));
  call(s, IoOp::Fsync, T + 2 * kMs, T + 4001 * kMs, 0);
  s.advance(T + 9000 * kMs);
  auto cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u);
  ASSERT_EQ(cps[0].failures.size(), 1u);
  EXPECT_EQ(cps[0].failures[0].kind, "stall");
  EXPECT_THAT(cps[0].failures[0].evidence, HasSubstr("fsync("));
}

}  // namespace
}  // namespace ckpt

namespace ckpt {
namespace {

// The per-RPC records of one checkpoint against its aggregates: per op as
// many records as rpc_ops[op].count, adding up to every rpc_ops figure; those
// with checkpoint_io as many as io_rpcs, their queue and round trip giving
// exactly queue_wait and rtt.
void expect_rpc_calls_match(const CheckpointRecord& c, const std::vector<RpcCallRecord>& all) {
  SCOPED_TRACE("checkpoint " + std::to_string(c.id));
  ASSERT_TRUE(c.nfs.has_value());
  std::map<std::string, RpcOpStats> ops;
  std::vector<uint64_t> queue;
  std::vector<uint64_t> rtt;
  for (const auto& r : all) {
    if (r.checkpoint_id != c.id) continue;
    RpcOpStats& op = ops[r.op];
    op.op = r.op;
    ++op.count;
    if (r.status < 0) ++op.errors;
    op.major_timeouts += r.major_timeouts;
    op.transmissions += r.transmissions;
    op.bytes_sent += r.bytes_sent;
    op.bytes_received += r.bytes_received;
    op.queue_ns += r.queue_ns;
    op.rtt_ns += r.rtt_ns;
    op.execute_ns += r.execute_ns;
    if (!r.checkpoint_io) continue;
    queue.push_back(r.queue_ns);
    rtt.push_back(r.rtt_ns);
  }
  ASSERT_EQ(ops.size(), c.nfs->rpc_ops.size());
  for (const auto& want : c.nfs->rpc_ops) {
    SCOPED_TRACE(want.op);
    ASSERT_TRUE(ops.count(want.op));
    const RpcOpStats& got = ops[want.op];
    EXPECT_EQ(got.count, want.count);
    EXPECT_EQ(got.errors, want.errors);
    EXPECT_EQ(got.major_timeouts, want.major_timeouts);
    EXPECT_EQ(got.transmissions, want.transmissions);
    EXPECT_EQ(got.bytes_sent, want.bytes_sent);
    EXPECT_EQ(got.bytes_received, want.bytes_received);
    EXPECT_EQ(got.queue_ns, want.queue_ns);
    EXPECT_EQ(got.rtt_ns, want.rtt_ns);
    EXPECT_EQ(got.execute_ns, want.execute_ns);
  }
  EXPECT_EQ(queue.size(), c.nfs->io_rpcs);
  const DurationStats q = duration_stats(queue);
  const DurationStats t = duration_stats(rtt);
  for (const auto& [got, want] : {std::pair{q, c.nfs->queue_wait}, std::pair{t, c.nfs->rtt}}) {
    EXPECT_EQ(got.count, want.count);
    EXPECT_EQ(got.mean_ns, want.mean_ns);
    EXPECT_EQ(got.p50_ns, want.p50_ns);
    EXPECT_EQ(got.p90_ns, want.p90_ns);
    EXPECT_EQ(got.p99_ns, want.p99_ns);
    EXPECT_EQ(got.max_ns, want.max_ns);
  }
}

TEST_F(NfsStagesTest, EveryRpcTheCheckpointCountsIsKeptAsARecord) {
  Stitcher s = make();
  four_writes_and_their_rpcs(s, 4 * kMiB);
  nfs_io(s, NfsIoKind::Commit, T + 60 * kMs, T + 62 * kMs, 0);
  rpc(s, "GETATTR", T + 63 * kMs, 0, 1 * kMs, std::nullopt, 0);
  // The same mount's WRITE of a file the job never touched: in rpc_ops, not
  // the checkpoint's I/O.
  rpc(s, "WRITE", T + 25 * kMs, 3 * kMs, 2 * kMs, NfsIoKind::Write, 65536, 0, 0, 0, 4,
      FileId{53, 999});
  // A failed LOOKUP, and an OPEN that failed before it was sent: both counted.
  rpc(s, "LOOKUP", T + 64 * kMs, 0, kMs, std::nullopt, 0, -ENOENT);
  RpcEvent abandoned;
  abandoned.kind = RpcEvent::Kind::Abandoned;
  abandoned.start_ns = T + 65 * kMs;
  abandoned.execute_ns = kMs;
  abandoned.time_ns = T + 66 * kMs;
  abandoned.op = "OPEN";
  abandoned.client_id = 4;
  abandoned.status = -EACCES;
  abandoned.server = kServer;
  s.on_event(RpcEvent(abandoned));
  // A major timeout is no finished RPC; another client's RPC is not this
  // checkpoint's; nor is an RPC long after its window.
  RpcEvent timeout = abandoned;
  timeout.kind = RpcEvent::Kind::Timeout;
  timeout.op = "WRITE";
  timeout.timeouts = 1;
  s.on_event(RpcEvent(timeout));
  rpc(s, "WRITE", T + 20 * kMs, 0, 1 * kMs, std::nullopt, 0, 0, 0, 0, /*client=*/9);
  rpc(s, "GETATTR", T + 3000 * kMs, 0, kMs, std::nullopt, 0);
  call(s, IoOp::Fsync, T + 59 * kMs, T + 63 * kMs, 0);
  call(s, IoOp::Close, T + 63 * kMs, T + 64 * kMs, 0);

  auto cps = close(s);
  ASSERT_EQ(cps.size(), 1u);
  const auto& c = cps[0];
  ASSERT_TRUE(c.nfs.has_value());
  EXPECT_EQ(c.nfs->io_rpcs, 5u);
  auto calls = s.take_rpc_calls();
  EXPECT_TRUE(s.take_rpc_calls().empty()) << "taken once";
  ASSERT_EQ(calls.size(), 9u);  // 5 WRITE, COMMIT, GETATTR, LOOKUP, OPEN
  expect_rpc_calls_match(c, calls);
  EXPECT_EQ(std::count_if(calls.begin(), calls.end(),
                          [](const RpcCallRecord& r) { return r.checkpoint_io; }),
            5);

  // One of each, field by field.
  auto find = [&](uint64_t start, const std::string& op) -> const RpcCallRecord* {
    for (const auto& r : calls)
      if (r.start_ns == start && r.op == op) return &r;
    return nullptr;
  };
  const RpcCallRecord* write = find(T + 20 * kMs, "WRITE");
  ASSERT_NE(write, nullptr);
  EXPECT_EQ(write->end_ns, T + 26 * kMs);
  EXPECT_EQ(write->queue_ns, 2 * kMs);
  EXPECT_EQ(write->rtt_ns, 4 * kMs);
  EXPECT_EQ(write->execute_ns, 6 * kMs);
  EXPECT_EQ(write->server, kServer);
  EXPECT_EQ(write->bytes_sent, kMiB + 200);
  EXPECT_EQ(write->bytes_received, 120u);
  EXPECT_EQ(write->payload_bytes, kMiB);
  EXPECT_EQ(write->status, 0);
  EXPECT_EQ(write->transmissions, 1u);
  EXPECT_EQ(write->major_timeouts, 0u);
  EXPECT_TRUE(write->checkpoint_io);
  EXPECT_EQ(write->checkpoint_id, c.id);
  const RpcCallRecord* commit = find(T + 60 * kMs, "COMMIT");
  ASSERT_NE(commit, nullptr);
  EXPECT_TRUE(commit->checkpoint_io);
  EXPECT_EQ(commit->payload_bytes, 0u) << "a COMMIT carries no payload";
  const RpcCallRecord* other_file = find(T + 25 * kMs, "WRITE");
  ASSERT_NE(other_file, nullptr);
  EXPECT_FALSE(other_file->checkpoint_io);
  EXPECT_EQ(other_file->payload_bytes, 0u);
  EXPECT_EQ(other_file->queue_ns, 3 * kMs);
  const RpcCallRecord* lookup = find(T + 64 * kMs, "LOOKUP");
  ASSERT_NE(lookup, nullptr);
  EXPECT_EQ(lookup->status, -ENOENT);
  EXPECT_FALSE(lookup->checkpoint_io);
  const RpcCallRecord* open = find(T + 65 * kMs, "OPEN");
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(open->status, -EACCES);
  EXPECT_EQ(open->end_ns, T + 66 * kMs);
}

TEST_F(NfsStagesTest, RpcCallsGoWithTheirOwnCheckpoint) {
  Stitcher s = make();
  // A save at T, a load 3 s later (past the quiet gap): two checkpoints.
  call(s, IoOp::Write, T, T + kMs, static_cast<int64_t>(kMiB));
  rpc(s, "WRITE", T + 2 * kMs, kMs, 2 * kMs, NfsIoKind::Write, kMiB);
  nfs_io(s, NfsIoKind::Write, T + 2 * kMs, T + 5 * kMs, kMiB);
  rpc(s, "COMMIT", T + 6 * kMs, 0, kMs, NfsIoKind::Commit, 0);
  call(s, IoOp::Fsync, T + 5 * kMs, T + 8 * kMs, 0);
  const uint64_t L = T + 3000 * kMs;
  rpc(s, "OPEN", L - kMs, 0, kMs, std::nullopt, 0);
  call(s, IoOp::Read, L, L + 20 * kMs, static_cast<int64_t>(2 * kMiB));
  for (uint64_t i = 0; i < 2; ++i) {
    rpc(s, "READ_PLUS", L + (1 + 6 * i) * kMs, i * kMs, 5 * kMs, NfsIoKind::Read, kMiB);
    nfs_io(s, NfsIoKind::Read, L + (1 + 6 * i) * kMs, L + (6 + 7 * i) * kMs, kMiB);
  }
  auto cps = close(s);
  ASSERT_EQ(cps.size(), 2u);
  auto calls = s.take_rpc_calls();
  for (const auto& c : cps) expect_rpc_calls_match(c, calls);
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(cps[0].nfs->io_rpcs, 2u);
  EXPECT_EQ(cps[1].nfs->io_rpcs, 2u);
  for (const auto& r : calls) {
    SCOPED_TRACE(r.op);
    const bool save = r.op == "WRITE" || r.op == "COMMIT";
    EXPECT_EQ(r.checkpoint_id, save ? cps[0].id : cps[1].id);
    EXPECT_EQ(r.checkpoint_io, r.op != "OPEN");
    EXPECT_EQ(r.payload_bytes, r.op == "WRITE" || r.op == "READ_PLUS" ? kMiB : 0u);
  }
}

TEST_F(NfsStagesTest, NoNfsFiguresNoRpcCalls) {
  Stitcher s = make(/*nfs=*/false);
  call(s, IoOp::Write, T, T + kMs, 4096);
  rpc(s, "WRITE", T, 0, kMs, NfsIoKind::Write, 4096);
  nfs_io(s, NfsIoKind::Write, T, T + kMs, 4096);
  ASSERT_EQ(close(s).size(), 1u);
  EXPECT_TRUE(s.take_rpc_calls().empty());
}

}  // namespace
}  // namespace ckpt
