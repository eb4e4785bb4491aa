// Runs part of a test as another user: the registration socket tells users
// apart by the peer's uid (SO_PEERCRED), so limits per user and what an
// unprivileged client may see are tested with real credentials. The tests
// that use it need root to switch (they skip, saying so, otherwise).
#pragma once

#include <grp.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <utility>

namespace ckpt::test {

// A child process that switches to `uid` (and group `uid`, no supplementary
// groups), then runs `body`; its return value is the child's exit status.
class AsUser {
 public:
  AsUser(uid_t uid, const std::function<int()>& body) {
    pid_ = fork();
    if (pid_ == 0) {
      if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(100);
      // A credential change makes the process undumpable, and /proc/PID
      // root's (kernel/cred.c commit_creds): as a process that started as
      // this user, it is its own again.
      (void)prctl(PR_SET_DUMPABLE, 1);
      _exit(body());
    }
  }
  ~AsUser() { (void)wait(); }
  AsUser(const AsUser&) = delete;
  AsUser& operator=(const AsUser&) = delete;

  // The child's exit status (100: could not switch user; -1: killed, or
  // no child).
  int wait() {
    if (pid_ <= 0) return status_;
    int status = 0;
    waitpid(std::exchange(pid_, 0), &status, 0);
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return status_;
  }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

// One byte through a pipe: "go on" between the test and an AsUser child.
class Signal {
 public:
  Signal() { (void)pipe(fds_); }
  ~Signal() {
    close(fds_[0]);
    close(fds_[1]);
  }
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;
  void give() { (void)write(fds_[1], "x", 1); }
  bool take() {
    char c = 0;
    return read(fds_[0], &c, 1) == 1;
  }

 private:
  int fds_[2] = {-1, -1};
};

}  // namespace ckpt::test
