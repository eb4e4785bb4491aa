// Timing a command in a child process, for the benchmarks that measure
// ckptscope's own commands (report_bench, scale_bench): wall time, peak RSS
// and CPU of that child alone, and the median of repeated runs.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ckpt::bench {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct ChildRun {
  double wall_s = 0;
  double max_rss_mib = 0;
  double user_s = 0;
  double sys_s = 0;
  int status = 0;
};

// Starts `argv` with stdout and stderr to `log`, waits for it alone (wait4,
// so the peak RSS is this child's, not the largest of all children).
inline ChildRun run_child(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    std::exit(1);
  }
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  ChildRun r;
  struct rusage ru {};
  if (wait4(pid, &r.status, 0, &ru) < 0) {
    perror("wait4");
    std::exit(1);
  }
  r.wall_s = seconds_since(t0);
  r.max_rss_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;  // KiB on Linux
  r.user_s =
      static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) / 1e6;
  r.sys_s =
      static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6;
  return r;
}

}  // namespace ckpt::bench
