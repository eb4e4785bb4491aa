#include "runner/output_tee.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>

#include <fmt/format.h>

namespace ckpt {

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Our own stdout/stderr may be closed or a broken pipe (`| head`): the job's
// output then still goes to the log, and we stop trying that stream. While
// the job runs, a console that does not take output (a stopped terminal, a
// full pipe nobody reads) holds the tee as it would have held the job; once
// the job has ended, a stream that takes nothing for a second is given up on,
// so the wrapper always returns.
void pass_on(int fd, const char* data, size_t n, bool& broken, const std::atomic<bool>& stop) {
  int idle_after_stop_ms = 0;
  while (n > 0 && !broken) {
    pollfd p{fd, POLLOUT, 0};
    int ready = ::poll(&p, 1, 100);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      if (stop.load() && (idle_after_stop_ms += 100) >= 1000) broken = true;
      continue;
    }
    if (ready < 0 || (p.revents & (POLLERR | POLLNVAL))) {
      broken = true;
      return;
    }
    // At most a page per write: what poll promised fits without blocking.
    ssize_t w = ::write(fd, data, std::min<size_t>(n, 4096));
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w <= 0) {
      broken = true;
      return;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

// After the stop request: how much more is copied, at most.
constexpr auto kDrainTime = std::chrono::seconds(1);
constexpr uint64_t kDrainBytes = uint64_t{4} << 20;

// The keeper's whole life (async-signal-safe calls only: forked from a
// process that may have threads). Waits on `alive` while `run` lives; on its
// end of file without the done byte, tees `out` and `err` to 1 and 2 and to
// `log` (O_APPEND) until both close.
[[noreturn]] void keep(int alive, int out, int err, int log) {
  // The terminal's Ctrl-C and a hangup are the job's and run's to act on.
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  char byte = 0;
  ssize_t r;
  do {
    r = ::read(alive, &byte, 1);
  } while (r < 0 && errno == EINTR);
  if (r == 1) _exit(0);  // run finished the tee itself
  char buf[65536];
  bool open[2] = {true, true};
  while (open[0] || open[1]) {
    pollfd fds[2] = {{open[0] ? out : -1, POLLIN, 0}, {open[1] ? err : -1, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (!open[i] || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(i == 0 ? out : err, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        open[i] = false;
        continue;
      }
      for (int fd : {log, i == 0 ? STDOUT_FILENO : STDERR_FILENO}) {
        ssize_t done = 0;
        while (fd >= 0 && done < n) {
          const ssize_t w = ::write(fd, buf + done, static_cast<size_t>(n - done));
          if (w < 0 && errno == EINTR) continue;
          if (w <= 0) break;  // a full log or a closed console: the other still gets it
          done += w;
        }
      }
    }
  }
  _exit(0);
}

}  // namespace

Expected<OutputTee> OutputTee::create(JobLog& log) {
  OutputTee tee(log);
  if (pipe2(tee.out_, O_CLOEXEC) != 0 || pipe2(tee.err_, O_CLOEXEC) != 0 ||
      pipe2(tee.stop_, O_CLOEXEC) != 0)
    return make_error(fmt::format("cannot tee the job's output: pipe: {}", std::strerror(errno)));
  int alive[2];
  if (pipe2(alive, O_CLOEXEC) != 0)
    return make_error(fmt::format("cannot tee the job's output: pipe: {}", std::strerror(errno)));
  const pid_t keeper = fork();
  if (keeper < 0) {
    close(alive[0]);
    close(alive[1]);
    return make_error(fmt::format("cannot tee the job's output: fork: {}", std::strerror(errno)));
  }
  if (keeper == 0) {
    // Only the read ends: the job's end of file must not wait for us.
    ::close(alive[1]);
    ::close(tee.out_[1]);
    ::close(tee.err_[1]);
    keep(alive[0], tee.out_[0], tee.err_[0], log.fd());
  }
  close(alive[0]);
  tee.keeper_ = keeper;
  tee.alive_ = alive[1];
  return tee;
}

void OutputTee::release_keeper() {
  if (keeper_ < 0) return;
  char done = 'd';
  ssize_t w;
  do {
    w = ::write(alive_, &done, 1);
  } while (w < 0 && errno == EINTR);
  close_fd(alive_);
  int status = 0;
  while (waitpid(keeper_, &status, 0) < 0 && errno == EINTR) {
  }
  keeper_ = -1;
}

OutputTee::OutputTee(OutputTee&& o) noexcept
    : log_(o.log_), keeper_(o.keeper_), alive_(o.alive_), bytes_(o.bytes_), eof_(o.eof_.load()) {
  for (int i = 0; i < 2; ++i) {
    out_[i] = o.out_[i];
    err_[i] = o.err_[i];
    stop_[i] = o.stop_[i];
    o.out_[i] = o.err_[i] = o.stop_[i] = -1;
  }
  o.keeper_ = -1;
  o.alive_ = -1;
}

OutputTee::~OutputTee() {
  if (thread_.joinable()) finish(std::chrono::milliseconds(0));
  release_keeper();
  for (int* fds : {out_, err_, stop_}) {
    close_fd(fds[0]);
    close_fd(fds[1]);
  }
}

void OutputTee::start() {
  close_fd(out_[1]);
  close_fd(err_[1]);
  std::promise<void> done;
  finished_ = done.get_future();
  thread_ = std::thread([this, done = std::move(done)]() mutable {
    run();
    done.set_value();
  });
}

void OutputTee::run() {
  char buf[65536];
  bool broken[2] = {false, false};
  bool open[2] = {true, true};
  bool stopping = false;
  std::chrono::steady_clock::time_point drain_deadline;
  uint64_t drained = 0;
  while (open[0] || open[1]) {
    pollfd fds[3] = {{out_[0], POLLIN, 0}, {err_[0], POLLIN, 0}, {stop_[0], POLLIN, 0}};
    if (!open[0]) fds[0].fd = -1;
    if (!open[1]) fds[1].fd = -1;
    if (stopping) fds[2].fd = -1;
    int n = ::poll(fds, 3, stopping ? 0 : -1);
    if (n < 0 && errno == EINTR) continue;
    // Stopped: copy what is ready, but not for ever (a leftover process may
    // print without pause).
    if (stopping &&
        (n == 0 || std::chrono::steady_clock::now() > drain_deadline || drained > kDrainBytes))
      break;
    if (fds[2].revents) {
      stopping = true;
      drain_deadline = std::chrono::steady_clock::now() + kDrainTime;
    }
    for (int i = 0; i < 2; ++i) {
      if (!open[i] || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t r = ::read(i == 0 ? out_[0] : err_[0], buf, sizeof(buf));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        open[i] = false;
        continue;
      }
      log_->append(std::string_view(buf, static_cast<size_t>(r)));
      pass_on(i == 0 ? STDOUT_FILENO : STDERR_FILENO, buf, static_cast<size_t>(r), broken[i],
              stop_requested_);
      bytes_ += static_cast<uint64_t>(r);
      if (stopping) drained += static_cast<uint64_t>(r);
    }
  }
  eof_ = !open[0] && !open[1];
}

bool OutputTee::finish(std::chrono::milliseconds grace) {
  if (!thread_.joinable()) return eof_;
  // Let the pipes reach EOF on their own for `grace`; then the thread copies
  // what is ready and stops (processes the job left behind keep running; what
  // they print later is not teed).
  if (finished_.wait_for(grace) != std::future_status::ready) {
    stop_requested_ = true;
    char byte = 's';
    ssize_t w = ::write(stop_[1], &byte, 1);
    (void)w;
  }
  thread_.join();
  release_keeper();
  return eof_;
}

}  // namespace ckpt
