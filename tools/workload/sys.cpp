#include "tools/workload/sys.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace ckpt::workload {
namespace {

uint64_t clock_ns(clockid_t clock) {
  timespec ts{};
  // Only EINVAL/EFAULT are possible and both would be programming errors;
  // report 0 rather than inventing a time.
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

uint64_t monotonic_ns() { return clock_ns(CLOCK_MONOTONIC); }

uint64_t thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

void sleep_ms(uint64_t ms) {
  if (ms == 0) return;
  // An absolute deadline makes EINTR restarts exact instead of drifting.
  timespec deadline{};
  if (clock_gettime(CLOCK_MONOTONIC, &deadline) != 0) return;
  const uint64_t ns = static_cast<uint64_t>(deadline.tv_nsec) + (ms % 1000) * 1'000'000ULL;
  deadline.tv_sec += static_cast<time_t>(ms / 1000 + ns / 1'000'000'000ULL);
  deadline.tv_nsec = static_cast<long>(ns % 1'000'000'000ULL);
  int rc;
  do {
    rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr);
  } while (rc == EINTR);
}

std::string errno_text(int err) {
  char buf[256];
  // GNU strerror_r: returns a pointer that may or may not be buf.
  const char* text = strerror_r(err, buf, sizeof buf);
  return text != nullptr ? std::string(text) : fmt::format("errno {}", err);
}

Expected<void> write_all_fd(int fd, std::string_view data, std::string_view path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(fmt::format("write {}: {}", path, errno_text(errno)));
    }
    if (n == 0) return make_error(fmt::format("write {}: wrote nothing", path));
    done += static_cast<size_t>(n);
  }
  return {};
}

Expected<void> make_dirs(const std::string& path) {
  if (path.empty()) return make_error("mkdir: empty path");
  // Each prefix ending before a '/' is a parent; the last one is path itself.
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string prefix = path.substr(0, end);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0755) != 0) {
      const int err = errno;
      struct stat st {};
      if (err != EEXIST) return make_error(fmt::format("mkdir {}: {}", prefix, errno_text(err)));
      if (::stat(prefix.c_str(), &st) != 0) {
        return make_error(fmt::format("stat {}: {}", prefix, errno_text(errno)));
      }
      if (!S_ISDIR(st.st_mode)) {
        return make_error(fmt::format("mkdir {}: {}", prefix, errno_text(ENOTDIR)));
      }
    }
    if (end == std::string::npos) break;
  }
  return {};
}

Expected<void> write_file_atomically(const std::string& path, std::string_view data) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(fmt::format("open {}: {}", tmp, errno_text(errno)));
  if (auto written = write_all_fd(fd, data, tmp); !written) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return written;
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return make_error(fmt::format("close {}: {}", tmp, errno_text(err)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return make_error(fmt::format("rename {} -> {}: {}", tmp, path, errno_text(err)));
  }
  return {};
}

}  // namespace ckpt::workload
