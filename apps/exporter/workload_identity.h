// Which workload a process belongs to, from its cgroup: the exporter's
// `workload` label (deploy/metrics.md). Never a pid, a file or a path, so the
// label's values stay as few as the node's jobs.
//
// - Slurm puts each job in a cgroup with a `job_<id>` component (cgroup v2:
//   /system.slice/slurmstepd.scope/job_42/step_0/user/task_0; v1:
//   /slurm/uid_1000/job_42/step_0) -> "slurm-42".
// - The kubelet puts each pod in a cgroup named after the pod's UID
//   (systemd driver: kubepods-burstable-pod<uid with _>.slice; cgroupfs
//   driver: /kubepods/burstable/pod<uid>) -> "k8s-<namespace>/<pod>" when the
//   pod's log directory (/var/log/pods/<namespace>_<pod>_<uid>) names it,
//   else "k8s-pod-<uid>".
// - Everything else -> "other".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ckpt {

// The job a cgroup path names, without the pod-name lookup: "slurm-42",
// "k8s-pod-<uid>", or nullopt.
struct CgroupJob {
  enum class Kind { Slurm, KubernetesPod };
  Kind kind = Kind::Slurm;
  std::string id;  // the Slurm job id, or the pod UID (with dashes)
};
std::optional<CgroupJob> job_of_cgroup_path(std::string_view path);

// The job in /proc/PID/cgroup's text: the cgroup v2 line ("0::/path") first,
// then the v1 hierarchies' lines (a hybrid node keeps Slurm's cgroups in v1).
std::optional<CgroupJob> job_of_proc_cgroup(std::string_view text);

struct WorkloadNamerOptions {
  std::string proc_root = "/proc";
  // Where the kubelet keeps pod logs, named <namespace>_<pod>_<uid>: the one
  // place on the node that maps a pod's UID to its name without the API.
  std::string pod_log_root = "/var/log/pods";
};

// tgid -> workload label. A process can move: Slurm and container runtimes
// fork, then write the child's pid into the job's cgroup.procs before exec
// (the tgid stays). So a label is read again after kRelabelNs, and at once
// after any traced write to a cgroup.procs or cgroup.threads file.
class WorkloadNamer {
 public:
  static constexpr uint64_t kRelabelNs = 10'000'000'000;

  explicit WorkloadNamer(WorkloadNamerOptions options = {});

  // The label of a live process at `now_ns`; "other" when it is in no job.
  std::string label_of(uint32_t tgid, uint64_t now_ns);
  // A forked child starts where its parent is (cgroups are inherited at
  // fork): the label used when the child is gone before it is read.
  void forked(uint32_t parent_tgid, uint32_t child_tgid, uint64_t now_ns);
  void exited(uint32_t tgid);
  // A process was moved between cgroups: read every label again (a process
  // already gone keeps the one it had).
  void cgroups_changed() {
    for (auto& [tgid, entry] : by_tgid_) entry.stale = true;
  }
  [[nodiscard]] size_t cached() const { return by_tgid_.size(); }

  // "slurm-42", "k8s-<namespace>/<pod>" or "k8s-pod-<uid>".
  std::string label_of_job(const CgroupJob& job);

 private:
  std::string pod_name(const std::string& uid);

  WorkloadNamerOptions options_;
  struct Cached {
    std::string label;
    uint64_t read_ns = 0;
    bool stale = false;
  };
  std::unordered_map<uint32_t, Cached> by_tgid_;
  std::unordered_map<uint32_t, std::string> inherited_;     // forked children, until read
  std::unordered_map<std::string, std::string> pod_names_;  // uid -> "ns/pod"
};

inline constexpr std::string_view kOtherWorkload = "other";

}  // namespace ckpt
