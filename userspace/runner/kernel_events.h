// The kernel log while `run` runs a job: which of the faults it reports
// concern this job, for its trace, its log's footer and its failure cause.
//
// - An Xid the driver pins on no process (pid='<unknown>': the GPU fell off
//   the bus, an uncontained ECC error) counts only when the GPU it names (its
//   PCI address) is one of the job's: those its CUPTI library reported, or
//   those its CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES name
//   (runner/job_gpus.h). On any other GPU, or when the job's GPUs are not
//   known, it is a node failure: counted and shown (node_faults()), never the
//   job's cause. Decided when asked, so GPUs learned late still count.
// - NFS "server not responding" is the node's storage, every job's: it counts.
// - An Xid pinned on a process (13, 31, 43: a bad kernel, an MMU fault) and
//   an OOM kill count only when that process is the job's: one of its pids,
//   a descendant of its root while it still exists, or in the job's own
//   cgroup (Slurm and Kubernetes give every job one; the root cgroup proves
//   nothing). Another tenant's MMU fault must not become this job's cause.
// - An NFS stall that the kernel reported over ("server S OK") before the
//   job ended stays in the trace and the footer but is not offered to the
//   classifier as a cause: it may have slowed the job, it did not end it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/expected.h"
#include "model/records.h"
#include "sources/kernel_log.h"

namespace ckpt {

// What /proc says about a process, injectable for tests.
struct ProcView {
  std::function<std::optional<uint32_t>(uint32_t pid)> parent;     // PPid, if it exists
  std::function<std::optional<std::string>(uint32_t pid)> cgroup;  // its cgroup v2 path
  std::string own_cgroup;                                          // ours ("" = unknown)
  static ProcView system();
};

class KernelEvents {
 public:
  explicit KernelEvents(ProcView proc = ProcView::system()) : proc_(std::move(proc)) {}
  Expected<void> open(const std::string& path = std::string(kKmsgPath));
  // Every kernel log record read from now on, fault or not (set after open()).
  void set_record_observer(std::function<void(const KmsgRecord&)> observer) {
    if (watcher_) watcher_->set_record_observer(std::move(observer));
  }
  [[nodiscard]] bool watching() const { return watcher_.has_value(); }
  // For poll(); -1 when nothing is watched or the watcher failed for good.
  [[nodiscard]] int fd() const;
  void set_job_root(uint32_t pid) {
    root_ = pid;
    job_pids_.insert(pid);
  }
  void add_job_pid(uint32_t pid) { job_pids_.insert(pid); }
  // A GPU of the job, by PCI address ("0000:3b:00" or "0000:3B:00.0": the
  // function and the case do not matter).
  void add_job_gpu(std::string_view pci);
  [[nodiscard]] const std::set<std::string>& job_gpus() const { return job_gpus_; }
  // Reads what is new and decides whose each fault is, while the processes
  // it names may still be looked up.
  void poll();
  // Faults already parsed (tests, or another reader).
  void take(std::vector<KernelFaultRecord> records);

  // The faults that concern the job, in log order.
  [[nodiscard]] std::vector<KernelFaultRecord> job_faults() const;
  // Those the classifier may name as the cause.
  [[nodiscard]] std::vector<KernelFaultRecord> cause_candidates() const;
  // Pid-less Xids on GPUs that are not the job's, in log order.
  [[nodiscard]] std::vector<KernelFaultRecord> node_faults() const;
  // As job-level failures for the trace: gpu_xid, oom_kill,
  // kernel_nfs_not_responding, then the node's Xids as node_gpu_xid.
  [[nodiscard]] std::vector<FailureRecord> failure_records() const;
  [[nodiscard]] uint64_t lost() const;
  [[nodiscard]] uint64_t others() const { return others_; }  // faults of other processes

 private:
  [[nodiscard]] bool is_jobs_process(uint32_t pid) const;
  [[nodiscard]] bool concerns_job(const KernelFaultRecord& f) const;
  ProcView proc_;
  std::optional<KmsgWatcher> watcher_;
  [[nodiscard]] bool on_job_gpu(const KernelFault& xid) const;
  struct Seen {
    KernelFaultRecord fault;
    bool job = false;
    bool pidless_xid = false;  // whose it is depends on job_gpus_, asked late
  };
  [[nodiscard]] bool is_job(const Seen& s) const {
    return s.job || (s.pidless_xid && on_job_gpu(s.fault.fault));
  }
  std::vector<Seen> faults_;
  std::set<uint32_t> job_pids_;
  std::set<std::string> job_gpus_;  // "dddd:bb:dd", lower case
  std::optional<uint32_t> root_;
  uint64_t others_ = 0;
};

FailureRecord to_failure_record(const KernelFaultRecord& fault);
// A PCI address as the driver's Xid line names a GPU: "dddd:bb:dd" in lower
// case, the function (".0") dropped; "" when it is not one.
std::string gpu_pci_key(std::string_view pci);

}  // namespace ckpt
