#include "apps/exporter/listen_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

namespace ckpt {

std::string ListenAddress::display() const {
  if (host.empty()) return fmt::format(":{}", port);
  return v6 ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

Expected<ListenAddress> parse_listen_address(std::string_view text) {
  constexpr std::string_view kForms = "expected ADDR:PORT, [IPV6]:PORT or :PORT";
  ListenAddress out;
  std::string_view host, port;
  if (text.starts_with("[")) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return make_error(fmt::format("'{}': {}", text, kForms));
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
    out.v6 = true;
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return make_error(fmt::format("'{}': {}", text, kForms));
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      return make_error(
          fmt::format("'{}': an IPv6 address goes in brackets, [{}]:PORT", text, host));
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
      value > 65535)
    return make_error(fmt::format("'{}': the port must be a number from 1 to 65535", text));
  out.port = static_cast<uint16_t>(value);
  if (host.empty()) {
    if (out.v6) return make_error(fmt::format("'{}': {}", text, kForms));
    return out;
  }
  out.host = std::string(host);
  unsigned char buf[sizeof(in6_addr)];
  if (inet_pton(out.v6 ? AF_INET6 : AF_INET, out.host.c_str(), buf) != 1)
    return make_error(
        fmt::format("'{}': '{}' is not an IP{} address", text, out.host, out.v6 ? "v6" : "v4"));
  return out;
}

Expected<int> open_bound_socket(const ListenAddress& address) {
  const bool v6 = address.v6 || address.host.empty();
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(address.port);
    a->sin6_addr = in6addr_any;
    if (!address.host.empty()) inet_pton(AF_INET6, address.host.c_str(), &a->sin6_addr);
    len = sizeof(*a);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(address.port);
    inet_pton(AF_INET, address.host.c_str(), &a->sin_addr);
    len = sizeof(*a);
  }
  constexpr int kType = SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK;
  int fd = socket(v6 ? AF_INET6 : AF_INET, kType, 0);
  if (fd < 0 && v6 && address.host.empty()) {
    // No IPv6 on this host: every IPv4 address, then.
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    ss = {};
    a->sin_family = AF_INET;
    a->sin_port = htons(address.port);
    len = sizeof(*a);
    fd = socket(AF_INET, kType, 0);
  }
  if (fd < 0) return make_error(fmt::format("socket: {}", std::strerror(errno)));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (ss.ss_family == AF_INET6 && address.host.empty()) {
    // Every address means IPv4 too, whatever net.ipv6.bindv6only says.
    const int zero = 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) == 0) return fd;
  const int err = errno;
  close(fd);
  if (err == EADDRINUSE)
    return make_error(
        fmt::format("cannot listen on {}: the port is in use by another process "
                    "(address already in use)",
                    address.display()));
  if (err == EADDRNOTAVAIL)
    return make_error(fmt::format("cannot listen on {}: that address is not one of this host's",
                                  address.display()));
  if (err == EACCES)
    return make_error(
        fmt::format("cannot listen on {}: ports below 1024 need privileges", address.display()));
  return make_error(fmt::format("cannot listen on {}: {}", address.display(), std::strerror(err)));
}

Expected<void> check_can_listen(const ListenAddress& address) {
  auto fd = open_bound_socket(address);
  if (!fd) return fd.error();
  close(*fd);
  return {};
}

}  // namespace ckpt
