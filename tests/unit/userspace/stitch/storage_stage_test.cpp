// The storage stage with known answers: a cold load's bytes and the device's
// busy time (the storage is its bottleneck), a warm load's nothing (never the
// storage's verdict), an fsync'd save's writeback, a buffered save's bytes
// left dirty, a file system with no storage behind it (no stage), and an NFS
// file whose storage side is the nfs_client stage's own figures, once.
#include "stitch/storage_stage.h"

#include <sys/sysmacros.h>

#include <gtest/gtest.h>

#include "stitch/exclusive.h"
#include "stitch/stitcher.h"

namespace ckpt {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t T = 7'000 * kMs;
const FileId kDisk{makedev(8, 1), 12};  // on /dev/sda1
const FileId kTmpfs{makedev(0, 41), 7};
const FileId kNfs{makedev(0, 53), 99};
const std::string kShard = "/ckpt/checkpoint-1/shard-0.pt";

class Maxima : public MaximaProvider {
 public:
  StageMax storage(Direction d, const std::vector<FileId>&) override {
    return d == Direction::Save ? StageMax{1e9, "test:disk write"}
                                : StageMax{2e9, "test:disk read"};
  }
  StageMax serialize(size_t) override { return {}; }
  StageMax transport(const std::string&) override { return {}; }
  StageMax page_cache(Direction, size_t) override { return {20e9, "test:page cache"}; }
};

IoEvent call(IoOp op, FileId file, uint64_t t0, uint64_t t1, int64_t ret, uint64_t storage = 0,
             uint64_t dirtied = 0) {
  IoEvent e;
  e.tgid = 100;
  e.tid = 100;
  e.op = op;
  e.file = file;
  e.path = kShard;
  e.start_ns = t0;
  e.end_ns = t1;
  e.cpu_window_start_ns = t0;
  e.ret = ret;
  e.requested = ret > 0 ? static_cast<uint64_t>(ret) : 0;
  e.storage_bytes = storage;
  e.dirtied_bytes = dirtied;
  return e;
}

OpenCheckpoint checkpoint(std::vector<IoEvent> calls) {
  OpenCheckpoint c;
  for (auto& e : calls) c.add(std::move(e));
  return c;
}

StageRecord stage_of(const OpenCheckpoint& c, Direction d, StorageStage& storage,
                     const std::vector<StageRecord>& stages = {}, StageSpans* spans = nullptr) {
  StageSpans own;
  auto s = storage.stage(c, d, stages, spans ? *spans : own);
  EXPECT_TRUE(s.has_value());
  return s.value_or(StageRecord{});
}

TEST(StorageStageTest, AColdLoadIsWhatTheDeviceReadInItsBusyTime) {
  StorageStage storage(std::make_shared<Maxima>());
  // Four 1 MiB reads of 1 ms; the first started 4 MiB of readahead, which
  // the device served over [T, T + 3.5 ms): the later reads waited on it.
  storage.on_busy(StorageBusyEvent{T, T + 3 * kMs + kMs / 2, 100, 100, kDisk.dev, 4 * kMiB, 4});
  // Another device's interval, and one of this device before the load.
  storage.on_busy(StorageBusyEvent{T, T + 4 * kMs, 100, 100, makedev(8, 16), kMiB, 1});
  storage.on_busy(StorageBusyEvent{T - 9 * kMs, T - 8 * kMs, 100, 100, kDisk.dev, kMiB, 1});
  auto c = checkpoint({call(IoOp::Read, kDisk, T, T + kMs, kMiB, 4 * kMiB),
                       call(IoOp::Read, kDisk, T + kMs, T + 2 * kMs, kMiB),
                       call(IoOp::Read, kDisk, T + 2 * kMs, T + 3 * kMs, kMiB),
                       call(IoOp::Read, kDisk, T + 3 * kMs, T + 4 * kMs, kMiB)});
  StageSpans spans;
  const StageRecord s = stage_of(c, Direction::Load, storage, {}, &spans);
  EXPECT_EQ(s.name, kStageStorage);
  EXPECT_EQ(s.bytes, 4 * kMiB);
  EXPECT_EQ(s.busy_ns, 3 * kMs + kMs / 2) << "the device's own interval, not the calls'";
  EXPECT_EQ(*s.max_Bps, 2e9);
  EXPECT_EQ(s.max_source, "test:disk read");
  ASSERT_EQ(spans.of(kStageStorage).size(), 1u);
  EXPECT_EQ(spans.of(kStageStorage)[0].file, device_key(kDisk.dev));
}

TEST(StorageStageTest, WithoutBusyIntervalsTheCallsThatMovedBytesStandIn) {
  StorageStage storage(std::make_shared<Maxima>());
  auto c = checkpoint({call(IoOp::Read, kDisk, T, T + kMs, kMiB, 2 * kMiB),
                       call(IoOp::Read, kDisk, T + kMs, T + 2 * kMs, kMiB),
                       call(IoOp::Read, kDisk, T + 2 * kMs, T + 5 * kMs, kMiB, kMiB)});
  const StageRecord s = stage_of(c, Direction::Load, storage);
  EXPECT_EQ(s.bytes, 3 * kMiB);
  EXPECT_EQ(s.busy_ns, 4 * kMs) << "the first and the last call";
}

TEST(StorageStageTest, AWarmLoadAskedNothingOfTheStorage) {
  StorageStage storage(std::make_shared<Maxima>());
  auto c = checkpoint({call(IoOp::Read, kDisk, T, T + kMs, kMiB),
                       call(IoOp::Read, kDisk, T + kMs, T + 2 * kMs, kMiB)});
  const StageRecord s = stage_of(c, Direction::Load, storage);
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_EQ(s.busy_ns, 0u);
  EXPECT_EQ(*s.fraction_of_max(), 0.0);
}

TEST(StorageStageTest, AnFsyncdSaveChargesItsWritebackToTheStorage) {
  StorageStage storage(std::make_shared<Maxima>());
  auto c = checkpoint({call(IoOp::Write, kDisk, T, T + kMs, kMiB, 0, kMiB),
                       call(IoOp::Write, kDisk, T + kMs, T + 2 * kMs, kMiB, 0, kMiB),
                       call(IoOp::Fsync, kDisk, T + 2 * kMs, T + 6 * kMs, 0, 2 * kMiB),
                       call(IoOp::Close, kDisk, T + 6 * kMs, T + 6 * kMs + 10, 0)});
  const StageRecord s = stage_of(c, Direction::Save, storage);
  EXPECT_EQ(s.bytes, 2 * kMiB);
  EXPECT_EQ(s.busy_ns, 4 * kMs) << "the fsync";
  EXPECT_EQ(s.max_source, "test:disk write");
  EXPECT_EQ(dirty_at_end(c), 0u);
}

TEST(StorageStageTest, ABufferedSaveSaysWhatItLeftDirty) {
  StorageStage storage(std::make_shared<Maxima>());
  auto c = checkpoint({call(IoOp::Write, kDisk, T, T + kMs, kMiB, 0, kMiB),
                       call(IoOp::Write, kDisk, T + kMs, T + 2 * kMs, kMiB, 0, kMiB),
                       call(IoOp::Close, kDisk, T + 2 * kMs, T + 2 * kMs + 10, 0)});
  const StageRecord s = stage_of(c, Direction::Save, storage);
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_EQ(s.busy_ns, 0u);
  EXPECT_EQ(dirty_at_end(c), 2 * kMiB);
  // tmpfs, O_DIRECT: nothing dirtied, nothing owed, and not known to be.
  EXPECT_EQ(dirty_at_end(checkpoint({call(IoOp::Write, kDisk, T, T + kMs, kMiB, kMiB)})),
            std::nullopt);
}

// A write held 3 ms in balance_dirty_pages waited that long on writeback:
// the storage's time, at the call's end.
TEST(StorageStageTest, AThrottledWriteWaitedOnTheStorage) {
  StorageStage storage(std::make_shared<Maxima>());
  auto held = call(IoOp::Write, kDisk, T, T + 4 * kMs, kMiB, 0, kMiB);
  held.throttle_ns = 3 * kMs;
  auto c = checkpoint({call(IoOp::Write, kDisk, T - kMs, T, kMiB, 0, kMiB), held});
  StageSpans spans;
  const StageRecord s = stage_of(c, Direction::Save, storage, {}, &spans);
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_EQ(s.busy_ns, 3 * kMs);
  ASSERT_EQ(spans.of(kStageStorage).size(), 1u);
  EXPECT_EQ(spans.of(kStageStorage)[0].start_ns, T + kMs);
}

TEST(StorageStageTest, AFileSystemWithNoStorageHasNoStorageStage) {
  StorageStage storage(std::make_shared<Maxima>());
  auto c = checkpoint({call(IoOp::Write, kTmpfs, T, T + kMs, kMiB)});
  StageSpans spans;
  EXPECT_FALSE(storage.stage(c, Direction::Save, {}, spans).has_value());
}

TEST(StorageStageTest, AnNfsFilesStorageIsTheClientsOwnFiguresOnce) {
  StorageStage storage(std::make_shared<Maxima>());
  auto c = checkpoint({call(IoOp::Write, kNfs, T, T + 2 * kMs, 3 * kMiB),
                       call(IoOp::Close, kNfs, T + 2 * kMs, T + 9 * kMs, 0)});
  StageRecord client;
  client.name = std::string(kStageNfsClient);
  client.bytes = 3 * kMiB;
  client.busy_ns = 7 * kMs;
  StageSpans spans;
  spans.add(kStageHostIo, {{kNfs, T, T + 9 * kMs}}, T, T + 9 * kMs);
  spans.add(kStageNfsClient, {{kNfs, T + kMs, T + 8 * kMs}}, T, T + 9 * kMs);
  std::vector<StageRecord> stages{client};
  const StageRecord s = stage_of(c, Direction::Save, storage, stages, &spans);
  EXPECT_EQ(s.bytes, 3 * kMiB) << "the WRITE RPCs' bytes, not the page cache's";
  EXPECT_EQ(s.busy_ns, 7 * kMs);
  // Its time is the client's: the client's own time, never the storage's twice.
  StageRecord host;
  host.name = std::string(kStageHostIo);
  host.busy_ns = 9 * kMs;
  std::vector<StageRecord> all{host, s, client};
  set_exclusive_times(all, spans);
  EXPECT_EQ(all[0].exclusive_ns, 2 * kMs);
  EXPECT_EQ(all[1].exclusive_ns, 0u);
  EXPECT_EQ(all[2].exclusive_ns, 7 * kMs);
}

// Through the stitcher: the verdict follows what the storage did.
class StorageVerdictTest : public ::testing::Test {
 protected:
  CheckpointRecord one(std::vector<IoEvent> calls, std::vector<StorageBusyEvent> busy = {}) {
    Config config = Config::defaults();
    Stitcher s(config, std::make_shared<Maxima>(), StageAvailability{true, false});
    uint64_t last = 0;
    for (auto& b : busy) s.on_event(b);
    for (auto& e : calls) {
      last = std::max(last, e.end_ns);
      s.on_event(std::move(e));
    }
    s.advance(last + config.checkpoint.quiet_gap_ns + 500 * kMs);
    auto cps = s.take_checkpoints();
    EXPECT_EQ(cps.size(), 1u);
    return cps.empty() ? CheckpointRecord{} : cps[0];
  }
};

TEST_F(StorageVerdictTest, AColdLoadIsHeldBackByTheStorage) {
  // Reads waiting 9 ms on the device, then 1 ms of CPU each.
  std::vector<IoEvent> calls;
  for (uint64_t i = 0; i < 4; ++i) {
    auto e =
        call(IoOp::Read, kDisk, T + i * 11 * kMs, T + i * 11 * kMs + 10 * kMs, 8 * kMiB, 8 * kMiB);
    e.cpu_window_start_ns = e.start_ns - kMs;
    e.cpu_ns = kMs;
    calls.push_back(e);
  }
  std::vector<StorageBusyEvent> busy;
  for (uint64_t i = 0; i < 4; ++i)
    busy.push_back(
        {T + i * 11 * kMs, T + i * 11 * kMs + 9 * kMs, 100, 100, kDisk.dev, 8 * kMiB, 8});
  const CheckpointRecord c = one(calls, busy);
  EXPECT_EQ(c.bottleneck, kStageStorage);
}

TEST_F(StorageVerdictTest, AWarmLoadIsNeverTheStorages) {
  std::vector<IoEvent> calls;
  for (uint64_t i = 0; i < 4; ++i)
    calls.push_back(call(IoOp::Read, kDisk, T + i * 2 * kMs, T + i * 2 * kMs + kMs, 8 * kMiB));
  const CheckpointRecord c = one(calls);
  EXPECT_EQ(c.bottleneck, kStageHostIo);
  for (const auto& s : c.stages)
    if (s.name == kStageHostIo) EXPECT_EQ(s.max_source, "test:page cache");
}

}  // namespace
}  // namespace ckpt
