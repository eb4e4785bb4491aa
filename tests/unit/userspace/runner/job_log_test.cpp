#include "runner/job_log.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

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

// A full disk: /dev/full fails every write with ENOSPC. The log is still a
// log (the job runs, teed), it says it is incomplete, and what it could not
// take is kept for the failure classifier.
TEST(JobLog, AFullDiskLeavesAnIncompleteLogThatKeepsTheJobsOutput) {
  auto log = JobLog::create("/dev/full", {"job train"});
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_TRUE(log->incomplete());
  log->append("step 1\ntorch.OutOfMemoryError: CUDA out of memory.\n");
  log->note("the job ended: exit code 1");
  EXPECT_EQ(log->unlogged_output(), "step 1\ntorch.OutOfMemoryError: CUDA out of memory.\n")
      << "the job's bytes, not ours";
  EXPECT_EQ(log->write_errors(), 3u);
  EXPECT_EQ(log->unlogged_dropped(), 0u);
  const std::string reason = log->incomplete_reason();
  EXPECT_NE(reason.find("the job log /dev/full is incomplete: 3 writes failed (No space left on "
                        "device)"),
            std::string::npos)
      << reason;
  EXPECT_NE(reason.find(std::to_string(log->bytes_lost()) + " bytes are not in it"),
            std::string::npos)
      << reason;
}

TEST(JobLog, TheUnloggedWindowIsBoundedAndCountsWhatItDrops) {
  auto log = JobLog::create("/dev/full", {});
  ASSERT_TRUE(log);
  EXPECT_FALSE(log->incomplete()) << "nothing written, nothing failed";
  const std::string mib(size_t{1} << 20, 'x');
  for (int i = 0; i < 5; ++i) log->append(mib);
  log->append("RuntimeError: the end\n");
  const std::string kept = log->unlogged_output();
  EXPECT_EQ(kept.size(), kUnloggedWindowBytes);
  EXPECT_EQ(kept.substr(kept.size() - 22), "RuntimeError: the end\n");
  EXPECT_EQ(log->unlogged_dropped(), 5 * mib.size() + 22 - kUnloggedWindowBytes);
}

// A log that fills part way (here a file-size limit, EFBIG): what was written
// stays, the rest is kept in memory. In a child, so the limit is its alone.
TEST(JobLog, ALogThatFillsPartWayKeepsTheRestInMemory) {
  test::ScratchDir dir;
  const std::string path = (dir.path() / "job.log").string();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{64, 64};
    setrlimit(RLIMIT_FSIZE, &limit);
    auto log = JobLog::create(path, {"h"});  // 15 bytes
    if (!log) _exit(10);
    log->append(std::string(40, 'a') + "\n");
    if (log->incomplete()) _exit(11);
    const std::string tail = "Traceback (most recent call last):\nRuntimeError: CUDA error\n";
    log->append(tail);
    if (!log->incomplete()) _exit(12);
    const std::string kept = log->unlogged_output();
    // The write that crossed the limit wrote what fit; the rest is kept.
    if (kept.find("RuntimeError: CUDA error\n") == std::string::npos) _exit(13);
    if (kept.size() + 64 != 15 + 41 + tail.size()) _exit(14);
    if (log->incomplete_reason().find("File too large") == std::string::npos) _exit(15);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(fs::file_size(path), 64u);
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

TEST(OutputTee, AJobsOutputThatTheLogCannotTakeIsKeptFromTheTee) {
  auto log = JobLog::create("/dev/full", {"h"});
  ASSERT_TRUE(log);
  auto tee = OutputTee::create(*log);
  ASSERT_TRUE(tee);
  auto child = HeldChild::spawn(
      {"sh", "-c", "printf 'out1\\n'; printf 'RuntimeError: NCCL error\\n' >&2; exit 1"}, {},
      ChildStdio{tee->child_stdout(), tee->child_stderr()});
  ASSERT_TRUE(child);
  tee->start();
  ASSERT_TRUE(child->release());
  EXPECT_EQ(child->wait().code, 1);
  EXPECT_TRUE(tee->finish(std::chrono::seconds(5)));
  const std::string kept = log->unlogged_output();
  EXPECT_NE(kept.find("out1\n"), std::string::npos) << kept;
  EXPECT_NE(kept.find("RuntimeError: NCCL error\n"), std::string::npos) << kept;
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
