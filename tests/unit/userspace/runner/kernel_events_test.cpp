// Whose kernel faults are they: the node's, the job's, or another tenant's.
#include "runner/kernel_events.h"

#include <gtest/gtest.h>

#include <map>

namespace ckpt {
namespace {

KernelFaultRecord fault(const std::string& text, uint64_t seq) {
  KernelFaultRecord r;
  r.record.seq = seq;
  r.record.mono_ns = seq * 1000;
  r.record.text = text;
  auto f = match_kernel_fault(text);
  EXPECT_TRUE(f) << text;
  if (f) r.fault = *f;
  return r;
}

// The job: root 100, its worker 101 (alive); 300 is another tenant's process.
ProcView fake_proc() {
  ProcView v;
  std::map<uint32_t, uint32_t> parents = {{101, 100}, {100, 50}, {300, 1}};
  v.parent = [parents](uint32_t pid) -> std::optional<uint32_t> {
    auto it = parents.find(pid);
    if (it == parents.end()) return std::nullopt;
    return it->second;
  };
  v.cgroup = [](uint32_t pid) -> std::optional<std::string> {
    if (pid == 101 || pid == 100) return "/slurm/job_7/step_0";
    if (pid == 300) return "/slurm/job_8/step_0";
    return std::nullopt;
  };
  v.own_cgroup = "/slurm/job_7";
  return v;
}

TEST(KernelEvents, NodeWideFaultsAndTheJobsOwnCountOthersDoNot) {
  KernelEvents k(fake_proc());
  k.set_job_root(100);
  k.add_job_gpu("0000:18:00.0");  // from its CUPTI device records
  k.take({
      fault("NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
            "off the bus.",
            1),
      fault("NVRM: Xid (PCI:0000:3b:00): 31, pid=101, name=python, Ch 00000010, MMU Fault", 2),
      fault("NVRM: Xid (PCI:0000:5e:00): 13, pid=300, name=python, Graphics Exception", 3),
      fault("nfs: server nfs01 not responding, still trying", 4),
  });
  auto mine = k.job_faults();
  ASSERT_EQ(mine.size(), 3u);
  EXPECT_EQ(mine[0].record.seq, 1u);  // no process to blame, on the job's GPU
  EXPECT_EQ(mine[1].record.seq, 2u);  // a descendant of the job's root
  EXPECT_EQ(mine[2].record.seq, 4u);  // the storage is everyone's
  EXPECT_EQ(k.others(), 1u);          // another tenant's MMU fault
  EXPECT_TRUE(k.node_faults().empty());
  EXPECT_EQ(k.failure_records().size(), 3u);
  EXPECT_EQ(k.failure_records()[0].kind, "gpu_xid");
  EXPECT_EQ(k.failure_records()[2].kind, "kernel_nfs_not_responding");
}

// The driver's own formats (kernel_log.cpp): plain, with a MIG GPU instance,
// and the older one without name=.
constexpr const char* kXid79OnGpu3b =
    "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
    "bus.";
constexpr const char* kXid95OnGpuAfMig =
    "NVRM: Xid (PCI:0000:af:00 GPU-I:01): 95, pid='<unknown>', name=<unknown>, Uncontained: "
    "SM ECC DED. RST: Yes, D-RST: No";
constexpr const char* kXid48OldFormatOnGpu86 =
    "NVRM: Xid (PCI:0000:86:00): 48, pid=<unknown>, An uncorrectable double bit error (DBE) has "
    "been detected on GPU in the framebuffer at partition 1, subpartition 0.";

TEST(KernelEvents, APidlessXidOnTheJobsGpuIsTheJobsCause) {
  KernelEvents k(fake_proc());
  k.set_job_root(100);
  k.add_job_gpu("0000:3B:00.0");  // case and function do not matter
  k.add_job_gpu("0000:af:00");
  k.take({fault(kXid79OnGpu3b, 1), fault(kXid95OnGpuAfMig, 2)});
  ASSERT_EQ(k.job_faults().size(), 2u);
  EXPECT_EQ(k.cause_candidates().size(), 2u);
  EXPECT_TRUE(k.node_faults().empty());
  for (const auto& f : k.failure_records()) EXPECT_EQ(f.kind, "gpu_xid");
}

TEST(KernelEvents, APidlessXidOnAnotherGpuIsANodeFailureNotTheJobs) {
  KernelEvents k(fake_proc());
  k.set_job_root(100);
  k.add_job_gpu("0000:18:00.0");
  k.take({fault(kXid79OnGpu3b, 1), fault(kXid48OldFormatOnGpu86, 2)});
  EXPECT_TRUE(k.job_faults().empty());
  EXPECT_TRUE(k.cause_candidates().empty()) << "never the job's cause";
  ASSERT_EQ(k.node_faults().size(), 2u);  // counted
  EXPECT_EQ(k.others(), 0u) << "the node's, not another process's";
  auto failures = k.failure_records();  // and shown as such
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].kind, "node_gpu_xid");
  EXPECT_NE(failures[0].evidence.find("on GPU 0000:3b:00, not one of the job's"), std::string::npos)
      << failures[0].evidence;
  EXPECT_EQ(failures[1].kind, "node_gpu_xid");
}

