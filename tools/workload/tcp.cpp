#include "tools/workload/tcp.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <vector>

#include "tools/workload/sys.h"

namespace ckpt::workload {
namespace {

struct AddrInfoDeleter {
  void operator()(addrinfo* ai) const { freeaddrinfo(ai); }
};
using AddrInfoPtr = std::unique_ptr<addrinfo, AddrInfoDeleter>;

AddrInfoPtr resolve(const Endpoint& endpoint, bool passive, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* result = nullptr;
  const std::string port = std::to_string(endpoint.port);
  const int rc = getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &result);
  if (rc != 0) {
    error = rc == EAI_SYSTEM ? errno_text(errno) : gai_strerror(rc);
    return nullptr;
  }
  return AddrInfoPtr(result);
}

// connect(2) interrupted by a signal keeps connecting in the background;
// wait for it and fetch the outcome instead of starting over.
int connect_fd(int fd, const sockaddr* addr, socklen_t len) {
  if (::connect(fd, addr, len) == 0) return 0;
  if (errno != EINTR) return errno;
  pollfd pfd{fd, POLLOUT, 0};
  while (true) {
    const int n = ::poll(&pfd, 1, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    break;
  }
  int err = 0;
  socklen_t err_len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0) return errno;
  return err;
}

volatile sig_atomic_t g_sink_stop = 0;

void on_sink_signal(int) { g_sink_stop = 1; }

// The listening address as "HOST:PORT" with the port the kernel picked.
std::optional<Endpoint> bound_endpoint(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return std::nullopt;
  char host[NI_MAXHOST];
  char port[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, port, sizeof port,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return std::nullopt;
  }
  Endpoint endpoint;
  endpoint.host = host;
  endpoint.port = static_cast<uint16_t>(std::stoul(port));
  return endpoint;
}

}  // namespace

std::unique_ptr<TcpStream> TcpStream::connect(const Endpoint& endpoint,
                                              std::optional<IoFailure>& failure) {
  const std::string peer = "tcp " + endpoint.to_string();
  std::string error;
  AddrInfoPtr addrs = resolve(endpoint, false, error);
  if (!addrs) {
    failure = IoFailure{"resolve", peer, 0, error};
    return nullptr;
  }
  int last_err = 0;
  std::string last_op = "connect";
  for (const addrinfo* ai = addrs.get(); ai != nullptr; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_err = errno;
      last_op = "socket";
      continue;
    }
    const int err = connect_fd(fd, ai->ai_addr, ai->ai_addrlen);
    if (err == 0) return std::unique_ptr<TcpStream>(new TcpStream(fd, peer));
    last_err = err;
    last_op = "connect";
    ::close(fd);
  }
  failure = IoFailure{last_op, peer, last_err, last_err == 0 ? "no address to connect to" : ""};
  return nullptr;
}

TcpStream::~TcpStream() { close(); }

std::optional<IoFailure> TcpStream::send_all(std::span<const std::byte> data, uint64_t& bytes_sent,
                                             uint64_t& send_calls) {
  std::lock_guard lock(mutex_);
  if (fd_ < 0) return IoFailure{"send", peer_, EBADF, ""};
  size_t done = 0;
  while (done < data.size()) {
    // MSG_NOSIGNAL: a sink that went away is an error to report, not a
    // SIGPIPE that kills the workload before it can say what happened.
    const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoFailure{"send", peer_, errno, ""};
    }
    ++send_calls;
    bytes_sent += static_cast<uint64_t>(n);
    done += static_cast<size_t>(n);
  }
  return std::nullopt;
}

std::optional<IoFailure> TcpStream::close() {
  std::lock_guard lock(mutex_);
  if (fd_ < 0) return std::nullopt;
  const int fd = fd_;
  fd_ = -1;
  // No retry on EINTR: Linux releases the descriptor even then.
  if (::close(fd) != 0 && errno != EINTR) return IoFailure{"close", peer_, errno, ""};
  return std::nullopt;
}

