// The unrecognised-I/O account (docs/stitching.md, "Unrecognised I/O"):
// events with known bytes on files no pattern recognises, recorded one by one
// before the kernel's verdict and summed by it after, must add up exactly,
// name the largest files in order, and leave out what the config already
// says (checkpoints, exclude_globs) or what it cannot sum (page faults).
#include "stitch/unrecognised_io.h"

#include <gtest/gtest.h>

#include "stitch/stitcher.h"
#include "tests/unit/userspace/stitch/no_maxima.h"

namespace ckpt {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kMiB = 1 << 20;

using test::NoMaxima;

class UnrecognisedIoTest : public ::testing::Test {
 protected:
  UnrecognisedIoTest() : config_(Config::defaults()) {}

  Stitcher make() {
    return Stitcher(config_, std::make_shared<NoMaxima>(), StageAvailability{true, false});
  }

  // A call the kernel recorded (a file without a verdict yet).
  void call(Stitcher& s, IoOp op, const std::string& path, FileId id, int64_t ret,
            const std::string& path2 = "") {
    IoEvent e;
    e.tgid = 100;
    e.tid = 101;
    e.op = op;
    e.start_ns = t_;
    e.end_ns = t_ + 1000;
    e.cpu_window_start_ns = t_;
    t_ += kMs;
    e.path = path;
    e.path2 = path2;
    e.file = id;
    e.ret = ret;
    if (op == IoOp::Mmap)
      e.mmap =
          MmapPages{0, static_cast<uint64_t>(ret) / 4096 - 1, static_cast<uint64_t>(ret), 0, 12};
    s.on_event(std::move(e));
  }
  void open(Stitcher& s, const std::string& path, FileId id) { call(s, IoOp::Open, path, id, 3); }
  // The kernel's sums for a file ruled out (ckpt_other_io_record).
  void summed(Stitcher& s, const std::string& path, FileId id, uint64_t read, uint64_t written) {
    OtherIoEvent e;
    e.tgid = 100;
    e.tid = 101;
    e.start_ns = t_;
    e.end_ns = t_ + kMs;
    t_ += kMs;
    e.file = id;
    e.path = path;
    e.bytes_read = read;
    e.bytes_written = written;
    e.read_calls = read > 0 ? 1 : 0;
    e.write_calls = written > 0 ? 1 : 0;
    s.on_event(std::move(e));
  }

