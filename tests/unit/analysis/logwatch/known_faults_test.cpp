// The known-fault catalogue (analysis/logwatch/known_faults.json): one test
// per entry with the message text its driver prints (each with its source),
// the lines a healthy node prints that must not match, and every mistake a
// catalogue author can make named in the error.
#include "analysis/logwatch/known_faults.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/vocabulary.h"

namespace ckpt::logwatch {
namespace {

using ::testing::HasSubstr;

// Lines each entry must name, as the kernel and its drivers print them.
const std::map<std::string, std::vector<std::string>>& driver_lines() {
  static const std::map<std::string, std::vector<std::string>> lines = {
      // NVIDIA driver (nv-rm); the Xid catalogue: docs.nvidia.com/deploy/xid-errors.
      {"xid-gpu-lost",
       {"NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.",
        "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
        "bus."}},
      {"xid-ecc-error",
       {"NVRM: Xid (PCI:0000:07:00): 48, pid=2301, name=python, An uncorrectable double bit error "
        "(DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.",
        "NVRM: Xid (PCI:0000:cb:00): 95, pid='<unknown>', name=<unknown>, Uncontained: FBHUB. "
        "RST: Yes, D-RST: No",
        "NVRM: Xid (PCI:0000:01:00 GPU-I:05): 64, pid=7194, name=python, Row Remapper Error"}},
      {"xid-nvlink-error",
       {"NVRM: Xid (PCI:0000:cb:00): 74, pid=3321, name=python3, NVLink: fatal error detected on "
        "link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)"}},
      {"xid-other",
       {"NVRM: Xid (PCI:0000:18:00): 119, pid=1887, name=python3, Timeout after 6s of waiting for "
        "RPC response from GPU0 GSP!",
        "NVRM: Xid (PCI:0000:3b:00): 31, pid=2456, name=python, Ch 00000010, intr 10000000. MMU "
        "Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f2c_00000000."}},
      // fs/nfs/client.c, net/sunrpc/clnt.c call_timeout: printk(KERN_NOTICE "%s: server %s not
      // responding, %s\n", ...).
      {"nfs-server-not-responding",
       {"nfs: server fs01 not responding, still trying",
        "nfs: server 10.0.0.3 not responding, timed out"}},
      // mm/oom_kill.c __oom_kill_process and dump_oom_summary.
      {"oom-kill",
       {"Out of memory: Killed process 40822 (python) total-vm:8923144kB, anon-rss:511920kB, "
        "file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:1200kB oom_score_adj:0",
        "Memory cgroup out of memory: Killed process 4242 (python3) total-vm:1234kB, "
        "anon-rss:1000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:40kB oom_score_adj:0"}},
      // nvidia-nvswitch driver: SXid messages (docs.nvidia.com/datacenter/tesla/fabric-manager).
      {"nvswitch-sxid",
       {"nvidia-nvswitch3: SXid (PCI:0000:c5:00.0): 12028, Non-fatal, Link 46 egress non-posted "
        "PRIV error (First)",
        "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30 LTSSM Fault Up"}},
      // arch/x86/kernel/cpu/mce/core.c: pr_emerg(HW_ERR "CPU %d: Machine Check%s: %Lx Bank %d:
      // %016Lx\n"); mce_notify_irq: pr_info(HW_ERR "Machine check events logged\n").
      {"machine-check",
       {"mce: [Hardware Error]: Machine check events logged",
        "mce: [Hardware Error]: CPU 12: Machine Check Exception: 5 Bank 4: b200000000070f0f",
        "mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 5: be00000000800400",
        "mce: [Hardware Error]: Machine check: Processor context corrupt"}},
      // drivers/pci/pcie/aer.c: "%s%s error message received from %s" (6.x),
      // "... error received: %s" (5.x), aer_print_error's "PCIe Bus Error: severity=%s"; the
      // severity strings read "Uncorrected" before v6.7 and "Uncorrectable" since.
      {"pcie-aer-uncorrectable",
       {"pcieport 0000:00:03.1: AER: Uncorrected (Fatal) error received: 0000:3b:00.0",
        "pcieport 0000:00:01.0: AER: Uncorrectable (Non-Fatal) error message received from "
        "0000:3b:00.0",
        "pcieport 0000:00:01.0: AER: Multiple Uncorrectable (Fatal) error message received from "
        "0000:3b:00.0",
        "nvidia 0000:3b:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction "
        "Layer, (Requester ID)"}},
      // drivers/edac/edac_mc.c edac_ue_error: edac_mc_printk(mci, KERN_EMERG, "%d UE %s%son %s
      // (%s%s)\n", ...).
      {"edac-uncorrectable",
       {"EDAC MC0: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 "
        "page:0x8a1b2 offset:0x0 grain:32)",
        "EDAC skx MC2: 1 UE Uncorrected error on CPU_SrcID#1_MC#0_Chan#2_DIMM#0 (channel:2 "
        "slot:0)"}},
      // mlx5e_update_carrier: netdev_info(priv->netdev, "Link down\n") (Ethernet and the
      // IPoIB netdev of an InfiniBand port); e1000e/igb/ixgbe/i40e/ice/bnxt_en: "NIC Link is
      // Down".
      {"nic-link-down",
       {"mlx5_core 0000:3b:00.0 ens1f0np0: Link down", "mlx5_core 0000:ca:00.0 ibp202s0: Link down",
        "i40e 0000:3b:00.1 ens1f1: NIC Link is Down",
        "bnxt_en 0000:41:00.0 eno1np0: NIC Link is Down", "e1000e: eno1 NIC Link is Down"}},
      // drivers/net/ethernet/mellanox/mlx5/core/health.c poll_health: "device's health
      // compromised - reached miss count".
      {"mlx5-health",
       {"mlx5_core 0000:3b:00.0: poll_health:800:(pid 0): device's health compromised - reached "
        "miss count",
        "mlx5_core 0000:3b:00.1: mlx5_health_check:720:(pid 0): Fatal error 1 detected, "
        "firmware fatal error"}},
      // Lustre client (lustre/ptlrpc/client.c ptlrpc_expire_one_request, import.c).
      {"lustre-timeout",
       {"Lustre: 3145:0:(client.c:2146:ptlrpc_expire_one_request()) @@@ Request sent has timed "
        "out for slow reply: [sent 1577000000/real 1577000000]  req@ffff9c2d4a2b6c00 "
        "x1653000000000/t0(0) o4->scratch-OST0003-osc-ffff9c2d@10.0.0.3@o2ib:6/4",
        "Lustre: scratch-OST0003-osc-ffff9c2d3a4b5000: Connection to scratch-OST0003 (at "
        "10.0.0.3@o2ib) was lost; in progress operations using this service will wait for "
        "recovery to complete",
        "LustreError: 11-0: scratch-OST0003-osc-ffff9c2d3a4b5000: operation ost_write to node "
        "10.0.0.3@o2ib failed: rc = -107"}},
      // IBM Storage Scale (mmfs) messages in the system log.
      {"gpfs-expel",
       {"mmfs[4123]: [E] Lost membership in cluster gpfs.hpc.local. Unmounting file systems.",
        "mmfsd: [N] This node (node17) is being expelled from cluster gpfs.hpc.local",
        "mmfs: [W] The lease renewal is overdue. Pinging to check if the cluster manager is "
        "alive."}},
      // fs/ext4/super.c __ext4_error, ext4_handle_error; fs/jbd2/journal.c; fs/xfs; fs/btrfs.
      {"filesystem-error",
       {"EXT4-fs error (device nvme0n1p2): ext4_find_entry:1455: inode #2: comm python: reading "
        "directory lblock 0",
        "EXT4-fs (sda1): Remounting filesystem read-only", "Aborting journal on device sda1-8.",
        "XFS (sdb1): metadata I/O error in \"xfs_trans_read_buf_map\" at daddr 0x1 len 1 error 5",
        "XFS (dm-0): Corruption detected. Unmount and run xfs_repair",
        "BTRFS error (device nvme1n1): bdev /dev/nvme1n1 errs: wr 1, rd 0, flush 0, corrupt 0, "
        "gen 0"}},
      // block/blk-core.c blk_print_req_error (5.13+), blk_update_request before; fs/buffer.c.
      {"block-io-error",
       {"I/O error, dev nvme0n1, sector 2048 op 0x1:(WRITE) flags 0x800 phys_seg 1 prio class 0",
        "blk_update_request: I/O error, dev sda, sector 123456 op 0x0:(READ) flags 0x0 phys_seg 1 "
        "prio class 0",
        "critical medium error, dev sdb, sector 77 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0",
        "Buffer I/O error on dev sda1, logical block 0, async page read"}},
      // drivers/nvme/host/pci.c nvme_timeout, nvme_dev_disable.
      {"nvme-controller",
       {"nvme nvme0: I/O 12 QID 3 timeout, aborting",
        "nvme nvme1: I/O 305 (Write) QID 7 timeout, reset controller",
        "nvme nvme0: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0xffff",
        "nvme nvme2: Device not ready; aborting reset, CSTS=0x1"}},
      // kernel/hung_task.c check_hung_task: "INFO: task %s:%d blocked for more than %ld
      // seconds.".
      {"hung-task",
       {"INFO: task python3:48211 blocked for more than 120 seconds.",
        "INFO: task kworker/u256:3:917 blocked for more than 122 seconds."}},
      // kernel/watchdog.c watchdog_timer_fn; kernel/watchdog_perf.c.
      {"cpu-lockup",
       {"watchdog: BUG: soft lockup - CPU#17 stuck for 22s! [python3:48211]",
        "NMI watchdog: Watchdog detected hard LOCKUP on cpu 5"}},
      // kernel/rcu/tree_stall.h print_other_cpu_stall, print_cpu_stall.
      {"rcu-stall",
       {"rcu: INFO: rcu_sched self-detected stall on CPU",
        "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:"}},
      // kernel/panic.c, arch/x86/mm/fault.c, arch/x86/kernel/traps.c, lib/bug.c.
      {"kernel-oops",
       {"Kernel panic - not syncing: Fatal exception",
        "BUG: unable to handle page fault for address: ffffffffc0a1b2c3",
        "general protection fault, probably for non-canonical address 0xdead000000000100: 0000 "
        "[#1] PREEMPT SMP NOPTI",
        "Oops: 0000 [#1] SMP PTI", "kernel BUG at mm/slub.c:4321!"}},
  };
  return lines;
}

const KnownFaults& catalogue() { return KnownFaults::builtin(); }

void expect_named(const std::string& id) {
  SCOPED_TRACE(id);
  const auto& lines = driver_lines();
  auto it = lines.find(id);
  ASSERT_NE(it, lines.end()) << "no driver lines for " << id;
  const KnownFault* entry = nullptr;
  for (const auto& f : catalogue().entries())
    if (f.id == id) entry = &f;
  ASSERT_NE(entry, nullptr) << "no catalogue entry " << id;
  for (const std::string& line : it->second) {
    const KnownFault* got = catalogue().match(line);
    ASSERT_NE(got, nullptr) << "not a known fault: " << line;
    EXPECT_EQ(got->id, id) << line;
    EXPECT_EQ(got->kind, entry->kind);
    // Through syslog or the journal, after `kernel:` and a kernel time stamp.
    const KnownFault* via_syslog = catalogue().match("kernel: [ 8812.231134] " + line);
    ASSERT_NE(via_syslog, nullptr) << "kernel: [...] " << line;
    EXPECT_EQ(via_syslog->id, id);
  }
}

TEST(KnownFaults, XidGpuLost) { expect_named("xid-gpu-lost"); }
TEST(KnownFaults, XidEccError) { expect_named("xid-ecc-error"); }
TEST(KnownFaults, XidNvlinkError) { expect_named("xid-nvlink-error"); }
TEST(KnownFaults, XidOther) { expect_named("xid-other"); }
TEST(KnownFaults, NfsServerNotResponding) { expect_named("nfs-server-not-responding"); }
TEST(KnownFaults, OomKill) { expect_named("oom-kill"); }
TEST(KnownFaults, NvswitchSxid) { expect_named("nvswitch-sxid"); }
TEST(KnownFaults, MachineCheck) { expect_named("machine-check"); }
TEST(KnownFaults, PcieAerUncorrectable) { expect_named("pcie-aer-uncorrectable"); }
TEST(KnownFaults, EdacUncorrectable) { expect_named("edac-uncorrectable"); }
TEST(KnownFaults, NicLinkDown) { expect_named("nic-link-down"); }
TEST(KnownFaults, Mlx5Health) { expect_named("mlx5-health"); }
TEST(KnownFaults, LustreTimeout) { expect_named("lustre-timeout"); }
TEST(KnownFaults, GpfsExpel) { expect_named("gpfs-expel"); }
TEST(KnownFaults, FilesystemError) { expect_named("filesystem-error"); }
TEST(KnownFaults, BlockIoError) { expect_named("block-io-error"); }
TEST(KnownFaults, NvmeController) { expect_named("nvme-controller"); }
TEST(KnownFaults, HungTask) { expect_named("hung-task"); }
TEST(KnownFaults, CpuLockup) { expect_named("cpu-lockup"); }
TEST(KnownFaults, RcuStall) { expect_named("rcu-stall"); }
TEST(KnownFaults, KernelOops) { expect_named("kernel-oops"); }

// Every entry has its test above, and every test its entry.
TEST(KnownFaults, EveryEntryHasItsDriverLines) {
  std::set<std::string> entries;
  for (const auto& f : catalogue().entries()) entries.insert(f.id);
  std::set<std::string> tested;
  for (const auto& [id, lines] : driver_lines()) tested.insert(id);
  EXPECT_EQ(entries, tested);
}

// What a healthy node prints beside them: the recovery, corrected errors, a
// container's veth, a link coming up, a quoted fault in an application's line.
TEST(KnownFaults, AHealthyNodesLinesAreNone) {
  for (const char* line : {
           "nfs: server fs01 OK",
           "mce: CMCI storm subsided: switching to interrupt mode",
           "pcieport 0000:00:01.0: AER: Corrected error message received from 0000:3b:00.0",
           "nvidia 0000:3b:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
           "(Receiver ID)",
           "EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1)",
           "mlx5_core 0000:3b:00.0 ens1f0np0: Link up",
           "cni0: port 3(veth4c1a2b3) entered disabled state",
           "IPv6: ADDRCONF(NETDEV_CHANGE): veth4c1a2b3: link becomes ready",
           "EXT4-fs (nvme0n1p2): re-mounted. Opts: errors=remount-ro",
           "systemd[1]: Started Session 12 of User root.",
           "job[12]: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.",
           "python3[4242]: saw 'INFO: task x:1 blocked for more than 1 seconds.' in a test",
       })
    EXPECT_EQ(catalogue().match(line), nullptr) << line;
}

TEST(KnownFaults, EntriesNameVocabularyKindsAndSeverities) {
  for (const auto& f : catalogue().entries()) {
    EXPECT_TRUE(is_node_log_fault_kind(f.kind)) << f.id;
    EXPECT_LE(f.severity, Severity{3}) << f.id << ": a known fault is err or worse";
    EXPECT_FALSE(f.doc.empty()) << f.id;
    EXPECT_NE(f.kernel_log.has_value(), !f.patterns.empty()) << f.id;
  }
}

Expected<KnownFaults> parse_one(const std::string& entry) {
  return KnownFaults::parse(R"({"version": 1, "faults": [)" + entry + "]}", "test.json");
}

TEST(KnownFaults, EveryMistakeInACatalogueIsNamed) {
  const std::string ok =
      R"({"id": "a", "kind": "hung_task", "severity": "err", "doc": "d", "match": ["x"]})";
  ASSERT_TRUE(parse_one(ok)) << parse_one(ok).error().message;
  auto error = [](const std::string& entry) {
    auto r = parse_one(entry);
    return r ? std::string("(parsed)") : r.error().message;
  };
  EXPECT_THAT(
      error(R"({"id": "a", "kind": "stall", "severity": "err", "doc": "d", "match": ["x"]})"),
      HasSubstr("fault 0 \"a\": kind \"stall\" is not a node-log fault kind"));
  EXPECT_THAT(
      error(R"({"id": "a", "kind": "hung_task", "severity": "loud", "doc": "d", "match": ["x"]})"),
      HasSubstr("severity \"loud\" is not a syslog level"));
  EXPECT_THAT(error(R"({"id": "a", "kind": "hung_task", "severity": "err", "doc": "d"})"),
              HasSubstr("not neither"));
  EXPECT_THAT(error(R"({"id": "a", "kind": "hung_task", "severity": "err", "doc": "d",
                        "match": ["x"], "kernel_log": "oom_kill"})"),
              HasSubstr("not both"));
  EXPECT_THAT(error(R"({"id": "a", "kind": "hung_task", "severity": "err", "doc": "d",
                        "match": ["(unclosed"]})"),
              HasSubstr("pattern \"(unclosed\" does not compile"));
  EXPECT_THAT(error(R"({"id": "a", "kind": "gpu_xid", "severity": "err", "doc": "d",
                        "kernel_log": "gpu_xid"})"),
              HasSubstr("\"xid_category\" must be a non-empty string"));
  EXPECT_THAT(error(R"({"id": "a", "kind": "gpu_xid", "severity": "err", "doc": "d",
                        "kernel_log": "gpu_xid", "xid_category": "gpu_melted"})"),
              HasSubstr("xid_category \"gpu_melted\" is not one of"));
  EXPECT_THAT(error(R"({"id": "a", "kind": "gpu_xid", "severity": "err", "doc": "d",
                        "kernel_log": "dmesg"})"),
              HasSubstr("kernel_log \"dmesg\" is not one of"));
  EXPECT_THAT(error(R"({"id": "a", "kind": "hung_task", "severity": "err", "doc": "d",
                        "match": ["x"], "colour": "red"})"),
              HasSubstr("unknown key \"colour\""));
  EXPECT_THAT(error(ok + ", " + ok), HasSubstr("fault id \"a\" is used twice"));
  EXPECT_THAT(KnownFaults::parse(R"({"version": 2, "faults": []})", "t.json").error().message,
              HasSubstr("\"version\" must be 1"));
  EXPECT_THAT(KnownFaults::parse("{not json", "t.json").error().message, HasSubstr("t.json"));
}

}  // namespace
}  // namespace ckpt::logwatch
