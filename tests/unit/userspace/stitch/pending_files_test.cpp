// The files held under temporary names (docs/stitching.md, "Decided late"):
// their calls kept in order until a rename decides, renamed with the file or
// its directory, bounded, and told apart by age.
#include "stitch/pending_files.h"

#include <gtest/gtest.h>

namespace ckpt {
namespace {

IoEvent write_call(const FileId& file, uint64_t start_ns, int64_t bytes) {
  IoEvent e;
  e.op = IoOp::Write;
  e.file = file;
  e.start_ns = start_ns;
  e.end_ns = start_ns + 10;
  e.ret = bytes;
  return e;
}

TEST(PendingFilesTest, HoldsOnlyTrackedFilesAndGivesTheirCallsBackInOrder) {
  PendingFiles p;
  const FileId a{1, 10};
  const FileId b{1, 11};
  p.track(a, "/out/a.safetensors.tmp", 100);
  EXPECT_TRUE(p.holds(a));
  EXPECT_FALSE(p.holds(b));
  EXPECT_FALSE(p.hold(write_call(b, 200, 5))) << "an untracked file's call is not held";
  EXPECT_TRUE(p.hold(write_call(a, 200, 5)));
  EXPECT_TRUE(p.hold(write_call(a, 300, 7)));
  EXPECT_EQ(p.held_calls(), 2u);
  const std::vector<IoEvent> calls = p.take(a);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].ret, 5);
  EXPECT_EQ(calls[1].ret, 7);
  EXPECT_FALSE(p.holds(a));
  EXPECT_EQ(p.held_calls(), 0u);
  EXPECT_TRUE(p.take(a).empty());
}

TEST(PendingFilesTest, AReopenKeepsWhatIsHeld) {
  PendingFiles p;
  const FileId a{1, 10};
  p.track(a, "/out/a.tmp", 100);
  ASSERT_TRUE(p.hold(write_call(a, 200, 5)));
  p.track(a, "", 300);
  EXPECT_EQ(p.path_of(a), "/out/a.tmp") << "an open without a path keeps the name";
  EXPECT_EQ(p.take(a).size(), 1u);
}

TEST(PendingFilesTest, ADirectoryRenameRewritesThePathsBelowItOnly) {
  PendingFiles p;
  const FileId in{1, 10};
  const FileId deeper{1, 11};
  const FileId beside{1, 12};
  p.track(in, "/out/tmp_save/weights.bin", 1);
  p.track(deeper, "/out/tmp_save/shards/0.bin", 1);
  p.track(beside, "/out/tmp_save2/weights.bin", 1);
  std::vector<FileId> moved = p.renamed_dir("/out/tmp_save", "/out/step_100");
  EXPECT_EQ(moved.size(), 2u);
  EXPECT_EQ(p.path_of(in), "/out/step_100/weights.bin");
  EXPECT_EQ(p.path_of(deeper), "/out/step_100/shards/0.bin");
  EXPECT_EQ(p.path_of(beside), "/out/tmp_save2/weights.bin") << "a prefix of a name is no parent";
  EXPECT_TRUE(p.renamed_dir("", "/x").empty());
}

TEST(PendingFilesTest, AgeCountsFromTheNewestCall) {
  PendingFiles p;
  const FileId quiet{1, 10};
  const FileId busy{1, 11};
  p.track(quiet, "/out/q.tmp", 100);
  p.track(busy, "/out/b.tmp", 100);
  ASSERT_TRUE(p.hold(write_call(busy, 5000, 1)));
  const std::vector<FileId> old = p.older_than(1000);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0], quiet);
  EXPECT_EQ(p.older_than(UINT64_MAX).size(), 2u) << "at the end every file is old";
}

TEST(PendingFilesTest, PastTheBoundACallIsRefusedAndNothingHeldIsLost) {
  PendingFiles p(3);
  const FileId a{1, 10};
  const FileId b{1, 11};
  p.track(a, "/out/a.tmp", 1);
  p.track(b, "/out/b.tmp", 1);
  EXPECT_TRUE(p.hold(write_call(a, 10, 1)));
  EXPECT_TRUE(p.hold(write_call(a, 20, 1)));
  EXPECT_TRUE(p.hold(write_call(b, 30, 1)));
  EXPECT_FALSE(p.hold(write_call(b, 40, 1)));
  EXPECT_EQ(p.take(b).size(), 1u);
  EXPECT_TRUE(p.hold(write_call(a, 50, 1))) << "what a taken file held is room again";
  EXPECT_EQ(p.take(a).size(), 3u);
}

}  // namespace
}  // namespace ckpt
