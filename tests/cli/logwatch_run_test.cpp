// `run --logwatch-model`: the kernel log read while the job runs is scored by
// the node-log anomaly detector, and an anomaly lands in the trace and the
// log's footer. Root only: the test writes its line into the kernel log.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

// A model of ordinary kernel chatter, trained as a user would.
std::string train_model(const ScratchDir& dir) {
  const std::string normal = dir / "normal.log";
  std::ofstream out(normal);
  // As `cat /dev/kmsg` writes records: PRIO,SEQ,USEC,FLAGS;MESSAGE.
  for (int i = 0; i < 50; ++i) {
    out << "6," << 2 * i << "," << 1000 * i << ",-;usb 1-1: new high-speed USB device number " << i
        << " using xhci_hcd\n";
    out << "6," << 2 * i + 1 << "," << 1000 * i + 1 << ",-;eth0: link up, 100Gbps, full duplex\n";
  }
  out.close();
  std::string model = dir / "node.model";
  auto r = run({kCkptscope, "logwatch", "train", "--format", "kmsg", normal, "-o", model}, dir);
  EXPECT_EQ(r.code, 0) << r.err;
  return model;
}

TEST(RunLogwatch, AnUnseenKernelLineDuringTheJobIsALogAnomalyInTheTrace) {
  if (!is_root()) GTEST_SKIP() << "needs root to write into /dev/kmsg";
  ScratchDir dir;
  const std::string model = train_model(dir);
  const std::string log = dir / "job.log";
  const std::string marker = "ckpt-logwatch-" + std::to_string(getpid());
  const std::string script =
      "echo \"<2>" + marker + ": frobnicator controller lost its mind\" > /dev/kmsg; sleep 0.3";
  auto r = run({kCkptscope, "run", "--trace", dir / "t.db", "--log", log, "--logwatch-model", model,
                "--", "sh", "-c", script},
               dir);
  EXPECT_EQ(r.code, 0) << r.err;
  Trace t = read_trace_or_fail(dir / "t.db");
  bool found = false;
  for (const auto& f : t.failures)
    found = found || (f.kind == "log_anomaly" && f.evidence.find(marker) != std::string::npos);
  EXPECT_TRUE(found) << "the line is a log_anomaly failure in the trace";
  const std::string text = slurp(log);
  EXPECT_NE(text.find("# ckptscope: logwatch: kernel log: new_template"), std::string::npos)
      << text;
  EXPECT_NE(text.find("kernel log records scored with " + model), std::string::npos) << text;
}

TEST(RunLogwatch, AnUnseenKernelLineBurstIsOneAlarmAndTheBudgetHoldsBackTheRest) {
  if (!is_root()) GTEST_SKIP() << "needs root to write into /dev/kmsg";
  ScratchDir dir;
  const std::string model = train_model(dir);
  const std::string log = dir / "job.log";
  const std::string m = "ckpt-logwatch-" + std::to_string(getpid());
  // A burst of one unseen err line (five times), then three more unseen err
  // lines of other shapes, then one at crit, then a known fault (a machine
  // check) at info. The budget (2 per 1000 records) allows two alarms: the
  // burst and the next; the two after are held back, and are in the trace
  // and the log as held back, with their counts; crit is never held, nor is
  // a known fault, which is a failure of its own kind.
  std::string script;
  for (int i = 0; i < 5; ++i)
    script += "echo \"<3>" + m + "-a: frobnicator " + std::to_string(i) +
              " lost its mind today\" > /dev/kmsg; ";
  script += "echo \"<3>" + m + "-b: quux controller on fire\" > /dev/kmsg; ";
  script += "echo \"<3>" + m + "-c: widget array went sideways at noon\" > /dev/kmsg; ";
  script += "echo \"<3>" + m + "-d: sprocket bay flooded with cold water again\" > /dev/kmsg; ";
  script += "echo \"<2>" + m + "-e: reactor gone\" > /dev/kmsg; ";
  script += "echo \"<6>" + m + "-f: mce: [Hardware Error]: Machine check events logged\" > " +
            "/dev/kmsg; sleep 0.3";
  auto r = run({kCkptscope, "run", "--trace", dir / "t.db", "--log", log, "--logwatch-model", model,
                "--", "sh", "-c", script},
               dir);
  EXPECT_EQ(r.code, 0) << r.err;
  Trace t = read_trace_or_fail(dir / "t.db");
  std::vector<std::string> ours;
  std::vector<std::string> held;
  std::vector<std::string> faults;
  for (const auto& f : t.failures) {
    if (f.kind == "machine_check" && f.evidence.find(m + "-f:") != std::string::npos)
      faults.push_back(f.evidence);
    if (f.kind != "log_anomaly") continue;
    if (f.evidence.find("held back by the budget") != std::string::npos)
      held.push_back(f.evidence);
    else if (f.evidence.find(m) != std::string::npos)
      ours.push_back(f.evidence);
  }
  ASSERT_EQ(ours.size(), 3U) << ::testing::PrintToString(ours);
  EXPECT_NE(ours[0].find(m + "-a:"), std::string::npos) << ours[0];
  EXPECT_NE(ours[0].find("(and 4 more lines of its template)"), std::string::npos) << ours[0];
  EXPECT_NE(ours[1].find(m + "-b:"), std::string::npos) << ours[1];
  EXPECT_NE(ours[2].find(m + "-e:"), std::string::npos) << ours[2];
  EXPECT_EQ(faults.size(), 1U) << "the machine check is no machine_check failure";
  // The two held back, each by its template and count.
  ASSERT_EQ(held.size(), 2U) << ::testing::PrintToString(held);
  EXPECT_NE(held[0].find("(error): 1 records"), std::string::npos) << held[0];
  EXPECT_NE(held[0].find("widget array"), std::string::npos) << held[0];
  EXPECT_NE(held[1].find("sprocket bay"), std::string::npos) << held[1];
  const std::string text = slurp(log);
  EXPECT_NE(text.find("10 anomalies in 4 alarms, 2 anomalous records held back by the budget"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("held back by the budget (error): 1 records"), std::string::npos) << text;
  EXPECT_NE(text.find("reach the budget of 2 per 1000 lines (--logwatch-max-alarm-rate)"),
            std::string::npos)
      << text;
}

TEST(RunLogwatch, ABadModelStopsRunBeforeTheJobStarts) {
  ScratchDir dir;
  const std::string model = dir / "bad.model";
  std::ofstream(model) << "not a model\n";
  const std::string started = dir / "started";
  auto r = run({kCkptscope, "run", "--no-trace", "--log", dir / "job.log", "--logwatch-model",
                model, "--", "touch", started},
               dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--logwatch-model"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(model), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(started).good()) << "the job must not have run";
}

}  // namespace
}  // namespace ckpt::test
