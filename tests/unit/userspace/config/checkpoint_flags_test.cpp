#include "config/checkpoint_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/checkpoint_matcher.h"

namespace ckpt {
namespace {

using ::testing::HasSubstr;

TEST(CheckpointFlagsTest, GlobJoinsTheNamesThatSayCheckpoint) {
  CheckpointRules r = Config::defaults().checkpoint;
  ASSERT_TRUE(add_checkpoint_flags(r, {"model_*.npz", "*.orbax"}, {}, "/job"));
  EXPECT_THAT(r.name_globs, ::testing::IsSupersetOf({"model_*.npz", "*.orbax"}));
  CheckpointMatcher m(r);
  EXPECT_TRUE(m.is_checkpoint_file("/job/results/model_final.npz"));
  EXPECT_FALSE(m.is_checkpoint_file("/job/results/data.npz"));
}

TEST(CheckpointFlagsTest, DirWithoutASlashIsADirectoryName) {
  CheckpointRules r = Config::defaults().checkpoint;
  ASSERT_TRUE(add_checkpoint_flags(r, {}, {"results", "run-*"}, "/job"));
  CheckpointMatcher m(r);
  EXPECT_TRUE(m.is_checkpoint_file("/job/results/model.pt"));
  EXPECT_TRUE(m.is_checkpoint_file("/scratch/run-7/optimizer.bin"));
  EXPECT_FALSE(m.is_checkpoint_file("/scratch/logs/optimizer.bin"));
}

TEST(CheckpointFlagsTest, DirWithASlashIsThatDirectory) {
  CheckpointRules r = Config::defaults().checkpoint;
  ASSERT_TRUE(
      add_checkpoint_flags(r, {}, {"/data/run1/", "./out", "../shared//ckpts"}, "/home/u/job"));
  EXPECT_THAT(r.dir_globs,
              ::testing::IsSupersetOf({"/data/run1", "/home/u/job/out", "/home/u/shared/ckpts"}));
  CheckpointMatcher m(r);
  // Orbax restoring from a root of no checkpoint-ish name.
  EXPECT_TRUE(m.is_checkpoint_file("/data/run1/100/state/d/3f9a0c1e2b"));
  EXPECT_TRUE(m.is_checkpoint_file("/home/u/job/out/model.pt"));
  EXPECT_FALSE(m.is_checkpoint_file("/data/run10/model.pt"));
  EXPECT_FALSE(m.is_checkpoint_file("/data/run1/train.log"));  // still a generic name's rule
}

TEST(CheckpointFlagsTest, BadValuesNameTheFlag) {
  CheckpointRules r = Config::defaults().checkpoint;
  auto slash = add_checkpoint_flags(r, {"out/ckpt.pt"}, {}, "/job");
  ASSERT_FALSE(slash);
  EXPECT_THAT(slash.error().message, HasSubstr("--checkpoint-glob out/ckpt.pt: has a '/'"));
  EXPECT_THAT(slash.error().message, HasSubstr("--checkpoint-dir"));

  auto empty_glob = add_checkpoint_flags(r, {""}, {}, "/job");
  ASSERT_FALSE(empty_glob);
  EXPECT_THAT(empty_glob.error().message, HasSubstr("--checkpoint-glob: must not be empty"));

  auto empty_dir = add_checkpoint_flags(r, {}, {""}, "/job");
  ASSERT_FALSE(empty_dir);
  EXPECT_THAT(empty_dir.error().message, HasSubstr("--checkpoint-dir: must not be empty"));
}

// dir_globs: [] already lets generic names count in every directory; a
// --checkpoint-dir would narrow that to one, so it is refused, saying why.
TEST(CheckpointFlagsTest, DirRefusedWhenTheConfigMatchesAnywhere) {
  CheckpointRules r = Config::defaults().checkpoint;
  r.dir_globs.clear();
  auto added = add_checkpoint_flags(r, {}, {"/data/run1"}, "/job");
  ASSERT_FALSE(added);
  EXPECT_THAT(added.error().message, HasSubstr("--checkpoint-dir /data/run1"));
  EXPECT_THAT(added.error().message, HasSubstr("checkpoint.dir_globs is empty"));
  EXPECT_TRUE(add_checkpoint_flags(r, {"*.orbax"}, {}, "/job"));  // globs are fine
}

// Where the traced processes have no one working directory, a relative
// prefix has nothing to be taken from: refused, saying why. A name or an
// absolute path needs none.
TEST(CheckpointFlagsTest, RelativeDirRefusedWithoutAWorkingDirectory) {
  CheckpointRules r = Config::defaults().checkpoint;
  const RelativeBase none{std::nullopt, "--cgroup /sys/fs/cgroup/x's processes have no one"};
  auto added = add_checkpoint_flags(r, {}, {"./out"}, none);
  ASSERT_FALSE(added);
  EXPECT_EQ(added.error().message,
            "--checkpoint-dir ./out: a relative path, and --cgroup /sys/fs/cgroup/x's processes "
            "have no one; give it as an absolute path");
  ASSERT_TRUE(add_checkpoint_flags(r, {}, {"out", "/data/run1"}, none));
  EXPECT_THAT(r.dir_globs, ::testing::IsSupersetOf({"out", "/data/run1"}));
  const RelativeBase job{"/home/u/job", {}};
  ASSERT_TRUE(add_checkpoint_flags(r, {}, {"./mine"}, job));
  EXPECT_THAT(r.dir_globs, ::testing::Contains("/home/u/job/mine"));
}

TEST(CheckpointFlagsTest, NothingGivenChangesNothing) {
  CheckpointRules r = Config::defaults().checkpoint;
  ASSERT_TRUE(add_checkpoint_flags(r, {}, {}, "/job"));
  EXPECT_EQ(r.name_globs, Config::defaults().checkpoint.name_globs);
  EXPECT_EQ(r.dir_globs, Config::defaults().checkpoint.dir_globs);
}

}  // namespace
}  // namespace ckpt
