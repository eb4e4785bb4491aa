// The gpu_copy stage with known answers: a save claims the D2H copies inside
// it and the burst that leads into its first write (a pause longer than the
// quiet gap ends the burst: a training step's loss.item() copies a minute
// earlier are not the checkpoint's); a load claims the H2D copies inside it
// and those that follow its last read. Pageable and pinned bytes apart, the
// checkpoint's window stretched over its copies, no copy claimed twice, the
// stage absent when the library did not run and measured zero when it ran
// and nothing was copied, the maximum summed over the GPUs.
#include <gtest/gtest.h>

#include "stitch/stitcher.h"

namespace ckpt {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t T = 100'000 * kMs;

class GpuMaxima : public MaximaProvider {
 public:
  StageMax storage(Direction, const std::vector<FileId>&) override { return {1e9, "test"}; }
  StageMax serialize(size_t /*threads*/) override { return {}; }
  StageMax transport(const std::string&) override { return {}; }
  StageMax gpu_copy(Direction d, const std::vector<std::string>& pci) override {
    last_pci = pci;
    return {(d == Direction::Save ? 20e9 : 25e9) * static_cast<double>(pci.size()), "test:pcie"};
  }
  std::vector<std::string> last_pci;
};

class GpuCopyStageTest : public ::testing::Test {
 protected:
  GpuCopyStageTest() : config_(Config::defaults()) {}

