// A plain-socket HTTP client for the exporter's server tests: connections
// the test holds idle, half requests, raw bytes, and scrapes timed from
// connect to the server's close. Nothing here parses more than a test needs.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ckpt::test {

// A port nobody listens on now: one the kernel picked on loopback, let go.
inline uint16_t free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// A connected socket to 127.0.0.1:port (or [::1]:port), -1 when refused.
inline int connect_to(uint16_t port, bool v6 = false) {
  const int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int rc = -1;
  if (v6) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    a.sin6_addr = in6addr_loopback;
    rc = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    rc = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  }
  if (rc != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

inline bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads until the peer closes or `timeout_ms` passes; what was read.
inline std::string read_until_closed(int fd, int timeout_ms) {
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return got;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) return got;
    char buf[65536];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return got;
    got.append(buf, static_cast<size_t>(n));
  }
}

// Whether the peer closed within `timeout_ms` (EOF or a reset).
inline bool closed_within(int fd, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
  }
}

// One answer read from a kept-alive connection: the head, then as many body
// bytes as Content-Length says (none for a HEAD). Empty when it does not
// come in `timeout_ms`; bytes past it stay in `leftover` for the next.
inline std::string read_one_answer(int fd, int timeout_ms, std::string& leftover,
                                   bool to_head = false) {
  std::string got = std::move(leftover);
  leftover.clear();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const size_t head_end = got.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      size_t length = 0;
      const size_t at = got.find("Content-Length: ");
      if (at != std::string::npos && at < head_end && !to_head)
        length = std::stoul(got.substr(at + 16));
      const size_t total = head_end + 4 + length;
      if (got.size() >= total) {
        leftover = got.substr(total);
        got.resize(total);
        return got;
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return "";
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) return "";
    char buf[65536];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return "";
    got.append(buf, static_cast<size_t>(n));
  }
}

struct Timed {
  std::string answer;
  double seconds = 0;
};

// One request on a new connection, "Connection: close": the whole answer
// and the time from connect to the server's close.
inline Timed request(uint16_t port, std::string_view path = "/metrics",
                     std::string_view extra_headers = "", int timeout_ms = 5000) {
  const auto t0 = std::chrono::steady_clock::now();
  Timed out;
  const int fd = connect_to(port);
  if (fd < 0) return out;
  std::string req = "GET ";
  req += path;
  req += " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n";
  req += extra_headers;
  req += "\r\n";
  if (send_all(fd, req)) out.answer = read_until_closed(fd, timeout_ms);
  close(fd);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

// The body of an answer (after the head), "" without one.
inline std::string body_of(const std::string& answer) {
  const size_t end = answer.find("\r\n\r\n");
  return end == std::string::npos ? "" : answer.substr(end + 4);
}

// Connections held open and closed together at the end.
class IdleConnections {
 public:
  IdleConnections() = default;
  ~IdleConnections() {
    for (int fd : fds_) close(fd);
  }
  IdleConnections(const IdleConnections&) = delete;
  IdleConnections& operator=(const IdleConnections&) = delete;

  // Opens `count` connections; every other one sends half a request. How
  // many could be opened.
  size_t open(uint16_t port, size_t count) {
    size_t opened = 0;
    for (size_t i = 0; i < count; ++i) {
      const int fd = connect_to(port);
      if (fd < 0) break;
      if (i % 2 == 1) send_all(fd, "GET /metrics HTTP/1.1\r\nHost: te");
      fds_.push_back(fd);
      ++opened;
    }
    return opened;
  }

  // How many of them the server has closed (EOF or reset), without waiting.
  [[nodiscard]] size_t closed_by_server() const {
    size_t n = 0;
    for (int fd : fds_) {
      char c = 0;
      const ssize_t got = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) ++n;
    }
    return n;
  }

  [[nodiscard]] size_t size() const { return fds_.size(); }

 private:
  std::vector<int> fds_;
};

// Raises this process's soft RLIMIT_NOFILE to `wanted` (at most the hard
// limit); the soft limit now.
inline rlim_t raise_open_files(rlim_t wanted) {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return 0;
  if (r.rlim_cur < wanted) {
    // Root raises the hard limit too (CAP_SYS_RESOURCE); anyone else stops at it.
    if (geteuid() == 0 && r.rlim_max < wanted) r.rlim_max = wanted;
    r.rlim_cur = std::min(wanted, r.rlim_max);
    setrlimit(RLIMIT_NOFILE, &r);
    getrlimit(RLIMIT_NOFILE, &r);
  }
  return r.rlim_cur;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace ckpt::test
