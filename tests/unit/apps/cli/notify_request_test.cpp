// The request `run` hands to ckptscope-notify, and the deadline it holds the
// sender to: a sender that hangs is killed, garbage is an error, never a hang.
#include "apps/cli/notify_request.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "json/json_io.h"

namespace ckpt::cli {
namespace {

NotifyRequest sample() {
  NotifyRequest r;
  r.mode = NotifyRequest::Mode::Send;
  r.targets = {"mailto:ops@example.com", "https://hooks.example.com/x"};
  r.smtp_flag = "smtps://relay:465";
  r.config_section = R"({"password":"hunter2"})";
  r.attach_budget = 4096;
  r.candidates = {{"/tmp/job.log", true}, {"/tmp/report.json", false}};
  r.outcome.job_name = "train";
  r.outcome.command = {"python", "train.py"};
  r.outcome.host = "node01";
  r.outcome.start_wall_ns = 1'796'220'000'000'000'000ull;
  r.outcome.duration_ns = 42;
  r.outcome.signal = 9;
  r.outcome.failure_class = "oom_killer";
  r.outcome.failure_rule = "oom-kill";
  r.outcome.evidence = {{12, "Out of memory: Killed process 4242 (python)"}};
  r.outcome.kernel_events = {"Out of memory: Killed process 4242 (python)"};
  r.outcome.checkpoint_summary_json = {{"checkpoints", nlohmann::json::array()}};
  r.outcome.log_path = "/tmp/job.log";
  return r;
}

TEST(NotifyRequest, RoundTripsThroughJson) {
  NotifyRequest r = sample();
  auto back = request_from_json(nlohmann::json::parse(to_json(r).dump()));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(to_json(*back), to_json(r));
  EXPECT_EQ(back->outcome.signal, 9);
  EXPECT_FALSE(back->outcome.exit_code.has_value());
  EXPECT_EQ(back->candidates[0].is_log, true);
  auto bad = request_from_json({{"mode", "shout"}});
  ASSERT_FALSE(bad);
}

// Issue 22: a byte that is not UTF-8 in the job's name, argv or evidence
// made dumping the request throw, so no notification was sent. Text is
// replaced; paths, which the sender opens, travel byte for byte.
TEST(NotifyRequest, TextThatIsNotUtf8IsReplacedAndPathsKeptAsBytes) {
  NotifyRequest r = sample();
  r.outcome.job_name = "tr\xffin";
  r.outcome.command = {"python", "x\xfe.py"};
  r.outcome.evidence = {{3, "CUDA out of memory \xff"}};
  r.outcome.log_path = "/tmp/j\xff.log";
  r.candidates = {{"/tmp/j\xff.log", true}};
  const std::string wire = dump_json(to_json(r));
  auto back = request_from_json(nlohmann::json::parse(wire));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->outcome.job_name, "tr\xEF\xBF\xBDin");
  EXPECT_EQ(back->outcome.command[1], "x\xEF\xBF\xBD.py");
  EXPECT_EQ(back->outcome.evidence[0].text, "CUDA out of memory \xEF\xBF\xBD");
  EXPECT_EQ(back->outcome.log_path, "/tmp/j\xff.log");
  EXPECT_EQ(back->candidates[0].path, "/tmp/j\xff.log");
  EXPECT_EQ(back->outcome.trace_path, "");
}

TEST(NotifyRequest, AMistypedFieldIsNamedByItsPointer) {
  auto j = to_json(sample());
  j["outcome"]["job_name"] = 5;
  auto bad = request_from_json(nlohmann::json::parse(j.dump()));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("request: /outcome/job_name: type must be string"),
            std::string::npos)
      << bad.error().message;
}

struct FakeSender {
  explicit FakeSender(const std::string& script) {
    path = (std::filesystem::temp_directory_path() /
            ("ckpt-fake-sender-" + std::to_string(getpid()) + "-" + std::to_string(++count)))
               .string();
    std::ofstream(path) << "#!/bin/sh\n" << script << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  }
  ~FakeSender() { std::filesystem::remove(path); }
  std::string path;
  static inline int count = 0;
};

TEST(NotifySender, AnswersAreReadOnePerTarget) {
  FakeSender s(
      "cat >/dev/null\n"
      "echo '{\"target\":\"mail to "
      "ops@example.com\",\"ok\":true,\"error\":\"\",\"timeout_ms\":30000}'\n"
      "echo '{\"target\":\"webhook https://hooks.example.com/x\",\"ok\":false,\"error\":\"HTTP "
      "500\"}'");
  auto r = run_sender(s.path, sample(), 5000);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_TRUE((*r)[0].ok);
  EXPECT_EQ((*r)[0].timeout_ms, 30000u);
  EXPECT_FALSE((*r)[1].ok);
  EXPECT_EQ((*r)[1].error, "HTTP 500");
}

TEST(NotifySender, TheRequestReachesItsStdin) {
  // A request bigger than a pipe's buffer still arrives whole.
  NotifyRequest big = sample();
  big.outcome.checkpoint_summary_text = std::string(300'000, 's');
  FakeSender s(
      "n=$(wc -c)\n"
      "echo \"{\\\"request_error\\\":\\\"got $n bytes\\\"}\"");
  auto r = run_sender(s.path, big, 5000);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "got " + std::to_string(to_json(big).dump().size()) + " bytes");
}

TEST(NotifySender, ARequestWithBytesThatAreNotUtf8IsStillSent) {
  NotifyRequest r = sample();
  r.outcome.job_name = "tr\xffin";
  FakeSender s(
      "cat >/dev/null\n"
      "echo '{\"target\":\"a\",\"ok\":true,\"error\":\"\"}'\n"
      "echo '{\"target\":\"b\",\"ok\":true,\"error\":\"\"}'");
  auto answer = run_sender(s.path, r, 5000);
  ASSERT_TRUE(answer) << answer.error().message;
  EXPECT_EQ(answer->size(), 2u);
}

TEST(NotifySender, AHangingSenderIsKilledAtTheDeadline) {
  FakeSender s("sleep 30");
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_sender(s.path, sample(), 300);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("did not finish"), std::string::npos) << r.error().message;
}

TEST(NotifySender, GarbageMissingAnswersAndMissingProgramAreErrors) {
  FakeSender garbage("cat >/dev/null; echo 'not json'");
  auto g = run_sender(garbage.path, sample(), 5000);
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("unreadable"), std::string::npos);
  FakeSender one("cat >/dev/null; echo '{\"target\":\"t\",\"ok\":true,\"error\":\"\"}'");
  auto o = run_sender(one.path, sample(), 5000);
  ASSERT_FALSE(o);
  EXPECT_NE(o.error().message.find("1 of 2 targets"), std::string::npos);
  auto missing = run_sender("/nonexistent/ckptscope-notify", sample(), 5000);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("cannot run /nonexistent/ckptscope-notify"),
            std::string::npos)
      << missing.error().message;
}

TEST(NotifySender, ASenderThatHangsUpOnItsStdinIsAnErrorNotASigpipe) {
  // The sender exits without reading a request bigger than the pipe: our
  // write meets EPIPE. The test binary keeps SIGPIPE's default action, so
  // without the mask in run_sender this test dies of the signal.
  NotifyRequest big = sample();
  big.outcome.checkpoint_summary_text = std::string(300'000, 's');
  FakeSender quitter("exit 0");
  auto r = run_sender(quitter.path, big, 5000);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("0 of 2 targets"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace ckpt::cli