  Stitcher make(bool gpu = true) {
    StageAvailability a;
    a.job_io = true;
    a.gpu = gpu;
    return Stitcher(config_, maxima_, a);
  }
  static void io(Stitcher& s, IoOp op, uint64_t t0, uint64_t t1, int64_t bytes,
                 const std::string& path = "/ckpt/checkpoint-1/shard-0.pt", uint64_t ino = 7) {
    IoEvent e;
    e.tgid = 100;
    e.tid = 100;
    e.op = op;
    e.start_ns = t0;
    e.end_ns = t1;
    e.cpu_window_start_ns = t0;
    e.path = path;
    e.file = FileId{8, ino};
    e.ret = bytes;
    e.requested = bytes > 0 ? static_cast<uint64_t>(bytes) : 0;
    s.on_event(std::move(e));
  }
  static void copy(Stitcher& s, GpuCopyKind kind, uint64_t t0, uint64_t t1, uint64_t bytes,
                   GpuMemoryKind host, const std::string& pci = "0000:3b:00.0",
                   bool async = false) {
    GpuCopyEvent g;
    g.kind = kind;
    g.start_ns = t0;
    g.end_ns = t1;
    g.bytes = bytes;
    g.tgid = 100;
    g.async = async;
    g.pci_address = pci;
    (kind == GpuCopyKind::DtoH ? g.dst : g.src) = host;
    (kind == GpuCopyKind::DtoH ? g.src : g.dst) = GpuMemoryKind::Device;
    s.on_event(std::move(g));
  }
  std::vector<CheckpointRecord> close(Stitcher& s, uint64_t after) {
    s.advance(after + config_.checkpoint.quiet_gap_ns + 2'000 * kMs);
    return s.take_checkpoints();
  }
  static const StageRecord* stage(const CheckpointRecord& c, std::string_view name) {
    for (const auto& st : c.stages)
      if (st.name == name) return &st;
    return nullptr;
  }

  Config config_;
  std::shared_ptr<GpuMaxima> maxima_ = std::make_shared<GpuMaxima>();
};

TEST_F(GpuCopyStageTest, SaveClaimsTheBurstLeadingIntoItsFirstWrite) {
  Stitcher s = make();
  // A training step's loss.item(): 4 bytes, 60 s before the save. Not its own.
  copy(s, GpuCopyKind::DtoH, T - 60'000 * kMs, T - 60'000 * kMs + 1000, 4, GpuMemoryKind::Pageable);
  // The save: four 8 MiB D2H copies back to back into pageable memory
  // (torch.save), 10 ms each, the last ending 5 ms before the first write;
  // one more pinned copy while the writes run.
  for (int i = 0; i < 4; ++i) {
    const uint64_t t0 = T - 45 * kMs + static_cast<uint64_t>(i) * 10 * kMs;
    copy(s, GpuCopyKind::DtoH, t0, t0 + 10 * kMs, 8 * kMiB, GpuMemoryKind::Pageable);
  }
  io(s, IoOp::Write, T, T + 20 * kMs, static_cast<int64_t>(32 * kMiB));
  copy(s, GpuCopyKind::DtoH, T + 5 * kMs, T + 9 * kMs, 2 * kMiB, GpuMemoryKind::Pinned,
       "0000:3b:00.0", /*async=*/true);
  io(s, IoOp::Write, T + 20 * kMs, T + 30 * kMs, static_cast<int64_t>(2 * kMiB));
  // An H2D copy during the save is not the save's (a load's stage).
  copy(s, GpuCopyKind::HtoD, T + 10 * kMs, T + 11 * kMs, kMiB, GpuMemoryKind::Pinned);
  auto done = close(s, T + 30 * kMs);
  ASSERT_EQ(done.size(), 1u);
  const CheckpointRecord& c = done[0];
  const StageRecord* g = stage(c, kStageGpuCopy);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(c.stages.front().name, kStageGpuCopy);  // kAllStages order: first
  EXPECT_EQ(g->bytes, 34 * kMiB);
  // 40 ms of back-to-back copies, then 4 ms inside the writes.
  EXPECT_EQ(g->busy_ns, 44 * kMs);
  EXPECT_EQ(g->max_Bps, 20e9);
  EXPECT_EQ(g->max_source, "test:pcie");
  ASSERT_TRUE(c.gpu);
  EXPECT_EQ(c.gpu->copies, 5u);
  EXPECT_EQ(c.gpu->pageable_bytes, 32 * kMiB);
  EXPECT_EQ(c.gpu->pinned_bytes, 2 * kMiB);
  EXPECT_EQ(c.gpu->async_copies, 1u);
  EXPECT_EQ(c.gpu->devices, std::vector<std::string>{"0000:3b:00.0"});
  // The checkpoint now starts with its first copy.
  EXPECT_EQ(c.start_ns, T - 45 * kMs);
  EXPECT_EQ(c.end_ns, T + 30 * kMs);
  EXPECT_EQ(c.gpu->first_ns, T - 45 * kMs);
}

TEST_F(GpuCopyStageTest, LoadClaimsTheCopiesThatFollowItsReads) {
  Stitcher s = make();
  io(s, IoOp::Read, T, T + 10 * kMs, static_cast<int64_t>(16 * kMiB));
  copy(s, GpuCopyKind::HtoD, T + 2 * kMs, T + 6 * kMs, 4 * kMiB, GpuMemoryKind::Pinned,
       "0000:3b:00.0");
  io(s, IoOp::Read, T + 10 * kMs, T + 20 * kMs, static_cast<int64_t>(16 * kMiB));
  // After the last read: the tensors go to two GPUs, chained 100 ms apart.
  copy(s, GpuCopyKind::HtoD, T + 25 * kMs, T + 35 * kMs, 12 * kMiB, GpuMemoryKind::Pageable,
       "0000:3b:00.0");
  copy(s, GpuCopyKind::HtoD, T + 135 * kMs, T + 145 * kMs, 16 * kMiB, GpuMemoryKind::Pageable,
       "0000:5e:00.0");
  // Ten seconds later: the next step's input batch, not the load's.
  copy(s, GpuCopyKind::HtoD, T + 10'000 * kMs, T + 10'001 * kMs, kMiB, GpuMemoryKind::Pinned);
  auto done = close(s, T + 20 * kMs);
  ASSERT_EQ(done.size(), 1u);
  const CheckpointRecord& c = done[0];
  EXPECT_EQ(c.direction, Direction::Load);
  const StageRecord* g = stage(c, kStageGpuCopy);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->bytes, 32 * kMiB);
  EXPECT_EQ(g->busy_ns, 24 * kMs);
  EXPECT_EQ(c.gpu->pinned_bytes, 4 * kMiB);
  EXPECT_EQ(c.gpu->pageable_bytes, 28 * kMiB);
  EXPECT_EQ(c.gpu->devices, (std::vector<std::string>{"0000:3b:00.0", "0000:5e:00.0"}));
  // Two GPUs, two links: the maximum is their sum.
  EXPECT_EQ(g->max_Bps, 50e9);
  EXPECT_EQ(c.end_ns, T + 145 * kMs);
  EXPECT_EQ(c.start_ns, T);
}

TEST_F(GpuCopyStageTest, ACopyIsClaimedByOneCheckpointOnly) {
  Stitcher s = make();
  copy(s, GpuCopyKind::DtoH, T - 5 * kMs, T - kMs, kMiB, GpuMemoryKind::Pinned);
  io(s, IoOp::Write, T, T + kMs, static_cast<int64_t>(kMiB));
  auto first = close(s, T + kMs);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(stage(first[0], kStageGpuCopy)->bytes, kMiB);
  // A second save right after: the copy before the first is not its.
  const uint64_t T2 = T + 5'000 * kMs;
  io(s, IoOp::Write, T2, T2 + kMs, static_cast<int64_t>(kMiB), "/ckpt/checkpoint-2/s.pt", 9);
  auto second = close(s, T2 + kMs);
  ASSERT_EQ(second.size(), 1u);
  const StageRecord* g = stage(second[0], kStageGpuCopy);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->bytes, 0u);  // measured: nothing was copied for it
  EXPECT_EQ(second[0].gpu->copies, 0u);
}

