// The durable job log of `ckptscope run`: created, with its header written,
// before the job starts, so a job that dies in its first millisecond (or
// cannot start at all) still leaves a log. A shell redirect to a missing
// directory leaves nothing; this creates the directory.
//
// Written with plain write(2) and no user-space buffer: what the job printed
// is in the kernel's page cache the moment it is teed, and survives the job,
// the profiler and a kill -9 of either. (Not fsync: surviving a machine crash
// would cost milliseconds per write on a real disk, and the header already
// costs nothing to lose in that case.)
//
// A log that cannot be written whole (a full disk, a quota, a file-size
// limit) never stops the tee: the job's output still reaches the console, the
// failed writes and lost bytes are counted, and what did not reach the file
// is kept in memory, its last kUnloggedWindowBytes, so the failure cause can
// still be read from the job's output (`run` then says the log is incomplete
// in its summary, trace and notification).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace ckpt {

// How much of the job's output that could not be written to the log is kept
// in memory for the failure classifier: its last 4 MiB (a traceback and the
// NCCL and CUDA errors around it are a few KiB; output the job prints after
// the disk filled beyond that is dropped from the oldest end, and counted).
inline constexpr size_t kUnloggedWindowBytes = size_t{4} << 20;

// Whose name a job log has: the user's (--log FILE: an existing regular file
// is emptied) or one ckptscope picked (default_log_path: created new, never
// an existing file, so a name planted ahead of time is never written).
enum class JobLogName { kGiven, kPicked };

class JobLog {
 public:
  // Creates missing parent directories, opens the file as `name` says (never
  // through a final symbolic link, never anything but a regular file:
  // files/output_file.h), writes `header` lines (each prefixed "#
  // ckptscope: "). An error only when the file cannot be opened: a header
  // that cannot be written (a full disk) leaves a log that is incomplete()
  // from its first line, still teed.
  static Expected<JobLog> create(const std::string& path, const std::vector<std::string>& header,
                                 JobLogName name = JobLogName::kGiven);
  JobLog(JobLog&& other) noexcept;
  JobLog& operator=(JobLog&&) = delete;
  ~JobLog();

  // The job's own bytes, as it printed them.
  void append(std::string_view bytes);
  // One line of ours ("# ckptscope: ..."); the classifier ignores these.
  void note(std::string_view line);

  [[nodiscard]] const std::string& path() const { return path_; }
  // The open log (O_APPEND), for the tee's keeper process (output_tee.h).
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] uint64_t write_errors() const;
  [[nodiscard]] std::string first_error() const;
  // Some write failed: the file lacks part of what was written to it.
  [[nodiscard]] bool incomplete() const { return write_errors() > 0; }
  // Bytes (the job's and ours) that did not reach the file.
  [[nodiscard]] uint64_t bytes_lost() const;
  // The job's own bytes that did not reach the file, their last
  // kUnloggedWindowBytes, in the order they came; "" while nothing failed.
  [[nodiscard]] std::string unlogged_output() const;
  // Of those, how many are not in unlogged_output() either (the window's
  // oldest, pushed out).
  [[nodiscard]] uint64_t unlogged_dropped() const;
  // "the job log PATH is incomplete: N writes failed (REASON), B bytes are
  // not in it"; "" while complete.
  [[nodiscard]] std::string incomplete_reason() const;

 private:
  JobLog(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  // Returns the bytes that could not be written (a suffix of `bytes`).
  std::string_view write_all(std::string_view bytes);  // holds mu_
  void keep_unlogged(std::string_view bytes);          // holds mu_
  std::string path_;
  int fd_ = -1;
  mutable std::mutex mu_;
  uint64_t write_errors_ = 0;
  uint64_t bytes_lost_ = 0;
  std::string first_error_;
  std::string unlogged_;  // at most kUnloggedWindowBytes
  uint64_t unlogged_dropped_ = 0;
};

// A job name made safe for a file name: [A-Za-z0-9._-] kept, the rest '_';
// "job" when nothing is left.
std::string log_file_stem(const std::string& job_name);
// "<dir>/<job>-<YYYYmmdd-HHMMSS>-<pid>.log"; dir "" = the current directory.
std::string default_log_path(const std::string& dir, const std::string& job_name,
                             uint64_t start_wall_ns, int pid);

// What decides the state directory for job logs: who runs, and their
// environment. Kept apart from the process so the rule can be tested.
struct LogStateInputs {
  bool root = false;
  std::string xdg_state_home;  // $XDG_STATE_HOME; "" when unset
  std::string home;            // $HOME, else the passwd entry's directory; "" when neither
};
// Where job logs go when nothing names a place: a state directory, never the
// current directory (a job started in a source tree would litter it). Root:
// /var/log/ckptscope, the system's log tree. Anyone else:
// $XDG_STATE_HOME/ckptscope/logs, else ~/.local/state/ckptscope/logs (the
// XDG base directory rules: a relative XDG_STATE_HOME is ignored). An error
// when a user has no home to put it in.
Expected<std::string> state_log_dir(const LogStateInputs& in);
// The same for this process: its effective uid and its environment.
LogStateInputs log_state_inputs();
}  // namespace ckpt