int run_sink(const SinkOptions& options) {
  const std::string where = "tcp " + options.listen.to_string();
  std::string error;
  AddrInfoPtr addrs = resolve(options.listen, true, error);
  if (!addrs) {
    fmt::print(stderr, "ckptscope-workload sink: resolve {}: {}\n", where, error);
    return 1;
  }
  int listen_fd = -1;
  std::string bind_error;
  for (const addrinfo* ai = addrs.get(); ai != nullptr && listen_fd < 0; ai = ai->ai_next) {
    const int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      bind_error = fmt::format("socket: {}", errno_text(errno));
      continue;
    }
    const int one = 1;
    // Tests restart sinks on fixed ports; TIME_WAIT must not block them.
    if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) {
      bind_error = fmt::format("setsockopt SO_REUSEADDR: {}", errno_text(errno));
      ::close(fd);
      continue;
    }
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      bind_error = fmt::format("bind: {}", errno_text(errno));
      ::close(fd);
      continue;
    }
    if (::listen(fd, 128) != 0) {
      bind_error = fmt::format("listen: {}", errno_text(errno));
      ::close(fd);
      continue;
    }
    listen_fd = fd;
  }
  if (listen_fd < 0) {
    fmt::print(stderr, "ckptscope-workload sink: {}: {}\n", where, bind_error);
    return 1;
  }

  // SIGTERM/SIGINT stay blocked except inside ppoll, so a signal can never
  // slip in between checking the flag and going to sleep.
  struct sigaction action {};
  action.sa_handler = on_sink_signal;
  sigemptyset(&action.sa_mask);
  sigset_t blocked;
  sigset_t wait_mask;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGINT);
  if (::sigaction(SIGTERM, &action, nullptr) != 0 || ::sigaction(SIGINT, &action, nullptr) != 0 ||
      ::sigprocmask(SIG_BLOCK, &blocked, &wait_mask) != 0) {
    fmt::print(stderr, "ckptscope-workload sink: signal setup: {}\n", errno_text(errno));
    ::close(listen_fd);
    return 1;
  }
  sigdelset(&wait_mask, SIGTERM);
  sigdelset(&wait_mask, SIGINT);

  if (!options.ready_file.empty()) {
    const auto bound = bound_endpoint(listen_fd);
    if (!bound) {
      fmt::print(stderr, "ckptscope-workload sink: getsockname {}: {}\n", where, errno_text(errno));
      ::close(listen_fd);
      return 1;
    }
    if (auto written = write_file_atomically(options.ready_file, bound->to_string() + "\n");
        !written) {
      fmt::print(stderr, "ckptscope-workload sink: {}\n", written.error().message);
      ::close(listen_fd);
      return 1;
    }
  }

  std::vector<int> conns;
  std::vector<std::byte> buffer(1 << 20);
  uint64_t received = 0;
  uint64_t accepted = 0;
  bool failed = false;

  // Drains the accept queue; false on a listening-socket error.
  const auto accept_pending = [&]() {
    while (true) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        conns.push_back(fd);
        ++accepted;
        continue;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      // A peer that reset before we accepted it is its problem, not ours.
      if (errno == EINTR || errno == ECONNABORTED) continue;
      fmt::print(stderr, "ckptscope-workload sink: accept {}: {}\n", where, errno_text(errno));
      return false;
    }
  };

  while (!g_sink_stop) {
    // Done once every accepted connection has closed and the expected bytes
    // are in. The extra accept catches a connection queued after the last
    // poll, so a slow second client is not mistaken for "all closed".
    if (accepted > 0 && conns.empty() &&
        (!options.expect_bytes || received >= *options.expect_bytes)) {
      if (!accept_pending()) {
        failed = true;
        break;
      }
      if (conns.empty()) break;
    }
    std::vector<pollfd> pfds;
    pfds.push_back({listen_fd, POLLIN, 0});
    for (const int fd : conns) pfds.push_back({fd, POLLIN, 0});
    const int n = ::ppoll(pfds.data(), pfds.size(), nullptr, &wait_mask);
    if (n < 0) {
      if (errno == EINTR) continue;
      fmt::print(stderr, "ckptscope-workload sink: poll: {}\n", errno_text(errno));
      failed = true;
      break;
    }
    if ((pfds[0].revents & POLLIN) != 0 && !accept_pending()) {
      failed = true;
      break;
    }
    std::vector<int> open;
    for (size_t i = 1; i < pfds.size(); ++i) {
      const int fd = pfds[i].fd;
      if ((pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
        open.push_back(fd);
        continue;
      }
      const ssize_t got = ::read(fd, buffer.data(), buffer.size());
      if (got > 0) {
        received += static_cast<uint64_t>(got);
        open.push_back(fd);
      } else if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
        open.push_back(fd);
      } else {
        if (got < 0) {
          fmt::print(stderr, "ckptscope-workload sink: read from a client: {}\n",
                     errno_text(errno));
          failed = true;
        }
        if (::close(fd) != 0 && errno != EINTR) {
          fmt::print(stderr, "ckptscope-workload sink: close: {}\n", errno_text(errno));
          failed = true;
        }
      }
    }
    // Newly accepted connections were appended to conns after pfds was built.
    for (size_t i = pfds.size() - 1; i < conns.size(); ++i) open.push_back(conns[i]);
    conns = std::move(open);
  }
  for (const int fd : conns) ::close(fd);
  ::close(listen_fd);

  fmt::print("{{\"bytes_received\":{}}}\n", received);
  if (std::fflush(stdout) != 0) {
    fmt::print(stderr, "ckptscope-workload sink: stdout: {}\n", errno_text(errno));
    failed = true;
  }
  if (options.expect_bytes && received != *options.expect_bytes) {
    fmt::print(stderr, "ckptscope-workload sink: received {} bytes, expected {}\n", received,
               *options.expect_bytes);
    failed = true;
  }
  return failed ? 1 : 0;
}

}  // namespace ckpt::workload
