#include "runner/job_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runner/child_process.h"
#include "runner/output_tee.h"
#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(JobLog, CreatesItsDirectoryAndWritesTheHeaderAtOnce) {
  test::ScratchDir dir;
  std::string path = (dir.path() / "a/b/job.log").string();
  auto log = JobLog::create(path, {"job train", "command: python train.py"});
  ASSERT_TRUE(log) << log.error().message;
  // Readable by anyone right away: no user-space buffer in between.
  EXPECT_EQ(slurp(path), "# ckptscope: job train\n# ckptscope: command: python train.py\n");
  log->append("partial line without newline");
  EXPECT_EQ(slurp(path).substr(slurp(path).size() - 28), "partial line without newline");
}

TEST(JobLog, OurLinesStayOneLineWhateverTheyQuote) {
  test::ScratchDir dir;
  std::string path = (dir.path() / "job.log").string();
  auto log = JobLog::create(path, {"command: python -c 'import x\nx.run()'"});
  ASSERT_TRUE(log);
  EXPECT_EQ(slurp(path), "# ckptscope: command: python -c 'import x\\nx.run()'\n");
}

TEST(JobLog, AnUncreatableLogIsAClearError) {
  test::ScratchDir dir;
  std::ofstream(dir.path() / "file") << "x";
  auto log = JobLog::create((dir.path() / "file/sub/job.log").string(), {"h"});
  ASSERT_FALSE(log);
  EXPECT_NE(log.error().message.find("cannot create its directory"), std::string::npos)
      << log.error().message;
}

TEST(JobLog, DefaultPathNamesTheJobAndItsStart) {
  // 2026-11-30 14:00:00 UTC in the local zone; only the shape is fixed.
  std::string p = default_log_path("/var/log/ckpt", "train", 1'796'220'000ull * 1'000'000'000, 42);
  EXPECT_EQ(p.rfind("/var/log/ckpt/train-2026", 0), 0u) << p;
  EXPECT_EQ(p.substr(p.size() - 7), "-42.log");
  EXPECT_EQ(default_log_path("", "train", 0, 7).find('/'), std::string::npos);
}

TEST(JobLog, FileStemsAreSafe) {
  EXPECT_EQ(log_file_stem("train.py"), "train.py");
  EXPECT_EQ(log_file_stem("my job/../x"), "my_job_.._x");
  EXPECT_EQ(log_file_stem(""), "job");
  EXPECT_EQ(log_file_stem(".."), "job");
  EXPECT_EQ(log_file_stem(std::string(300, 'a')).size(), 100u);
}

TEST(OutputTee, CopiesBothStreamsIntoTheLogUntilEof) {
  test::ScratchDir dir;
  std::string path = (dir.path() / "job.log").string();
  auto log = JobLog::create(path, {"h"});
  ASSERT_TRUE(log);
  auto tee = OutputTee::create(*log);
  ASSERT_TRUE(tee) << tee.error().message;
  // Our own stdout/stderr get the copies too; in a test they go to ctest's log.
  auto child = HeldChild::spawn({"sh", "-c", "printf 'out1\\n'; printf 'err1\\n' >&2"}, {},
                                ChildStdio{tee->child_stdout(), tee->child_stderr()});
  ASSERT_TRUE(child);
  tee->start();
  ASSERT_TRUE(child->release());
  EXPECT_EQ(child->wait().code, 0);
  EXPECT_TRUE(tee->finish(std::chrono::seconds(5)));  // EOF, not the grace period
  std::string text = slurp(path);
  EXPECT_NE(text.find("out1\n"), std::string::npos);
  EXPECT_NE(text.find("err1\n"), std::string::npos);
  EXPECT_EQ(tee->bytes(), 10u);
}

TEST(OutputTee, StopsAfterTheGraceWhenALeftoverProcessHoldsThePipe) {
  test::ScratchDir dir;
  auto log = JobLog::create((dir.path() / "job.log").string(), {"h"});
  ASSERT_TRUE(log);
  auto tee = OutputTee::create(*log);
  ASSERT_TRUE(tee);
  auto child = HeldChild::spawn({"sh", "-c", "sleep 5 & echo started"}, {},
                                ChildStdio{tee->child_stdout(), tee->child_stderr()});
  ASSERT_TRUE(child);
  tee->start();
  ASSERT_TRUE(child->release());
  EXPECT_EQ(child->wait().code, 0);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(tee->finish(std::chrono::milliseconds(200)));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_NE(slurp(log->path()).find("started\n"), std::string::npos);
}

}  // namespace
}  // namespace ckpt
