// --probe-mode on run, attach, demo and exporter (issue 18): the three
// modes are accepted, anything else is exit 2 before the job starts, with a
// sentence naming the flag, the value and the choices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

using ::testing::HasSubstr;

constexpr const char* kRefusal =
    "--probe-mode: 'fentry' is not a probe mode; choose auto, syscall or file_layer";

TEST(ProbeModeFlag, ABadValueIsExit2NamingTheFlagAndTheChoices) {
  ScratchDir dir;
  const std::vector<std::vector<std::string>> commands = {
      {"run", "--no-trace", "--probe-mode", "fentry", "--", "touch", dir / "ran"},
      {"attach", "--pid", "1", "--probe-mode", "fentry"},
      {"demo", "--probe-mode", "fentry"},
      {"exporter", "--probe-mode", "fentry"},
  };
  for (const auto& args : commands) {
    std::vector<std::string> argv = {kCkptscope};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, dir);
    EXPECT_EQ(r.code, 2) << join(argv) << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(kRefusal)) << join(argv);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "ran"));
}

TEST(ProbeModeFlag, TheThreeModesAreAcceptedByRun) {
  ScratchDir dir;
  for (const char* mode : {"auto", "syscall", "file_layer"}) {
    const std::string marker = dir / (std::string("ran-") + mode);
    // --no-trace: the wrapper alone (no probes, so no kernel check either).
    auto r = run({kCkptscope, "run", "--no-trace", "--log-dir", dir / "logs", "--probe-mode", mode,
                  "--", "touch", marker},
                 dir);
    EXPECT_EQ(r.code, 0) << mode << ": " << r.err;
    EXPECT_TRUE(std::filesystem::exists(marker)) << mode;
  }
}

TEST(ProbeModeFlag, HelpListsTheModes) {
  ScratchDir dir;
  for (const char* cmd : {"run", "attach", "exporter"}) {
    auto r = run({kCkptscope, cmd, "--help"}, dir);
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_THAT(r.out, HasSubstr("--probe-mode")) << cmd;
    EXPECT_THAT(r.out, HasSubstr("auto|syscall|file_layer")) << cmd;
  }
}

}  // namespace
}  // namespace ckpt::test
