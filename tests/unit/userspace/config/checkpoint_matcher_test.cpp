#include "config/checkpoint_matcher.h"

#include <gtest/gtest.h>

namespace ckpt {
namespace {

TEST(CheckpointMatcherTest, DefaultRulesNeedACheckpointDirectory) {
  CheckpointMatcher m(Config::defaults().checkpoint);
  EXPECT_TRUE(m.is_checkpoint_file("/ckpt/checkpoints/step100/model.pt"));
  EXPECT_TRUE(m.is_checkpoint_file("/data/run1/global_step2000/mp_rank_00_model_states.pt"));
  EXPECT_TRUE(m.is_checkpoint_file("/nfs/job/checkpoint-3/shard-0.safetensors"));
  EXPECT_TRUE(m.is_checkpoint_file("/nfs/job/step_10/__0_0.distcp"));
  EXPECT_TRUE(m.is_checkpoint_file("/nfs/job/step_10/.metadata"));
  EXPECT_TRUE(m.is_checkpoint_file("/nfs/job/checkpoint-3/shard-0.pt.tmp"));
  EXPECT_TRUE(m.is_checkpoint_file("relative/ckpt/a.bin"));
  // Right extension, wrong place; right place, wrong extension.
  EXPECT_FALSE(m.is_checkpoint_file("/usr/lib/python3/site-packages/torch/lib/weights.pt"));
  EXPECT_FALSE(m.is_checkpoint_file("/nfs/job/checkpoint-3/train.log"));
  EXPECT_FALSE(m.is_checkpoint_file("/nfs/job/checkpoint-3/"));
  // Asked twice: the cache answers the same.
  EXPECT_TRUE(m.is_checkpoint_file("/ckpt/checkpoints/step100/model.pt"));
}

TEST(CheckpointMatcherTest, EmptyDirGlobsMatchAnywhere) {
  CheckpointRules r;
  r.file_globs = {"*.pt"};
  CheckpointMatcher m(r);
  EXPECT_TRUE(m.is_checkpoint_file("/tmp/x.pt"));
  EXPECT_FALSE(m.is_checkpoint_file("/tmp/x.pth"));
  EXPECT_FALSE(m.is_checkpoint_dir("/tmp/checkpoints"));
}

TEST(CheckpointMatcherTest, Directories) {
  CheckpointMatcher m(Config::defaults().checkpoint);
  EXPECT_TRUE(m.is_checkpoint_dir("/nfs/job/checkpoint-3"));
  EXPECT_TRUE(m.is_checkpoint_dir("/nfs/job/global_step7/sub"));
  EXPECT_FALSE(m.is_checkpoint_dir("/nfs/job/logs"));
}

TEST(CheckpointMatcherTest, NameThatSaysCheckpointCountsAnywhere) {
  CheckpointRules r;
  r.name_globs = {"*ckpt*", "*.nemo"};
  r.file_globs = {"*.pt"};
  r.dir_globs = {"checkpoints"};
  CheckpointMatcher m(r);
  EXPECT_TRUE(m.is_checkpoint_file("/home/u/out/ckpt.pt"));
  EXPECT_TRUE(m.is_checkpoint_file("/results/model.nemo"));
  EXPECT_TRUE(m.is_checkpoint_file("ckpt.pt"));  // no directory at all
  EXPECT_FALSE(m.is_checkpoint_file("/home/u/out/model.pt"));
  EXPECT_TRUE(m.is_checkpoint_file("/home/u/checkpoints/model.pt"));
}

TEST(CheckpointMatcherTest, ExcludedNamesAndDirectoriesNeverCount) {
  CheckpointRules r;
  r.name_globs = {"*checkpoint*"};
  r.file_globs = {"*.pt"};
  r.dir_globs = {"*checkpoint*"};
  r.exclude_globs = {"*.py", "site-packages"};
  CheckpointMatcher m(r);
  EXPECT_FALSE(m.is_checkpoint_file("/src/torch/utils/checkpoint.py"));
  EXPECT_FALSE(m.is_checkpoint_file("/venv/site-packages/torch/checkpoint/x.pt"));
  EXPECT_FALSE(m.is_checkpoint_file("/venv/site-packages/x/checkpoint.bin"));
  EXPECT_FALSE(m.is_checkpoint_dir("/venv/site-packages/torch/distributed/checkpoint"));
  EXPECT_TRUE(m.is_checkpoint_file("/job/checkpoint-1/x.pt"));
  EXPECT_TRUE(m.is_checkpoint_dir("/job/checkpoint-1"));
}

TEST(CheckpointMatcherTest, TemporaryByTheNameOrOneDirectoryNeverWhenExcluded) {
  CheckpointRules r = Config::defaults().checkpoint;
  CheckpointMatcher m(r);
  EXPECT_TRUE(m.is_temporary("/job/export/model.safetensors.tmp"));
  EXPECT_TRUE(m.is_temporary("/job/step_100/.shard-0.pt.Ab3xYz")) << "rsync's, mkstemp's";
  EXPECT_TRUE(m.is_temporary("/job/out/tmp_save/weights.bin")) << "a staging directory";
  EXPECT_TRUE(m.is_temporary("/job/out/ckpt_temp_3f2a/variables.data")) << "TensorFlow's";
  EXPECT_TRUE(m.is_temporary("/tmp/tmpk2x9_abc")) << "Python's tempfile";
  EXPECT_FALSE(m.is_temporary("/job/export/model.safetensors"));
  EXPECT_FALSE(m.is_temporary("/job/step_100/.metadata")) << "too short for .NAME.XXXXXX";
  EXPECT_FALSE(m.is_temporary("/venv/site-packages/pkg/data.tmp")) << "excluded";
  EXPECT_FALSE(m.is_temporary("/job/temporary/model.bin")) << "a word is no glob";
  r.temporary_globs.clear();
  EXPECT_FALSE(CheckpointMatcher(r).is_temporary("/job/export/model.safetensors.tmp"));
}

TEST(CheckpointMatcherTest, ExtensionlessFilesOnlyUnderACheckpointDirectory) {
  CheckpointRules r;
  r.file_globs = {"*.pt"};
  r.dir_globs = {"ocdbt.process_*"};
  r.extensionless_files = true;
  CheckpointMatcher m(r);
  EXPECT_TRUE(m.is_checkpoint_file("/data/100/state/ocdbt.process_0/d/3f9a"));
  EXPECT_FALSE(m.is_checkpoint_file("/data/100/state/d/3f9a"));
  EXPECT_FALSE(m.is_checkpoint_file("/data/100/state/ocdbt.process_0/notes.txt"));

  // "Generic names anywhere" (an empty dir_globs) is for file_globs only:
  // extensionless files anywhere would be /etc/hosts.
  r.dir_globs.clear();
  CheckpointMatcher anywhere(r);
  EXPECT_TRUE(anywhere.is_checkpoint_file("/tmp/x.pt"));
  EXPECT_FALSE(anywhere.is_checkpoint_file("/etc/hosts"));

  r.dir_globs = {"ocdbt.process_*"};
  r.extensionless_files = false;
  CheckpointMatcher off(r);
  EXPECT_FALSE(off.is_checkpoint_file("/data/100/state/ocdbt.process_0/d/3f9a"));
}

TEST(CheckpointMatcherTest, DirGlobWithASlashIsAPathPrefix) {
  CheckpointRules r;
  r.file_globs = {"*.pt"};
  r.dir_globs = {"/data/run1", "/mnt/*/ckpt/"};
  r.extensionless_files = true;
  CheckpointMatcher m(r);
  EXPECT_TRUE(m.is_checkpoint_file("/data/run1/model.pt"));
  EXPECT_TRUE(m.is_checkpoint_file("/data/run1/100/state/d/3f9a"));
  EXPECT_FALSE(m.is_checkpoint_file("/data/run10/model.pt"));  // a prefix of the name only
  EXPECT_FALSE(m.is_checkpoint_file("/elsewhere/data/run1/model.pt"));
  EXPECT_TRUE(m.is_checkpoint_file("/mnt/nfs0/ckpt/a.pt"));
  EXPECT_TRUE(m.is_checkpoint_dir("/data/run1"));
  EXPECT_TRUE(m.is_checkpoint_dir("/data/run1/100"));
  EXPECT_FALSE(m.is_checkpoint_dir("/data"));
  // A name glob beside them still matches directories by name, not as a path.
  EXPECT_FALSE(m.is_checkpoint_file("/job/run1/model.pt"));

  r.dir_globs = {"/"};
  CheckpointMatcher root(r);
  EXPECT_TRUE(root.is_checkpoint_file("/x.pt"));
  EXPECT_TRUE(root.is_checkpoint_file("/a/b/x.pt"));
}

// name_globs and exclude_globs empty and extensionless_files off: the rule
// before names that say checkpoint, as an old config that wants it sets it.
TEST(CheckpointMatcherTest, TheOldRuleWhenTheNewKeysAreOff) {
  CheckpointRules r = Config::defaults().checkpoint;
  r.name_globs.clear();
  r.exclude_globs.clear();
  r.extensionless_files = false;
  CheckpointMatcher m(r);
  EXPECT_FALSE(m.is_checkpoint_file("/home/u/nanoGPT/out/ckpt.pt"));
  EXPECT_FALSE(m.is_checkpoint_file("/job/ckpt/latest"));
  EXPECT_TRUE(m.is_checkpoint_file("/nfs/job/checkpoint-3/shard-0.safetensors"));
}

}  // namespace
}  // namespace ckpt
