#include "probes/exporter_connection.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/clock.h"
#include "json/json_io.h"

namespace ckpt {

using nlohmann::json;

int exporter_ms_left(uint64_t deadline_ns) {
  const uint64_t now = monotonic_ns();
  return now >= deadline_ns ? 0 : static_cast<int>((deadline_ns - now) / 1'000'000) + 1;
}

Expected<void> send_exporter_line(int fd, const std::string& socket_path, const std::string& line) {
  const std::string out = line + "\n";
  size_t sent = 0;
  const uint64_t deadline = monotonic_ns() + 2'000'000'000;
  while (sent < out.size()) {
    const ssize_t n = send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR) && exporter_ms_left(deadline) > 0) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, exporter_ms_left(deadline));
      continue;
    }
    return make_error(fmt::format("exporter at {}: {}", socket_path,
                                  n < 0 ? std::strerror(errno) : "connection closed"));
  }
  return {};
}

namespace {

Expected<ExporterConnection> register_on(ExporterConnection c, const std::string& socket_path,
                                         const json& hello, int timeout_ms) {
  if (auto ok = send_exporter_line(c.fd, socket_path, dump_json(hello)); !ok) return ok.error();
  // The answer: one JSON line.
  const uint64_t deadline = monotonic_ns() + static_cast<uint64_t>(timeout_ms) * 1'000'000;
  size_t eol = std::string::npos;
  while ((eol = c.pending.find('\n')) == std::string::npos) {
    pollfd p{c.fd, POLLIN, 0};
    const int left = exporter_ms_left(deadline);
    if (left == 0 || ::poll(&p, 1, left) <= 0)
      return make_error(
          fmt::format("exporter at {}: no answer within {} ms", socket_path, timeout_ms));
    char buf[4096];
    const ssize_t n = recv(c.fd, buf, sizeof(buf), 0);
    if (n <= 0) return make_error(fmt::format("exporter at {} closed the connection", socket_path));
    c.pending.append(buf, static_cast<size_t>(n));
    if (c.pending.size() > 65536)
      return make_error(fmt::format("exporter at {}: answer too long", socket_path));
  }
  auto answer = parse_json(c.pending.substr(0, eol), "exporter answer");
  c.pending.erase(0, eol + 1);
  if (!answer || !answer->is_object() || !answer->contains("ok") || !(*answer)["ok"].is_boolean())
    return make_error(fmt::format("exporter at {}: malformed answer", socket_path));
  c.answer = std::move(*answer);
  if (!c.answer["ok"].get<bool>()) {
    const auto& error = c.answer.contains("error") ? c.answer["error"] : json();
    return make_error(fmt::format(
        "exporter at {} refused: {}", socket_path,
        error.is_string() ? valid_utf8(error.get<std::string>()) : std::string("no reason given")));
  }
  fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK);
  return c;
}

}  // namespace

Expected<ExporterConnection> connect_to_exporter(const std::string& socket_path, const json& hello,
                                                 int timeout_ms) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path))
    return make_error(fmt::format("exporter socket {}: path too long", socket_path));
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  ExporterConnection c;
  c.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (c.fd < 0) return make_error(fmt::format("socket: {}", std::strerror(errno)));
  const int fd = c.fd;
  Expected<ExporterConnection> done =
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0
          ? Expected<ExporterConnection>(
                make_error(fmt::format("no exporter at {}: {}", socket_path, std::strerror(errno))))
          : register_on(std::move(c), socket_path, hello, timeout_ms);
  if (!done) close(fd);
  return done;
}

}  // namespace ckpt
