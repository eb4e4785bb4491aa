#include "runner/job_log.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <functional>
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

// Runs `body` in a child whose regular-file writes all fail (RLIMIT_FSIZE 0:
// EFBIG, SIGXFSZ ignored), as a full disk's do; its exit status, 0 when
// every check in it held, else the number of the one that failed. The job
// log refuses /dev/full (a device: files/output_file.h), which these tests
// used before.
int with_full_disk(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{0, 0};
    setrlimit(RLIMIT_FSIZE, &limit);
    _exit(body());
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -2;
  return WEXITSTATUS(status);
}

// A full disk: every write fails (EFBIG here). The log is still a log (the
// job runs, teed), it says it is incomplete, and what it could not take is
// kept for the failure classifier.
TEST(JobLog, AFullDiskLeavesAnIncompleteLogThatKeepsTheJobsOutput) {
  test::ScratchDir dir;
  const std::string path = (dir.path() / "job.log").string();
  EXPECT_EQ(
      with_full_disk([&] {
        auto log = JobLog::create(path, {"job train"});
        if (!log) return 10;
        if (!log->incomplete()) return 11;
        log->append("step 1\ntorch.OutOfMemoryError: CUDA out of memory.\n");
        log->note("the job ended: exit code 1");
        // The job's bytes, not ours.
        if (log->unlogged_output() != "step 1\ntorch.OutOfMemoryError: CUDA out of memory.\n")
          return 12;
        if (log->write_errors() != 3) return 13;
        if (log->unlogged_dropped() != 0) return 14;
        const std::string reason = log->incomplete_reason();
        if (reason.find("the job log " + path +
                        " is incomplete: 3 writes failed (File too large)") == std::string::npos)
          return 15;
        if (reason.find(std::to_string(log->bytes_lost()) + " bytes are not in it") ==
            std::string::npos)
          return 16;
        return 0;
      }),
      0);
}

TEST(JobLog, TheUnloggedWindowIsBoundedAndCountsWhatItDrops) {
  test::ScratchDir dir;
  const std::string path = (dir.path() / "job.log").string();
  EXPECT_EQ(with_full_disk([&] {
              auto log = JobLog::create(path, {});
              if (!log) return 10;
              if (log->incomplete()) return 11;  // nothing written, nothing failed
              const std::string mib(size_t{1} << 20, 'x');
              for (int i = 0; i < 5; ++i) log->append(mib);
              log->append("RuntimeError: the end\n");
              const std::string kept = log->unlogged_output();
              if (kept.size() != kUnloggedWindowBytes) return 12;
              if (kept.substr(kept.size() - 22) != "RuntimeError: the end\n") return 13;
              if (log->unlogged_dropped() != 5 * mib.size() + 22 - kUnloggedWindowBytes) return 14;
              return 0;
            }),
            0);
}

// Never through a symbolic link or onto a device (issue 36); a name ckptscope
// picked is created new, never an existing file.
TEST(JobLog, NeverThroughALinkOntoADeviceOrOverAPlantedName) {
  test::ScratchDir dir;
  const std::string victim = (dir.path() / "victim.txt").string();
  std::ofstream(victim) << "secret\n";
  fs::create_symlink(victim, dir.path() / "l.log");
  auto linked = JobLog::create((dir.path() / "l.log").string(), {"h"});
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error().message.find("a symbolic link"), std::string::npos)
      << linked.error().message;
  EXPECT_EQ(slurp(victim), "secret\n");
  auto device = JobLog::create("/dev/full", {"h"});
  ASSERT_FALSE(device);
  EXPECT_NE(device.error().message.find("a character device"), std::string::npos);
  const std::string planted = (dir.path() / "train-20261204-120000-42.log").string();
  std::ofstream(planted) << "planted\n";
  auto picked = JobLog::create(planted, {"h"}, JobLogName::kPicked);
  ASSERT_FALSE(picked);
  EXPECT_NE(picked.error().message.find("already exists"), std::string::npos);
  EXPECT_EQ(slurp(planted), "planted\n");
  auto given = JobLog::create(planted, {"h"});  // --log FILE: the user's own file
  ASSERT_TRUE(given) << given.error().message;
  EXPECT_EQ(slurp(planted), "# ckptscope: h\n");
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
  test::ScratchDir dir;
  const std::string path = (dir.path() / "job.log").string();
  EXPECT_EQ(
      with_full_disk([&] {
        auto log = JobLog::create(path, {"h"});
        if (!log) return 10;
        auto tee = OutputTee::create(*log);
        if (!tee) return 11;
        auto child = HeldChild::spawn(
            {"sh", "-c", "printf 'out1\\n'; printf 'RuntimeError: NCCL error\\n' >&2; exit 1"}, {},
            ChildStdio{tee->child_stdout(), tee->child_stderr()});
        if (!child) return 12;
        tee->start();
        if (!child->release()) return 13;
        if (child->wait().code != 1) return 14;
        if (!tee->finish(std::chrono::seconds(5))) return 15;
        const std::string kept = log->unlogged_output();
        if (kept.find("out1\n") == std::string::npos) return 16;
        if (kept.find("RuntimeError: NCCL error\n") == std::string::npos) return 17;
        return 0;
      }),
      0);
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
