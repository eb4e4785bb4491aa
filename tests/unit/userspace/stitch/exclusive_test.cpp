// Exclusive (own) time and the verdict it names, with known answers: the
// interval arithmetic, the nesting rule on hand-made spans, and whole event
// streams through the stitcher: a save behind a throttled link (transport), a
// CPU-bound save over NFS (serialize), a slow local disk (host_io), and the
// throttled save jittered run after run (the same verdict every time, where
// the longest busy time changes hands).
#include "stitch/exclusive.h"

#include <sys/sysmacros.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "stitch/stitcher.h"

namespace ckpt {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr uint64_t T0 = 5'000 * kMs;
const FileId kA{53, 1};
const FileId kB{53, 2};
const FileId kLocal{8, 3};

// ---- interval sets ----

TEST(IntervalSetTest, NormalizesUnitesAndSubtracts) {
  const IntervalSet a = interval_set({{20, 30}, {0, 10}, {5, 12}, {12, 14}, {40, 40}});
  EXPECT_EQ(a, (IntervalSet{{0, 14}, {20, 30}})) << "sorted, merged, touching joined, empty gone";
  EXPECT_EQ(set_length(a), 24u);
  EXPECT_EQ(set_union(a, {{13, 21}, {50, 60}}), (IntervalSet{{0, 30}, {50, 60}}));
  // A hole in the middle, both ends cut, one interval wholly removed.
  EXPECT_EQ(set_minus({{0, 100}}, {{10, 20}, {30, 40}}),
            (IntervalSet{{0, 10}, {20, 30}, {40, 100}}));
  EXPECT_EQ(set_minus({{10, 20}, {30, 40}, {50, 60}}, {{0, 12}, {15, 35}, {55, 70}}),
            (IntervalSet{{12, 15}, {35, 40}, {50, 55}}));
  EXPECT_EQ(set_minus({{10, 20}}, {{0, 100}}), IntervalSet{});
  EXPECT_EQ(set_minus({{10, 20}}, {}), (IntervalSet{{10, 20}}));
  EXPECT_EQ(set_minus({}, {{0, 5}}), IntervalSet{});
}

// ---- the rule, on hand-made spans ----

StageRecord stage_of(std::string_view name, uint64_t busy) {
  StageRecord s;
  s.name = std::string(name);
  s.busy_ns = busy;
  return s;
}

uint64_t own(const std::vector<StageRecord>& stages, std::string_view name) {
  for (const auto& s : stages)
    if (s.name == name) return s.exclusive_ns.value_or(UINT64_MAX);
  ADD_FAILURE() << "no stage " << name;
  return 0;
}

TEST(ExclusiveTimeTest, EachInstantGoesToTheDeepestStageBusyOnTheSameFile) {
  StageSpans spans;
  // File A: an fsync [0, 100) waits on its page I/O [10, 90), whose RPC
  // queues [10, 30) and is on the wire [30, 90); the link holds bytes
  // [35, 80). A local file's write [0, 50) runs beside it.
  spans.add(kStageHostIo, {{kA, 0, 100}, {kLocal, 0, 50}}, 0, 1000);
  spans.add(kStageNfsClient, {{kA, 10, 90}}, 0, 1000);
  spans.add(kStageRpcQueue, {{kA, 10, 30}}, 0, 1000);
  spans.add(kStageRpcRtt, {{kA, 30, 90}}, 0, 1000);
  spans.add(kStageTransport, {{FileId{}, 35, 80}}, 0, 1000);
  // A rename of A after the link went quiet, and a mkdir (a directory: on
  // the network, as A is) while it was busy.
  spans.add(kStageMetadata, {{kA, 95, 98}, {FileId{}, 70, 90}}, 0, 1000);
  std::vector<StageRecord> stages{stage_of(kStageSerialize, 7), stage_of(kStageHostIo, 100),
                                  stage_of(kStageMetadata, 23), stage_of(kStageNfsClient, 80),
                                  stage_of(kStageRpcQueue, 20), stage_of(kStageRpcRtt, 60),
                                  stage_of(kStageTransport, 45)};
  set_exclusive_times(stages, spans);
  // host_io: A's [0,10) and [90,100); the local file's [0, 50) is its own,
  // not the link's. Parallel files count once: [0, 50) U [90, 100).
  EXPECT_EQ(own(stages, kStageHostIo), 60u);
  EXPECT_EQ(own(stages, kStageNfsClient), 0u) << "its RPC covers it all";
  EXPECT_EQ(own(stages, kStageRpcQueue), 20u);
  EXPECT_EQ(own(stages, kStageRpcRtt), 60u - 45u);
  EXPECT_EQ(own(stages, kStageTransport), 45u);
  EXPECT_EQ(own(stages, kStageSerialize), 7u) << "nothing nests in it";
  EXPECT_EQ(own(stages, kStageMetadata), 3u + 10u) << "the mkdir's [70, 80) waited on the link";
}

TEST(ExclusiveTimeTest, AnotherFilesPageIoDoesNotExplainAFilesCalls) {
  StageSpans spans;
  // A's call [0, 100); only B's page I/O and RPC run meanwhile.
  spans.add(kStageHostIo, {{kA, 0, 100}}, 0, 1000);
  spans.add(kStageNfsClient, {{kB, 0, 100}}, 0, 1000);
  spans.add(kStageRpcRtt, {{kB, 0, 100}}, 0, 1000);
  std::vector<StageRecord> stages{stage_of(kStageHostIo, 100), stage_of(kStageNfsClient, 100),
                                  stage_of(kStageRpcRtt, 100)};
  set_exclusive_times(stages, spans);
  EXPECT_EQ(own(stages, kStageHostIo), 100u);
  EXPECT_EQ(own(stages, kStageNfsClient), 0u);
  EXPECT_EQ(own(stages, kStageRpcRtt), 100u);
}

TEST(ExclusiveTimeTest, ALocalFilesMetadataIsItsOwn) {
  StageSpans spans;
  // An NFS file's page I/O and the link busy [0, 100); a local file's open
  // [10, 40) and a networked file's [50, 60).
  spans.add(kStageNfsClient, {{kA, 0, 100}}, 0, 1000);
  spans.add(kStageTransport, {{FileId{}, 0, 100}}, 0, 1000);
  spans.add(kStageMetadata, {{kLocal, 10, 40}, {kA, 50, 60}}, 0, 1000);
  std::vector<StageRecord> stages{stage_of(kStageMetadata, 40), stage_of(kStageNfsClient, 100),
                                  stage_of(kStageTransport, 100)};
  set_exclusive_times(stages, spans);
  EXPECT_EQ(own(stages, kStageMetadata), 30u);
}

TEST(ExclusiveTimeTest, AQueuedRpcWaitsOnAnyRpcOnTheWire) {
  StageSpans spans;
  // A's RPC queues [0, 50) while B's is on the wire [0, 40).
  spans.add(kStageRpcQueue, {{kA, 0, 50}}, 0, 1000);
  spans.add(kStageRpcRtt, {{kB, 0, 40}}, 0, 1000);
  std::vector<StageRecord> stages{stage_of(kStageRpcQueue, 50), stage_of(kStageRpcRtt, 40)};
  set_exclusive_times(stages, spans);
  EXPECT_EQ(own(stages, kStageRpcQueue), 10u);
  EXPECT_EQ(own(stages, kStageRpcRtt), 40u);
}

TEST(ExclusiveTimeTest, WithoutNfsFiguresTheTransportIsBelowEveryFile) {
  StageSpans spans;
  spans.add(kStageHostIo, {{kA, 0, 100}}, 0, 1000);
  spans.add(kStageTransport, {{FileId{}, 20, 90}}, 0, 1000);
  std::vector<StageRecord> stages{stage_of(kStageHostIo, 100), stage_of(kStageTransport, 70)};
  set_exclusive_times(stages, spans);
  EXPECT_EQ(own(stages, kStageHostIo), 30u);
  EXPECT_EQ(own(stages, kStageTransport), 70u);
}

// A save to a local NVMe disk (a block device) while a storage connection is
// busy (the job reading its dataset over NFS): the connection carries none
// of the checkpoint's files, explains none of its time, and is not its own.
TEST(ExclusiveTimeTest, AFileOnABlockDeviceIsLocalAndTheLinkNotTheCheckpoints) {
  const FileId nvme{makedev(259, 2), 11};
  StageSpans spans;
  spans.add(kStageHostIo, {{nvme, 0, 100}}, 0, 1000);
  spans.add(kStageMetadata, {{nvme, 100, 110}, {FileId{}, 110, 115}}, 0, 1000);
  spans.add(kStageTransport, {{FileId{}, 0, 115}}, 0, 1000);
  std::vector<StageRecord> stages{stage_of(kStageHostIo, 100), stage_of(kStageMetadata, 15),
                                  stage_of(kStageTransport, 115)};
  set_exclusive_times(stages, spans);
  EXPECT_EQ(own(stages, kStageHostIo), 100u);
  EXPECT_EQ(own(stages, kStageMetadata), 15u) << "its directory is local too";
  EXPECT_EQ(own(stages, kStageTransport), 0u);
  EXPECT_EQ(stages[2].busy_ns, 115u) << "its busy time stays as measured";
  EXPECT_EQ(choose_bottleneck(stages), "host_io");
  // The same on an anonymous device (a FUSE mount): taken to be networked.
  StageSpans fuse;
  fuse.add(kStageHostIo, {{kA, 0, 100}}, 0, 1000);
  fuse.add(kStageTransport, {{FileId{}, 0, 115}}, 0, 1000);
  std::vector<StageRecord> on_fuse{stage_of(kStageHostIo, 100), stage_of(kStageTransport, 115)};
  set_exclusive_times(on_fuse, fuse);
  EXPECT_EQ(own(on_fuse, kStageHostIo), 0u);
  EXPECT_EQ(own(on_fuse, kStageTransport), 115u);
}

TEST(ExclusiveTimeTest, SpansAreClippedToTheStagesWindow) {
  StageSpans spans;
  spans.add(kStageHostIo, {{kA, 0, 100}, {kA, 200, 300}}, 50, 250);
  ASSERT_EQ(spans.of(kStageHostIo).size(), 2u);
  EXPECT_EQ(spans.of(kStageHostIo)[0].start_ns, 50u);
  EXPECT_EQ(spans.of(kStageHostIo)[1].end_ns, 250u);
  EXPECT_TRUE(spans.of(kStageRpcRtt).empty());
  std::vector<StageRecord> stages{stage_of(kStageHostIo, 100)};
  set_exclusive_times(stages, spans);
  EXPECT_EQ(own(stages, kStageHostIo), 100u);
}

// ---- the verdict ----

StageRecord with_own(std::string_view name, uint64_t busy, uint64_t exclusive,
                     std::optional<double> max = {}) {
  StageRecord s = stage_of(name, busy);
  s.exclusive_ns = exclusive;
  s.max_Bps = max;
  s.bytes = 1'000'000;
  return s;
}

TEST(ExclusiveVerdictTest, TheMostOwnTimeWinsNearTiesGoDownThePipeline) {
  // Busy times within 10% of each other; own times far apart.
  EXPECT_EQ(
      choose_bottleneck({with_own(kStageHostIo, 3900, 50), with_own(kStageNfsClient, 3850, 20),
                         with_own(kStageRpcRtt, 3700, 150), with_own(kStageTransport, 3600, 3600)}),
      "transport");
  // A near-tie (within 10%): the stage further down, whichever is larger.
  EXPECT_EQ(
      choose_bottleneck({with_own(kStageSerialize, 100, 100), with_own(kStageHostIo, 95, 95)}),
      "host_io");
  EXPECT_EQ(
      choose_bottleneck({with_own(kStageSerialize, 95, 95), with_own(kStageHostIo, 100, 100)}),
      "host_io");
  // Beyond it, the larger.
  EXPECT_EQ(
      choose_bottleneck({with_own(kStageSerialize, 100, 100), with_own(kStageHostIo, 85, 85)}),
      "serialize");
  // Maxima play no part: a stage at its maximum does not beat a larger own time.
  EXPECT_EQ(choose_bottleneck({with_own(kStageSerialize, 100, 100),
                               with_own(kStageHostIo, 80, 80, /*max=*/12'500'000.0)}),
            "serialize");
  EXPECT_EQ(choose_bottleneck({with_own(kStageHostIo, 100, 0), with_own(kStageMetadata, 5, 0)}),
            "");
  // A trace without exclusive times: busy times stand in.
  EXPECT_EQ(choose_bottleneck({stage_of(kStageSerialize, 10), stage_of(kStageHostIo, 50)}),
            "host_io");
}

// ---- whole event streams ----

const std::string kServer = "10.0.0.9:2049";

class Maxima : public MaximaProvider {
 public:
  StageMax storage(Direction, const std::vector<FileId>&) override {
    return StageMax{storage_Bps, storage_Bps ? "test:storage" : "unknown"};
  }
  StageMax serialize(size_t /*threads*/) override { return {}; }
  StageMax transport(const std::string&) override {
    return StageMax{link_Bps, link_Bps ? "test:link" : "unknown"};
  }
  std::optional<double> storage_Bps;
  std::optional<double> link_Bps;
};

// Streams into a stitcher with every probe family but the GPU's.
class Stream {
 public:
  explicit Stream(std::shared_ptr<Maxima> maxima = std::make_shared<Maxima>())
      : config_(Config::defaults()),
        s_(config_, std::move(maxima), StageAvailability{true, true, true}) {}

