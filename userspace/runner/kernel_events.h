// The kernel log while `run` runs a job: which of the faults it reports
// concern this job, for its trace, its log's footer and its failure cause.
//
// - An Xid the driver pins on no process (pid='<unknown>': the GPU fell off
//   the bus, an uncontained ECC error) and NFS "server not responding" are
//   the node's: every job on it is affected, so they count.
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
  // Reads what is new and decides whose each fault is, while the processes
  // it names may still be looked up.
  void poll();
  // Faults already parsed (tests, or another reader).
  void take(std::vector<KernelFaultRecord> records);

  // The faults that concern the job, in log order.
  [[nodiscard]] std::vector<KernelFaultRecord> job_faults() const;
  // Those the classifier may name as the cause.
  [[nodiscard]] std::vector<KernelFaultRecord> cause_candidates() const;
  // As job-level failures for the trace: gpu_xid, oom_kill, kernel_nfs_not_responding.
  [[nodiscard]] std::vector<FailureRecord> failure_records() const;
  [[nodiscard]] uint64_t lost() const;
  [[nodiscard]] uint64_t others() const { return others_; }  // faults of other processes

 private:
  [[nodiscard]] bool is_jobs_process(uint32_t pid) const;
  [[nodiscard]] bool concerns_job(const KernelFaultRecord& f) const;
  ProcView proc_;
  std::optional<KmsgWatcher> watcher_;
  struct Seen {
    KernelFaultRecord fault;
    bool job = false;
  };
  std::vector<Seen> faults_;
  std::set<uint32_t> job_pids_;
  std::optional<uint32_t> root_;
  uint64_t others_ = 0;
};

FailureRecord to_failure_record(const KernelFaultRecord& fault);

}  // namespace ckpt
