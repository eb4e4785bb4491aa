// `run` watches the kernel log while the job runs: a GPU fault the kernel
// reports outranks the NCCL error the job prints, and lands in the trace.
// Root only: the test writes the fault into the kernel log itself.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

TEST(RunKernelLog, AnXidDuringTheJobIsItsCauseAndInTheTrace) {
  if (!is_root()) GTEST_SKIP() << "needs root to write into /dev/kmsg";
  ScratchDir dir;
  const std::string log = dir / "job.log";
  const std::string marker = "ckpt-test-" + std::to_string(getpid());
  // The job writes an Xid 79 line into the kernel log (as the driver would),
  // then fails the way the other ranks would: an NCCL error.
  std::string script =
      "echo \"<3>NVRM: Xid (PCI:0000:3b:00): 79, pid=$$, name=" + marker +
      ", GPU has fallen off the bus.\" > /dev/kmsg; sleep 0.3; "
      "echo 'RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled system error' >&2; "
      "exit 1";
  auto r = run({kCkptscope, "run", "--trace", dir / "t.db", "--json", "--log", log, "--", "sh",
                "-c", script},
               dir);
  EXPECT_EQ(r.code, 1) << r.err;
  std::string text = slurp(log);
  EXPECT_NE(text.find("# ckptscope: failure cause: gpu_lost (rule xid-79-fallen-off-bus)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# ckptscope:   also seen: nccl"), std::string::npos) << text;
  Trace t = read_trace_or_fail(dir / "t.db");
  ASSERT_TRUE(t.job.failure.has_value());
  EXPECT_EQ(t.job.failure->cls, "gpu_lost");
  ASSERT_FALSE(t.job.failure->evidence.empty());
  EXPECT_EQ(t.job.failure->evidence[0].source, "kmsg");
  EXPECT_NE(t.job.failure->evidence[0].text.find(marker), std::string::npos);
  EXPECT_EQ(t.job.log_path, log);
  bool xid = false;
  for (const auto& f : t.failures)
    xid = xid || (f.kind == "gpu_xid" && f.evidence.find(marker) != std::string::npos);
  EXPECT_TRUE(xid) << "the Xid is a job-level failure in the trace";
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["job"]["failure"]["class"], "gpu_lost");
}

// A pid-less Xid (the driver's format when no channel is to blame) on a GPU
// that is not the job's: CUDA_VISIBLE_DEVICES="" gives the job none. It is a
// node failure in the trace and the footer, never the job's cause.
TEST(RunKernelLog, APidlessXidOnAnotherGpuIsANodeFailureNotTheCause) {
  if (!is_root()) GTEST_SKIP() << "needs root to write into /dev/kmsg";
  ScratchDir dir;
  const std::string log = dir / "job.log";
  const std::string marker = "ckpt-node-" + std::to_string(getpid());
  std::string script =
      "echo \"<3>NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
      "off the bus. " +
      marker +
      "\" > /dev/kmsg; sleep 0.3; "
      "echo 'RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled system error' >&2; "
      "exit 1";
  auto r = run({kCkptscope, "run", "--trace", dir / "t.db", "--json", "--log", log, "--", "sh",
                "-c", script},
               dir, "env CUDA_VISIBLE_DEVICES= ");
  EXPECT_EQ(r.code, 1) << r.err;
  Trace t = read_trace_or_fail(dir / "t.db");
  ASSERT_TRUE(t.job.failure.has_value());
  EXPECT_NE(t.job.failure->cls, "gpu_lost") << "another GPU's fault is not the job's cause";
  EXPECT_EQ(t.job.failure->cls, "nccl");
  bool node = false, job = false;
  for (const auto& f : t.failures) {
    if (f.evidence.find(marker) == std::string::npos) continue;
    node = node || f.kind == "node_gpu_xid";
    job = job || f.kind == "gpu_xid";
  }
  EXPECT_TRUE(node) << "shown as the node's";
  EXPECT_FALSE(job);
  std::string text = slurp(log);
  EXPECT_NE(text.find("# ckptscope: kernel log: 1 Xid on GPUs that are not the job's"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# ckptscope: node kernel log: NVRM: Xid (PCI:0000:3b:00): 79"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace ckpt::test