  void call(uint32_t tid, IoOp op, const std::string& path, FileId file, uint64_t t0, uint64_t t1,
            int64_t ret, uint64_t cpu_ns = 0, uint64_t cpu_from = 0) {
    IoEvent e;
    e.tgid = 100;
    e.tid = tid;
    e.op = op;
    e.start_ns = t0;
    e.end_ns = t1;
    e.path = path;
    e.file = file;
    e.ret = ret;
    e.requested = ret > 0 ? static_cast<uint64_t>(ret) : 0;
    e.cpu_window_start_ns = cpu_ns ? cpu_from : t0;
    e.cpu_ns = cpu_ns;
    s_.on_event(std::move(e));
  }
  void open(uint32_t tid, const std::string& path, FileId file, uint64_t t) {
    IoEvent e;
    e.tgid = 100;
    e.tid = tid;
    e.op = IoOp::Open;
    e.start_ns = t;
    e.end_ns = t + 10'000;
    e.path = path;
    e.file = file;
    e.flags = 01 | 0100;  // O_WRONLY | O_CREAT
    e.ret = 3;
    s_.on_event(std::move(e));
  }
  // A WRITE of `bytes` of `file`: page I/O from `start`, transmitted at
  // `xmit`, its reply at `done`.
  void write_rpc(FileId file, uint64_t start, uint64_t xmit, uint64_t done, uint64_t bytes,
                 uint64_t sending_wait) {
    NfsIoEvent io;
    io.kind = NfsIoKind::Write;
    io.start_ns = start;
    io.end_ns = done;
    io.file = file;
    io.count = io.result_count = bytes;
    s_.on_event(io);
    RpcEvent r;
    r.kind = RpcEvent::Kind::Done;
    r.start_ns = start;
    r.queue_ns = xmit - start;
    r.rtt_ns = done - xmit;
    r.execute_ns = done - start;
    r.time_ns = done;
    r.op = "WRITE";
    r.vers = 4;
    r.client_id = 4;
    r.ntrans = 1;
    r.bytes_sent = bytes + 200;
    r.bytes_recv = 120;
    r.wait_ns[kRpcQueueSending] = sending_wait;
    r.wait_ns[kRpcQueuePending] = done - xmit;
    r.server = kServer;
    r.io = NfsIoKind::Write;
    r.file = file;
    r.io_count = bytes;
    s_.on_event(std::move(r));
  }
  void tcp(uint64_t t, uint64_t acked, uint32_t backlog) {
    TcpEvent e;
    e.kind = TcpEvent::Kind::Sample;
    e.time_ns = t;
    e.cookie = 77;
    e.local = "10.0.0.2:900";
    e.remote = kServer;
    e.bytes_acked = acked;
    e.bytes_sent = acked;
    e.backlog = backlog;
    e.in_flight = std::min<uint32_t>(backlog, 64 * kKiB);
    s_.on_event(std::move(e));
  }
  CheckpointRecord only_checkpoint() {
    s_.finish();
    auto cps = s_.take_checkpoints();
    EXPECT_EQ(cps.size(), 1u);
    return cps.empty() ? CheckpointRecord{} : cps[0];
  }