TEST_F(GpuCopyStageTest, AbsentWhenTheLibraryDidNotRunNeverZero) {
  Stitcher s = make(/*gpu=*/false);
  copy(s, GpuCopyKind::DtoH, T - 5 * kMs, T - kMs, kMiB, GpuMemoryKind::Pinned);
  io(s, IoOp::Write, T, T + kMs, static_cast<int64_t>(kMiB));
  auto done = close(s, T + kMs);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(stage(done[0], kStageGpuCopy), nullptr);
  EXPECT_FALSE(done[0].gpu);
  EXPECT_EQ(done[0].start_ns, T);
}

TEST_F(GpuCopyStageTest, ALoadWaitsForCopiesTheLibraryHasNotFlushedYet) {
  Stitcher s = make();
  io(s, IoOp::Read, T, T + 10 * kMs, static_cast<int64_t>(kMiB));
  // A quiet gap after the read (plus the ring buffer's slack) the checkpoint
  // would close without the library; with it, it waits a second more.
  s.advance(T + 10 * kMs + config_.checkpoint.quiet_gap_ns + 200 * kMs);
  EXPECT_TRUE(s.take_checkpoints().empty());
  // The copies flushed late arrive, and are claimed.
  copy(s, GpuCopyKind::HtoD, T + 12 * kMs, T + 20 * kMs, kMiB, GpuMemoryKind::Pinned);
  s.advance(T + 10 * kMs + config_.checkpoint.quiet_gap_ns + 1'200 * kMs);
  auto done = s.take_checkpoints();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(stage(done[0], kStageGpuCopy)->bytes, kMiB);
}

TEST_F(GpuCopyStageTest, TheBottleneckCanBeTheCopy) {
  Stitcher s = make();
  // 1 s of pageable D2H copies, then 50 ms of writes: the copy bounds it.
  copy(s, GpuCopyKind::DtoH, T - 1'005 * kMs, T - 5 * kMs, 256 * kMiB, GpuMemoryKind::Pageable);
  io(s, IoOp::Write, T, T + 50 * kMs, static_cast<int64_t>(256 * kMiB));
  auto done = close(s, T + 50 * kMs);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].bottleneck, kStageGpuCopy);
}

TEST(GpuMaximaTest, ConfiguredPerGpuTimesTheGpusElseUnknownWithoutSysfs) {
  ConfiguredMaxima m;
  m.gpu_d2h_Bps = 24e9;
  SystemMaxima configured(m, "/nonexistent-sysfs");
  auto two = configured.gpu_copy(Direction::Save, {"0000:3b:00.0", "0000:5e:00.0"});
  EXPECT_EQ(two.Bps, 48e9);
  EXPECT_EQ(two.source, "config:maxima.gpu_d2h_bandwidth x 2 GPU(s)");
  auto load = configured.gpu_copy(Direction::Load, {"0000:3b:00.0"});
  EXPECT_FALSE(load.Bps);  // no H2D figure and no sysfs here
}

}  // namespace
}  // namespace ckpt