TEST(KernelEvents, WithNoGpuKnownAPidlessXidIsTheNodes) {
  KernelEvents k(fake_proc());
  k.set_job_root(100);
  k.take({fault(kXid79OnGpu3b, 1)});
  EXPECT_TRUE(k.cause_candidates().empty());
  EXPECT_EQ(k.node_faults().size(), 1u);
}

TEST(KernelEvents, AGpuLearnedAfterTheXidStillMakesItTheJobs) {
  // The device record can arrive after the fault (a process that opened the
  // GPU just before it fell off): whose it is is decided when asked.
  KernelEvents k(fake_proc());
  k.set_job_root(100);
  k.take({fault(kXid79OnGpu3b, 1)});
  k.add_job_gpu("0000:3b:00.0");
  EXPECT_EQ(k.cause_candidates().size(), 1u);
  EXPECT_TRUE(k.node_faults().empty());
}

TEST(KernelEvents, GpuPciKeysAreTheDriversForm) {
  EXPECT_EQ(gpu_pci_key("0000:3B:00.0"), "0000:3b:00");
  EXPECT_EQ(gpu_pci_key("0000:3b:00"), "0000:3b:00");
  EXPECT_EQ(gpu_pci_key("3b:00.0"), "0000:3b:00");
  EXPECT_EQ(gpu_pci_key("device 0"), "");
  EXPECT_EQ(gpu_pci_key(""), "");
}

TEST(KernelEvents, AnOomKillOfAVictimAlreadyGoneIsTiedByItsCgroup) {
  KernelEvents k(fake_proc());
  k.set_job_root(100);
  k.take({
      // Pid 4242 has exited by the time we look; the summary names its memcg.
      fault("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
            "oom_memcg=/slurm/job_7,task_memcg=/slurm/job_7/step_0,task=pt_data_worker,"
            "pid=4242,uid=1001",
            1),
      fault("Memory cgroup out of memory: Killed process 4242 (pt_data_worker) "
            "total-vm:31811432kB, anon-rss:29741120kB, file-rss:0kB, shmem-rss:0kB, UID:1001 "
            "pgtables:58884kB oom_score_adj:0",
            2),
      // Another job's OOM kill, nothing to tie it to us.
      fault("Out of memory: Killed process 9999 (java) total-vm:8923144kB, anon-rss:511920kB", 3),
  });
  auto mine = k.job_faults();
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(k.others(), 1u);
  // The summary is evidence, the kill is the failure.
  auto failures = k.failure_records();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].kind, "oom_kill");
  auto causes = k.cause_candidates();
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].record.seq, 2u);
}

TEST(KernelEvents, InTheRootCgroupOnlyThePidTies) {
  ProcView v = fake_proc();
  v.own_cgroup = "/";  // everyone is in it: it proves nothing
  KernelEvents k(v);
  k.set_job_root(100);
  k.take({fault("NVRM: Xid (PCI:0000:5e:00): 13, pid=300, name=python, Graphics Exception", 1)});
  EXPECT_TRUE(k.job_faults().empty());
}

TEST(KernelEvents, ARecoveredNfsStallIsNotOfferedAsTheCause) {
  KernelEvents k(fake_proc());
  k.set_job_root(100);
  k.take({
      fault("nfs: server nfs01 not responding, still trying", 1),
      fault("nfs: server nfs01 OK", 2),
      fault("nfs: server nfs02 not responding, timed out", 3),
  });
  EXPECT_EQ(k.job_faults().size(), 3u);       // all in the footer
  EXPECT_EQ(k.failure_records().size(), 2u);  // both stalls in the trace
  auto causes = k.cause_candidates();
  ASSERT_EQ(causes.size(), 1u);  // only the one that did not recover
  EXPECT_EQ(causes[0].fault.server, "nfs02");
}

TEST(KernelEvents, NothingWatchedMeansNoFd) {
  KernelEvents k(fake_proc());
  EXPECT_EQ(k.fd(), -1);
  auto opened = k.open("/nonexistent/kmsg");
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message.find("not watched"), std::string::npos);
}

}  // namespace
}  // namespace ckpt
