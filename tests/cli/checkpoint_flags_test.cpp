// --checkpoint-glob and --checkpoint-dir on run and attach (issue 19): good
// values start the job, bad ones are exit 2 before it starts, naming the flag.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(CheckpointFlags, GoodValuesStartTheJob) {
  ScratchDir dir;
  // --no-trace: the wrapper alone, but the config (and these flags) are
  // still checked first.
  auto r = run({kCkptscope, "run", "--no-trace", "--log-dir", dir / "logs", "--checkpoint-glob",
                "model_*.npz", "--checkpoint-glob", "*.orbax", "--checkpoint-dir", "out",
                "--checkpoint-dir", "./results", "--", "touch", dir / "ran"},
               dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "ran"));
}

TEST(CheckpointFlags, BadValuesAreExit2BeforeTheJob) {
  ScratchDir dir;
  std::ofstream(dir / "anywhere.json") << R"({"checkpoint": {"dir_globs": []}})";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"run", "--no-trace", "--checkpoint-glob", "out/ckpt.pt", "--", "touch", dir / "ran"},
       "--checkpoint-glob out/ckpt.pt: has a '/'"},
      {{"run", "--no-trace", "--config", dir / "anywhere.json", "--checkpoint-dir", "/data", "--",
        "touch", dir / "ran"},
       "checkpoint.dir_globs is empty"},
      {{"attach", "--pid", "1", "--checkpoint-glob", "a/b"}, "--checkpoint-glob a/b: has a '/'"},
      // A cgroup's processes have no one working directory to take it from.
      {{"attach", "--cgroup", dir.path().string(), "--checkpoint-dir", "./out"},
       "--checkpoint-dir ./out: a relative path, and --cgroup " + dir.path().string() +
           "'s processes have no one working directory; give it as an absolute path"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {kCkptscope};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto r = run(argv, dir);
    EXPECT_EQ(r.code, 2) << join(argv) << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << join(argv);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "ran"));
}

TEST(CheckpointFlags, HelpSaysWhatEachDoes) {
  ScratchDir dir;
  for (const char* cmd : {"run", "attach"}) {
    auto r = run({kCkptscope, cmd, "--help"}, dir);
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_THAT(r.out, HasSubstr("--checkpoint-glob")) << cmd;
    EXPECT_THAT(r.out, HasSubstr("own name matches")) << cmd;
    EXPECT_THAT(r.out, HasSubstr("--checkpoint-dir")) << cmd;
    EXPECT_THAT(r.out, HasSubstr("generic names")) << cmd;
  }
  // The demo writes checkpoints of its own naming.
  EXPECT_THAT(run({kCkptscope, "demo", "--help"}, dir).out, Not(HasSubstr("--checkpoint-glob")));
}

}  // namespace
}  // namespace ckpt::test
