// Issue 36, item 1: what ckptscope writes as root on a shared node. Every
// output path refuses a final symbolic link and anything but a regular file
// (or a new name), with an error naming the path and what is there; a
// device or directory given is never replaced, a file a link points to never
// written; run's refusals are bad flags (exit 2, the job not started).
// Run as the user CI runs (root): the reproducers of the issue, as they were.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::string kTrace = std::string(CKPTSCOPE_SOURCE_DIR) + "/tests/data/report/node-a.db";

struct Device {
  std::string path;
  dev_t rdev = 0;
};

Device device(const char* path) {
  struct stat st {};
  EXPECT_EQ(stat(path, &st), 0) << path;
  return {path, st.st_rdev};
}

void expect_device_intact(const Device& d) {
  struct stat st {};
  ASSERT_EQ(stat(d.path.c_str(), &st), 0) << d.path << " is gone";
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << d.path << " is no longer a device";
  EXPECT_EQ(st.st_rdev, d.rdev) << d.path;
}

TEST(RootSafeOutputs, RunRefusesADeviceADirectoryOrALinkBeforeTheJob) {
  ScratchDir dir;
  const Device null = device("/dev/null");
  const std::string ran = dir / "ran";
  auto r = run({kCkptscope, "run", "-q", "--trace", "/dev/null", "--", "touch", ran}, dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--trace /dev/null: a character device, not a regular file"));
  expect_device_intact(null);
  EXPECT_FALSE(fs::exists(ran)) << "the job ran";

  fs::create_directory(dir / "emptydir");
  r = run({kCkptscope, "run", "-q", "--trace", dir / "emptydir", "--", "touch", ran}, dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("emptydir: a directory"));
  EXPECT_TRUE(fs::is_directory(dir / "emptydir"));

  // A root-only file behind a link: never truncated, never written.
  const std::string victim = dir / "victim.txt";
  std::ofstream(victim) << "secret\n";
  chmod(victim.c_str(), 0600);
  fs::create_symlink(victim, dir / "l.log");
  for (const char* flag : {"--log", "--bpf-stats"}) {
    r = run({kCkptscope, "run", "-q", "--no-trace", flag, dir / "l.log", "--", "touch", ran}, dir);
    EXPECT_EQ(r.code, 2) << flag << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(std::string(flag) + " " + (dir / "l.log") + ": a symbolic link"));
    EXPECT_EQ(slurp(victim), "secret\n") << flag;
    EXPECT_FALSE(fs::exists(ran)) << flag;
  }
  r = run({kCkptscope, "run", "-q", "--trace", dir / "l.log", "--", "touch", ran}, dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(slurp(victim), "secret\n");
}

TEST(RootSafeOutputs, ReportAndExportNeverReplaceADeviceOrWriteThroughALink) {
  ScratchDir dir;
  const Device full = device("/dev/full");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"report", kTrace, "-o", "/dev/full"},
           {"export", kTrace, "--format", "perfetto", "-o", "/dev/full"}}) {
    std::vector<std::string> argv = {kCkptscope};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, dir);
    EXPECT_EQ(r.code, 1) << args[0] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("/dev/full: a character device, not a regular file")) << args[0];
    expect_device_intact(full);
  }
  const std::string victim = dir / "victim.txt";
  std::ofstream(victim) << "secret\n";
  fs::create_symlink(victim, dir / "r.html");
  auto r = run({kCkptscope, "report", kTrace, "-o", dir / "r.html"}, dir);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("a symbolic link"));
  EXPECT_EQ(slurp(victim), "secret\n");
  // A link planted at the old predictable temporary name is not written either.
  fs::create_symlink(victim, dir / "ok.html.tmp");
  r = run({kCkptscope, "report", kTrace, "-o", dir / "ok.html"}, dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(victim), "secret\n");
  EXPECT_NE(slurp(dir / "ok.html").find("<html"), std::string::npos);
  // Standard output stays possible.
  r = run({kCkptscope, "report", kTrace, "--format", "md", "-o", "-"}, dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
}

}  // namespace
}  // namespace ckpt::test
