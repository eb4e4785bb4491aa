#include "apps/exporter/registration_server.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "jobio.h"
#include "model/vocabulary.h"

namespace ckpt {
namespace {

using nlohmann::json;

constexpr size_t kMaxRequestLine = 65536;
constexpr uint64_t kDropsEveryNs = 1'000'000'000;
// Failure kinds a client may report, and how much of its evidence is kept.
constexpr std::array<std::string_view, 1> kReportableFailureKinds = {kFailureLogAnomaly};
constexpr size_t kMaxReportedEvidence = 1024;

Expected<FailureRecord> failure_report(uid_t uid, const json& req) {
  // The node's failure counters are evidence operators act on: only root
  // (the exporter's peers: logwatch reading /dev/kmsg) may add to them, and
  // only kinds with a bounded label set.
  if (uid != 0)
    return make_error(
        fmt::format("failure reports are taken from root only (the caller is uid {})", uid));
  const std::string kind = req.value("kind", std::string());
  if (std::find(kReportableFailureKinds.begin(), kReportableFailureKinds.end(), kind) ==
      kReportableFailureKinds.end())
    return make_error(fmt::format("failure kind '{}' is not one a client may report ({})",
                                  kind.substr(0, 64), fmt::join(kReportableFailureKinds, ", ")));
  if (!req.contains("evidence") || !req["evidence"].is_string())
    return make_error("a failure report needs \"evidence\" (a string)");
  FailureRecord f;
  f.kind = kind;
  f.evidence = req["evidence"].get<std::string>().substr(0, kMaxReportedEvidence);
  f.time_ns = req.contains("time_ns") && req["time_ns"].is_number_unsigned()
                  ? req["time_ns"].get<uint64_t>()
                  : monotonic_ns();
  return f;
}

sockaddr_un unix_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), std::min(path.size() + 1, sizeof(addr.sun_path) - 1));
  return addr;
}

}  // namespace

Expected<std::unique_ptr<RegistrationServer>> RegistrationServer::listen(
    RegistrationOptions options, Hooks hooks) {
  const std::string path = options.socket_path;  // a copy: options moves below
  if (path.empty() || path.size() >= sizeof(sockaddr_un::sun_path))
    return make_error(fmt::format("--socket '{}': must be a path shorter than {} bytes", path,
                                  sizeof(sockaddr_un::sun_path)));
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::exists(parent, ec)) {
    std::filesystem::create_directories(parent, ec);
    if (ec)
      return make_error(
          fmt::format("--socket {}: cannot create {}: {}", path, parent.string(), ec.message()));
    chmod(parent.c_str(), 0755);
  }
  sockaddr_un addr = unix_address(path);
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return make_error(fmt::format("--socket {}: exists and is not a socket", path));
    // A live exporter answers; a dead one's socket file is ours to replace.
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live =
        probe >= 0 && connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    if (probe >= 0) close(probe);
    if (live) return make_error(fmt::format("--socket {}: another exporter is serving it", path));
    unlink(path.c_str());
  }
  std::unique_ptr<RegistrationServer> server(
      new RegistrationServer(std::move(options), std::move(hooks)));
  server->listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (server->listen_fd_ < 0) return make_error(fmt::format("socket: {}", std::strerror(errno)));
  if (bind(server->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    return make_error(fmt::format("--socket {}: {}", path, std::strerror(errno)));
  // Any local user may register processes it owns (checked per request).
  chmod(path.c_str(), 0666);
  if (::listen(server->listen_fd_, 16) != 0)
    return make_error(fmt::format("--socket {}: listen: {}", path, std::strerror(errno)));
  return server;
}

RegistrationServer::~RegistrationServer() {
  for (auto& c : clients_) close(c->fd);
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    unlink(options_.socket_path.c_str());
  }
}

std::vector<int> RegistrationServer::wait_fds() const {
  std::vector<int> fds{listen_fd_};
  for (const auto& c : clients_)
    if (c->fd >= 0) fds.push_back(c->fd);
  return fds;
}

