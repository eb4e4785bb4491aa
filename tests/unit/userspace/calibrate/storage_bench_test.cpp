#include "calibrate/storage_bench.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

size_t entries_in(const fs::path& dir) {
  size_t n = 0;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it)
    ++n;
  return n;
}

StorageBenchOptions small(const test::ScratchDir& dir) {
  StorageBenchOptions o;
  o.dir = dir.path().string();
  o.bytes = 8ull << 20;
  o.streams = 2;
  o.block_bytes = 1ull << 20;
  o.seconds = 20;
  return o;
}

TEST(StorageBench, MeasuresBothDirectionsAndLeavesNothing) {
  test::ScratchDir dir;
  auto r = measure_storage(small(dir));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->bytes_written, 8ull << 20);
  EXPECT_EQ(r->bytes_read, 8ull << 20);
  EXPECT_GT(r->write_Bps, 0);
  EXPECT_GT(r->read_Bps, 0);
  EXPECT_NEAR(r->write_Bps * r->write_seconds, 8 << 20, 1);
  EXPECT_EQ(r->streams, 2u);
  EXPECT_EQ(r->direct, r->io == "O_DIRECT");
  if (!r->direct) {
    EXPECT_THAT(r->io, HasSubstr("buffered + fdatasync (")) << r->io;
  }
  EXPECT_EQ(entries_in(dir.path()), 0u);
}

TEST(StorageBench, RefusesADirectoryWithLessThanTwiceTheBytesFree) {
  test::ScratchDir dir;
  auto o = small(dir);
  o.free_bytes = [](const std::string&) -> Expected<uint64_t> { return (16ull << 20) - 1; };
  auto r = measure_storage(o);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr(dir.path().string() + " has 16.0 MiB free"));
  EXPECT_THAT(r.error().message, HasSubstr("needs 16.0 MiB"));
  EXPECT_EQ(entries_in(dir.path()), 0u);  // nothing was written
  o.free_bytes = [](const std::string&) -> Expected<uint64_t> { return 16ull << 20; };
  EXPECT_TRUE(measure_storage(o));
}

TEST(StorageBench, BadOptionsAndDirectoriesAreNamed) {
  test::ScratchDir dir;
  auto o = small(dir);
  o.block_bytes = 1000;
  EXPECT_THAT(measure_storage(o).error().message, HasSubstr("multiple of 4096"));
  o = small(dir);
  o.bytes = 1ull << 20;  // less than a block for each of 2 streams
  EXPECT_THAT(measure_storage(o).error().message, HasSubstr("less than one"));
  o = small(dir);
  o.dir = dir / "missing";
  EXPECT_THAT(measure_storage(o).error().message, HasSubstr(dir / "missing"));
}

TEST(StorageBench, StoppedItRemovesItsFiles) {
  test::ScratchDir dir;
  std::atomic<bool> stop{true};
  auto o = small(dir);
  o.stop = &stop;
  auto r = measure_storage(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "interrupted");
  EXPECT_EQ(entries_in(dir.path()), 0u);
}

TEST(StorageBench, AFailingWriteIsNamedAndItsFilesStillGo) {
  test::ScratchDir dir;
  // A file-size limit makes the writes past 2 MiB fail (EFBIG): a real
  // failure in the middle of the run.
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limit = old;
  limit.rlim_cur = 2ull << 20;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  auto r = measure_storage(small(dir));
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("write "));
  EXPECT_THAT(r.error().message, HasSubstr("stream-"));
  EXPECT_THAT(r.error().message, HasSubstr("at offset 2097152"));
  EXPECT_EQ(entries_in(dir.path()), 0u);
}

TEST(StorageBench, TheTimeLimitCutsAPhaseShortAndSaysSo) {
  test::ScratchDir dir;
  auto o = small(dir);
  o.bytes = 64ull << 30;  // far more than 0.2 s can write here
  o.block_bytes = 64 << 10;
  o.seconds = 0.2;
  o.free_bytes = [](const std::string&) -> Expected<uint64_t> { return 1ull << 40; };
  const auto t0 = std::chrono::steady_clock::now();
  auto r = measure_storage(o);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_LT(r->bytes_written, o.bytes);
  EXPECT_GT(r->bytes_written, 0u);
  EXPECT_LT(took, 5.0);  // the writes' final fdatasync is inside the bound too
  ASSERT_FALSE(r->notes.empty());
  EXPECT_THAT(r->notes[0], HasSubstr("writes stopped at the time limit"));
  EXPECT_EQ(entries_in(dir.path()), 0u);
}

TEST(StorageBench, ADirectoryLeftByAKilledRunOnThisHostIsRemoved) {
  test::ScratchDir dir;
  // A process id that is gone: a child that has exited and been reaped.
  pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string h = host;
  for (char& c : h)
    if (c == '/' || c == '-') c = '_';
  const fs::path stale = dir.path() / (kBenchDirPrefix + h + "-" + std::to_string(child) + "-abc");
  const fs::path other_host =
      dir.path() / (std::string(kBenchDirPrefix) + "elsewhere-" + std::to_string(child) + "-abc");
  fs::create_directory(stale);
  fs::create_directory(other_host);  // maybe live on another node sharing the mount
  auto r = measure_storage(small(dir));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(other_host));
  ASSERT_FALSE(r->notes.empty());
  EXPECT_THAT(r->notes[0], HasSubstr("left by a calibration that was killed"));
}

}  // namespace
}  // namespace ckpt
