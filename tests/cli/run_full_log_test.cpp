// A job log that cannot be written whole (a full --log-dir): the job runs and
// keeps its exit code, the failure cause still comes from its output (kept in
// memory, the last 4 MiB), and the summary, the trace and the notification
// say that the log is incomplete. For any user, a file-size limit of 0
// (`prlimit --fsize=0`: every write to a regular file fails, EFBIG, and
// `run` ignores its own SIGXFSZ); a real full file system (a 64 KiB tmpfs)
// as root. (A device such as /dev/full is no log: ckptscope writes only
// regular files, issue 36.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <filesystem>

#include "tests/bpf/harness.h"
#include "tests/unit/userspace/notify/test_servers.h"

namespace ckpt::test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
namespace tu = ckpt::notify::testutil;

// 200 KB of progress (on stderr: stdout is the summary JSON), then a CUDA OOM: on a 64 KiB file
// system the cause is past what the log can hold.
const std::vector<std::string> kChattyOomJob = {
    "sh", "-c",
    "i=0; while [ $i -lt 2000 ]; do echo \"step $i | loss 2.1 | lr 0.1 | tokens/s 181234 ...\" "
    ">&2; "
    "i=$((i+1)); done; "
    "echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.' >&2; "
    "exit 3"};

// `ckptscope ARGS...` under a file-size limit of 0, its stdout and stderr
// through a pipe (which the limit does not touch) into what run() captures:
// RunResult.out has both, .code is ckptscope's.
RunResult run_with_full_disk(const std::vector<std::string>& args, const ScratchDir& dir) {
  std::vector<std::string> argv = {
      "bash", "-c", "set -o pipefail; prlimit --fsize=0 -- \"$@\" 2>&1 | cat", "bash", kCkptscope};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, dir);
}

bool has_failure(const Trace& t, const std::string& kind) {
  for (const auto& f : t.failures)
    if (f.kind == kind) return true;
  return false;
}

TEST(RunFullLog, ALogThatCannotTakeAByteStillGivesTheCauseAndSaysItIsIncomplete) {
  ScratchDir dir;
  const std::string log = dir / "job.log";
  auto r = run_with_full_disk({"run", "--no-trace", "--log", log, "--", kChattyOomJob[0],
                               kChattyOomJob[1], kChattyOomJob[2]},
                              dir);
  EXPECT_EQ(r.code, 3) << r.out;  // the job's, always: not 153, SIGXFSZ
  EXPECT_THAT(r.out, HasSubstr("job log " + log + ": cannot write it: File too large"));
  EXPECT_THAT(r.out, HasSubstr("the job log " + log + " is incomplete:"));
  // Not "unknown": the classifier read the output the log could not take.
  EXPECT_THAT(r.out, HasSubstr("failure: cuda_oom (rule cuda-oom)"));
  EXPECT_THAT(r.out, HasSubstr("unlogged output:"));
  EXPECT_THAT(r.out, HasSubstr(": torch.OutOfMemoryError: CUDA out of memory"));
}

class RunFullLogDir : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!is_root()) GTEST_SKIP() << "needs root to mount a small tmpfs";
    std::filesystem::create_directory(logs_);
    ASSERT_EQ(::mount("tmpfs", logs_.c_str(), "tmpfs", 0, "size=64k"), 0)
        << "root cannot mount a tmpfs: " << std::strerror(errno);
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount2(logs_.c_str(), MNT_DETACH);
  }
  ScratchDir dir_;
  std::string logs_ = dir_ / "logs";
  bool mounted_ = false;
};

TEST_F(RunFullLogDir, TheSummaryAndTheTraceSayTheLogIsIncompleteAndKeepTheCause) {
  std::vector<std::string> argv = {kCkptscope, "run",        "--quiet",     "--no-exporter",
                                   "--json",   "--trace",    dir_ / "t.db", "--log-dir",
                                   logs_,      "--job-name", "train",       "--"};
  argv.insert(argv.end(), kChattyOomJob.begin(), kChattyOomJob.end());
  auto r = run(argv, dir_);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("is incomplete:"));
  EXPECT_THAT(r.err, HasSubstr("(No space left on device)"));

  json summary = json::parse(r.out);
  ASSERT_TRUE(summary["job"]["log_incomplete"].is_string()) << r.out;
  EXPECT_THAT(summary["job"]["log_incomplete"].get<std::string>(),
              HasSubstr("No space left on device"));
  EXPECT_EQ(summary["job"]["failure"]["class"], "cuda_oom") << "not unknown";

  Trace t = read_trace_or_fail(dir_ / "t.db");
  EXPECT_EQ(t.job.exit_code, 3);
  ASSERT_TRUE(t.job.failure.has_value());
  EXPECT_EQ(t.job.failure->cls, "cuda_oom");
  ASSERT_FALSE(t.job.failure->evidence.empty());
  EXPECT_EQ(t.job.failure->evidence[0].source, "unlogged output");
  EXPECT_TRUE(has_failure(t, "job_log_incomplete"));
  // What the log did take is there: its header and the first steps.
  std::string log = slurp(t.job.log_path);
  EXPECT_THAT(log, HasSubstr("# ckptscope: ckptscope "));
  EXPECT_THAT(log, HasSubstr("step 0 | loss"));

  // The table, read back from the trace.
  auto table = run({kCkptscope, "summary", dir_ / "t.db"}, dir_);
  EXPECT_EQ(table.code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("  LOG INCOMPLETE: the job log " + t.job.log_path));
}

TEST(RunFullLogNotify, TheNotificationSaysTheLogIsIncomplete) {
  tu::bypass_proxies_for_loopback();
  ScratchDir dir;
  tu::ServerProcess hook;
  ASSERT_EQ(hook.start("webhook_server.py", {"--out-dir", dir / "hook"}, dir / ""), "");
  const std::string log = dir / "job.log";
  std::vector<std::string> argv = {
      "run", "--no-trace", "--log",
      log,   "--notify",   "http://127.0.0.1:" + std::to_string(hook.port()) + "/hooks/ckpt",
      "--"};
  argv.insert(argv.end(), kChattyOomJob.begin(), kChattyOomJob.end());
  auto r = run_with_full_disk(argv, dir);
  EXPECT_EQ(r.code, 3) << r.out;
  json body = json::parse(tu::read_file(dir / "hook/post-1.json"));
  EXPECT_EQ(body["failure"]["class"], "cuda_oom");
  ASSERT_TRUE(body["log"]["incomplete"].is_string()) << body.dump();
  EXPECT_THAT(body["log"]["incomplete"].get<std::string>(),
              HasSubstr("the job log " + log + " is incomplete"));
  EXPECT_THAT(body["text"].get<std::string>(), HasSubstr("Log:       INCOMPLETE: "));
}

}  // namespace
}  // namespace ckpt::test
