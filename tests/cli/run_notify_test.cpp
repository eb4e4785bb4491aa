// `run --notify` end to end: the real wrapper, the real ckptscope-notify,
// real SMTP and webhook servers on loopback. Whatever the notifier meets, the
// exit code is the job's, and a failure to notify is on stderr and in the log.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <fstream>

#include "tests/bpf/harness.h"
#include "tests/unit/userspace/notify/test_servers.h"

namespace ckpt::test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
namespace tu = ckpt::notify::testutil;

// A job that fails with a CUDA OOM (exit 3) after printing a few lines.
const std::vector<std::string> kFailingJob = {
    "sh", "-c",
    "echo 'step 1 | loss 2.1'; "
    "echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.' >&2; "
    "exit 3"};

class RunNotify : public ::testing::Test {
 protected:
  void SetUp() override {
    tu::bypass_proxies_for_loopback();
    ASSERT_TRUE(tu::python_has_aiosmtpd())
        << "/usr/bin/python3 lacks aiosmtpd: install Debian's python3-aiosmtpd "
           "(scripts/install-deps.sh does)";
  }

  // `ckptscope run --no-trace --log LOG [extra...] -- job`.
  RunResult run_job(const std::vector<std::string>& extra,
                    const std::vector<std::string>& job = kFailingJob,
                    const std::string& env_prefix = "") {
    std::vector<std::string> argv = {kCkptscope, "run", "--no-trace", "--log", log_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("--");
    argv.insert(argv.end(), job.begin(), job.end());
    return run(argv, dir_, env_prefix);
  }

  std::string config(const json& notify) {
    std::string path = dir_ / "config.json";
    std::ofstream(path) << json{{"notify", notify}}.dump();
    return path;
  }

  int start_smtp(std::vector<std::string> args = {}) {
    args.insert(args.end(), {"--out-dir", dir_ / "out"});
    std::string err = smtp_.start("smtp_server.py", args, dir_ / "");
    EXPECT_EQ(err, "");
    return err.empty() ? smtp_.port() : 0;
  }

  ScratchDir dir_;
  std::string log_ = dir_ / "job.log";
  tu::ServerProcess smtp_;
};

TEST_F(RunNotify, MailCarriesTheCauseTheLogAndWhatDidNotFit) {
  int port = start_smtp();
  ASSERT_NE(port, 0);
  tu::write_file(dir_ / "big.bin", std::string(100'000, 'x'));
  // The relay from the environment; a local relay without TLS.
  std::string cfg = config({{"tls", "none"}, {"from", "ckpt@example.org"}});
  auto r =
      run_job({"--config", cfg, "--notify", "mailto:ops@example.com", "--attach", dir_ / "big.bin",
               "--attach-budget", "16K", "--job-name", "train"},
              kFailingJob, "CKPTSCOPE_SMTP_URL=smtp://127.0.0.1:" + std::to_string(port) + " ");
  EXPECT_EQ(r.code, 3) << r.err;
  json m = json::parse(tu::read_file(dir_ / "out/msg-1.json"));
  EXPECT_EQ(m["rcpt_tos"], json({"ops@example.com"}));
  EXPECT_THAT(m["headers"]["Subject"].get<std::string>(),
              HasSubstr("[ckptscope] FAILED (cuda_oom) train on "));
  std::string text = m["text"].get<std::string>();
  EXPECT_THAT(text, HasSubstr("cuda_oom"));
  EXPECT_THAT(text, HasSubstr("torch.OutOfMemoryError: CUDA out of memory"));
  EXPECT_THAT(text, HasSubstr("exit code 3"));
  EXPECT_THAT(text, HasSubstr("big.bin (97.7 KiB): over budget"));  // listed, not dropped
  ASSERT_GE(m["attachments"].size(), 1u);
  EXPECT_EQ(m["attachments"][0]["filename"], "job.log");
  std::string attached = tu::read_file(m["attachments"][0]["file"].get<std::string>());
  EXPECT_THAT(attached, HasSubstr("# ckptscope: failure cause: cuda_oom (rule cuda-oom)"));
  EXPECT_THAT(tu::read_file(log_), HasSubstr("# ckptscope: notified mail to ops@example.com"));
  EXPECT_EQ(m["headers"]["From"], "ckpt@example.org");
  EXPECT_EQ(m["headers"]["To"], "ops@example.com");
  EXPECT_EQ(m["date_parses"], true);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  EXPECT_THAT(text, HasSubstr(host));
  EXPECT_THAT(text, HasSubstr("step 1 | loss 2.1"));                              // the log tail
  EXPECT_THAT(m["headers"]["Subject"].get<std::string>(), HasSubstr(" after "));  // duration
}

TEST_F(RunNotify, UnresolvableRelayLeavesTheExitCode) {
  std::string cfg = config({{"tls", "none"}, {"timeout_s", 5}});
  // .invalid never resolves (RFC 6761).
  auto r = run_job({"--config", cfg, "--smtp", "smtp://relay.ckptscope.invalid:25", "--notify",
                    "mailto:ops@example.com"});
  EXPECT_EQ(r.code, 3);
  EXPECT_THAT(r.err, HasSubstr("could not notify"));
  EXPECT_THAT(tu::read_file(log_), HasSubstr("# ckptscope: could not notify"));
}

// Traced (root): the message carries the checkpoint I/O summary of a
// workload whose answer is known (one checkpoint of 2 x 1 MiB).
TEST_F(RunNotify, TracedRunMailsTheCheckpointSummary) {
  if (!is_root()) GTEST_SKIP() << "needs root to load eBPF programs";
  int port = start_smtp();
  ASSERT_NE(port, 0);
  std::string cfg = config({{"tls", "none"}});
  std::vector<std::string> argv = {kCkptscope,
                                   "run",
                                   "--trace",
                                   dir_ / "t.db",
                                   "--quiet",
                                   "--log",
                                   log_,
                                   "--config",
                                   cfg,
                                   "--smtp",
                                   "smtp://127.0.0.1:" + std::to_string(port),
                                   "--notify",
                                   "mailto:ops@example.com",
                                   "--"};
  for (auto& a : small_checkpoint_job(dir_)) argv.push_back(a);
  auto r = run(argv, dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  json m = json::parse(tu::read_file(dir_ / "out/msg-1.json"));
  EXPECT_THAT(m["headers"]["Subject"].get<std::string>(), HasSubstr("[ckptscope] OK "));
  std::string text = m["text"].get<std::string>();
  EXPECT_THAT(text, HasSubstr("checkpoint"));
  EXPECT_THAT(text, HasSubstr("host_io"));
  bool report = false;
  for (const auto& a : m["attachments"])
    if (a["filename"].get<std::string>().ends_with(".summary.json")) {
      auto summary = json::parse(tu::read_file(a["file"].get<std::string>()));
      ASSERT_FALSE(summary["checkpoints"].empty());
      EXPECT_EQ(summary["checkpoints"][0]["bytes"], 2 * 1024 * 1024);
      report = true;
    }
  EXPECT_TRUE(report) << "the summary report is attached";
}

TEST_F(RunNotify, RefusedRelayLeavesTheExitCodeAndIsReported) {
  std::string cfg = config({{"tls", "none"}, {"timeout_s", 5}});
  auto t0 = std::chrono::steady_clock::now();
  // Port 1 on loopback: nothing listens, the connection is refused.
  auto r = run_job(
      {"--config", cfg, "--smtp", "smtp://127.0.0.1:1", "--notify", "mailto:ops@example.com"});
  EXPECT_EQ(r.code, 3);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_THAT(r.err, HasSubstr("could not notify"));
  EXPECT_THAT(tu::read_file(log_), HasSubstr("# ckptscope: could not notify"));
}

TEST_F(RunNotify, HangingRelayIsBoundedByTheTimeout) {
  ASSERT_EQ(smtp_.start("smtp_server.py", {"--mode", "hang"}, dir_ / ""), "");
  std::string cfg = config({{"tls", "none"}, {"timeout_s", 2}});
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_job({"--config", cfg, "--smtp", "smtp://127.0.0.1:" + std::to_string(smtp_.port()),
                    "--notify", "mailto:ops@example.com"},
                   {"sh", "-c", "kill -KILL $$"});
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.code, 128 + 9);
  EXPECT_GE(s, 1.5);
  EXPECT_LT(s, 8.0);
  EXPECT_THAT(r.err, HasSubstr("could not notify"));
  EXPECT_THAT(tu::read_file(log_), HasSubstr("# ckptscope: could not notify"));
}

TEST_F(RunNotify, WebhookDownLeavesTheExitCode) {
  auto r = run_job({"--notify", "http://127.0.0.1:1/hooks/ckpt"});
  EXPECT_EQ(r.code, 3);
  EXPECT_THAT(r.err, HasSubstr("could not notify"));
  EXPECT_THAT(tu::read_file(log_), HasSubstr("# ckptscope: could not notify"));
}

TEST_F(RunNotify, WebhookGetsTheOutcomeAsJson) {
  tu::ServerProcess hook;
  ASSERT_EQ(hook.start("webhook_server.py", {"--out-dir", dir_ / "hook"}, dir_ / ""), "");
  auto r = run_job({"--notify", "http://127.0.0.1:" + std::to_string(hook.port()) + "/hooks/ckpt"});
  EXPECT_EQ(r.code, 3) << r.err;
  json body = json::parse(tu::read_file(dir_ / "hook/post-1.json"));
  EXPECT_EQ(body["exit"]["code"], 3);
  EXPECT_EQ(body["failure"]["class"], "cuda_oom");
  EXPECT_EQ(body["failure"]["rule"], "cuda-oom");
}

// Issue 22: a byte that is not UTF-8 in the evidence line, the job name or
// argv meant no notification at all (only a warning about JSON).
TEST_F(RunNotify, BytesThatAreNotUtf8AreReplacedAndTheWebhookStillSent) {
  tu::ServerProcess hook;
  ASSERT_EQ(hook.start("webhook_server.py", {"--out-dir", dir_ / "hook"}, dir_ / ""), "");
  const std::vector<std::string> job = {
      "sh", "-c",
      "printf 'torch.OutOfMemoryError: CUDA out of memory \\377 on rank 0\\n' >&2; exit 3",
      "arg\xfe"};
  auto r = run_job({"--job-name", "train\xff", "--notify",
                    "http://127.0.0.1:" + std::to_string(hook.port()) + "/hooks/ckpt"},
                   job);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("could not notify"))) << r.err;
  json body = json::parse(tu::read_file(dir_ / "hook/post-1.json"));
  EXPECT_EQ(body["failure"]["class"], "cuda_oom");
  EXPECT_EQ(body["job"]["name"], "train\xEF\xBF\xBD");
  EXPECT_EQ(body["job"]["command"][3], "arg\xEF\xBF\xBD");
  EXPECT_THAT(body["failure"]["evidence"][0]["text"].get<std::string>(),
              HasSubstr("memory \xEF\xBF\xBD on rank 0"));
}

TEST_F(RunNotify, AMissingNotifierDoesNotHoldTheJobBack) {
  // A ckptscope without ckptscope-notify beside it (and none on PATH).
  std::filesystem::copy_file(kCkptscope, dir_ / "ckptscope");
  std::vector<std::string> argv = {
      dir_ / "ckptscope",        "run", "--no-trace", "--log", log_, "--notify",
      "http://127.0.0.1:1/hook", "--"};
  argv.insert(argv.end(), kFailingJob.begin(), kFailingJob.end());
  auto r = run(argv, dir_, "env PATH=/usr/bin:/bin ");
  EXPECT_EQ(r.code, 3);  // the job ran, and its status came back
  EXPECT_THAT(r.err, HasSubstr("could not check the --notify settings"));
  EXPECT_THAT(r.err, HasSubstr("could not notify"));
  std::string text = tu::read_file(log_);
  EXPECT_THAT(text, HasSubstr("torch.OutOfMemoryError"));
  EXPECT_THAT(text, HasSubstr("# ckptscope: could not notify"));
}

TEST_F(RunNotify, BadSettingsStopTheRunBeforeTheJobStarts) {
  const std::string marker = dir_ / "ran";
  std::vector<std::string> job = {"touch", marker};
  auto bad_target = run_job({"--notify", "ftp://example.com/"}, job);
  EXPECT_EQ(bad_target.code, 2);
  EXPECT_THAT(bad_target.err, HasSubstr("--notify"));
  // Mail with no relay anywhere: not discovered only when the job ends.
  auto no_relay =
      run_job({"--notify", "mailto:ops@example.com"}, job, "env -u CKPTSCOPE_SMTP_URL ");
  EXPECT_EQ(no_relay.code, 2);
  auto bad_config =
      run_job({"--config", config({{"timeout_s", -1}}), "--notify", "http://127.0.0.1:1/"}, job);
  EXPECT_EQ(bad_config.code, 2);
  EXPECT_THAT(bad_config.err, HasSubstr("notify.timeout_s"));
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the job must not have run";
  EXPECT_THAT(tu::read_file(log_), HasSubstr("the job was not started"));
}

}  // namespace
}  // namespace ckpt::test