void RegistrationServer::accept_clients() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (clients_.size() >= options_.max_clients) {
      const std::string refuse =
          json{{"ok", false}, {"error", "too many clients registered with this exporter"}}.dump() +
          "\n";
      (void)send(fd, refuse.data(), refuse.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      close(fd);
      continue;
    }
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      close(fd);
      continue;
    }
    auto c = std::make_unique<Client>();
    c->fd = fd;
    c->uid = cred.uid;
    clients_.push_back(std::move(c));
  }
}

Expected<void> RegistrationServer::may_trace(const Client& c, uint32_t tgid) const {
  struct stat st {};
  if (tgid == 0 || stat(fmt::format("{}/{}", options_.proc_root, tgid).c_str(), &st) != 0)
    return make_error(fmt::format("no process {}", tgid));
  if (c.uid != 0 && st.st_uid != c.uid)
    return make_error(fmt::format("process {} belongs to uid {}, not to the caller (uid {})", tgid,
                                  st.st_uid, c.uid));
  return {};
}

bool RegistrationServer::handle_line(Client& c, const std::string& line) {
  const json req = json::parse(line, nullptr, false);
  const std::string op = req.is_object() ? req.value("op", std::string()) : std::string();
  auto answer = [&c](const json& j) { c.out += j.dump() + "\n"; };
  if (!c.registered) {
    if (op != "register" || !req.contains("tgids") || !req["tgids"].is_array()) {
      answer({{"ok", false},
              {"error", "the first request must be {\"op\":\"register\",\"tgids\":[...]}"}});
      return false;
    }
    std::set<uint32_t> tgids;
    for (const auto& t : req["tgids"]) {
      if (!t.is_number_unsigned() || t.get<uint64_t>() > UINT32_MAX) {
        answer({{"ok", false}, {"error", fmt::format("tgids: {} is not a process id", t.dump())}});
        return false;
      }
      const auto tgid = t.get<uint32_t>();
      if (auto ok = may_trace(c, tgid); !ok) {
        answer({{"ok", false}, {"error", ok.error().message}});
        return false;
      }
      tgids.insert(tgid);
    }
    c.tgids = std::move(tgids);
    c.registered = true;
    c.wants_records = !req.contains("records") || req["records"] != false;
    c.name = req.value("client", std::string("client"));
    c.nfs_said = hooks_.nfs_enabled();
    answer({{"ok", true},
            {"tcp", hooks_.tcp_enabled()},
            {"nfs", c.nfs_said},
            {"version", CKPTSCOPE_VERSION}});
    return true;
  }
  if (op == "trace" && req.contains("tgid") && req["tgid"].is_number_unsigned()) {
    const auto tgid = req["tgid"].get<uint32_t>();
    if (auto ok = may_trace(c, tgid); ok)
      c.tgids.insert(tgid);
    else
      queue_control(c, json{{"error", ok.error().message}}.dump());
    return true;
  }
  if (op == "failure") {
    if (auto f = failure_report(c.uid, req); !f)
      answer({{"ok", false}, {"error", f.error().message}});
    else if (hooks_.report_failure)
      hooks_.report_failure(std::move(*f));
    return true;
  }
  if (op == "sync" && req.contains("seq") && req["seq"].is_number_unsigned()) {
    c.syncs.push_back(req["seq"].get<uint64_t>());
    return true;
  }
  queue_control(c, json{{"error", fmt::format("unknown request: {}", line.substr(0, 200))}}.dump());
  return true;
}

bool RegistrationServer::read_requests(Client& c) {
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(c.fd, buf, sizeof(buf), 0);
    if (n > 0) {
      c.in.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    return false;  // the client closed, or an error
  }
  size_t eol;
  while ((eol = c.in.find('\n')) != std::string::npos) {
    const std::string line = c.in.substr(0, eol);
    c.in.erase(0, eol + 1);
    if (!handle_line(c, line)) {
      flush(c);
      return false;
    }
  }
  return c.in.size() <= kMaxRequestLine;
}

