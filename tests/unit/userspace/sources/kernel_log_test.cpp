#include "sources/kernel_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace ckpt {
namespace {

// --- records -----------------------------------------------------------------

// The examples of Documentation/ABI/testing/dev-kmsg, as read() returns them.
TEST(KmsgParseTest, KernelRecordWithDictionary) {
  auto r = parse_kmsg_record(
      "7,160,424069,-;pci_root PNP0A03:00: host bridge window [io  0x0000-0x0cf7] (ignored)\n"
      " SUBSYSTEM=acpi\n"
      " DEVICE=+acpi:PNP0A03:00\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->seq, 160U);
  EXPECT_EQ(r->mono_ns, 424069000U);
  EXPECT_EQ(r->level, 7);
  EXPECT_EQ(r->facility, 0U);
  EXPECT_TRUE(r->from_kernel());
  EXPECT_FALSE(r->fragment);
  EXPECT_EQ(r->text, "pci_root PNP0A03:00: host bridge window [io  0x0000-0x0cf7] (ignored)");
  EXPECT_EQ(r->dict, (std::map<std::string, std::string>{{"SUBSYSTEM", "acpi"},
                                                         {"DEVICE", "+acpi:PNP0A03:00"}}));
}

TEST(KmsgParseTest, UserspaceFacility) {
  auto r = parse_kmsg_record("30,340,5690716,-;udevd[80]: starting version 181\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->facility, 3U);  // LOG_DAEMON
  EXPECT_EQ(r->level, 6);      // info
  EXPECT_FALSE(r->from_kernel());
  EXPECT_TRUE(r->dict.empty());
}

TEST(KmsgParseTest, PciDeviceDictionary) {
  auto r = parse_kmsg_record(
      "3,1822,88123456789,-;nvidia 0000:3b:00.0: enabling device (0000 -> 0003)\n"
      " SUBSYSTEM=pci\n"
      " DEVICE=+pci:0000:3b:00.0\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->mono_ns, 88123456789000U);
  EXPECT_EQ(r->dict.at("SUBSYSTEM"), "pci");
  EXPECT_EQ(r->dict.at("DEVICE"), "+pci:0000:3b:00.0");
}

// msg_add_ext_text escapes bytes below ' ', from 127, and '\' itself.
TEST(KmsgParseTest, UnescapesHexEscapes) {
  auto r = parse_kmsg_record(
      "4,12,100,-;tab\\x09here back\\x5cslash utf8 \\xe2\\x9c\\x93 del\\x7f\n"
      " DEVICE=+usb:1-1\\x0a2\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text, "tab\there back\\slash utf8 \xe2\x9c\x93 del\x7f");
  EXPECT_EQ(r->dict.at("DEVICE"), "+usb:1-1\n2");
}

TEST(KmsgParseTest, BackslashThatIsNoEscapeIsKept) {
  auto r = parse_kmsg_record("6,1,1,-;a\\q b\\x4 c\\\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text, "a\\q b\\x4 c\\");
}

TEST(KmsgParseTest, SemicolonsAndCommasInTextStayText) {
  auto r = parse_kmsg_record("6,7,8,-;a;b,c;d\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text, "a;b,c;d");
}

TEST(KmsgParseTest, ExtraHeaderFieldsAreIgnored) {
  // CONFIG_PRINTK_CALLER; the ABI reserves more fields before ';'.
  auto r = parse_kmsg_record("6,5,100,-,caller=T1234,future=x;hello\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->seq, 5U);
  EXPECT_EQ(r->text, "hello");
}

TEST(KmsgParseTest, FragmentFlags) {
  auto first = parse_kmsg_record("4,20,100,c;oom-kill:constraint=CONSTRAINT_NONE\n");
  auto later = parse_kmsg_record("4,21,100,+;,task=x,pid=1,uid=0\n");
  auto whole = parse_kmsg_record("4,22,100,-;whole line\n");
  ASSERT_TRUE(first && later && whole);
  EXPECT_TRUE(first->fragment);
  EXPECT_TRUE(later->fragment);
  EXPECT_FALSE(whole->fragment);
}

TEST(KmsgParseTest, RecordWithoutNewlineAndEmptyText) {
  auto r = parse_kmsg_record("6,9,0,-;");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->seq, 9U);
  EXPECT_EQ(r->mono_ns, 0U);
  EXPECT_EQ(r->text, "");
}

TEST(KmsgParseTest, MalformedRecords) {
  EXPECT_FALSE(parse_kmsg_record(""));
  EXPECT_FALSE(parse_kmsg_record("\n"));
  EXPECT_FALSE(parse_kmsg_record("6,1,2,- no semicolon\n"));
  EXPECT_FALSE(parse_kmsg_record("6,1,2;too few fields\n"));
  EXPECT_FALSE(parse_kmsg_record("6,1,2,;empty flags\n"));
  EXPECT_FALSE(parse_kmsg_record("x,1,2,-;prio not a number\n"));
  EXPECT_FALSE(parse_kmsg_record("6,-1,2,-;negative seq\n"));
  EXPECT_FALSE(parse_kmsg_record("6,1,2.5,-;fractional time\n"));
  EXPECT_FALSE(parse_kmsg_record("<6>[    1.000000] dmesg -r style\n"));
  // Every line after the first must continue the record.
  EXPECT_FALSE(parse_kmsg_record("6,1,2,-;one\n6,2,3,-;two\n"));
}

TEST(KmsgParseTest, ContinuationWithoutEqualsIsSkipped) {
  auto r = parse_kmsg_record("6,1,2,-;text\n SOMETHING\n KEY=v=w\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dict, (std::map<std::string, std::string>{{"KEY", "v=w"}}));
}

TEST(KmsgParseStreamTest, SplitsRecordsWithTheirDictionaries) {
  const KmsgStream s = parse_kmsg_stream(
      " ORPHAN=continuation before any record\n"
      "6,100,1000,-;first\n"
      " SUBSYSTEM=pci\n"
      " DEVICE=+pci:0000:3b:00.0\n"
      "not a record\n"
      "\n"
      "3,101,2000,-;second\n"
      "4,102,3000,-;third, no newline at the end");
  ASSERT_EQ(s.records.size(), 3U);
  EXPECT_EQ(s.malformed, 2U);  // the orphan and "not a record"
  EXPECT_EQ(s.records[0].text, "first");
  EXPECT_EQ(s.records[0].dict.size(), 2U);
  EXPECT_EQ(s.records[1].seq, 101U);
  EXPECT_TRUE(s.records[1].dict.empty());
  EXPECT_EQ(s.records[2].text, "third, no newline at the end");
}

// --- GPU Xid -----------------------------------------------------------------

KernelFault must_match(std::string_view text) {
  auto f = match_kernel_fault(text);
  if (!f) {
    ADD_FAILURE() << "no fault matched in: " << text;
    return {};
  }
  return *f;
}

TEST(KernelFaultXidTest, OldFormatPidWithoutName) {
  const KernelFault f =
      must_match("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.");
  EXPECT_EQ(f.kind, KernelFaultKind::GpuXid);
  EXPECT_EQ(f.xid, 79U);
  EXPECT_EQ(f.category, XidCategory::GpuLost);
  EXPECT_EQ(f.pci, "0000:3b:00");
  EXPECT_EQ(f.pid, 1234U);
  EXPECT_EQ(f.comm, "");
  EXPECT_EQ(f.description, "GPU has fallen off the bus.");
  EXPECT_FALSE(f.gpu_instance);
}

TEST(KernelFaultXidTest, CurrentFormatUnknownProcess) {
  const KernelFault f = must_match(
      "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
      "bus.");
  EXPECT_EQ(f.xid, 79U);
  EXPECT_EQ(f.category, XidCategory::GpuLost);
  EXPECT_EQ(f.pci, "0000:18:00");
  EXPECT_FALSE(f.pid);
  EXPECT_EQ(f.comm, "");
  EXPECT_EQ(f.description, "GPU has fallen off the bus.");
}

TEST(KernelFaultXidTest, CurrentFormatKnownProcess) {
  const KernelFault f = must_match(
      "NVRM: Xid (PCI:0000:af:00): 13, pid=2345, name=python3, Ch 00000008, intr 00000000. "
      "MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f1b_4a000000.");
  EXPECT_EQ(f.xid, 13U);
  EXPECT_EQ(f.category, XidCategory::GpuXid);
  EXPECT_EQ(f.pci, "0000:af:00");
  EXPECT_EQ(f.pid, 2345U);
  EXPECT_EQ(f.comm, "python3");
  EXPECT_EQ(f.description,
            "Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ "
            "0x7f1b_4a000000.");
}

TEST(KernelFaultXidTest, EccErrors) {
  const KernelFault dbe = must_match(
      "NVRM: Xid (PCI:0000:3b:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double "
      "bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition "
      "0.");
  EXPECT_EQ(dbe.xid, 48U);
  EXPECT_EQ(dbe.category, XidCategory::EccError);

  const KernelFault contained = must_match(
      "NVRM: Xid (PCI:0000:01:00): 94, pid=7194, name=python, Contained: CE User Channel (0x9). "
      "RST: No, D-RST: No");
  EXPECT_EQ(contained.xid, 94U);
  EXPECT_EQ(contained.category, XidCategory::EccError);
  EXPECT_EQ(contained.pid, 7194U);
  EXPECT_EQ(contained.comm, "python");
  EXPECT_EQ(contained.description, "Contained: CE User Channel (0x9). RST: No, D-RST: No");

  const KernelFault uncontained = must_match(
      "NVRM: Xid (PCI:0000:01:00): 95, pid='<unknown>', name=<unknown>, Uncontained: FBHUB. RST: "
      "Yes, D-RST: No");
  EXPECT_EQ(uncontained.xid, 95U);
  EXPECT_EQ(uncontained.category, XidCategory::EccError);
}

TEST(KernelFaultXidTest, RowRemapperEventsAreEccErrors) {
  const KernelFault recorded = must_match(
      "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, "
      "reset gpu to activate.");
  EXPECT_EQ(recorded.category, XidCategory::EccError);
  EXPECT_EQ(recorded.pid, 1896U);
  EXPECT_EQ(recorded.description,
            "Row Remapper: New row marked for remapping, reset gpu to activate.");
  const KernelFault failed =
      must_match("NVRM: Xid (PCI:0000:65:00): 64, pid='N/A', Row Remapper: Failed to remap row");
  EXPECT_EQ(failed.category, XidCategory::EccError);
  EXPECT_FALSE(failed.pid);
}

TEST(KernelFaultXidTest, NvlinkError) {
  const KernelFault f = must_match(
      "NVRM: Xid (PCI:0000:cb:00): 74, pid=3120, name=torchrun, NVLink: fatal error detected on "
      "link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)");
  EXPECT_EQ(f.xid, 74U);
  EXPECT_EQ(f.category, XidCategory::NvlinkError);
  EXPECT_EQ(f.pci, "0000:cb:00");
  EXPECT_EQ(f.comm, "torchrun");
  EXPECT_EQ(f.description,
            "NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)");
}

TEST(KernelFaultXidTest, MigAttribution) {
  const KernelFault gi = must_match(
      "NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, name=python, Contained: CE User "
      "Channel (0x9). RST: No, D-RST: No");
  EXPECT_EQ(gi.pci, "0000:01:00");
  EXPECT_EQ(gi.gpu_instance, 5U);
  EXPECT_FALSE(gi.compute_instance);
  const KernelFault ci = must_match(
      "NVRM: Xid (PCI:0000:01:00 GPU-I:01 GPU-CI:02): 13, pid=9, name=a, Graphics Exception");
  EXPECT_EQ(ci.gpu_instance, 1U);
  EXPECT_EQ(ci.compute_instance, 2U);
  EXPECT_EQ(ci.xid, 13U);
}

TEST(KernelFaultXidTest, NoProcessAndNoDescription) {
  const KernelFault f = must_match("NVRM: Xid (PCI:0000:06:00): 119, Timeout waiting for RPC");
  EXPECT_EQ(f.xid, 119U);
  EXPECT_FALSE(f.pid);
  EXPECT_EQ(f.description, "Timeout waiting for RPC");
  const KernelFault bare = must_match("NVRM: Xid (PCI:0000:06:00): 31");
  EXPECT_EQ(bare.xid, 31U);
  EXPECT_EQ(bare.description, "");
  // Drivers before the "PCI:" tag.
  EXPECT_EQ(must_match("NVRM: Xid (0000:02:00): 13, 0001 00000000").pci, "0000:02:00");
}

TEST(KernelFaultXidTest, Categories) {
  EXPECT_EQ(xid_category(79), XidCategory::GpuLost);
  EXPECT_EQ(xid_category(74), XidCategory::NvlinkError);
  for (uint32_t ecc : {48U, 63U, 64U, 94U, 95U, 160U, 171U, 172U}) {
    EXPECT_EQ(xid_category(ecc), XidCategory::EccError) << ecc;
  }
  for (uint32_t other : {13U, 31U, 43U, 45U, 92U, 119U, 120U}) {
    EXPECT_EQ(xid_category(other), XidCategory::GpuXid) << other;
  }
  EXPECT_EQ(to_string(XidCategory::GpuLost), "gpu_lost");
  EXPECT_EQ(to_string(XidCategory::EccError), "ecc_error");
  EXPECT_EQ(to_string(XidCategory::NvlinkError), "nvlink_error");
  EXPECT_EQ(to_string(XidCategory::GpuXid), "gpu_xid");
}

TEST(KernelFaultXidTest, OtherNvrmLinesAreNoFault) {
  // _krcLogUuidOnce prints these with the first Xid of a GPU.
  EXPECT_FALSE(
      match_kernel_fault("NVRM: GPU at PCI:0000:3b:00: GPU-5d6c1c1e-2b0a-c4f5-9b1d-6a1f3f0c2e11"));
  EXPECT_FALSE(match_kernel_fault("NVRM: GPU Board Serial Number: 1321020004567"));
  EXPECT_FALSE(match_kernel_fault("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15"));
  EXPECT_FALSE(
      match_kernel_fault("NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0x56:1474)"));
}

TEST(KernelFaultXidTest, QuotedXidIsNoFault) {
  // A daemon's log line forwarded to the kernel log, quoting the driver.
  EXPECT_FALSE(match_kernel_fault(
      "gpu-monitor[812]: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."));
  EXPECT_FALSE(match_kernel_fault(
      "job 12: saw Xid 79 on 0000:3b:00 (NVRM: Xid (PCI:0000:3b:00): 79, pid=1, x)"));
  EXPECT_FALSE(match_kernel_fault(" NVRM: Xid (PCI:0000:3b:00): 79, pid=1, x"));
}

TEST(KernelFaultXidTest, MalformedXidLines) {
  EXPECT_FALSE(match_kernel_fault("NVRM: Xid (PCI:0000:3b:00) 79, pid=1, no colon"));
  EXPECT_FALSE(match_kernel_fault("NVRM: Xid (PCI:0000:3b:00): abc, pid=1"));
  EXPECT_FALSE(match_kernel_fault("NVRM: Xid (PCI:0000:3b:00): 79 pid=1"));
  EXPECT_FALSE(match_kernel_fault("NVRM: Xid (PCI:zz:yy): 79, pid=1"));
  EXPECT_FALSE(match_kernel_fault("NVRM: Xid (): 79, pid=1"));
  EXPECT_FALSE(match_kernel_fault("NVRM: Xid (PCI:0000:3b:00"));
}

// --- NFS ---------------------------------------------------------------------

TEST(KernelFaultNfsTest, NotRespondingStillTrying) {
  const KernelFault f = must_match("nfs: server nfs01 not responding, still trying");
  EXPECT_EQ(f.kind, KernelFaultKind::NfsServerNotResponding);
  EXPECT_EQ(f.server, "nfs01");
  EXPECT_FALSE(f.timed_out);
}

TEST(KernelFaultNfsTest, NotRespondingTimedOut) {
  const KernelFault f = must_match("nfs: server 10.0.0.5 not responding, timed out");
  EXPECT_EQ(f.kind, KernelFaultKind::NfsServerNotResponding);
  EXPECT_EQ(f.server, "10.0.0.5");
  EXPECT_TRUE(f.timed_out);
}

TEST(KernelFaultNfsTest, ServerOk) {
  const KernelFault f = must_match("nfs: server nfs01 OK");
  EXPECT_EQ(f.kind, KernelFaultKind::NfsServerOk);
  EXPECT_EQ(f.server, "nfs01");
  const KernelFault x = must_match("nfs: server x OK");
  EXPECT_EQ(x.kind, KernelFaultKind::NfsServerOk);
  EXPECT_EQ(x.server, "x");
  EXPECT_EQ(must_match("nfs: server fd00::5 OK").server, "fd00::5");
}

TEST(KernelFaultNfsTest, OtherLinesAreNoFault) {
  // Other RPC programs and other NFS messages.
  EXPECT_FALSE(match_kernel_fault("lockd: server nfs01 not responding, still trying"));
  EXPECT_FALSE(match_kernel_fault("NFS: server nfs01 error: fileid changed"));
  EXPECT_FALSE(match_kernel_fault("NFS: Registering the id_resolver key type"));
  EXPECT_FALSE(match_kernel_fault("nfs: server nfs01 not responding"));
  EXPECT_FALSE(match_kernel_fault("nfs: server nfs01 OK, or not"));
  EXPECT_FALSE(match_kernel_fault("nfs: server  OK"));
  EXPECT_FALSE(match_kernel_fault("mount[77]: nfs: server nfs01 not responding, still trying"));
}

// --- OOM ---------------------------------------------------------------------

TEST(KernelFaultOomTest, GlobalOomKill) {
  const KernelFault f = must_match(
      "Out of memory: Killed process 40822 (python) total-vm:8923144kB, anon-rss:7812340kB, "
      "file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:15560kB oom_score_adj:0");
  EXPECT_EQ(f.kind, KernelFaultKind::OomKill);
  EXPECT_EQ(f.pid, 40822U);
  EXPECT_EQ(f.comm, "python");
  EXPECT_EQ(f.uid, 1000U);
  EXPECT_EQ(f.description, "Out of memory");
}

TEST(KernelFaultOomTest, MemcgOomKill) {
  const KernelFault f = must_match(
      "Memory cgroup out of memory: Killed process 40822 (python) total-vm:8923144kB, "
      "anon-rss:524288kB, file-rss:1024kB, shmem-rss:0kB, UID:0 pgtables:2048kB "
      "oom_score_adj:0");
  EXPECT_EQ(f.kind, KernelFaultKind::OomKill);
  EXPECT_EQ(f.pid, 40822U);
  EXPECT_EQ(f.comm, "python");
  EXPECT_EQ(f.uid, 0U);
  EXPECT_EQ(f.description, "Memory cgroup out of memory");
}

TEST(KernelFaultOomTest, OlderKernelsWithoutReasonOrUid) {
  const KernelFault f = must_match(
      "Killed process 40822 (python) total-vm:8923144kB, anon-rss:7812340kB, file-rss:0kB");
  EXPECT_EQ(f.kind, KernelFaultKind::OomKill);
  EXPECT_EQ(f.pid, 40822U);
  EXPECT_EQ(f.comm, "python");
  EXPECT_EQ(f.description, "");
  EXPECT_FALSE(f.uid);
  const KernelFault allocating = must_match(
      "Out of memory (oom_kill_allocating_task): Killed process 77 (stress) total-vm:1kB, "
      "anon-rss:1kB, file-rss:0kB, shmem-rss:0kB");
  EXPECT_EQ(allocating.description, "Out of memory (oom_kill_allocating_task)");
  EXPECT_EQ(allocating.pid, 77U);
}

TEST(KernelFaultOomTest, CommWithParenthesesAndSpaces) {
  const KernelFault f = must_match(
      "Out of memory: Killed process 7 (my (x) job) total-vm:1kB, anon-rss:1kB, file-rss:0kB");
  EXPECT_EQ(f.comm, "my (x) job");
}

TEST(KernelFaultOomTest, MemcgSummary) {
  const KernelFault f = must_match(
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
      "oom_memcg=/slurm/uid_0/job_12,task_memcg=/slurm/uid_0/job_12/step_0/task_0,task=python,"
      "pid=40822,uid=0");
  EXPECT_EQ(f.kind, KernelFaultKind::OomSummary);
  EXPECT_EQ(f.pid, 40822U);
  EXPECT_EQ(f.comm, "python");
  EXPECT_EQ(f.uid, 0U);
  EXPECT_EQ(f.constraint, "CONSTRAINT_MEMCG");
  EXPECT_EQ(f.memcg, "/slurm/uid_0/job_12");
  EXPECT_EQ(f.task_memcg, "/slurm/uid_0/job_12/step_0/task_0");
}

TEST(KernelFaultOomTest, GlobalSummary) {
  const KernelFault f = must_match(
      "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
      "task_memcg=/user.slice/user-1000.slice/session-2.scope,task=stress-ng,pid=1234,uid=1000");
  EXPECT_EQ(f.kind, KernelFaultKind::OomSummary);
  EXPECT_EQ(f.constraint, "CONSTRAINT_NONE");
  EXPECT_EQ(f.memcg, "");
  EXPECT_EQ(f.task_memcg, "/user.slice/user-1000.slice/session-2.scope");
  EXPECT_EQ(f.comm, "stress-ng");
  EXPECT_EQ(f.pid, 1234U);
  EXPECT_EQ(f.uid, 1000U);
}

TEST(KernelFaultOomTest, PaddedPidOfFirstSummaryFormat) {
  // 4.19 printed ",task=%s,pid=%5d,uid=%5d".
  const KernelFault f = must_match(
      "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
      "task_memcg=/,task=a.out,pid= 4321,uid=    0");
  EXPECT_EQ(f.pid, 4321U);
  EXPECT_EQ(f.uid, 0U);
  EXPECT_EQ(f.comm, "a.out");
}

TEST(KernelFaultOomTest, OtherOomLinesAreNoFault) {
  EXPECT_FALSE(match_kernel_fault(
      "python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0"));
  EXPECT_FALSE(match_kernel_fault(
      "oom_reaper: reaped process 40822 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB"));
  // The selection line of older kernels; the kill follows as "Killed process".
  EXPECT_FALSE(match_kernel_fault(
      "Memory cgroup out of memory: Kill process 40822 (python) score 1000 or sacrifice child"));
  EXPECT_FALSE(match_kernel_fault(
      "earlyoom[12]: Killed process 40822 (python) total-vm:1kB, anon-rss:1kB, file-rss:0kB"));
  EXPECT_FALSE(match_kernel_fault("Out of memory: Killed process x (python) total-vm:1kB"));
  EXPECT_FALSE(match_kernel_fault("Out of memory: Killed process 5 (python)"));
  // A summary fragment cut before the victim.
  EXPECT_FALSE(match_kernel_fault("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null)"));
}

TEST(KernelFaultKindTest, Names) {
  EXPECT_EQ(to_string(KernelFaultKind::GpuXid), "gpu_xid");
  EXPECT_EQ(to_string(KernelFaultKind::NfsServerNotResponding), "nfs_server_not_responding");
  EXPECT_EQ(to_string(KernelFaultKind::NfsServerOk), "nfs_server_ok");
  EXPECT_EQ(to_string(KernelFaultKind::OomKill), "oom_kill");
  EXPECT_EQ(to_string(KernelFaultKind::OomSummary), "oom_summary");
}

// --- the open error ----------------------------------------------------------

TEST(KmsgOpenErrorTest, DmesgRestrictWithoutCapSyslog) {
  KmsgAccess a;
  a.dmesg_restrict = true;
  a.printk_devkmsg = "ratelimit";
  EXPECT_EQ(kmsg_open_error("/dev/kmsg", EPERM, a),
            "kernel log: cannot read /dev/kmsg: Operation not permitted "
            "(kernel.dmesg_restrict=1 needs CAP_SYSLOG)");
}

TEST(KmsgOpenErrorTest, OtherCausesOfEperm) {
  KmsgAccess off;
  off.printk_devkmsg = "off";
  EXPECT_EQ(kmsg_open_error("/dev/kmsg", EPERM, off),
            "kernel log: cannot read /dev/kmsg: Operation not permitted "
            "(kernel.printk_devkmsg=off turns /dev/kmsg off)");
  KmsgAccess capable;
  capable.dmesg_restrict = true;
  capable.cap_syslog = true;
  EXPECT_EQ(kmsg_open_error("/dev/kmsg", EPERM, capable),
            "kernel log: cannot read /dev/kmsg: Operation not permitted "
            "(refused by a security module or the container's device policy)");
  KmsgAccess unrestricted;
  unrestricted.dmesg_restrict = false;
  EXPECT_EQ(kmsg_open_error("/dev/kmsg", EPERM, unrestricted),
            "kernel log: cannot read /dev/kmsg: Operation not permitted "
            "(refused by a security module or the container's device policy)");
}

TEST(KmsgOpenErrorTest, MissingDeviceAndOtherPaths) {
  EXPECT_EQ(kmsg_open_error("/dev/kmsg", ENOENT, {}),
            "kernel log: cannot read /dev/kmsg: No such file or directory "
            "(containers often have no /dev/kmsg: bind-mount the host's)");
  // Hints are about the device; a capture file gets the plain error.
  EXPECT_EQ(kmsg_open_error("/tmp/capture.kmsg", ENOENT, {}),
            "kernel log: cannot read /tmp/capture.kmsg: No such file or directory");
  EXPECT_EQ(kmsg_open_error("/dev/kmsg", EIO, {}),
            "kernel log: cannot read /dev/kmsg: Input/output error");
}

// --- the watcher on a file ---------------------------------------------------

class KmsgWatcherFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ckpt-kmsg-XXXXXX").string();
    const int fd = mkstemp(tmpl.data());
    ASSERT_GE(fd, 0);
    close(fd);
    path_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove(path_); }
  void append(const std::string& text) const {
    std::ofstream out(path_, std::ios::app | std::ios::binary);
    out << text;
  }
  std::string path_;
};

TEST_F(KmsgWatcherFileTest, ReadsFaultsCountsGapsAndMalformedRecords) {
  append(
      "6,100,5000000,-;NET: Registered protocol family 10\n"
      "3,101,5000100,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
      " SUBSYSTEM=pci\n"
      " DEVICE=+pci:0000:3b:00.0\n"
      "5,102,5000200,-;nfs: server nfs01 not responding, still trying\n"
      "garbage line\n"
      // 103..104 missing: overwritten in the capture.
      "3,105,5000300,-;Memory cgroup out of memory: Killed process 40822 (python) "
      "total-vm:8923144kB, anon-rss:7812340kB, file-rss:0kB, shmem-rss:0kB, UID:0 "
      "pgtables:15560kB oom_score_adj:0\n"
      "5,106,5000400,-;nfs: server nfs01 OK\n");
  auto w = KmsgWatcher::open(path_, /*from_end=*/false);
  ASSERT_TRUE(w) << w.error().message;
  const std::vector<KernelFaultRecord> faults = w->read_available();
  ASSERT_EQ(faults.size(), 4U);
  EXPECT_EQ(faults[0].record.seq, 101U);
  EXPECT_EQ(faults[0].record.mono_ns, 5000100000U);
  EXPECT_EQ(faults[0].record.level, 3);
  EXPECT_EQ(faults[0].record.dict.at("DEVICE"), "+pci:0000:3b:00.0");
  EXPECT_EQ(faults[0].fault.kind, KernelFaultKind::GpuXid);
  EXPECT_EQ(faults[0].fault.category, XidCategory::GpuLost);
  EXPECT_EQ(faults[1].fault.kind, KernelFaultKind::NfsServerNotResponding);
  EXPECT_EQ(faults[2].record.seq, 105U);
  EXPECT_EQ(faults[2].fault.kind, KernelFaultKind::OomKill);
  EXPECT_EQ(faults[2].fault.pid, 40822U);
  EXPECT_EQ(faults[3].fault.kind, KernelFaultKind::NfsServerOk);
  EXPECT_EQ(w->records_read(), 6U);  // the garbage line included
  EXPECT_EQ(w->malformed(), 1U);
  EXPECT_EQ(w->lost(), 2U);
  EXPECT_FALSE(w->error());
  EXPECT_TRUE(w->read_available().empty());  // nothing new
}

TEST_F(KmsgWatcherFileTest, FromEndSkipsWhatWasThereAndWaitsForWholeLines) {
  append("3,1,100,-;nfs: server old not responding, still trying\n");
  auto w = KmsgWatcher::open(path_);  // from the end, as on /dev/kmsg
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_TRUE(w->read_available().empty());
  EXPECT_EQ(w->records_read(), 0U);

  append("3,2,200,-;nfs: server new not resp");  // a writer midway through a line
  EXPECT_TRUE(w->read_available().empty());
  append("onding, timed out\n6,3,300,-;unrelated\n");
  const auto faults = w->read_available();
  ASSERT_EQ(faults.size(), 1U);
  EXPECT_EQ(faults[0].fault.server, "new");
  EXPECT_TRUE(faults[0].fault.timed_out);
  EXPECT_EQ(faults[0].record.seq, 2U);
  EXPECT_EQ(w->records_read(), 2U);
  EXPECT_EQ(w->lost(), 0U);
}

TEST_F(KmsgWatcherFileTest, MovedWatcherKeepsReading) {
  auto w = KmsgWatcher::open(path_);
  ASSERT_TRUE(w) << w.error().message;
  KmsgWatcher moved = std::move(*w);
  EXPECT_EQ(w->fd(), -1);
  EXPECT_GE(moved.fd(), 0);
  append("3,7,100,-;nfs: server a OK\n");
  EXPECT_EQ(moved.read_available().size(), 1U);
  EXPECT_TRUE(w->read_available().empty());
}

TEST(KmsgWatcherOpenTest, ErrorsNameThePath) {
  auto missing = KmsgWatcher::open("/nonexistent/ckptscope-kmsg");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message,
            "kernel log: cannot read /nonexistent/ckptscope-kmsg: No such file or directory");
  auto dir = KmsgWatcher::open(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("is not /dev/kmsg, a file or a FIFO"), std::string::npos)
      << dir.error().message;
}

}  // namespace
}  // namespace ckpt
