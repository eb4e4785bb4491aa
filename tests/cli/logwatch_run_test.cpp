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
