// The exporter's registration protocol (apps/exporter/registration_server.h)
// through its public interface: one server on a socket in a temp dir for the
// whole run, and per input a fresh client that connects, sends the input as
// its requests, reads the answers and hangs up. Any local user can reach
// this socket, so no byte sequence may end the exporter.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "apps/exporter/registration_server.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

ckpt::RegistrationServer& server() {
  static std::unique_ptr<ckpt::RegistrationServer> instance = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                      "/ckptscope-fuzz-registration-XXXXXX";
    if (mkdtemp(dir.data()) == nullptr) std::abort();
    ckpt::RegistrationOptions options;
    options.socket_path = dir + "/exporter.sock";
    ckpt::RegistrationServer::Hooks hooks;
    hooks.tcp_enabled = [] { return false; };
    hooks.nfs_enabled = [] { return false; };
    hooks.drops = [] { return std::vector<ckpt::DropRecord>{}; };
    hooks.drain = [] {};
    hooks.report_failure = [](const ckpt::FailureRecord&) {};
    auto listening = ckpt::RegistrationServer::listen(options, std::move(hooks));
    if (!listening) std::abort();  // the harness, not the server, is broken
    return std::move(*listening);
  }();
  return *instance;
}

int connect_client(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) std::abort();
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) std::abort();
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

void drain_answers(int fd) {
  char buffer[4096];
  while (recv(fd, buffer, sizeof(buffer), 0) > 0) {
  }
}

}  // namespace

CKPT_FUZZ_TARGET {
  auto& registration = server();
  const int fd = connect_client(registration.path());
  registration.serve();  // accepts
  size_t sent = 0;
  // A few rounds: the server reads what has arrived, answers, the client
  // reads the answers so neither side's buffer fills.
  for (int round = 0; round < 64 && sent < size; ++round) {
    const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n > 0) sent += static_cast<size_t>(n);
    if (n < 0 && errno != EAGAIN && errno != EINTR) break;  // the server hung up
    registration.serve();
    drain_answers(fd);
  }
  registration.serve();
  drain_answers(fd);
  close(fd);
  for (int round = 0; round < 64 && registration.clients() > 0; ++round) registration.serve();
  return 0;
}