 private:
  Config config_;
  Stitcher s_;
};

const StageRecord* find(const CheckpointRecord& c, std::string_view name) {
  for (const auto& s : c.stages)
    if (s.name == name) return &s;
  return nullptr;
}

std::string shard(int i) { return "/nfs/run/checkpoint-1/shard-" + std::to_string(i) + ".pt"; }

// A save of 4 shards x 2 MiB behind a link that carries 2 MiB/s: four
// threads copy their shard into the page cache and fsync it; writeback sends
// 64 WRITEs of 128 KiB at once, and they go out one after the other as the
// link drains, ~62 ms each plus a 10 ms delay. The link holds bytes the
// whole time. `jitter` moves every time by up to that fraction of its step
// (a run of the same save on a noisy host), and the last ack by up to 3 ms.
CheckpointRecord throttled_save(uint64_t seed, double jitter) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-jitter, jitter);
  // The last ack's lag spans 0 to 6 ms when jittered, 3 ms when not.
  const double jitter_or_1 = jitter > 0 ? jitter : 1.0;
  auto j = [&](uint64_t step) {
    return static_cast<uint64_t>(static_cast<double>(step) * (1.0 + u(rng)));
  };
  Stream st;
  const uint64_t rpc_bytes = 128 * kKiB;
  const uint64_t per_rpc = 62 * kMs;  // 128 KiB at 2 MiB/s
  const uint64_t delay = 10 * kMs;
  uint64_t last_done[4] = {};
  uint64_t xmit = T0 + 5 * kMs;
  for (int k = 0; k < 64; ++k) {
    const FileId f{53, static_cast<uint64_t>(10 + k % 4)};
    const uint64_t start = T0 + 4 * kMs + static_cast<uint64_t>(k) * 20'000;
    xmit = std::max(xmit, start) + (k == 0 ? 0 : j(per_rpc));
    const uint64_t done = xmit + j(per_rpc) + j(delay);
    st.write_rpc(f, start, xmit, done, rpc_bytes, xmit - start);
    last_done[k % 4] = std::max(last_done[k % 4], done);
  }
  for (int i = 0; i < 4; ++i) {
    const FileId f{53, static_cast<uint64_t>(10 + i)};
    const uint32_t tid = 200 + static_cast<uint32_t>(i);
    const uint64_t w0 = T0 + static_cast<uint64_t>(i) * 100'000;
    st.call(tid, IoOp::Write, shard(i), f, w0, w0 + j(3 * kMs), static_cast<int64_t>(2 * kMiB));
    st.call(tid, IoOp::Fsync, shard(i), f, w0 + 3 * kMs, last_done[i] + j(kMs), 0);
  }
  // The link: bytes unacknowledged from the first send to the last ack,
  // which comes up to 6 ms after the last reply (acks trail).
  const uint64_t end = *std::max_element(std::begin(last_done), std::end(last_done));
  const uint64_t last_ack =
      end + static_cast<uint64_t>(3.0 * static_cast<double>(kMs) * (1.0 + u(rng) / jitter_or_1));
  for (uint64_t t = T0 + 2 * kMs; t < last_ack; t += 10 * kMs)
    st.tcp(t, std::min(8 * kMiB, (t - T0) * 2 * kMiB / 1'000'000'000), 256 * kKiB);
  st.tcp(last_ack, 8 * kMiB, 0);
  return st.only_checkpoint();
}

TEST(ExclusiveStreamTest, BehindAThrottledLinkTheTransportIsNamed) {
  const CheckpointRecord c = throttled_save(1, 0.0);
  const auto* host = find(c, kStageHostIo);
  const auto* client = find(c, kStageNfsClient);
  const auto* rtt = find(c, kStageRpcRtt);
  const auto* link = find(c, kStageTransport);
  ASSERT_TRUE(host && client && rtt && link);
  // The nested stages' busy times are all within 10% of the longest...
  const uint64_t longest = std::max({host->busy_ns, client->busy_ns, rtt->busy_ns, link->busy_ns});
  for (const auto* s : {host, client, rtt, link})
    EXPECT_GE(static_cast<double>(s->busy_ns), 0.9 * static_cast<double>(longest)) << s->name;
  // ...their own times are not: the link holds the save.
  EXPECT_EQ(link->exclusive_ns, link->busy_ns);
  EXPECT_LT(*host->exclusive_ns, 10 * kMs) << "only the copy before the first RPC";
  EXPECT_LT(*client->exclusive_ns, 10 * kMs);
  EXPECT_LT(*rtt->exclusive_ns, 20 * kMs) << "the last reply after the last sample";
  EXPECT_GT(*link->exclusive_ns, 3'500 * kMs);
  EXPECT_EQ(c.bottleneck, "transport");
}

TEST(ExclusiveStreamTest, TheVerdictIsTheSameInEveryRunOfANoisySave) {
  // Twenty runs of the same save, every time jittered by up to 5%: the
  // stage with the longest busy time changes from run to run (a verdict by
  // busy time would flip), the one with the most own time does not.
  std::set<std::string> longest_busy;
  std::set<std::string> verdicts;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const CheckpointRecord c = throttled_save(seed, 0.05);
    const StageRecord* longest = nullptr;
    for (const auto& s : c.stages)
      if (!longest || s.busy_ns > longest->busy_ns) longest = &s;
    ASSERT_NE(longest, nullptr);
    longest_busy.insert(longest->name);
    verdicts.insert(c.bottleneck);
  }
  EXPECT_GT(longest_busy.size(), 1u) << "the jitter should move the longest busy time";
  EXPECT_EQ(verdicts, std::set<std::string>{"transport"});
}

TEST(ExclusiveStreamTest, ACpuBoundSaveOverNfsNamesSerialize) {
  // One thread pickles 8 tensors, 120 ms each, writing each 1 MiB as it
  // goes; writeback sends them over a fast link while the next one pickles.
  // Busy: serialize 960 ms, host_io (the last fsync waits ~880 ms on the
  // writes still going out) and nfs_client about as long; own: serialize.
  auto maxima = std::make_shared<Maxima>();
  maxima->storage_Bps = 1e9;  // a known maximum must not sway it
  Stream st(maxima);
  const FileId f{53, 40};
  const std::string path = shard(0);
  // The open starts the checkpoint: the first tensor's pickling is inside.
  st.open(300, path, f, T0);
  uint64_t t = T0 + 10'000;
  for (int i = 0; i < 8; ++i) {
    const uint64_t w = t + 120 * kMs;
    st.call(300, IoOp::Write, path, f, w, w + kMs, static_cast<int64_t>(kMiB), 120 * kMs, t);
    // Its pages go out as one RPC, 100 ms on the wire, the link busy meanwhile.
    st.write_rpc(f, w + kMs, w + 2 * kMs, w + 102 * kMs, kMiB, 0);
    st.tcp(w + 2 * kMs, static_cast<uint64_t>(i) * kMiB, static_cast<uint32_t>(kMiB));
    st.tcp(w + 102 * kMs, static_cast<uint64_t>(i + 1) * kMiB, 0);
    t = w + kMs;
  }
  st.call(300, IoOp::Fsync, path, f, t, t + 102 * kMs, 0);
  const CheckpointRecord c = st.only_checkpoint();
  const auto* ser = find(c, kStageSerialize);
  const auto* host = find(c, kStageHostIo);
  ASSERT_TRUE(ser && host);
  EXPECT_EQ(ser->busy_ns, 960 * kMs);
  EXPECT_EQ(ser->exclusive_ns, ser->busy_ns);
  EXPECT_LE(*host->exclusive_ns, 10 * kMs);
  EXPECT_EQ(c.bottleneck, "serialize");
}

TEST(ExclusiveStreamTest, ASlowLocalDiskNamesHostIoAndHasNoTransportStage) {
  // Two shards on a local disk: quick copies into the page cache, then
  // fsyncs of 2 s. The transport probes ran, but no storage connection was
  // open: the stage is absent, not 0.
  Stream st;
  const std::string a = "/scratch/ckpt/checkpoint-1/shard-0.pt";
  const std::string b = "/scratch/ckpt/checkpoint-1/shard-1.pt";
  st.call(400, IoOp::Write, a, FileId{8, 1}, T0, T0 + 5 * kMs, static_cast<int64_t>(64 * kMiB),
          20 * kMs, T0 - 20 * kMs);
  st.call(401, IoOp::Write, b, FileId{8, 2}, T0, T0 + 5 * kMs, static_cast<int64_t>(64 * kMiB));
  st.call(400, IoOp::Fsync, a, FileId{8, 1}, T0 + 5 * kMs, T0 + 2'000 * kMs, 0);
  st.call(401, IoOp::Fsync, b, FileId{8, 2}, T0 + 5 * kMs, T0 + 2'100 * kMs, 0);
  const CheckpointRecord c = st.only_checkpoint();
  EXPECT_EQ(find(c, kStageTransport), nullptr);
  EXPECT_EQ(find(c, kStageNfsClient), nullptr);
  const auto* host = find(c, kStageHostIo);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->busy_ns, 2'100 * kMs);
  EXPECT_EQ(host->exclusive_ns, host->busy_ns) << "nothing measured below it";
  EXPECT_EQ(c.bottleneck, "host_io");
}

TEST(ExclusiveStreamTest, AnIdleStorageConnectionIsAMeasuredZero) {
  // A connection to the storage was open and carried nothing of this save:
  // the transport stage is there, with 0 bytes and 0 busy, and owns nothing.
  Stream st;
  const std::string a = "/scratch/ckpt/checkpoint-1/shard-0.pt";
  st.tcp(T0 - 50 * kMs, 4096, 0);
  st.call(400, IoOp::Write, a, FileId{8, 1}, T0, T0 + 5 * kMs, static_cast<int64_t>(kMiB));
  st.call(400, IoOp::Fsync, a, FileId{8, 1}, T0 + 5 * kMs, T0 + 500 * kMs, 0);
  st.tcp(T0 + 600 * kMs, 4096, 0);
  const CheckpointRecord c = st.only_checkpoint();
  const auto* link = find(c, kStageTransport);
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->bytes, 0u);
  EXPECT_EQ(link->busy_ns, 0u);
  EXPECT_EQ(link->exclusive_ns, 0u);
  EXPECT_EQ(c.bottleneck, "host_io");
}

}  // namespace
}  // namespace ckpt
