// The exporter's `workload` label from real cgroup paths and /proc/PID/cgroup
// texts as Slurm (cgroup v1 and v2) and the kubelet (systemd and cgroupfs
// drivers) lay them out, and WorkloadNamer against a fake /proc and
// /var/log/pods in a scratch directory.
#include "apps/exporter/workload_identity.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

using Kind = CgroupJob::Kind;

// A pod UID as the API prints it, and as the systemd driver spells it.
constexpr const char* kUid = "0a1b2c3d-4e5f-6789-abcd-ef0123456789";
constexpr const char* kUidUnderscores = "0a1b2c3d_4e5f_6789_abcd_ef0123456789";
// A static pod's UID: the hash of its manifest, 32 hex digits.
constexpr const char* kStaticUid = "6f5e4d3c2b1a09f8e7d6c5b4a3928170";
// A container id as containerd and CRI-O print it.
constexpr const char* kContainer =
    "3f1c2b4a5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708";

std::string str(const char* s) { return s; }

::testing::AssertionResult is_slurm(const std::optional<CgroupJob>& job, const std::string& id) {
  if (!job) return ::testing::AssertionFailure() << "no job, expected slurm job " << id;
  if (job->kind != Kind::Slurm) return ::testing::AssertionFailure() << "a pod " << job->id;
  if (job->id != id) return ::testing::AssertionFailure() << "slurm job " << job->id;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult is_pod(const std::optional<CgroupJob>& job, const std::string& uid) {
  if (!job) return ::testing::AssertionFailure() << "no job, expected pod " << uid;
  if (job->kind != Kind::KubernetesPod)
    return ::testing::AssertionFailure() << "slurm job " << job->id;
  if (job->id != uid) return ::testing::AssertionFailure() << "pod " << job->id;
  return ::testing::AssertionSuccess();
}

// --- job_of_cgroup_path ---------------------------------------------------

TEST(WorkloadCgroupPathTest, SlurmCgroupV2TaskIsInItsJob) {
  EXPECT_TRUE(is_slurm(
      job_of_cgroup_path("/system.slice/slurmstepd.scope/job_42/step_0/user/task_0"), "42"));
  EXPECT_TRUE(
      is_slurm(job_of_cgroup_path("/system.slice/slurmstepd.scope/job_42/step_batch/user"), "42"));
  EXPECT_TRUE(
      is_slurm(job_of_cgroup_path("/system.slice/slurmstepd.scope/job_1234567"), "1234567"));
}

TEST(WorkloadCgroupPathTest, SlurmCgroupV1StepIsInItsJob) {
  EXPECT_TRUE(is_slurm(job_of_cgroup_path("/slurm/uid_1000/job_42/step_batch"), "42"));
  EXPECT_TRUE(is_slurm(job_of_cgroup_path("/slurm/uid_1000/job_42/step_0/task_3"), "42"));
}

TEST(WorkloadCgroupPathTest, SlurmdItselfIsNoJob) {
  // slurmstepd's own processes sit beside the jobs, not in one.
  EXPECT_FALSE(job_of_cgroup_path("/system.slice/slurmstepd.scope/system"));
  EXPECT_FALSE(job_of_cgroup_path("/system.slice/slurmd.service"));
  EXPECT_FALSE(job_of_cgroup_path("/slurm/uid_1000"));
}

TEST(WorkloadCgroupPathTest, JobComponentMustBeDigits) {
  EXPECT_FALSE(job_of_cgroup_path("/system.slice/slurmstepd.scope/job_abc/step_0"));
  EXPECT_FALSE(job_of_cgroup_path("/system.slice/slurmstepd.scope/job_/step_0"));
  EXPECT_FALSE(job_of_cgroup_path("/system.slice/slurmstepd.scope/job_42a/step_0"));
  EXPECT_FALSE(job_of_cgroup_path("/user.slice/myjob_42"));
}

TEST(WorkloadCgroupPathTest, KubeletSystemdDriverBurstablePod) {
  const std::string path = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                           str(kUidUnderscores) + ".slice/cri-containerd-" + kContainer + ".scope";
  EXPECT_TRUE(is_pod(job_of_cgroup_path(path), kUid)) << path;
  // The pod's own cgroup (the pause container's parent) too.
  EXPECT_TRUE(is_pod(job_of_cgroup_path("/kubepods.slice/kubepods-besteffort.slice/"
                                        "kubepods-besteffort-pod" +
                                        str(kUidUnderscores) + ".slice"),
                     kUid));
  // CRI-O names its scopes crio-<id>.scope.
  EXPECT_TRUE(
      is_pod(job_of_cgroup_path("/kubepods.slice/kubepods-burstable.slice/"
                                "kubepods-burstable-pod" +
                                str(kUidUnderscores) + ".slice/crio-" + kContainer + ".scope"),
             kUid));
}

TEST(WorkloadCgroupPathTest, KubeletSystemdDriverGuaranteedPod) {
  // Guaranteed pods have no QoS slice: directly under kubepods.slice.
  const std::string path = "/kubepods.slice/kubepods-pod" + str(kUidUnderscores) +
                           ".slice/cri-containerd-" + kContainer + ".scope";
  EXPECT_TRUE(is_pod(job_of_cgroup_path(path), kUid)) << path;
}

TEST(WorkloadCgroupPathTest, KubeletWithACgroupRootOfItsOwn) {
  // kind sets the kubelet's cgroupRoot to /kubelet: with the systemd driver
  // every slice name then carries that prefix.
  const std::string path =
      "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/"
      "kubelet-kubepods-burstable-pod" +
      str(kUidUnderscores) + ".slice/cri-containerd-" + kContainer + ".scope";
  EXPECT_TRUE(is_pod(job_of_cgroup_path(path), kUid)) << path;
  EXPECT_FALSE(
      job_of_cgroup_path("/kubelet.slice/kubelet-kubepods.slice/"
                         "kubelet-kubepods-burstable.slice"));
}

TEST(WorkloadCgroupPathTest, AnotherPodSeenFromInsideACgroupNamespace) {
  // The exporter's DaemonSet pod has a cgroup namespace of its own: with
  // hostPID it reads other pods' paths relative to its own cgroup.
  EXPECT_TRUE(is_pod(job_of_cgroup_path("/../../pod" + str(kUid) + "/" + kContainer), kUid));
  EXPECT_TRUE(is_pod(job_of_cgroup_path("/../../kubepods-burstable-pod" + str(kUidUnderscores) +
                                        ".slice/cri-containerd-" + kContainer + ".scope"),
                     kUid));
  EXPECT_FALSE(job_of_cgroup_path("/../../system.slice/sshd.service"));
}

TEST(WorkloadCgroupPathTest, KubeletQosSlicesAloneAreNoPod) {
  EXPECT_FALSE(job_of_cgroup_path("/kubepods.slice"));
  EXPECT_FALSE(job_of_cgroup_path("/kubepods.slice/kubepods-burstable.slice"));
  EXPECT_FALSE(job_of_cgroup_path("/kubepods.slice/kubepods-besteffort.slice"));
  EXPECT_FALSE(job_of_cgroup_path("/kubepods/burstable"));
}

TEST(WorkloadCgroupPathTest, KubeletCgroupfsDriverPod) {
  const std::string burstable = "/kubepods/burstable/pod" + str(kUid) + "/" + kContainer;
  EXPECT_TRUE(is_pod(job_of_cgroup_path(burstable), kUid)) << burstable;
  const std::string guaranteed = "/kubepods/pod" + str(kUid) + "/" + kContainer;
  EXPECT_TRUE(is_pod(job_of_cgroup_path(guaranteed), kUid)) << guaranteed;
  // Under a --cgroup-root (cgroupfs driver).
  const std::string rooted = "/kubelet/kubepods/besteffort/pod" + str(kUid) + "/" + kContainer;
  EXPECT_TRUE(is_pod(job_of_cgroup_path(rooted), kUid)) << rooted;
}

TEST(WorkloadCgroupPathTest, StaticPodUidIs32Hex) {
  const std::string systemd = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                              str(kStaticUid) + ".slice/cri-containerd-" + kContainer + ".scope";
  EXPECT_TRUE(is_pod(job_of_cgroup_path(systemd), kStaticUid)) << systemd;
  const std::string cgroupfs = "/kubepods/burstable/pod" + str(kStaticUid) + "/" + kContainer;
  EXPECT_TRUE(is_pod(job_of_cgroup_path(cgroupfs), kStaticUid)) << cgroupfs;
}

TEST(WorkloadCgroupPathTest, MalformedPodUidIsNoPod) {
  // 31 hex digits, a non-hex digit, a UUID with a separator in the wrong place.
  EXPECT_FALSE(job_of_cgroup_path("/kubepods/burstable/pod6f5e4d3c2b1a09f8e7d6c5b4a392817/x"));
  EXPECT_FALSE(job_of_cgroup_path("/kubepods/burstable/podzf5e4d3c2b1a09f8e7d6c5b4a3928170/x"));
  EXPECT_FALSE(job_of_cgroup_path("/kubepods/burstable/pod0a1b2c3d4-e5f-6789-abcd-ef0123456789/x"));
}

TEST(WorkloadCgroupPathTest, PodComponentOutsideKubepodsIsNoPod) {
  EXPECT_FALSE(job_of_cgroup_path("/system.slice/pod" + str(kUid) + "/worker"));
  EXPECT_FALSE(job_of_cgroup_path("/user.slice/user-1000.slice/pod" + str(kStaticUid)));
  // podman's pods and containers are not the kubelet's.
  EXPECT_FALSE(job_of_cgroup_path("/machine.slice/machine-libpod_pod_" + str(kStaticUid) +
                                  ".slice/libpod-" + kContainer + ".scope"));
}

TEST(WorkloadCgroupPathTest, SystemServicesAndRootAreNoJob) {
  EXPECT_FALSE(job_of_cgroup_path("/system.slice/sshd.service"));
  EXPECT_FALSE(job_of_cgroup_path("/system.slice/containerd.service"));
  EXPECT_FALSE(job_of_cgroup_path("/user.slice/user-1000.slice/session-3.scope"));
  EXPECT_FALSE(job_of_cgroup_path("/init.scope"));
  EXPECT_FALSE(job_of_cgroup_path("/"));
  EXPECT_FALSE(job_of_cgroup_path(""));
}

// --- job_of_proc_cgroup ---------------------------------------------------

TEST(WorkloadProcCgroupTest, PureCgroupV2) {
  EXPECT_TRUE(is_slurm(
      job_of_proc_cgroup("0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n"), "42"));
  const std::string pod = "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                          str(kUidUnderscores) + ".slice/cri-containerd-" + kContainer + ".scope\n";
  EXPECT_TRUE(is_pod(job_of_proc_cgroup(pod), kUid));
  EXPECT_FALSE(job_of_proc_cgroup("0::/system.slice/sshd.service\n"));
  EXPECT_FALSE(job_of_proc_cgroup("0::/\n"));
  EXPECT_FALSE(job_of_proc_cgroup(""));
  // Without the final newline.
  EXPECT_TRUE(is_slurm(job_of_proc_cgroup("0::/system.slice/slurmstepd.scope/job_7/step_0"), "7"));
}

// A hybrid node (systemd's default before v2): Slurm's cgroup/v1 plugin puts
// the job in the cpuset, memory, devices and freezer hierarchies; systemd's
// own hierarchy, cpu,cpuacct and the (empty) v2 one still say slurmd.
TEST(WorkloadProcCgroupTest, HybridJobOnlyInV1Lines) {
  const std::string text =
      "12:hugetlb:/\n"
      "11:devices:/slurm/uid_1000/job_42/step_0/task_0\n"
      "10:memory:/slurm/uid_1000/job_42/step_0/task_0\n"
      "9:cpuset:/slurm/uid_1000/job_42/step_0\n"
      "8:freezer:/slurm/uid_1000/job_42/step_0\n"
      "7:net_cls,net_prio:/\n"
      "6:pids:/system.slice/slurmd.service\n"
      "5:blkio:/system.slice/slurmd.service\n"
      "4:perf_event:/\n"
      "3:cpu,cpuacct:/system.slice/slurmd.service\n"
      "2:rdma:/\n"
      "1:name=systemd:/system.slice/slurmd.service\n"
      "0::/system.slice/slurmd.service\n";
  EXPECT_TRUE(is_slurm(job_of_proc_cgroup(text), "42"));
}

TEST(WorkloadProcCgroupTest, HybridV2LineWinsOverV1Lines) {
  // The v2 line comes last in the file, yet it is the one that counts.
  const std::string text =
      "4:memory:/slurm/uid_1000/job_42/step_0\n"
      "3:cpu,cpuacct:/slurm/uid_1000/job_42/step_0\n"
      "1:name=systemd:/system.slice/slurmstepd.scope\n"
      "0::/system.slice/slurmstepd.scope/job_7/step_0/user/task_0\n";
  EXPECT_TRUE(is_slurm(job_of_proc_cgroup(text), "7"));
}

TEST(WorkloadProcCgroupTest, HybridNoJobAnywhere) {
  const std::string text =
      "3:cpu,cpuacct:/system.slice/sshd.service\n"
      "1:name=systemd:/system.slice/sshd.service\n"
      "0::/system.slice/sshd.service\n";
  EXPECT_FALSE(job_of_proc_cgroup(text));
}

TEST(WorkloadProcCgroupTest, CgroupfsKubeletOnCgroupV1) {
  const std::string text = "5:memory:/kubepods/burstable/pod" + str(kUid) + "/" + kContainer +
                           "\n"
                           "3:cpu,cpuacct:/kubepods/burstable/pod" +
                           str(kUid) + "/" + kContainer +
                           "\n"
                           "1:name=systemd:/kubepods/burstable/pod" +
                           str(kUid) + "/" + kContainer + "\n";
  EXPECT_TRUE(is_pod(job_of_proc_cgroup(text), kUid));
}

// --- WorkloadNamer ----------------------------------------------------------

class WorkloadNamerTest : public ::testing::Test {
 protected:
  WorkloadNamerTest() {
    std::filesystem::create_directories(scratch_ / "proc");
    std::filesystem::create_directories(scratch_ / "pods");
  }

  WorkloadNamerOptions options() const {
    return WorkloadNamerOptions{scratch_ / "proc", scratch_ / "pods"};
  }

  // <proc_root>/<tgid>/cgroup with a cgroup v2 line for `path`.
  void put(uint32_t tgid, const std::string& path) {
    const std::string dir = scratch_ / ("proc/" + std::to_string(tgid));
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/cgroup", std::ios::trunc) << "0::" << path << "\n";
  }
  void gone(uint32_t tgid) {
    std::filesystem::remove_all(scratch_ / ("proc/" + std::to_string(tgid)));
  }
  void pod_log_dir(const std::string& name) {
    std::filesystem::create_directories(scratch_ / ("pods/" + name));
  }

  static std::string slurm_path(int job) {
    return "/system.slice/slurmstepd.scope/job_" + std::to_string(job) + "/step_0/user/task_0";
  }
  static std::string pod_path(const std::string& uid_underscores) {
    return "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uid_underscores +
           ".slice/cri-containerd-" + kContainer + ".scope";
  }

  test::ScratchDir scratch_;
  static constexpr uint64_t kT0 = 1'000'000'000'000;  // any boot time, in ns
};

TEST_F(WorkloadNamerTest, SlurmJobLabel) {
  WorkloadNamer namer(options());
  put(100, slurm_path(42));
  EXPECT_EQ(namer.label_of(100, kT0), "slurm-42");
}

TEST_F(WorkloadNamerTest, NoJobIsOther) {
  WorkloadNamer namer(options());
  put(100, "/system.slice/sshd.service");
  EXPECT_EQ(namer.label_of(100, kT0), "other");
  EXPECT_EQ(kOtherWorkload, "other");
  // Never seen and already gone: nothing to go by.
  EXPECT_EQ(namer.label_of(999, kT0), "other");
}

TEST_F(WorkloadNamerTest, PodNamedByItsLogDirectory) {
  pod_log_dir("ml-team_trainer-0_" + str(kUid));
  pod_log_dir("ml-team_trainer-1_1a1b2c3d-4e5f-6789-abcd-ef0123456789");  // another pod
  pod_log_dir("kube-system_etcd-node1_" + str(kStaticUid));
  WorkloadNamer namer(options());
  put(100, pod_path(kUidUnderscores));
  EXPECT_EQ(namer.label_of(100, kT0), "k8s-ml-team/trainer-0");
  put(101, "/kubepods/burstable/pod" + str(kStaticUid) + "/" + kContainer);
  EXPECT_EQ(namer.label_of(101, kT0), "k8s-kube-system/etcd-node1");
  EXPECT_EQ(namer.label_of_job(CgroupJob{Kind::KubernetesPod, kUid}), "k8s-ml-team/trainer-0");
  EXPECT_EQ(namer.label_of_job(CgroupJob{Kind::Slurm, "42"}), "slurm-42");
}

TEST_F(WorkloadNamerTest, PodWithoutLogDirectoryIsNamedByUid) {
  pod_log_dir("ml-team_other-pod_1a1b2c3d-4e5f-6789-abcd-ef0123456789");
  WorkloadNamer namer(options());
  put(100, pod_path(kUidUnderscores));
  EXPECT_EQ(namer.label_of(100, kT0), "k8s-pod-" + str(kUid));
}

TEST_F(WorkloadNamerTest, PodLogDirectoryThatAppearsLaterIsUsed) {
  WorkloadNamer namer(options());
  put(100, pod_path(kUidUnderscores));
  EXPECT_EQ(namer.label_of(100, kT0), "k8s-pod-" + str(kUid));
  pod_log_dir("ml-team_trainer-0_" + str(kUid));
  EXPECT_EQ(namer.label_of(100, kT0 + WorkloadNamer::kRelabelNs), "k8s-ml-team/trainer-0")
      << "a missing name must not be cached";
}

TEST_F(WorkloadNamerTest, NoPodLogRootAtAll) {
  WorkloadNamer namer(
      WorkloadNamerOptions{scratch_ / "proc", scratch_ / "no-such-directory/var/log/pods"});
  put(100, pod_path(kUidUnderscores));
  EXPECT_EQ(namer.label_of(100, kT0), "k8s-pod-" + str(kUid));
}

TEST_F(WorkloadNamerTest, LabelIsReadAgainOnlyAfterRelabelInterval) {
  WorkloadNamer namer(options());
  put(100, slurm_path(42));
  EXPECT_EQ(namer.label_of(100, kT0), "slurm-42");
  put(100, slurm_path(43));  // moved: Slurm wrote it into another job's cgroup.procs
  EXPECT_EQ(namer.label_of(100, kT0 + 1), "slurm-42");
  EXPECT_EQ(namer.label_of(100, kT0 + WorkloadNamer::kRelabelNs - 1), "slurm-42");
  EXPECT_EQ(namer.label_of(100, kT0 + WorkloadNamer::kRelabelNs), "slurm-43");
  // The interval counts from that read.
  put(100, slurm_path(44));
  EXPECT_EQ(namer.label_of(100, kT0 + 2 * WorkloadNamer::kRelabelNs - 1), "slurm-43");
  EXPECT_EQ(namer.label_of(100, kT0 + 2 * WorkloadNamer::kRelabelNs), "slurm-44");
}

TEST_F(WorkloadNamerTest, CgroupsChangedForcesReadAgain) {
  WorkloadNamer namer(options());
  put(100, slurm_path(42));
  put(101, "/system.slice/sshd.service");
  EXPECT_EQ(namer.label_of(100, kT0), "slurm-42");
  EXPECT_EQ(namer.label_of(101, kT0), "other");
  put(100, slurm_path(43));
  put(101, slurm_path(43));
  namer.cgroups_changed();
  EXPECT_EQ(namer.label_of(100, kT0 + 1), "slurm-43");
  EXPECT_EQ(namer.label_of(101, kT0 + 1), "slurm-43");
}

TEST_F(WorkloadNamerTest, GoneProcessKeepsItsLastLabel) {
  WorkloadNamer namer(options());
  put(100, slurm_path(42));
  EXPECT_EQ(namer.label_of(100, kT0), "slurm-42");
  gone(100);
  EXPECT_EQ(namer.label_of(100, kT0 + WorkloadNamer::kRelabelNs), "slurm-42");
  EXPECT_EQ(namer.label_of(100, kT0 + 5 * WorkloadNamer::kRelabelNs), "slurm-42");
  EXPECT_EQ(namer.cached(), 1u);
}

// Events reach the exporter after the process may have exited; meanwhile a
// job step elsewhere on the node moved some other process (a traced
// cgroup.procs write -> cgroups_changed()). The gone process was still where
// it was last seen: its events must not turn into "other".
TEST_F(WorkloadNamerTest, GoneProcessKeepsItsLastLabelAcrossCgroupsChanged) {
  WorkloadNamer namer(options());
  put(100, slurm_path(42));
  EXPECT_EQ(namer.label_of(100, kT0), "slurm-42");
  gone(100);
  namer.cgroups_changed();
  EXPECT_EQ(namer.label_of(100, kT0 + 1), "slurm-42");
}

TEST_F(WorkloadNamerTest, ForkedChildGoneBeforeReadGetsParentsLabel) {
  WorkloadNamer namer(options());
  put(100, slurm_path(42));
  namer.forked(100, 200, kT0);  // 200 has no /proc entry: exited already
  EXPECT_EQ(namer.label_of(200, kT0 + 1), "slurm-42");
}

TEST_F(WorkloadNamerTest, ForkedChildThatCanBeReadIsReadNotInherited) {
  WorkloadNamer namer(options());
  put(100, "/system.slice/slurmstepd.scope/system");  // slurmstepd
  namer.forked(100, 200, kT0);
  put(200, slurm_path(42));  // moved into the job before exec
  EXPECT_EQ(namer.label_of(200, kT0 + 1), "slurm-42");
}

TEST_F(WorkloadNamerTest, ForkedParentCachedLabelIsWhatTheChildInherits) {
  WorkloadNamer namer(options());
  put(100, slurm_path(42));
  EXPECT_EQ(namer.label_of(100, kT0), "slurm-42");
  gone(100);
  namer.forked(100, 200, kT0 + 1);  // parent and child both gone by now
  EXPECT_EQ(namer.label_of(200, kT0 + 2), "slurm-42");
}

TEST_F(WorkloadNamerTest, ExitedForgets) {
  WorkloadNamer namer(options());
  put(100, slurm_path(42));
  EXPECT_EQ(namer.label_of(100, kT0), "slurm-42");
  EXPECT_EQ(namer.cached(), 1u);
  namer.exited(100);
  EXPECT_EQ(namer.cached(), 0u);
  gone(100);
  EXPECT_EQ(namer.label_of(100, kT0 + 1), "other") << "a reused pid must not get the old label";
}

TEST_F(WorkloadNamerTest, ExitedForgetsAnInheritedLabel) {
  WorkloadNamer namer(options());
  put(100, slurm_path(42));
  namer.forked(100, 200, kT0);
  namer.exited(200);
  EXPECT_EQ(namer.label_of(200, kT0 + 1), "other");
}

TEST_F(WorkloadNamerTest, ExitedThenPidReusedIsReadAgainAtOnce) {
  WorkloadNamer namer(options());
  put(100, slurm_path(42));
  EXPECT_EQ(namer.label_of(100, kT0), "slurm-42");
  namer.exited(100);
  put(100, slurm_path(77));  // the pid, reused by another job's process
  EXPECT_EQ(namer.label_of(100, kT0 + 1), "slurm-77");
}

}  // namespace
}  // namespace ckpt
