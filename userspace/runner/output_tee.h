// Tees the job's stdout and stderr into the job log while passing them on to
// ours, like `cmd 2>&1 | tee log` but keeping the two streams apart on the
// console. One thread polls both pipes, so the log has them interleaved in
// the order they arrived.
//
// `run` killed (SIGKILL, an OOM kill of the profiler) must not take a
// printing job with it: with the tee gone, the job's next write would meet a
// pipe with no reader (EPIPE, SIGPIPE). So a keeper process, forked when the
// tee is made, holds its own copy of the pipes' read ends and waits; if
// `run` dies before saying it is done, the keeper carries on the tee (to our
// stdout and stderr, and the log) until the job and its leftovers close
// their ends. While `run` lives the keeper reads nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <thread>

#include "common/expected.h"
#include "runner/job_log.h"

namespace ckpt {

class OutputTee {
 public:
  static Expected<OutputTee> create(JobLog& log);
  OutputTee(OutputTee&& other) noexcept;
  OutputTee& operator=(OutputTee&&) = delete;
  ~OutputTee();

  // The write ends the child dup2()s onto 1 and 2.
  [[nodiscard]] int child_stdout() const { return out_[1]; }
  [[nodiscard]] int child_stderr() const { return err_[1]; }
  // After fork: closes our copies of the write ends and starts copying.
  void start();
  // After the job exits: copies until every writer is gone, but waits at most
  // `grace` for processes the job left behind that still hold the pipes.
  // Returns false when it stopped on the grace period.
  bool finish(std::chrono::milliseconds grace);
  [[nodiscard]] uint64_t bytes() const { return bytes_; }

 private:
  explicit OutputTee(JobLog& log) : log_(&log) {}
  void run();
  JobLog* log_;
  int out_[2] = {-1, -1};
  int err_[2] = {-1, -1};
  int stop_[2] = {-1, -1};  // a byte here tells the thread to drain and stop
  // The keeper: its pid, and the pipe whose write end only `run` holds (a
  // byte: done, the keeper exits; end of file with none: `run` died).
  pid_t keeper_ = -1;
  int alive_ = -1;
  void release_keeper();
  std::thread thread_;
  std::future<void> finished_;
  uint64_t bytes_ = 0;  // read after join
  std::atomic<bool> eof_{false};
  std::atomic<bool> stop_requested_{false};
};

}  // namespace ckpt
