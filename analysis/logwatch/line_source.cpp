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

bool stopped(const std::atomic<bool>* stop) { return stop != nullptr && stop->load(); }

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

LineBuffer::LineBuffer(std::uint64_t& cut) : cut_(cut), buf_(kReadBuffer) {}

bool LineBuffer::take_line(std::string& line) {
  for (;;) {
    const char* start = buf_.data() + begin_;
    const auto* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    if (nl != nullptr) {
      const auto len = static_cast<std::size_t>(nl - start);
      const bool was_skipping = skipping_;
      skipping_ = false;
      begin_ += len + 1;
      if (was_skipping) continue;  // the tail of a line already cut and returned
      line.assign(start, std::min(len, kMaxLineBytes));
      if (len > kMaxLineBytes) ++cut_;
      return true;
    }
    if (end_ - begin_ >= kMaxLineBytes && !skipping_) {
      // No newline within the limit: return the first kMaxLineBytes now.
      line.assign(start, kMaxLineBytes);
      ++cut_;
      skipping_ = true;
      begin_ = end_ = 0;
      return true;
    }
    if (skipping_) begin_ = end_ = 0;
    return false;
  }
}

bool LineBuffer::take_rest(std::string& line) {
  // Under kMaxLineBytes: take_line() cuts anything longer.
  const bool some = end_ > begin_ && !skipping_;
  if (some) line.assign(buf_.data() + begin_, end_ - begin_);
  begin_ = end_ = 0;
  skipping_ = false;  // a cut line ends with its input
  return some;
}

char* LineBuffer::space() {
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  return buf_.data() + end_;
}

FdLineSource::FdLineSource(int fd, bool owned, const std::atomic<bool>* stop, pid_t child)
    : fd_(fd), owned_(owned), stop_(stop), child_(child), buffer_(truncated_) {}

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
    if (buffer_.take_line(line)) return true;
    if (eof_) return buffer_.take_rest(line);
    if (stopped(stop_)) return false;
    // space() first: it moves the unread bytes down, which is what frees the
    // room space_size() reports (as two arguments of one call their order is
    // unspecified, and a full buffer read 0 bytes: a false end of file).
    char* room = buffer_.space();
    const ssize_t n = ::read(fd_, room, buffer_.space_size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(fmt::format("read failed: {}", errno_text(errno)));
    }
    if (n == 0) {
      eof_ = true;
      continue;
    }
    buffer_.filled(static_cast<std::size_t>(n));
  }
}

FollowedFileSource::FollowedFileSource(std::string path, const std::atomic<bool>* stop,
                                       FollowNotice notice, std::chrono::milliseconds poll)
    : path_(std::move(path)),
      stop_(stop),
      notice_(std::move(notice)),
      poll_(poll),
      buffer_(truncated_) {}

FollowedFileSource::~FollowedFileSource() { close_file(); }

Expected<std::unique_ptr<FollowedFileSource>> FollowedFileSource::open(
    const std::string& path, const std::atomic<bool>* stop, FollowNotice notice,
    std::chrono::milliseconds poll) {
  std::unique_ptr<FollowedFileSource> source(
      new FollowedFileSource(path, stop, std::move(notice), poll));
  // A path that names nothing yet is waited for; one that names something
  // unreadable is a mistake to report now, not to wait on.
  if (const int err = source->try_open(true); err != 0 && err != ENOENT)
    return make_error(fmt::format("cannot open {}: {}", path, errno_text(err)));
  return source;
}

void FollowedFileSource::say(const std::string& message) {
  if (notice_) notice_(message);
}

void FollowedFileSource::say_path_error(int err, const std::string& what) {
  if (err == path_error_) return;
  path_error_ = err;
  say(what);
}

void FollowedFileSource::close_file() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  replaced_ = false;
}

