// Starts the job as our child, held before exec until tracing is attached
// (so its first syscall is traced), forwards signals, and reports its exit
// the way a shell does (128+N for a signal N).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"

namespace ckpt {

struct ExitStatus {
  int code = 0;               // exit() value when it exited
  std::optional<int> signal;  // the signal that ended it
  bool core_dumped = false;
  [[nodiscard]] int shell_code() const { return signal ? 128 + *signal : code; }
};

ExitStatus decode_wait_status(int status);

// Where the child's stdout and stderr go; -1 = inherit ours.
struct ChildStdio {
  int out = -1;
  int err = -1;
};

class HeldChild {
 public:
  // Forks; the child waits on a pipe, then execvp(argv) with `env_additions`
  // ("NAME=value") added to our environment and its stdout/stderr on `stdio`.
  static Expected<HeldChild> spawn(const std::vector<std::string>& argv,
                                   const std::vector<std::string>& env_additions = {},
                                   ChildStdio stdio = {});
  HeldChild(HeldChild&& other) noexcept;
  HeldChild& operator=(HeldChild&&) = delete;
  ~HeldChild();

  [[nodiscard]] pid_t pid() const { return pid_; }
  // Lets the child exec. An error means exec failed (e.g. command not
  // found); the child then exits 127 (126 when not executable), as shells do.
  Expected<void> release();
  // Non-blocking: the exit status once the child has ended.
  std::optional<ExitStatus> try_wait();
  ExitStatus wait();

 private:
  HeldChild(pid_t pid, int go_fd, int exec_status_fd)
      : pid_(pid), go_fd_(go_fd), exec_status_fd_(exec_status_fd) {}
  pid_t pid_ = -1;
  int go_fd_ = -1;
  int exec_status_fd_ = -1;
  std::optional<ExitStatus> status_;
};

// While installed, every catchable signal whose default action ends a
// process (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
// SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGPWR, SIGIO, SIGSTKFLT, the
// real-time signals) is forwarded to `pid` when another process sent it and
// ignored otherwise: `run` never dies of one while its job lives. A
// terminal's Ctrl-C already reaches the child (same process group), so
// signals the kernel sent on behalf of a tty are not sent twice; a file-size
// or CPU-time limit of our own is ours, not the job's. The synchronous
// faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT) are
// forwarded when another process sent one, and a real one ends us as it
// would. After disarm() they are still caught, and ignored.
class SignalForwarder {
 public:
  // Installed before the job exists (the job log's first write may already
  // meet a file-size limit): ignoring until arm().
  SignalForwarder() : SignalForwarder(0) {}
  explicit SignalForwarder(pid_t pid);
  // Forwards to `pid` from now on.
  void arm(pid_t pid);
  ~SignalForwarder();
  SignalForwarder(const SignalForwarder&) = delete;
  SignalForwarder& operator=(const SignalForwarder&) = delete;
  // Stops forwarding (the child is reaped; its pid may be reused).
  void disarm();
  // The last signal received (0 if none): attach uses it to stop.
  static int last_signal();
};

}  // namespace ckpt
