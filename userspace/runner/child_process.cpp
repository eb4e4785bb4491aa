#include "runner/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <vector>

#include <fmt/format.h>

extern char** environ;

namespace ckpt {
namespace {

std::atomic<pid_t> g_forward_pid{0};
std::atomic<int> g_last_signal{0};

// Every catchable signal whose default action ends a process (signal(7)),
// but the synchronous faults below: each is forwarded to the job when
// another process sent it, and otherwise ignored, so that `run` never dies
// of one while its job lives (a SIGXFSZ of its own full log, an alarm a
// user sent it, a real-time signal) and always hands back the job's status.
constexpr int kForwarded[] = {SIGINT,    SIGTERM, SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
                              SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGPWR,  SIGIO,   SIGSTKFLT};
// The synchronous faults: forwarded when another process sent one (kill -SEGV
// of `run`); a real one (the kernel's, of our own code) ends us as it would.
constexpr int kFaults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};

bool sent_by_another_process(const siginfo_t* info) {
  // si_code <= 0: kill(), sigqueue(), tgkill(). si_code > 0 (SI_KERNEL and
  // the fault codes) is the kernel: the tty driver's Ctrl-C (the child, in
  // our process group, got it too), a CPU-time limit, a fault. A file-size
  // limit comes as SI_USER from ourselves (send_sig with no info).
  return info != nullptr && info->si_code <= 0 && info->si_pid != getpid();
}

void forward_signal(int sig, siginfo_t* info, void*) {
  g_last_signal.store(sig);
  pid_t pid = g_forward_pid.load();
  if (pid > 0 && sent_by_another_process(info)) kill(pid, sig);
}

void forward_or_die(int sig, siginfo_t* info, void* context) {
  if (sent_by_another_process(info)) {
    forward_signal(sig, info, context);
    return;
  }
  // Our own fault: the default action, as if no handler were installed.
  signal(sig, SIG_DFL);
  raise(sig);
}

void install(const int* sigs, size_t n, void (*handler)(int, siginfo_t*, void*)) {
  struct sigaction sa = {};
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < n; ++i) sigaction(sigs[i], &sa, nullptr);
}

ssize_t read_full(int fd, void* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, static_cast<char*>(buf) + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return r < 0 ? r : static_cast<ssize_t>(got);
    got += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(got);
}

}  // namespace

ExitStatus decode_wait_status(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) {
    s.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    s.signal = WTERMSIG(status);
    s.core_dumped = WCOREDUMP(status);
  }
  return s;
}

Expected<HeldChild> HeldChild::spawn(const std::vector<std::string>& argv,
                                     const std::vector<std::string>& env_additions,
                                     ChildStdio stdio) {
  if (argv.empty()) return make_error("no command given");
  int go[2];
  int exec_status[2];
  if (pipe2(go, O_CLOEXEC) != 0) return make_error(fmt::format("pipe: {}", std::strerror(errno)));
  if (pipe2(exec_status, O_CLOEXEC) != 0) {
    close(go[0]);
    close(go[1]);
    return make_error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** e = environ; e && *e; ++e) env_storage.emplace_back(*e);
  for (const auto& add : env_additions) env_storage.push_back(add);
  std::vector<char*> envp;
  envp.reserve(env_storage.size() + 1);
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) return make_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    close(go[1]);
    close(exec_status[0]);
    // Signals ignored or blocked by the profiler must not leak to the job.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : kForwarded) signal(sig, SIG_DFL);
    for (int sig : kFaults) signal(sig, SIG_DFL);
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) signal(sig, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);  // the profiler ignores it; exec would keep that
    // dup2 clears O_CLOEXEC on 1 and 2; the pipes' other fds close at exec.
    if ((stdio.out >= 0 && dup2(stdio.out, STDOUT_FILENO) < 0) ||
        (stdio.err >= 0 && dup2(stdio.err, STDERR_FILENO) < 0))
      _exit(126);
    char byte;
    ssize_t r;
    do {
      r = read(go[0], &byte, 1);
    } while (r < 0 && errno == EINTR);
    if (r != 1) _exit(127);  // the profiler died before releasing us
    close(go[0]);
    // execvpe searches PATH like a shell.
    execvpe(args[0], args.data(), envp.data());
    int err = errno;
    ssize_t w = write(exec_status[1], &err, sizeof(err));
    (void)w;
    _exit(err == ENOENT ? 127 : 126);
  }
  close(go[0]);
  close(exec_status[1]);
  return HeldChild(pid, go[1], exec_status[0]);
}

HeldChild::HeldChild(HeldChild&& o) noexcept
    : pid_(o.pid_), go_fd_(o.go_fd_), exec_status_fd_(o.exec_status_fd_), status_(o.status_) {
  o.pid_ = -1;
  o.go_fd_ = -1;
  o.exec_status_fd_ = -1;
}

HeldChild::~HeldChild() {
  if (go_fd_ >= 0) close(go_fd_);  // an unreleased child then exits 127
  if (exec_status_fd_ >= 0) close(exec_status_fd_);
}

Expected<void> HeldChild::release() {
  char go = 'g';
  ssize_t w;
  do {
    w = write(go_fd_, &go, 1);
  } while (w < 0 && errno == EINTR);
  close(go_fd_);
  go_fd_ = -1;
  if (w != 1)
    return make_error(fmt::format("could not release the child: {}", std::strerror(errno)));
  // The status pipe closes on a successful exec (O_CLOEXEC) or carries errno.
  int err = 0;
  ssize_t r = read_full(exec_status_fd_, &err, sizeof(err));
  close(exec_status_fd_);
  exec_status_fd_ = -1;
  if (r == static_cast<ssize_t>(sizeof(err))) return make_error(std::strerror(err));
  return {};
}

std::optional<ExitStatus> HeldChild::try_wait() {
  if (status_) return status_;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) status_ = decode_wait_status(status);
  return status_;
}

ExitStatus HeldChild::wait() {
  while (!status_) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, 0);
    if (r == pid_)
      status_ = decode_wait_status(status);
    else if (r < 0 && errno != EINTR)
      status_ = ExitStatus{127, std::nullopt, false};
  }
  return *status_;
}

SignalForwarder::SignalForwarder(pid_t pid) {
  g_forward_pid.store(pid);
  install(kForwarded, std::size(kForwarded), forward_signal);
  install(kFaults, std::size(kFaults), forward_or_die);
  // The real-time signals end a process by default too (glibc keeps the
  // first two or three for itself: SIGRTMIN is above them).
  std::vector<int> realtime;
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) realtime.push_back(sig);
  install(realtime.data(), realtime.size(), forward_signal);
}

SignalForwarder::~SignalForwarder() {
  g_forward_pid.store(0);
  for (int sig : kForwarded) signal(sig, SIG_DFL);
  for (int sig : kFaults) signal(sig, SIG_DFL);
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) signal(sig, SIG_DFL);
}

void SignalForwarder::arm(pid_t pid) { g_forward_pid.store(pid); }

void SignalForwarder::disarm() { g_forward_pid.store(0); }

int SignalForwarder::last_signal() { return g_last_signal.load(); }

}  // namespace ckpt
