#include <signal.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "notify/notify.h"

namespace ckpt::notify {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kSecond = 1'000'000'000ull;
constexpr uint64_t kMay1Noon = 1714564800ull;  // 2024-05-01T12:00:00Z

JobOutcome ok_job() {
  JobOutcome o;
  o.command = {"python", "-u", "train.py", "--lr", "0.1"};
  o.host = "node01";
  o.start_wall_ns = kMay1Noon * kSecond;
  o.duration_ns = 310 * kSecond;
  o.exit_code = 0;
  o.log_path = "/scratch/job.log";
  o.log_tail = {"step 100 loss 1.2", "saved checkpoint"};
  o.trace_path = "/scratch/trace.db";
  o.checkpoint_summary_text = "checkpoint 1 save 4.0 GiB 12.1 s bottleneck host_io\n";
  o.checkpoint_summary_json = {{"checkpoints", json::array({{{"id", 1}, {"bytes", 4}}})}};
  return o;
}

JobOutcome oom_job() {
  JobOutcome o = ok_job();
  o.exit_code = 1;
  o.duration_ns = (3600 + 2 * 60 + 7) * kSecond;
  o.failure_class = "cuda_oom";
  o.failure_rule = "log line matches 'CUDA out of memory'";
  o.evidence = {{1234, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"},
                {1240, "RuntimeError: CUDA error: out of memory"}};
  o.kernel_events = {"NVRM: Xid (PCI:0000:3b:00): 31, pid=4242, Ch 00000008"};
  return o;
}

// `run` could not write the whole log (a full disk): the message says so, and
// the cause it gives came from the output kept in memory.
TEST(Compose, AnIncompleteLogIsSaidInTheTextAndTheJson) {
  JobOutcome o = oom_job();
  o.log_incomplete =
      "the job log /scratch/job.log is incomplete: 2 writes failed (No space left on device), "
      "4096 bytes are not in it";
  o.evidence = {{3, "torch.OutOfMemoryError: CUDA out of memory.", "unlogged output"}};
  Message m = compose(o, ArtifactPlan{});
  EXPECT_THAT(m.text,
              HasSubstr("Log:       INCOMPLETE: the job log /scratch/job.log is incomplete: "
                        "2 writes failed (No space left on device)"));
  EXPECT_THAT(m.text, HasSubstr("unlogged output:3: torch.OutOfMemoryError"));
  EXPECT_EQ(m.json["log"]["incomplete"], o.log_incomplete);
  EXPECT_TRUE(compose(oom_job(), ArtifactPlan{}).json["log"]["incomplete"].is_null());
}

TEST(Compose, SubjectForSuccess) {
  Message m = compose(ok_job(), ArtifactPlan{});
  EXPECT_EQ(m.subject, "[ckptscope] OK train.py on node01 after 5m10s");
  EXPECT_EQ(m.json["status"], "OK");
  EXPECT_EQ(m.json["exit"]["code"], 0);
  EXPECT_TRUE(m.json["exit"]["signal"].is_null());
  EXPECT_TRUE(m.json["failure"].is_null());
  EXPECT_THAT(m.text, HasSubstr("Exit:      exit code 0\n"));
  EXPECT_THAT(m.text, HasSubstr("Kernel events during the job: none seen"));
}

TEST(Compose, FailureWithEvidence) {
  Message m = compose(oom_job(), ArtifactPlan{});
  EXPECT_EQ(m.subject, "[ckptscope] FAILED (cuda_oom) train.py on node01 after 1h02m");
  EXPECT_THAT(m.text, HasSubstr("Exit:      exit code 1\n"));
  EXPECT_THAT(m.text, HasSubstr("Failure:   cuda_oom\n"));
  EXPECT_THAT(m.text, HasSubstr("Rule:      log line matches 'CUDA out of memory'\n"));
  EXPECT_THAT(m.text, HasSubstr("  line 1234: torch.OutOfMemoryError: CUDA out of memory."));
  EXPECT_THAT(m.text, HasSubstr("  line 1240: RuntimeError: CUDA error: out of memory\n"));
  EXPECT_THAT(m.text, HasSubstr("NVRM: Xid (PCI:0000:3b:00): 31"));
  EXPECT_EQ(m.json["status"], "FAILED");
  EXPECT_EQ(m.json["exit"]["code"], 1);
  EXPECT_EQ(m.json["failure"]["class"], "cuda_oom");
  EXPECT_EQ(m.json["failure"]["rule"], "log line matches 'CUDA out of memory'");
  ASSERT_EQ(m.json["failure"]["evidence"].size(), 2u);
  EXPECT_EQ(m.json["failure"]["evidence"][0]["line"], 1234);
  EXPECT_THAT(m.json["failure"]["evidence"][0]["text"].get<std::string>(),
              HasSubstr("OutOfMemoryError"));
  EXPECT_EQ(m.json["kernel_events"][0], "NVRM: Xid (PCI:0000:3b:00): 31, pid=4242, Ch 00000008");
}

TEST(Compose, KilledBySignalWithCore) {
  JobOutcome o = ok_job();
  o.exit_code.reset();
  o.signal = SIGKILL;
  o.core_dumped = true;
  o.duration_ns = 42 * kSecond;
  Message m = compose(o, ArtifactPlan{});
  EXPECT_EQ(m.subject, "[ckptscope] FAILED (SIGKILL) train.py on node01 after 42s");
  EXPECT_THAT(m.text, HasSubstr("Exit:      killed by SIGKILL (signal 9), core dumped\n"));
  EXPECT_TRUE(m.json["exit"]["code"].is_null());
  EXPECT_EQ(m.json["exit"]["signal"], 9);
  EXPECT_EQ(m.json["exit"]["signal_name"], "SIGKILL");
  EXPECT_EQ(m.json["exit"]["core_dumped"], true);
}

TEST(Compose, NonZeroExitWithoutClassAndCleanExitWithAFailure) {
  JobOutcome o = ok_job();
  o.exit_code = 3;
  EXPECT_EQ(compose(o, ArtifactPlan{}).subject,
            "[ckptscope] FAILED (exit 3) train.py on node01 after 5m10s");
  o.exit_code = 0;
  o.failure_class = "enospc";
  Message m = compose(o, ArtifactPlan{});
  EXPECT_EQ(m.subject, "[ckptscope] WARNING (enospc) train.py on node01 after 5m10s");
  EXPECT_EQ(m.json["status"], "WARNING");
}

TEST(Compose, JobFieldsAndSections) {
  JobOutcome o = oom_job();
  o.command = {"python", "train.py", "--name", "it's a test"};
  Message m = compose(o, ArtifactPlan{});
  EXPECT_THAT(m.text, HasSubstr("Job:       train.py\n"));
  EXPECT_THAT(m.text, HasSubstr("Command:   python train.py --name 'it'\\''s a test'\n"));
  EXPECT_THAT(m.text, HasSubstr("Host:      node01\n"));
  EXPECT_THAT(m.text, HasSubstr("Started:   2024-05-01T12:00:00Z\n"));
  EXPECT_THAT(m.text, HasSubstr("Duration:  1h02m (3727.000 s)\n"));
  EXPECT_THAT(m.text, HasSubstr("Checkpoint I/O:\n  checkpoint 1 save 4.0 GiB 12.1 s"));
  EXPECT_THAT(m.text, HasSubstr("Log tail (last 2 lines of /scratch/job.log):\n"
                                "  | step 100 loss 1.2\n  | saved checkpoint\n"));
  EXPECT_THAT(m.text, HasSubstr("Trace:     /scratch/trace.db\n"));

  const json& j = m.json;
  EXPECT_EQ(j["schema"], "ckptscope.notify/1");
  EXPECT_EQ(j["subject"], m.subject);
  EXPECT_EQ(j["text"], m.text);
  EXPECT_EQ(j["job"]["name"], "train.py");
  EXPECT_EQ(j["job"]["command"], json({"python", "train.py", "--name", "it's a test"}));
  EXPECT_EQ(j["job"]["host"], "node01");
  EXPECT_EQ(j["job"]["start_utc"], "2024-05-01T12:00:00Z");
  EXPECT_EQ(j["job"]["start_wall_ns"], kMay1Noon * kSecond);
  EXPECT_EQ(j["job"]["duration_ns"], 3727 * kSecond);
  EXPECT_EQ(j["job"]["duration"], "1h02m");
  EXPECT_EQ(j["checkpoints"]["summary"]["checkpoints"][0]["id"], 1);
  EXPECT_THAT(j["checkpoints"]["text"].get<std::string>(), HasSubstr("bottleneck host_io"));
  EXPECT_EQ(j["log"]["path"], "/scratch/job.log");
  EXPECT_EQ(j["log"]["tail"], json({"step 100 loss 1.2", "saved checkpoint"}));
  EXPECT_EQ(j["trace_path"], "/scratch/trace.db");
}

TEST(Compose, AttachmentsAndLeftOutAreListedInTextAndJson) {
  ArtifactPlan plan;
  plan.budget = 10 << 20;
  plan.attached.push_back(
      {"/scratch/report.txt", "report.txt", std::string(2048, 'r'), 2048, false});
  plan.attached.push_back(
      {"/scratch/job.log", "job.log.tail", std::string(100, 'l'), 50ull << 20, true});
  plan.used = 2148;
  plan.left_out.push_back({"/scratch/job.log", 50ull << 20,
                           "over budget: 50.0 MiB > 10.0 MiB left; its last 100 B attached as "
                           "job.log.tail"});
  plan.left_out.push_back({"/scratch/missing.bin", std::nullopt, "missing"});
  Message m = compose(ok_job(), plan);
  EXPECT_THAT(m.text, HasSubstr("Attached (2.1 KiB of 10.0 MiB budget):\n"));
  EXPECT_THAT(m.text, HasSubstr("  report.txt (2.0 KiB) from /scratch/report.txt\n"));
  EXPECT_THAT(m.text, HasSubstr("  job.log.tail (100 B, the end of 50.0 MiB /scratch/job.log)\n"));
  EXPECT_THAT(m.text, HasSubstr("Left out:\n  /scratch/job.log (50.0 MiB): over budget: 50.0 MiB > "
                                "10.0 MiB left; its last 100 B attached as job.log.tail\n"));
  EXPECT_THAT(m.text, HasSubstr("  /scratch/missing.bin: missing\n"));

  const json& j = m.json;
  EXPECT_EQ(j["attach_budget"], 10 << 20);
  EXPECT_EQ(j["attached_bytes"], 2148);
  ASSERT_EQ(j["attachments"].size(), 2u);
  EXPECT_EQ(j["attachments"][1]["name"], "job.log.tail");
  EXPECT_EQ(j["attachments"][1]["bytes"], 100);
  EXPECT_EQ(j["attachments"][1]["file_bytes"], 50ull << 20);
  EXPECT_EQ(j["attachments"][1]["tail"], true);
  ASSERT_EQ(j["left_out"].size(), 2u);
  EXPECT_EQ(j["left_out"][0]["bytes"], 50ull << 20);
  EXPECT_TRUE(j["left_out"][1]["bytes"].is_null());
  EXPECT_EQ(j["left_out"][1]["reason"], "missing");
}

TEST(Compose, ArbitraryBytesFromTheLogStillMakeValidJsonAndOneLineEach) {
  JobOutcome o = oom_job();
  o.log_tail = {std::string("bad \xff\xfe bytes"), "progress\r 50%\x1b[0m", "ok"};
  o.evidence = {{7, std::string("overlong \xc0\xaf slash")}};
  o.host = "node\n01";
  Message m = compose(o, ArtifactPlan{});
  // The strict serializer throws on invalid UTF-8: this is the real check.
  std::string dumped;
  EXPECT_NO_THROW(dumped = m.json.dump());
  EXPECT_THAT(dumped, HasSubstr("bad \xEF\xBF\xBD\xEF\xBF\xBD bytes"));
  EXPECT_THAT(m.text, HasSubstr("  | progress  50% [0m\n"));
  EXPECT_THAT(m.subject, Not(HasSubstr("\n")));
  EXPECT_THAT(m.subject, HasSubstr("on node 01 after"));
}

TEST(Compose, EmptyLogTailSaysSo) {
  JobOutcome o = ok_job();
  o.log_tail.clear();
  Message m = compose(o, ArtifactPlan{});
  EXPECT_THAT(m.text, HasSubstr("Log tail (last 0 lines of /scratch/job.log):\n  (empty)\n"));
  EXPECT_EQ(m.json["log"]["tail"], json::array());
}

TEST(Compose, ExplicitJobNameWins) {
  JobOutcome o = ok_job();
  o.job_name = "llama-70b-pretrain";
  EXPECT_EQ(compose(o, ArtifactPlan{}).subject,
            "[ckptscope] OK llama-70b-pretrain on node01 after 5m10s");
}

TEST(NotifyFormat, DefaultJobName) {
  EXPECT_EQ(default_job_name({"python", "-u", "/home/u/train.py", "--x"}), "train.py");
  EXPECT_EQ(default_job_name({"/usr/bin/python3.11", "train.py"}), "train.py");
  EXPECT_EQ(default_job_name({"torchrun", "--nproc_per_node=8", "pretrain.py"}), "pretrain.py");
  EXPECT_EQ(default_job_name({"accelerate", "launch", "ft.py"}), "ft.py");
  EXPECT_EQ(default_job_name({"/opt/bin/trainer", "--config", "x.yaml"}), "trainer");
  EXPECT_EQ(default_job_name({}), "job");
  // An option's value is not the script.
  EXPECT_EQ(default_job_name({"torchrun", "--nproc_per_node", "8", "pretrain.py"}), "pretrain.py");
  EXPECT_EQ(default_job_name({"sh", "-c", "echo hi; exit 3"}), "sh");
}

TEST(NotifyFormat, Durations) {
  EXPECT_EQ(format_duration(0), "0.0s");
  EXPECT_EQ(format_duration(1'500'000'000), "1.5s");
  EXPECT_EQ(format_duration(42 * kSecond), "42s");
  EXPECT_EQ(format_duration(310 * kSecond), "5m10s");
  EXPECT_EQ(format_duration(3727 * kSecond), "1h02m");
  EXPECT_EQ(format_duration((2 * 86400 + 3 * 3600 + 59) * kSecond), "2d03h");
}

TEST(NotifyFormat, Sizes) {
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(1536), "1.5 KiB");
  EXPECT_EQ(format_size(static_cast<uint64_t>(48.2 * (1 << 20))), "48.2 MiB");
  EXPECT_EQ(format_size(3ull << 30), "3.0 GiB");
}

}  // namespace
}  // namespace ckpt::notify
