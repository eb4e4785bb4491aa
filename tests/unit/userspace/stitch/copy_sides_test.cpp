// A copy is a load of what it read and a save of what it wrote
// (stitch/copy_sides.h, docs/stitching.md "Copies"): which bursts split, and
// where each call goes.
#include "stitch/copy_sides.h"

#include <gtest/gtest.h>

#include <string>

namespace ckpt {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kMiB = 1 << 20;
const FileId kSource{42, 1000};
const FileId kDest{42, 2000};
const FileId kOther{42, 3000};
const std::string kSourcePath = "/nvme/checkpoints/step_100/shard-0.pt";
const std::string kDestPath = "/nfs/checkpoints/step_100/shard-0.pt";

IoEvent call(IoOp op, FileId file, const std::string& path, uint64_t start, uint64_t end,
             int64_t ret) {
  IoEvent ev;
  ev.tgid = ev.tid = 7;
  ev.op = op;
  ev.file = file;
  ev.path = path;
  ev.start_ns = start;
  ev.end_ns = end;
  ev.ret = ret;
  return ev;
}

uint64_t count(const OpenCheckpoint& c, IoOp op) {
  uint64_t n = 0;
  for (const auto& ev : c.calls) n += ev.op == op ? 1 : 0;
  return n;
}

// cp without copy_file_range (across file systems): open both, 8 reads of
// the source and 8 writes of the destination in turn, close both, fsync and
// rename the destination's directory entry into place.
TEST(CopySides, AReadWriteLoopBetweenTwoFilesIsALoadAndASave) {
  OpenCheckpoint c;
  uint64_t t = 10 * kMs;
  c.add(call(IoOp::Open, kSource, kSourcePath, t, t + kMs, 3));
  IoEvent open_dst = call(IoOp::Open, kDest, kDestPath + ".tmp", t + kMs, t + 2 * kMs, 4);
  open_dst.flags = 01 | 0100;  // O_WRONLY | O_CREAT
  c.add(std::move(open_dst));
  t += 2 * kMs;
  for (int i = 0; i < 8; ++i, t += 2 * kMs) {
    c.add(call(IoOp::Read, kSource, kSourcePath, t, t + kMs, kMiB));
    c.add(call(IoOp::Write, kDest, kDestPath + ".tmp", t + kMs, t + 2 * kMs, kMiB));
  }
  c.add(call(IoOp::Close, kSource, kSourcePath, t, t + kMs, 0));
  c.add(call(IoOp::Fsync, kDest, kDestPath + ".tmp", t + kMs, t + 3 * kMs, 0));
  c.add(call(IoOp::Close, kDest, kDestPath + ".tmp", t + 3 * kMs, t + 4 * kMs, 0));
  IoEvent rename = call(IoOp::Rename, kDest, kDestPath + ".tmp", t + 4 * kMs, t + 5 * kMs, 0);
  rename.path2 = kDestPath;
  c.add(std::move(rename));
  const uint64_t end = t + 5 * kMs;

  auto sides = split_copy_sides(c);
  ASSERT_TRUE(sides);
  const auto& [load, save] = *sides;
  EXPECT_EQ(load.bytes_read, 8 * kMiB);
  EXPECT_EQ(load.bytes_written, 0u);
  EXPECT_EQ(load.read_calls, 8u);
  EXPECT_EQ(count(load, IoOp::Open), 1u);
  EXPECT_EQ(count(load, IoOp::Close), 1u);
  EXPECT_EQ(load.calls.size(), 10u);
  EXPECT_EQ(save.bytes_written, 8 * kMiB);
  EXPECT_EQ(save.bytes_read, 0u);
  EXPECT_EQ(count(save, IoOp::Open), 1u);
  EXPECT_EQ(count(save, IoOp::Fsync), 1u);
  EXPECT_EQ(count(save, IoOp::Rename), 1u);
  EXPECT_EQ(save.calls.size(), 12u);
  // Each side's own window: the load ends with the source's close, the save
  // with the rename.
  EXPECT_EQ(load.start_ns, 10 * kMs);
  EXPECT_EQ(load.end_ns, t + kMs);
  EXPECT_EQ(save.start_ns, 11 * kMs);
  EXPECT_EQ(save.end_ns, end);
  EXPECT_TRUE(load.files_touched.contains(kSource));
  EXPECT_FALSE(load.files_touched.contains(kDest));
  EXPECT_TRUE(c.calls.empty()) << "the calls moved into the sides";
}

// copy_file_range or sendfile between two checkpoint files: the kernel's one
// call is a read half and a write half; however small, two sides.
TEST(CopySides, AKernelCopyIsTwoSidesWhateverItsSize) {
  OpenCheckpoint c;
  c.add(call(IoOp::Read, kSource, kSourcePath, 10 * kMs, 11 * kMs, 4096));
  IoEvent half = call(IoOp::Write, kDest, kDestPath, 10 * kMs, 11 * kMs, 4096);
  half.copy_source = kSource;
  half.via = IoVia::CopyFileRange;
  c.add(std::move(half));
  auto sides = split_copy_sides(c);
  ASSERT_TRUE(sides);
  EXPECT_EQ(sides->first.bytes_read, 4096u);
  EXPECT_EQ(sides->second.bytes_written, 4096u);
  EXPECT_EQ(sides->second.copy_bytes_written, 4096u);
}

// A save that first reads a small index (or the "latest" file) of the
// checkpoint: the read is incidental, one save.
TEST(CopySides, ASaveThatReadsASmallIndexStaysOneCheckpoint) {
  OpenCheckpoint c;
  c.add(call(IoOp::Read, kOther, "/nfs/checkpoints/latest", 10 * kMs, 11 * kMs, 4096));
  c.add(call(IoOp::Write, kDest, kDestPath, 11 * kMs, 20 * kMs, 64 * kMiB));
  const size_t calls = c.calls.size();
  EXPECT_FALSE(split_copy_sides(c));
  EXPECT_EQ(c.calls.size(), calls) << "left whole";
  // The same with a read of at least kCopySideMinBytes: a load of it too.
  OpenCheckpoint big;
  big.add(call(IoOp::Read, kOther, "/nfs/checkpoints/step_99/shard-0.pt", 10 * kMs, 11 * kMs,
               static_cast<int64_t>(kCopySideMinBytes)));
  big.add(call(IoOp::Write, kDest, kDestPath, 11 * kMs, 20 * kMs, 64 * kMiB));
  EXPECT_TRUE(split_copy_sides(big));
}

// A save that also copies a small file in (shutil.copy of a config from the
// last checkpoint) stays one save; a stat of a file the copy read goes with
// the load.
TEST(CopySides, ASaveThatCopiesInASmallFileStaysOne) {
  OpenCheckpoint c;
  c.add(call(IoOp::Read, kOther, "/nfs/checkpoints/step_99/config.json", 10 * kMs, 11 * kMs, 900));
  IoEvent half =
      call(IoOp::Write, kDest, "/nfs/checkpoints/step_100/config.json", 10 * kMs, 11 * kMs, 900);
  half.copy_source = kOther;
  c.add(std::move(half));
  c.add(call(IoOp::Write, FileId{42, 4000}, kDestPath, 11 * kMs, 20 * kMs, 64 * kMiB));
  EXPECT_FALSE(split_copy_sides(c));

  OpenCheckpoint copy;
  copy.add(call(IoOp::Stat, FileId{}, kSourcePath, 9 * kMs, 10 * kMs, 0));
  copy.add(call(IoOp::Read, kSource, kSourcePath, 10 * kMs, 11 * kMs, 2 * kMiB));
  copy.add(call(IoOp::Write, kDest, kDestPath, 11 * kMs, 12 * kMs, 2 * kMiB));
  auto sides = split_copy_sides(copy);
  ASSERT_TRUE(sides);
  EXPECT_EQ(count(sides->first, IoOp::Stat), 1u) << "the stat names the source by path";
  EXPECT_EQ(sides->first.start_ns, 9 * kMs);
  EXPECT_EQ(sides->first.copy_side, CopySide::Load);
  EXPECT_EQ(sides->second.copy_side, CopySide::Save);
}

// An update in place (a file read and written in one burst) is no copy.
TEST(CopySides, AFileBothReadAndWrittenIsNoCopy) {
  OpenCheckpoint c;
  c.add(call(IoOp::Read, kSource, kSourcePath, 10 * kMs, 11 * kMs, 8 * kMiB));
  c.add(call(IoOp::Write, kSource, kSourcePath, 11 * kMs, 12 * kMs, 8 * kMiB));
  c.add(call(IoOp::Write, kDest, kDestPath, 12 * kMs, 13 * kMs, 8 * kMiB));
  EXPECT_FALSE(split_copy_sides(c));
  // Only reads, or only writes: nothing to split.
  OpenCheckpoint reads;
  reads.add(call(IoOp::Read, kSource, kSourcePath, 10 * kMs, 11 * kMs, 8 * kMiB));
  EXPECT_FALSE(split_copy_sides(reads));
}

// Failures seen while the burst ran stay with the save; the pages a mapping
// counted with the load.
TEST(CopySides, LiveFailuresGoWithTheSaveAndMappedPagesWithTheLoad) {
  OpenCheckpoint c;
  c.add(call(IoOp::Read, kSource, kSourcePath, 10 * kMs, 11 * kMs, 2 * kMiB));
  c.add(call(IoOp::Write, kDest, kDestPath, 11 * kMs, 12 * kMs, 2 * kMiB));
  c.live_failures.push_back(FailureRecord{"stall", 12 * kMs, "no progress", std::nullopt});
  c.mapped_pages[kSource].add(0, 511);
  auto sides = split_copy_sides(c);
  ASSERT_TRUE(sides);
  EXPECT_TRUE(sides->first.live_failures.empty());
  ASSERT_EQ(sides->second.live_failures.size(), 1u);
  EXPECT_EQ(sides->second.live_failures[0].kind, "stall");
  EXPECT_TRUE(sides->first.mapped_pages.contains(kSource));
}

}  // namespace
}  // namespace ckpt
