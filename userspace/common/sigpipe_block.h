#pragma once
// Blocks SIGPIPE on the calling thread for a scope and swallows the ones that
// arrived meanwhile. A write to a pipe or socket whose reader is gone then
// fails with EPIPE instead of killing the process: a profiler must not die
// because a notifier it spawned failed to exec, or a peer hung up mid-write.
// (MSG_NOSIGNAL covers send(2) only; write(2) to a pipe and libcurl's TLS
// writes need the mask. See signal(7), "Signal mask and pending signals".)
#include <pthread.h>
#include <signal.h>

#include <ctime>

namespace ckpt {

class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;
  ~SigpipeBlock() {
    if (!was_pending_) {
      timespec zero{};
      while (sigtimedwait(&pipe_, nullptr, &zero) > 0) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

}  // namespace ckpt