int FollowedFileSource::try_open(bool at_start) {
  // O_NONBLOCK: a FIFO at the path neither blocks open() nor read(), so a
  // stop request is seen within a poll.
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  const int err = fd < 0 ? errno : 0;
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) != 0) {
    const int stat_err = errno;
    ::close(fd);
    return try_open_failed(stat_err, at_start);
  }
  if (fd < 0) return try_open_failed(err, at_start);
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return try_open_failed(EISDIR, at_start);
  }
  fd_ = fd;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  offset_ = 0;
  if (opened_once_) {
    ++reopens_;
    say(
        fmt::format("{}: {}; the old file was read to its end, reading the new one from its "
                    "start",
                    path_, path_error_ != 0 ? "has appeared again" : "replaced by a new file"));
  } else if (path_error_ != 0) {
    say(fmt::format("{}: has appeared; reading it from its start", path_));
  }
  opened_once_ = true;
  path_error_ = 0;
  return 0;
}

int FollowedFileSource::try_open_failed(int err, bool at_start) {
  if (err == ENOENT) {
    say_path_error(err, fmt::format("{}: does not exist{}; waiting for it to appear (checking "
                                    "every {} ms)",
                                    path_, opened_once_ ? "" : " yet", poll_.count()));
  } else if (!at_start) {
    say_path_error(err, fmt::format("{}: cannot open it: {}; trying again every {} ms", path_,
                                    errno_text(err), poll_.count()));
  }
  return err;
}

bool FollowedFileSource::was_truncated() const {
  struct stat st {};
  return ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < offset_;
}

FollowedFileSource::PathIs FollowedFileSource::check_path() {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    const int err = errno;
    say_path_error(err, fmt::format("{}: {}; reading what is left of the open file and waiting "
                                    "for a file at the path",
                                    path_, errno_text(err)));
    return PathIs::kNoFile;
  }
  if (st.st_dev != dev_ || st.st_ino != ino_) return PathIs::kAnotherFile;
  path_error_ = 0;  // renamed away and back: the same file, nothing to say
  return PathIs::kSameFile;
}

Expected<bool> FollowedFileSource::next(std::string& line) {
  line.clear();
  for (;;) {
    if (buffer_.take_line(line)) return true;
    if (stopped(stop_)) return false;
    if (fd_ < 0 && try_open(false) != 0) {
      std::this_thread::sleep_for(poll_);
      continue;
    }
    char* room = buffer_.space();  // before space_size(): see FdLineSource::next
    ssize_t n = ::read(fd_, room, buffer_.space_size());
    if (n < 0 && errno == EAGAIN) n = 0;  // an empty FIFO
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(fmt::format("read failed: {}", errno_text(errno)));
    }
    if (n > 0) {
      buffer_.filled(static_cast<std::size_t>(n));
      offset_ += n;
      continue;
    }
    // At the end of the open file.
    if (replaced_) {
      // Read to its end: the last line, even unterminated, then the new file.
      close_file();
      if (buffer_.take_rest(line)) return true;
      continue;
    }
    if (was_truncated()) {
      ++truncations_;
      say(fmt::format("{}: file truncated; reading it again from its start", path_));
      if (::lseek(fd_, 0, SEEK_SET) != 0)
        return make_error(fmt::format("cannot seek {}: {}", path_, errno_text(errno)));
      offset_ = 0;
      if (buffer_.take_rest(line)) return true;
      continue;
    }
    if (check_path() == PathIs::kAnotherFile) {
      // Read again: what was written to the old file before it was replaced.
      replaced_ = true;
      continue;
    }
    std::this_thread::sleep_for(poll_);
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
                                                  bool from_start, const std::atomic<bool>* stop,
                                                  FollowNotice notice) {
  if (source == "-")
    return std::unique_ptr<LineSource>(std::make_unique<FdLineSource>(STDIN_FILENO, false, stop));
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
    return std::unique_ptr<LineSource>(std::make_unique<FdLineSource>(fds[0], true, stop, pid));
  }
  if (follow) {
    auto followed = FollowedFileSource::open(source, stop, std::move(notice));
    if (!followed) return make_error(followed.error().message);
    return std::unique_ptr<LineSource>(std::move(*followed));
  }
  int fd = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(fmt::format("cannot open {}: {}", source, errno_text(errno)));
  return std::unique_ptr<LineSource>(std::make_unique<FdLineSource>(fd, true, stop));
}

}  // namespace ckpt::logwatch