  Config config_;
  uint64_t t_ = 1000 * kMs;
};

const std::string kState = "/job/out/model_state.dat";
const FileId kStateId{42, 7};

TEST_F(UnrecognisedIoTest, RecordedCallsAndKernelSumsAddUpExactly) {
  Stitcher s = make();
  std::vector<std::pair<FileId, bool>> told;
  s.set_verdict_listener([&](const FileId& f, bool yes) { told.emplace_back(f, yes); });
  open(s, kState, kStateId);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_FALSE(told[0].second) << "model_state.dat is no checkpoint by the default rules";
  // Before the kernel has the verdict: two writes recorded one by one.
  call(s, IoOp::Write, kState, kStateId, 3 * kMiB);
  call(s, IoOp::Write, kState, kStateId, 1234);
  // After: the kernel's sums, a read among them.
  summed(s, kState, kStateId, 5 * kMiB, 20 * kMiB + 1);
  // A failed call moves nothing; a close and an fsync move nothing either.
  call(s, IoOp::Write, kState, kStateId, -28);
  call(s, IoOp::Fsync, kState, kStateId, 0);
  s.finish();

  const UnrecognisedIoRecord r = s.unrecognised_io();
  EXPECT_EQ(r.bytes_written, 3 * kMiB + 1234 + 20 * kMiB + 1);
  EXPECT_EQ(r.bytes_read, 5 * kMiB);
  EXPECT_EQ(r.files, 1u);
  EXPECT_EQ(r.notice_bytes, 16 * kMiB);
  EXPECT_TRUE(r.notice());
  ASSERT_EQ(r.largest.size(), 1u);
  EXPECT_EQ(r.largest[0].path, kState);
  EXPECT_EQ(r.largest[0].dev, kStateId.dev);
  EXPECT_EQ(r.largest[0].ino, kStateId.ino);
  EXPECT_EQ(r.largest[0].bytes_written, r.bytes_written);
  EXPECT_EQ(r.largest[0].bytes_read, r.bytes_read);
  // *.dat is no generic name: a checkpoint directory would not be enough.
  EXPECT_EQ(r.largest[0].checkpoint_glob, "model_state.dat");
  EXPECT_EQ(r.largest[0].checkpoint_dir, "");
  // Nothing here was a checkpoint.
  EXPECT_TRUE(s.take_checkpoints().empty());
}

TEST_F(UnrecognisedIoTest, TheNoticeIsForMoreThanTheThreshold) {
  config_.checkpoint.unrecognised_notice_bytes = 16 * kMiB;
  for (uint64_t bytes : {16 * kMiB - 1, 16 * kMiB, 16 * kMiB + 1}) {
    Stitcher s = make();
    open(s, kState, kStateId);
    call(s, IoOp::Write, kState, kStateId, static_cast<int64_t>(bytes - 1));
    summed(s, kState, kStateId, 1, 0);
    const UnrecognisedIoRecord r = s.unrecognised_io();
    EXPECT_EQ(r.bytes(), bytes);
    EXPECT_EQ(r.notice(), bytes > 16 * kMiB) << bytes;
  }
  // The threshold is the config's.
  config_.checkpoint.unrecognised_notice_bytes = 1 * kMiB;
  Stitcher s = make();
  call(s, IoOp::Read, kState, kStateId, static_cast<int64_t>(kMiB + 1));
  EXPECT_EQ(s.unrecognised_io().notice_bytes, kMiB);
  EXPECT_TRUE(s.unrecognised_io().notice());
}

TEST_F(UnrecognisedIoTest, TheLargestFiveLargestFirstTiesByPath) {
  Stitcher s = make();
  const uint64_t sizes[] = {3, 9, 1, 7, 5, 9, 2};  // MiB; two of 9
  const char* names[] = {"c.dat", "b.dat", "g.dat", "d.dat", "e.dat", "a.dat", "f.dat"};
  for (size_t i = 0; i < std::size(sizes); ++i) {
    const FileId id{42, 100 + i};
    const std::string path = std::string("/job/out/") + names[i];
    open(s, path, id);
    // Half recorded, half summed: the order comes from the totals.
    call(s, IoOp::Write, path, id, static_cast<int64_t>(sizes[i] * kMiB / 2));
    summed(s, path, id, 0, sizes[i] * kMiB / 2);
  }
  const UnrecognisedIoRecord r = s.unrecognised_io();
  EXPECT_EQ(r.files, 7u);
  EXPECT_EQ(r.bytes_written, 36 * kMiB);
  ASSERT_EQ(r.largest.size(), kUnrecognisedFilesKept);
  std::vector<std::string> order;
  for (const auto& f : r.largest) order.push_back(f.path.substr(9));
  EXPECT_EQ(order, (std::vector<std::string>{"a.dat", "b.dat", "d.dat", "e.dat", "c.dat"}));
}

TEST_F(UnrecognisedIoTest, CheckpointsExcludedFilesAndPageFaultsAreLeftOut) {
  Stitcher s = make();
  // A checkpoint file: the checkpoint's, not unrecognised.
  const FileId ckpt{42, 1};
  open(s, "/job/out/ckpt.pt", ckpt);
  call(s, IoOp::Write, "/job/out/ckpt.pt", ckpt, 40 * kMiB);
  summed(s, "/job/out/ckpt.pt", ckpt, 0, 40 * kMiB);  // sums left from before it was decided
  // exclude_globs: a log, and a pretrained model in the Hugging Face cache.
  const FileId log{42, 2};
  open(s, "/job/train.log", log);
  call(s, IoOp::Write, "/job/train.log", log, 40 * kMiB);
  const FileId hub{42, 3};
  summed(s, "/root/.cache/huggingface/hub/models--gpt2/blobs/abc", hub, 500 * kMiB, 0);
  // A directory read, and page faults of a mapped dataset: not summed by
  // the kernel either.
  const FileId data{42, 4};
  open(s, "/job/data/train.bin", data);
  call(s, IoOp::Mmap, "/job/data/train.bin", data, 64 * kMiB);
  s.finish();
  const UnrecognisedIoRecord r = s.unrecognised_io();
  EXPECT_EQ(r.bytes(), 0u);
  EXPECT_EQ(r.files, 0u);
  EXPECT_TRUE(r.largest.empty());
  EXPECT_FALSE(r.notice());
  ASSERT_EQ(s.take_checkpoints().size(), 1u);
}

// A stat or unlink inside a checkpoint directory is the checkpoint's call,
// but does not make the file it names a checkpoint file: what went through
// that file stays unrecognised.
TEST_F(UnrecognisedIoTest, AStatOrUnlinkInACheckpointDirectoryKeepsAFilesBytes) {
  Stitcher s = make();
  const std::string notes = "/job/checkpoint-500/notes.dat";
  const FileId id{42, 9};
  open(s, notes, id);
  call(s, IoOp::Write, notes, id, 40 * kMiB);
  call(s, IoOp::Stat, notes, id, 0);
  call(s, IoOp::Unlink, notes, id, 0);
  s.finish();
  const UnrecognisedIoRecord r = s.unrecognised_io();
  EXPECT_EQ(r.bytes_written, 40 * kMiB);
  ASSERT_EQ(r.largest.size(), 1u);
  EXPECT_EQ(r.largest[0].path, notes);
}

TEST_F(UnrecognisedIoTest, AFileRenamedToACheckpointNameWasRecognisedAfterAll) {
  Stitcher s = make();
  const std::string plain = "/job/out/state.dat";
  const FileId id{42, 9};
  open(s, plain, id);
  call(s, IoOp::Write, plain, id, 30 * kMiB);
  summed(s, plain, id, 0, 10 * kMiB);
  EXPECT_EQ(s.unrecognised_io().bytes(), 40 * kMiB);
  call(s, IoOp::Rename, plain, id, 0, "/job/out/ckpt-100.dat");
  // The kernel's sums from before the new verdict still arrive.
  summed(s, "/job/out/ckpt-100.dat", id, 0, kMiB);
  const UnrecognisedIoRecord r = s.unrecognised_io();
  EXPECT_EQ(r.bytes(), 0u);
  EXPECT_EQ(r.files, 0u);
  EXPECT_TRUE(r.largest.empty());
  s.finish();
  const std::vector<CheckpointRecord> cps = s.take_checkpoints();
  ASSERT_EQ(cps.size(), 1u) << "the bytes are the checkpoint's (decided_late_test.cpp)";
  EXPECT_EQ(cps[0].bytes, 41 * kMiB);
}

TEST_F(UnrecognisedIoTest, ARenameToAnotherPlainNameRenamesTheFile) {
  Stitcher s = make();
  const FileId id{42, 9};
  open(s, "/job/out/weights.old", id);
  call(s, IoOp::Write, "/job/out/weights.old", id, 30 * kMiB);
  call(s, IoOp::Rename, "/job/out/weights.old", id, 0, "/job/out/weights.dat");
  const UnrecognisedIoRecord r = s.unrecognised_io();
  ASSERT_EQ(r.largest.size(), 1u);
  EXPECT_EQ(r.largest[0].path, "/job/out/weights.dat");
  EXPECT_EQ(r.bytes(), 30 * kMiB);
}

TEST_F(UnrecognisedIoTest, AFileWithoutAKnownPathIsNamedByDeviceAndInode) {
  Stitcher s = make();
  summed(s, "", FileId{0x801, 77}, 17 * kMiB, 0);
  const UnrecognisedIoRecord r = s.unrecognised_io();
  ASSERT_EQ(r.largest.size(), 1u);
  EXPECT_EQ(r.largest[0].path, "");
  EXPECT_EQ(r.largest[0].dev, 0x801u);
  EXPECT_EQ(r.largest[0].ino, 77u);
  EXPECT_EQ(r.largest[0].checkpoint_glob, "") << "no name, no glob";
}

TEST_F(UnrecognisedIoTest, TheFlagsThatWouldIncludeEachFile) {
  struct Case {
    std::string path;
    std::string glob;
    std::string dir;
  };
  const Case cases[] = {
      // Digit runs become '*': the next step's file matches too.
      {"/job/out/model_state_000100.dat", "model_state_*.dat", ""},
      // A generic name (file_globs): its directory is enough.
      {"/job/out/model.pt", "model.pt", "out"},
      {"/job/runs/exp12/model_3.bin", "model_*.bin", "exp*"},
      // No letter before the extension: the name itself, not '*.bin'.
      {"/job/out/00042.bin", "00042.bin", "out"},
      // A directory without a letter: its path.
      {"/job/runs/1234/model.pt", "model.pt", "/job/runs/1234"},
      // Glob characters in a name match only themselves.
      {"/job/out/w[1]*.dat", "w\\[*\\]\\*.dat", ""},
  };
  for (const Case& c : cases) {
    Stitcher s = make();
    summed(s, c.path, FileId{42, 5}, 0, 20 * kMiB);
    const UnrecognisedIoRecord r = s.unrecognised_io();
    ASSERT_EQ(r.largest.size(), 1u) << c.path;
    EXPECT_EQ(r.largest[0].checkpoint_glob, c.glob) << c.path;
    EXPECT_EQ(r.largest[0].checkpoint_dir, c.dir) << c.path;
  }
  // And they do include it: with the glob among name_globs (or the
  // directory among dir_globs), the file is a checkpoint file.
  for (const Case& c : cases) {
    CheckpointRules by_name = Config::defaults().checkpoint;
    by_name.name_globs.push_back(c.glob);
    EXPECT_TRUE(CheckpointMatcher(by_name).is_checkpoint_file(c.path)) << c.path;
    if (c.dir.empty()) continue;
    CheckpointRules by_dir = Config::defaults().checkpoint;
    by_dir.dir_globs.push_back(c.dir);
    EXPECT_TRUE(CheckpointMatcher(by_dir).is_checkpoint_file(c.path)) << c.path;
  }
}

TEST_F(UnrecognisedIoTest, PastTheFileLimitTheTotalsStayExact) {
  Stitcher s = make();
  const size_t n = UnrecognisedIo::kMaxFiles + 1000;
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t bytes = 4096 + i;
    summed(s, "/job/data/part-" + std::to_string(i) + ".dat", FileId{42, 1000 + i}, bytes, 0);
    total += bytes;
  }
  const UnrecognisedIoRecord r = s.unrecognised_io();
  EXPECT_EQ(r.bytes_read, total);
  EXPECT_EQ(r.files, n);
  ASSERT_EQ(r.largest.size(), kUnrecognisedFilesKept);
  EXPECT_EQ(r.largest[0].bytes_read, 4096 + n - 1) << "the largest survive the pruning";
  EXPECT_EQ(r.largest[4].bytes_read, 4096 + n - 5);
}

TEST_F(UnrecognisedIoTest, SwitchedOffItCountsNothing) {
  Stitcher s = make();
  s.count_unrecognised_io(false);
  call(s, IoOp::Write, kState, kStateId, 40 * kMiB);
  summed(s, kState, kStateId, 40 * kMiB, 0);
  EXPECT_EQ(s.unrecognised_io().bytes(), 0u);
}

}  // namespace
}  // namespace ckpt
