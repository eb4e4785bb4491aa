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

#include "apps/cli/commands.h"
#include "apps/cli/notify_request.h"
#include "apps/collector/collector.h"
#include "common/expected.h"
#include "model/records.h"
#include "notify/notify.h"
#include "runner/child_process.h"
#include "runner/job_gpus.h"
#include "runner/job_log.h"
#include "runner/kernel_events.h"

namespace ckpt::cli {

std::vector<std::string> job_log_header(const JobRecord& job, const TraceFlags& flags);
// "exit code 1", "killed by signal 9 (SIGKILL)", "... (core dumped)".
std::string describe_exit(const ExitStatus& status);
// The classifier over the job log and the kernel faults, then the exit status.
// `exec_error`: why the command could not be started (errno text), if so.
// `unlogged_output`: the job's output that did not reach its log (a full
// disk), read as well; its lines are evidence of source kUnloggedSource.
JobFailure classify_job(const JobRecord& job, const ExitStatus& status, const KernelEvents& kernel,
                        const std::string& exec_error = {}, std::string_view unlogged_output = {});
// Evidence from the job's output kept in memory because the log could not
// take it: "unlogged output:N" is its Nth line there.
inline constexpr std::string_view kUnloggedSource = "unlogged output";
// The log's incompleteness as a job-level failure for the trace.
FailureRecord log_incomplete_record(const JobLog& log, uint64_t time_ns);
// `gpus`: the job's visible GPUs, named when a node Xid is reported.
void write_log_footer(JobLog& log, const JobRecord& job, const ExitStatus& status,
                      const KernelEvents& kernel, const JobGpus& gpus = {});
std::string describe_failure(const JobFailure& failure, const std::string& log_path);

// --notify targets, checked before the job starts, sent after it ends, both
// by ckptscope-notify (cli/notify_request.h). A failure to notify is reported
// on stderr and in the log; it never changes the exit code.
class Notifier {
 public:
  // An error: the settings or targets are wrong (the run stops). A notifier
  // that could not be asked leaves check_warning() set; sending is still
  // tried at the end.
  static Expected<Notifier> create(const RunOptions& run, const Config& config);
  [[nodiscard]] const std::string& check_warning() const { return check_warning_; }
  void send_all(const JobRecord& job, const ExitStatus& status, const KernelEvents& kernel,
                const Trace* trace, const std::string& trace_path, JobLog* log) const;

 private:
  NotifyRequest request_;  // mode, targets, settings' sources, budget
  uint64_t deadline_ms_ = 0;
  std::vector<std::string> attach_;
  std::string check_warning_;
};

}  // namespace ckpt::cli
