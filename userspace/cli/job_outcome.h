// What `run` does once the job has ended, beyond the trace: the kernel
// faults it watched, the failure cause, the log's header and footer, and the
// notification. Kept out of run_command.cpp so that file reads as the order
// of events.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/notify_request.h"
#include "collector/collector.h"
#include "common/expected.h"
#include "model/records.h"
#include "notify/notify.h"
#include "runner/child_process.h"
#include "runner/job_log.h"
#include "sources/kernel_log.h"

namespace ckpt::cli {

// The kernel log while the job runs: GPU Xids and NFS "not responding" lines
// from anywhere on the node (they affect every job on it), OOM kills only of
// the job's own processes.
class KernelEvents {
 public:
  Expected<void> open(const std::string& path = std::string(kKmsgPath));
  [[nodiscard]] int fd() const { return watcher_ ? watcher_->fd() : -1; }
  void poll();
  void add_job_pid(uint32_t pid) { job_pids_.insert(pid); }
  // The faults that concern the job, in log order.
  [[nodiscard]] std::vector<KernelFaultRecord> job_faults() const;
  // As failure records in the trace (kinds gpu_xid, oom_kill, kernel_nfs_not_responding).
  void record_into(Collector& collector) const;
  [[nodiscard]] uint64_t lost() const { return watcher_ ? watcher_->lost() : 0; }

 private:
  std::optional<KmsgWatcher> watcher_;
  std::vector<KernelFaultRecord> faults_;
  std::set<uint32_t> job_pids_;
};

FailureRecord to_failure_record(const KernelFaultRecord& fault);

std::vector<std::string> job_log_header(const JobRecord& job, const TraceFlags& flags);
// "exit code 1", "killed by signal 9 (SIGKILL)", "... (core dumped)".
std::string describe_exit(const ExitStatus& status);
// The classifier over the job log and the kernel faults, then the exit status.
// `exec_error`: why the command could not be started (errno text), if so.
JobFailure classify_job(const JobRecord& job, const ExitStatus& status, const KernelEvents& kernel,
                        const std::string& exec_error = {});
void write_log_footer(JobLog& log, const JobRecord& job, const ExitStatus& status,
                      const KernelEvents& kernel);
std::string describe_failure(const JobFailure& failure, const std::string& log_path);

// --notify targets, checked before the job starts, sent after it ends, both
// by ckptscope-notify (cli/notify_request.h). A failure to notify is reported
// on stderr and in the log; it never changes the exit code.
class Notifier {
 public:
  static Expected<Notifier> create(const RunOptions& run, const Config& config);
  void send_all(const JobRecord& job, const ExitStatus& status, const KernelEvents& kernel,
                const Trace* trace, const std::string& trace_path, JobLog* log) const;

 private:
  NotifyRequest request_;  // mode, targets, settings' sources, budget
  uint64_t deadline_ms_ = 0;
  std::vector<std::string> attach_;
};

}  // namespace ckpt::cli
