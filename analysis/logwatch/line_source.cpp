#include "analysis/logwatch/line_source.h"

#include <cerrno>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace ckpt::logwatch {

namespace {

constexpr std::size_t kReadBuffer = 64 * 1024;
constexpr auto kFollowPoll = std::chrono::milliseconds(200);

bool stopped(const std::atomic<bool>* stop) { return stop != nullptr && stop->load(); }

}  // namespace

FdLineSource::FdLineSource(int fd, bool owned, bool follow, const std::atomic<bool>* stop,
                           pid_t child)
    : fd_(fd), owned_(owned), follow_(follow), stop_(stop), child_(child), buf_(kReadBuffer) {}

FdLineSource::~FdLineSource() {
  if (owned_ && fd_ >= 0) ::close(fd_);
  if (child_ > 0) {
    ::kill(child_, SIGTERM);
    ::waitpid(child_, nullptr, 0);
  }
}

Expected<bool> FdLineSource::next(std::string& line) {
  line.clear();
  for (;;) {
    // A complete line in the buffer?
    const char* start = buf_.data() + begin_;
    const auto* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    if (nl != nullptr) {
      std::size_t len = nl - start;
      bool was_skipping = skipping_;
      skipping_ = false;
      begin_ += len + 1;
      if (was_skipping) continue;  // the tail of a line already cut and returned
      line.assign(start, std::min(len, kMaxLineBytes));
      if (len > kMaxLineBytes) ++truncated_;
      return true;
    }
    if (end_ - begin_ >= kMaxLineBytes && !skipping_) {
      // No newline within the limit: return the first kMaxLineBytes now.
      line.assign(start, kMaxLineBytes);
      ++truncated_;
      skipping_ = true;
      begin_ = end_ = 0;
      return true;
    }
    if (skipping_) begin_ = end_ = 0;
    if (eof_) {
      if (end_ > begin_ && !skipping_) {
        line.assign(buf_.data() + begin_, end_ - begin_);
        begin_ = end_ = 0;
        return true;
      }
      return false;
    }
    if (begin_ > 0) {
      std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (stopped(stop_)) return false;
    ssize_t n = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(fmt::format("read failed: {}", std::strerror(errno)));
    }
    if (n == 0) {
      if (follow_ && !stopped(stop_)) {
        std::this_thread::sleep_for(kFollowPoll);
        continue;
      }
      eof_ = true;
      continue;
    }
    end_ += static_cast<std::size_t>(n);
  }
}

KmsgSource::KmsgSource(KmsgWatcher watcher, bool ends, const std::atomic<bool>* stop)
    : watcher_(std::move(watcher)), ends_(ends), stop_(stop) {
  // The watcher hands every record to us; its fault matches are not used here.
  watcher_.set_record_observer([this](const KmsgRecord& r) { pending_.push_back(r); });
}

Expected<std::unique_ptr<KmsgSource>> KmsgSource::open(const std::string& path, bool from_start,
                                                       const std::atomic<bool>* stop) {
  auto watcher = KmsgWatcher::open(path, !from_start);
  if (!watcher) return make_error(watcher.error().message);
  struct stat st {};
  const bool ends = ::fstat(watcher->fd(), &st) == 0 && S_ISREG(st.st_mode);
  return std::unique_ptr<KmsgSource>(new KmsgSource(std::move(*watcher), ends, stop));
}

Expected<bool> KmsgSource::next(std::string& line) {
  for (;;) {
    if (!pending_.empty()) {
      KmsgRecord& r = pending_.front();
      line.assign(r.text, 0, std::min(r.text.size(), kMaxLineBytes));
      if (r.text.size() > kMaxLineBytes) ++truncated_;
      severity_ = r.level;
      pending_.pop_front();
      return true;
    }
    if (stopped(stop_)) return false;
    watcher_.read_available();
    if (!pending_.empty()) continue;
    if (watcher_.error()) return make_error(watcher_.error()->message);
    if (ends_) return false;
    // Nothing waiting: sleep until a record arrives (POLLERR/POLLPRI: records
    // were overwritten, which read_available() counts), or a signal.
    pollfd p{watcher_.fd(), POLLIN | POLLPRI, 0};
    ::poll(&p, 1, static_cast<int>(kFollowPoll.count()));
  }
}

Expected<std::unique_ptr<LineSource>> open_source(const std::string& source, bool follow,
                                                  bool from_start, const std::atomic<bool>* stop) {
  if (source == "-")
    return std::unique_ptr<LineSource>(
        std::make_unique<FdLineSource>(STDIN_FILENO, false, false, stop));
  if (source == "kmsg") {
    auto kmsg = KmsgSource::open(std::string(kKmsgPath), from_start, stop);
    if (!kmsg) return make_error(kmsg.error().message);
    return std::unique_ptr<LineSource>(std::move(*kmsg));
  }
  if (source == "journal") {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      return make_error(fmt::format("pipe failed: {}", std::strerror(errno)));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    const char* lines = from_start ? "all" : "0";
    // JSON for PRIORITY, which no short output format prints (line_format.h).
    std::vector<const char*> argv = {"journalctl", "-f", "-o", "json", "-n", lines, nullptr};
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, "journalctl", &actions, nullptr,
                          const_cast<char* const*>(argv.data()), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      return make_error(fmt::format("cannot run journalctl: {}", std::strerror(rc)));
    }
    return std::unique_ptr<LineSource>(
        std::make_unique<FdLineSource>(fds[0], true, false, stop, pid));
  }
  int fd = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(fmt::format("cannot open {}: {}", source, std::strerror(errno)));
  return std::unique_ptr<LineSource>(std::make_unique<FdLineSource>(fd, true, follow, stop));
}

}  // namespace ckpt::logwatch