void RegistrationServer::queue(Client& c, ForwardRing ring, const void* data, size_t size,
                               bool always) {
  if (!always && c.out.size() + sizeof(ForwardFrameHeader) + size > options_.client_buffer_bytes) {
    ++c.dropped;
    return;
  }
  ForwardFrameHeader h{static_cast<uint32_t>(ring), static_cast<uint32_t>(size)};
  c.out.append(reinterpret_cast<const char*>(&h), sizeof(h));
  c.out.append(static_cast<const char*>(data), size);
}

void RegistrationServer::queue_control(Client& c, const std::string& text) {
  queue(c, ForwardRing::Control, text.data(), text.size(), true);
}

void RegistrationServer::offer(ForwardRing ring, const void* data, size_t size) {
  if (clients_.empty()) return;
  if (ring != ForwardRing::Jobio) {
    for (auto& c : clients_)
      if (c->registered && c->wants_records) queue(*c, ring, data, size, false);
    return;
  }
  if (size < sizeof(ckpt_record_header)) return;
  ckpt_record_header hdr{};
  std::memcpy(&hdr, data, sizeof(hdr));
  for (auto& c : clients_) {
    if (!c->registered || !c->tgids.contains(hdr.tgid)) continue;
    queue(*c, ring, data, size, false);
    if (hdr.kind != CKPT_REC_PROC || size < sizeof(ckpt_proc_record)) continue;
    ckpt_proc_record proc{};
    std::memcpy(&proc, data, sizeof(proc));
    if (hdr.op == CKPT_PROC_FORK) c->tgids.insert(proc.child_tgid);
    if (hdr.op == CKPT_PROC_EXIT) c->tgids.erase(hdr.tgid);
  }
}

bool RegistrationServer::flush(Client& c) {
  size_t sent = 0;
  while (sent < c.out.size()) {
    const ssize_t n =
        send(c.fd, c.out.data() + sent, c.out.size() - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    return false;
  }
  c.out.erase(0, sent);
  return true;
}

void RegistrationServer::serve() {
  accept_clients();
  bool want_drain = false;
  for (auto& c : clients_) {
    if (!read_requests(*c)) {
      close(c->fd);
      c->fd = -1;
      continue;
    }
    want_drain = want_drain || !c->syncs.empty();
  }
  // A sync is answered once the rings are drained: the client then has
  // every record the kernel had made when it asked.
  if (want_drain && hooks_.drain) hooks_.drain();
  const uint64_t now = monotonic_ns();
  const bool drops_due = now - last_drops_ns_ >= kDropsEveryNs;
  std::vector<DropRecord> drops;
  if (drops_due || want_drain) {
    last_drops_ns_ = now;
    drops = hooks_.drops();
  }
  for (auto& c : clients_) {
    if (c->fd < 0 || !c->registered || !c->wants_records) continue;
    if (!c->nfs_said && hooks_.nfs_enabled()) {
      c->nfs_said = true;
      queue_control(*c, json{{"nfs", true}}.dump());
    }
    if (drops_due || !c->syncs.empty()) {
      json list = json::array();
      for (const auto& d : drops)
        list.push_back({{"source", d.source}, {"cause", d.cause}, {"count", d.count}});
      list.push_back(
          {{"source", "exporter"}, {"cause", "forward_buffer_full"}, {"count", c->dropped}});
      queue_control(*c, json{{"drops", list}}.dump());
    }
    for (uint64_t seq : c->syncs) queue_control(*c, json{{"sync", seq}}.dump());
    c->syncs.clear();
  }
  for (auto& c : clients_)
    // A client that stopped reading altogether is let go: control messages
    // bypass the record bound, so its buffer would otherwise grow for ever.
    if (c->fd >= 0 && (!flush(*c) || c->out.size() > 2 * options_.client_buffer_bytes)) {
      close(c->fd);
      c->fd = -1;
    }
  std::erase_if(clients_, [](const auto& c) { return c->fd < 0; });
}

}  // namespace ckpt
