#include "apps/exporter/registration_server.h"

#include <fcntl.h>
#include <grp.h>
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
#include "json/json_io.h"
#include "model/vocabulary.h"
#include "probes/drop_causes.h"

namespace ckpt {
namespace {

using nlohmann::json;

constexpr uint64_t kDropsEveryNs = 1'000'000'000;
// Failure kinds a client may report, and how much of its evidence is kept.
// What a client may report: an anomalous node-log line, or a known node
// fault in the node log (`logwatch`, analysis/logwatch/known_faults.h).
bool is_reportable_failure_kind(std::string_view kind) {
  return kind == kFailureLogAnomaly || is_node_log_fault_kind(kind);
}
constexpr size_t kMaxReportedEvidence = 1024;
// The most lines one held-back report may add (a day of lines at a million a second).
constexpr uint64_t kMaxHeldBackStep = 86'400'000'000ULL;
// What one serve() reads from one client at most: a client that sends
// without pause cannot keep the exporter's loop reading from it.
constexpr size_t kMaxReadPerServe = 64u << 10;
constexpr uint64_t kSecondNs = 1'000'000'000;
constexpr uint64_t kMinuteNs = 60 * kSecondNs;
constexpr size_t kMaxClientName = 64;

Expected<FailureRecord> failure_report(uid_t uid, const json& req) {
  // The node's failure counters are evidence operators act on: only root
  // (the exporter's peers: logwatch reading /dev/kmsg) may add to them, and
  // only kinds with a bounded label set.
  if (uid != 0)
    return make_error(
        fmt::format("failure reports are taken from root only (the caller is uid {})", uid));
  const std::string kind = req.value("kind", std::string());
  if (!is_reportable_failure_kind(kind))
    return make_error(fmt::format("failure kind '{}' is not one a client may report ({}, {})",
                                  kind.substr(0, 64), kFailureLogAnomaly,
                                  fmt::join(kNodeLogFaultKinds, ", ")));
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
  // Any local user may register processes it owns (checked per request),
  // or only root and the members of socket_group.
  if (server->options_.socket_group.empty()) {
    chmod(path.c_str(), 0666);
  } else {
    const group* g = getgrnam(server->options_.socket_group.c_str());
    if (g == nullptr)
      return make_error(fmt::format("--socket-group {}: no such group",
                                    valid_utf8(server->options_.socket_group)));
    if (chown(path.c_str(), static_cast<uid_t>(-1), g->gr_gid) != 0)
      return make_error(fmt::format("--socket {}: cannot give it to group {}: {}", path,
                                    server->options_.socket_group, std::strerror(errno)));
    chmod(path.c_str(), 0660);
  }
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

std::string_view RegistrationServer::refusal_for(uid_t uid) const {
  if (clients_.size() >= options_.max_clients) return kRejectTooManyClients;
  if (uid == 0) return {};
  // The last slots are root's: no number of other users' connections can
  // keep root's `run` or logwatch out.
  if (clients_.size() + options_.root_reserved_clients >= options_.max_clients)
    return kRejectTooManyClients;
  const auto held = std::count_if(clients_.begin(), clients_.end(),
                                  [uid](const auto& c) { return c->fd >= 0 && c->uid == uid; });
  if (static_cast<size_t>(held) >= options_.max_clients_per_uid) return kRejectUidLimit;
  return {};
}

void RegistrationServer::refuse(int fd, const ucred& cred, std::string_view reason,
                                const std::string& why) {
  // Counted before the answer: whoever sees the refusal sees it counted.
  reject_unaccepted(reason, fmt::format("uid {} pid {} refused: {}", cred.uid, cred.pid, why));
  const std::string refuse = dump_json(json{{"ok", false}, {"error", why}}) + "\n";
  (void)send(fd, refuse.data(), refuse.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  close(fd);
}

void RegistrationServer::accept_clients() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      reject_unaccepted(
          kRejectNotPermitted,
          fmt::format("a client without credentials (SO_PEERCRED: {})", std::strerror(errno)));
      close(fd);
      continue;
    }
    const std::string_view refusal = refusal_for(cred.uid);
    if (refusal == kRejectTooManyClients) {
      refuse(fd, cred, refusal, "too many clients registered with this exporter");
      continue;
    }
    if (refusal == kRejectUidLimit) {
      refuse(fd, cred, refusal,
             fmt::format("uid {} already has {} clients of this exporter, the most one user may "
                         "have",
                         cred.uid, options_.max_clients_per_uid));
      continue;
    }
    auto c = std::make_unique<Client>();
    c->fd = fd;
    c->uid = cred.uid;
    c->pid = cred.pid;
    c->accepted_ns = monotonic_ns();
    c->window_start_ns = c->accepted_ns;
    clients_.push_back(std::move(c));
  }
}

void RegistrationServer::expire_unregistered(uint64_t now) {
  const uint64_t timeout_ns = options_.register_timeout_ms * 1'000'000;
  for (auto& c : clients_) {
    if (c->fd < 0 || c->registered || now - c->accepted_ns < timeout_ns) continue;
    reject(*c, kRejectRegisterTimeout,
           fmt::format("did not register within {} ms of connecting; closed",
                       options_.register_timeout_ms));
    c->out += dump_json(json{{"ok", false},
                             {"error", fmt::format("no register request within {} ms",
                                                   options_.register_timeout_ms)}}) +
              "\n";
    flush(*c);
    close(c->fd);
    c->fd = -1;
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

bool RegistrationServer::note_allowed() {
  const uint64_t now = monotonic_ns();
  if (now - notes_window_start_ns_ >= kMinuteNs) {
    if (notes_suppressed_ > 0 && hooks_.note)
      hooks_.note(
          fmt::format("registration socket: {} more rejected requests or clients in the "
                      "last minute, not logged (ckptscope_registration_rejected_total "
                      "counts them all)",
                      notes_suppressed_));
    notes_window_start_ns_ = now;
    notes_in_window_ = 0;
    notes_suppressed_ = 0;
  }
  if (notes_in_window_ >= options_.max_notes_per_minute) {
    ++notes_suppressed_;
    return false;
  }
  ++notes_in_window_;
  return true;
}

std::string RegistrationServer::describe_client(const Client& c) const {
  return fmt::format("client uid {} pid {}{}", c.uid, c.pid,
                     c.name.empty() ? std::string() : fmt::format(" ('{}')", c.name));
}

void RegistrationServer::reject(Client& c, std::string_view reason, const std::string& why) {
  if (hooks_.rejected) hooks_.rejected(reason);
  if (c.rejection_logged) return;
  c.rejection_logged = true;
  if (note_allowed() && hooks_.note)
    hooks_.note(fmt::format("registration socket: {} rejected ({}): {}{}", describe_client(c),
                            reason, valid_utf8(why),
                            " (further rejections of this client are counted, not logged)"));
}

void RegistrationServer::reject_unaccepted(std::string_view reason, const std::string& why) {
  if (hooks_.rejected) hooks_.rejected(reason);
  if (note_allowed() && hooks_.note)
    hooks_.note(fmt::format("registration socket: {} ({})", why, reason));
}

bool RegistrationServer::handle_line(Client& c, const std::string& line) {
  // Every request is outside input: it is parsed and read as values, and
  // every answer that quotes it goes through dump_json (invalid UTF-8
  // replaced, never thrown).
  auto answer_error = [&c](const std::string& error) {
    c.out += dump_json(json{{"ok", false}, {"error", error}}) + "\n";
  };
  auto req = parse_json(line, "request");
  Expected<bool> handled =
      req ? read_json("request", [&]() { return handle_request(c, *req, line); })
          : Expected<bool>(req.error());
  if (handled) return *handled;
  reject(c, kRejectMalformed, handled.error().message);
  if (!c.registered) {
    answer_error(handled.error().message +
                 "; the first request must be {\"op\":\"register\",\"tgids\":[...]}");
    return false;
  }
  queue_control(c, dump_json(json{{"error", handled.error().message}}));
  return true;
}

Expected<bool> RegistrationServer::handle_request(Client& c, const json& req,
                                                  const std::string& line) {
  const std::string op = req.is_object() ? req.value("op", std::string()) : std::string();
  auto answer = [&c](const json& j) { c.out += dump_json(j) + "\n"; };
  if (!c.registered) {
    if (op != "register" || !req.contains("tgids") || !req["tgids"].is_array()) {
      reject(c, kRejectMalformed, fmt::format("first request: {}", line.substr(0, 200)));
      answer({{"ok", false},
              {"error", "the first request must be {\"op\":\"register\",\"tgids\":[...]}"}});
      return false;
    }
    const std::string name = req.value("client", std::string("client")).substr(0, kMaxClientName);
    const bool wants_records = !req.contains("records") || req["records"] != false;
    std::set<uint32_t> tgids;
    for (const auto& t : req["tgids"]) {
      if (!t.is_number_unsigned() || t.get<uint64_t>() > UINT32_MAX) {
        const std::string error = fmt::format("tgids: {} is not a process id", dump_json(t));
        reject(c, kRejectMalformed, error);
        answer({{"ok", false}, {"error", error}});
        return false;
      }
      const auto tgid = t.get<uint32_t>();
      if (auto ok = may_trace(c, tgid); !ok) {
        reject(c, kRejectNotPermitted, ok.error().message);
        answer({{"ok", false}, {"error", ok.error().message}});
        return false;
      }
      tgids.insert(tgid);
    }
    c.tgids = std::move(tgids);
    c.registered = true;
    c.wants_records = wants_records;
    c.name = valid_utf8(name);
    c.nfs_said = hooks_.nfs_enabled();
    json accepted = {{"ok", true},
                     {"tcp", hooks_.tcp_enabled()},
                     {"nfs", c.nfs_said},
                     {"version", CKPTSCOPE_VERSION}};
    if (hooks_.probe_mode) accepted["probe_mode"] = hooks_.probe_mode();
    answer(accepted);
    if (wants_records && !c.tgids.empty() && hooks_.tracing_started) hooks_.tracing_started();
    return true;
  }
  if (op == "trace" && req.contains("tgid") && req["tgid"].is_number_unsigned()) {
    const auto tgid = req["tgid"].get<uint64_t>();
    auto ok = tgid <= UINT32_MAX ? may_trace(c, static_cast<uint32_t>(tgid))
                                 : Expected<void>(make_error(fmt::format("no process {}", tgid)));
    if (ok) {
      c.tgids.insert(static_cast<uint32_t>(tgid));
      if (c.wants_records && hooks_.tracing_started) hooks_.tracing_started();
    } else {
      reject(c, kRejectNotPermitted, ok.error().message);
      queue_control(c, dump_json(json{{"error", ok.error().message}}));
    }
    return true;
  }
  if (op == "failure") {
    if (auto f = failure_report(c.uid, req); !f) {
      reject(c, c.uid == 0 ? kRejectMalformed : kRejectNotPermitted, f.error().message);
      answer({{"ok", false}, {"error", f.error().message}});
    } else if (hooks_.report_failure) {
      hooks_.report_failure(std::move(*f));
    }
    return true;
  }
  if (op == "held_back") {
    // Anomalous lines logwatch held back under its budget: root only, as
    // failure reports are; a count of lines, bounded like any counter step.
    std::string error;
    if (c.uid != 0)
      error =
          fmt::format("held-back reports are taken from root only (the caller is uid {})", c.uid);
    else if (!req.contains("lines") || !req["lines"].is_number_unsigned() ||
             req["lines"].get<uint64_t>() > kMaxHeldBackStep)
      error = fmt::format("a held-back report needs \"lines\" (a count from 0 to {})",
                          kMaxHeldBackStep);
    if (!error.empty()) {
      reject(c, c.uid == 0 ? kRejectMalformed : kRejectNotPermitted, error);
      answer({{"ok", false}, {"error", error}});
    } else if (hooks_.report_held_back) {
      hooks_.report_held_back(req["lines"].get<uint64_t>());
    }
    return true;
  }
  if (op == "sync" && req.contains("seq") && req["seq"].is_number_unsigned()) {
    c.syncs.push_back(req["seq"].get<uint64_t>());
    return true;
  }
  const std::string error = fmt::format("unknown request: {}", line.substr(0, 200));
  reject(c, kRejectMalformed, error);
  queue_control(c, dump_json(json{{"error", error}}));
  return true;
}

bool RegistrationServer::read_requests(Client& c) {
  const uint64_t now = monotonic_ns();
  if (now - c.window_start_ns >= kSecondNs) {
    c.window_start_ns = now;
    c.window_requests = 0;
    c.window_bytes = 0;
  }
  char buf[4096];
  size_t read_now = 0;
  while (read_now < kMaxReadPerServe) {
    const ssize_t n = recv(c.fd, buf, sizeof(buf), 0);
    if (n > 0) {
      c.in.append(buf, static_cast<size_t>(n));
      read_now += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    return false;  // the client closed, or an error
  }
  c.window_bytes += read_now;
  if (c.window_bytes > options_.max_bytes_per_s) {
    reject(c, kRejectFlood,
           fmt::format("sent more than {} bytes in a second; cut off", options_.max_bytes_per_s));
    return false;
  }
  size_t eol;
  while ((eol = c.in.find('\n')) != std::string::npos) {
    if (eol > options_.max_line_bytes) break;
    if (++c.window_requests > options_.max_requests_per_s) {
      reject(c, kRejectFlood,
             fmt::format("sent more than {} requests in a second; cut off",
                         options_.max_requests_per_s));
      return false;
    }
    const std::string line = c.in.substr(0, eol);
    c.in.erase(0, eol + 1);
    if (!handle_line(c, line)) {
      flush(c);
      return false;
    }
  }
  const size_t line_so_far = c.in.find('\n') == std::string::npos ? c.in.size() : c.in.find('\n');
  if (line_so_far > options_.max_line_bytes) {
    reject(c, kRejectLineTooLong,
           fmt::format("a request line longer than {} bytes; cut off", options_.max_line_bytes));
    return false;
  }
  return true;
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
    if (hdr.kind == CKPT_REC_PROC) {
      follow_process(*c, hdr, data, size);
      if (!c->tgids.contains(hdr.tgid) && hdr.op == CKPT_PROC_EXEC_PRIVILEGED) continue;
    }
    queue(*c, ring, data, size, false);
  }
}

void RegistrationServer::follow_process(Client& c, const ckpt_record_header& hdr, const void* data,
                                        size_t size) {
  if (size < sizeof(ckpt_proc_record)) return;
  ckpt_proc_record proc{};
  std::memcpy(&proc, data, sizeof(proc));
  if (hdr.op == CKPT_PROC_FORK) c.tgids.insert(proc.child_tgid);
  if (hdr.op == CKPT_PROC_EXIT) c.tgids.erase(hdr.tgid);
  // The process now runs with rights its owner does not have (a setuid or
  // setgid program, file capabilities): what it opens and reads is not the
  // client's to see. The record comes before any I/O of the new program
  // (bpf/jobio.bpf.c on_process_exec), so none of it is forwarded; nor is
  // anything of its children, which are forked from a process no longer in
  // the set. Root's clients see everything, as root could anyway.
  if (hdr.op == CKPT_PROC_EXEC_PRIVILEGED && c.uid != 0) {
    c.tgids.erase(hdr.tgid);
    ++c.left_privileged;
    if (hooks_.process_left) hooks_.process_left(kExporterCredentialsChanged);
  }
}

bool RegistrationServer::traces(uint32_t tgid) const {
  for (const auto& c : clients_)
    if (c->fd >= 0 && c->registered && c->wants_records && c->tgids.contains(tgid)) return true;
  return false;
}

bool RegistrationServer::traces_any() const {
  for (const auto& c : clients_)
    if (c->fd >= 0 && c->registered && c->wants_records && !c->tgids.empty()) return true;
  return false;
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
  expire_unregistered(monotonic_ns());
  std::erase_if(clients_, [](const auto& c) { return c->fd < 0; });
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
      queue_control(*c, dump_json(json{{"nfs", true}}));
    }
    if (drops_due || !c->syncs.empty()) {
      json list = json::array();
      for (const auto& d : drops)
        list.push_back({{"source", d.source}, {"cause", d.cause}, {"count", d.count}});
      list.push_back(
          {{"source", "exporter"}, {"cause", kExporterForwardBufferFull}, {"count", c->dropped}});
      list.push_back({{"source", "exporter"},
                      {"cause", kExporterCredentialsChanged},
                      {"count", c->left_privileged}});
      queue_control(*c, dump_json(json{{"drops", list}}));
    }
    for (uint64_t seq : c->syncs) queue_control(*c, dump_json(json{{"sync", seq}}));
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
