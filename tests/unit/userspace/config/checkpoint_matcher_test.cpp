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

}  // namespace
}  // namespace ckpt
