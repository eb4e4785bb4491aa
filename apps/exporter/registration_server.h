// The exporter's side of probes/forward_protocol.h: `run` and `attach`
// register their job's processes over a local socket, and get the kernel
// records of those processes (following forks) plus the node's NFS and TCP
// records, as the exporter's probes produce them.
//
// Who may register what: the peer's uid (SO_PEERCRED) must own every
// process it registers, or be root. The NFS and TCP records are the node's
// (file ids, offsets, RPC timings; no paths, no data), and go to every
// client: docs/exporter.md says so.
//
// Never blocks the exporter: each client has a bounded buffer; a record that
// does not fit is dropped and counted (`exporter`/`forward_buffer_full`,
// sent to the client with the exporter's own drop counters).
//
// Never killed by a client (issue 22): any local user may connect (mode
// 0666, or 0660 and a group with socket_group), so every request is outside
// input. A malformed one (not JSON, invalid UTF-8, a wrong type, an unknown
// op) is answered and counted (`ckptscope_registration_rejected_total`,
// by reason), never fatal; one that is not allowed likewise. A client that
// sends too many requests or bytes per second, or a line longer than the
// limit, is cut off and counted. Each client's first rejection is logged
// (a note), and notes are rate-limited across clients.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "jobio.h"
#include "model/records.h"
#include "probes/forward_protocol.h"

namespace ckpt {

struct RegistrationOptions {
  std::string socket_path = kDefaultExporterSocket;
  std::string proc_root = "/proc";
  size_t client_buffer_bytes = 32u << 20;
  // Clients at once. A uid other than root holds at most max_clients_per_uid
  // of them, and the last root_reserved_clients are root's alone (`run` and
  // `attach` as root, logwatch): one user, however many connections it
  // opens, can neither lock other users out nor root (issue 36). A `run` is
  // one client, so 16 is sixteen jobs of one user on one node at once.
  size_t max_clients = 256;
  size_t max_clients_per_uid = 16;
  size_t root_reserved_clients = 16;
  // A connection that has not registered this long after it was accepted
  // is closed ("register_timeout"): `run` registers within milliseconds, so
  // only an idle or hostile client ever waits this long.
  uint64_t register_timeout_ms = 2000;
  // "" = mode 0666 (any local user may register the processes it owns);
  // a group name = mode 0660, group-owned by it: only root and its members.
  std::string socket_group;
  // Per client and second; past either the client is cut off ("flood").
  size_t max_requests_per_s = 1000;
  size_t max_bytes_per_s = 1u << 20;
  // A request line longer than this cuts the client off ("line_too_long").
  size_t max_line_bytes = 65536;
  // Notes about rejected clients, across all clients, per minute; later
  // rejections are counted only (a flood of connections is no log flood).
  size_t max_notes_per_minute = 20;
};

// Why a request or a client was refused: the `reason` label values of
// ckptscope_registration_rejected_total (deploy/metrics.md).
inline constexpr std::string_view kRejectMalformed = "malformed";
inline constexpr std::string_view kRejectNotPermitted = "not_permitted";
inline constexpr std::string_view kRejectTooManyClients = "too_many_clients";
inline constexpr std::string_view kRejectFlood = "flood";
inline constexpr std::string_view kRejectLineTooLong = "line_too_long";
inline constexpr std::string_view kRejectRegisterTimeout = "register_timeout";
inline constexpr std::string_view kRejectUidLimit = "uid_limit";
inline constexpr std::string_view kRejectReasons[] = {
    kRejectMalformed,   kRejectNotPermitted,    kRejectTooManyClients, kRejectFlood,
    kRejectLineTooLong, kRejectRegisterTimeout, kRejectUidLimit};

class RegistrationServer {
 public:
  // What the server asks of the exporter.
  struct Hooks {
    std::function<bool()> tcp_enabled;
    std::function<bool()> nfs_enabled;
    std::function<std::vector<DropRecord>()> drops;
    // Every record the kernel has so far, handed over (drains the rings).
    std::function<void()> drain;
    // A failure another ckptscope process on the node found (`logwatch`
    // beside the exporter): counted as the node's.
    std::function<void(FailureRecord)> report_failure;
    // Anomalous node-log lines `logwatch` held back under its budget.
    std::function<void(uint64_t lines)> report_held_back;
    // A request or a client refused (one of kRejectReasons); may be empty.
    std::function<void(std::string_view reason)> rejected;
    // Something to log (a client's first rejection); may be empty.
    std::function<void(const std::string& note)> note;
    // The probe mode to tell clients in the register answer ("syscall",
    // "file_layer"); may be empty (then not said).
    std::function<std::string()> probe_mode;
    // A traced process left an unprivileged client's trace: it exec'd a
    // program that changed its credentials (kExporterCredentialsChanged,
    // probes/drop_causes.h); may be empty.
    std::function<void(std::string_view reason)> process_left;
    // A client began tracing processes (registered some, or added one):
    // verdicts made without its globs must go (node_collector.h); may be empty.
    std::function<void()> tracing_started;
  };

  // Creates the socket (mode 0666: any local user may register processes it
  // owns; with socket_group, mode 0660 and that group); a socket file left
  // by a dead exporter is replaced, a live one is an error.
  static Expected<std::unique_ptr<RegistrationServer>> listen(RegistrationOptions options,
                                                              Hooks hooks);
  ~RegistrationServer();
  RegistrationServer(const RegistrationServer&) = delete;
  RegistrationServer& operator=(const RegistrationServer&) = delete;

  // A kernel record, before the exporter decodes it: queued for the clients
  // it concerns.
  void offer(ForwardRing ring, const void* data, size_t size);
  // Accepts, reads requests, answers syncs, sends what is queued. Never blocks.
  void serve();
  [[nodiscard]] size_t clients() const { return clients_.size(); }
  // Whether a client that takes records traces this process (now).
  [[nodiscard]] bool traces(uint32_t tgid) const;
  // Whether any client that takes records traces any process.
  [[nodiscard]] bool traces_any() const;
  // The fds to wake up for (the listening socket and every client), so a
  // request is answered at once rather than at the exporter's next tick.
  [[nodiscard]] std::vector<int> wait_fds() const;
  [[nodiscard]] const std::string& path() const { return options_.socket_path; }

 private:
  struct Client {
    int fd = -1;
    uid_t uid = 0;
    pid_t pid = 0;
    uint64_t accepted_ns = 0;
    // Requests and bytes in the current one-second window (flood limits).
    uint64_t window_start_ns = 0;
    size_t window_requests = 0;
    size_t window_bytes = 0;
    bool rejection_logged = false;
    bool registered = false;
    std::set<uint32_t> tgids;
    std::string in;
    std::string out;
    uint64_t dropped = 0;
    // Processes that left this client's trace at a privileged exec.
    uint64_t left_privileged = 0;
    std::vector<uint64_t> syncs;  // asked for, answered after the next drain
    std::string name;
    bool nfs_said = false;
    // False for a client that only reports failures ("records":false in its
    // register request): it is sent no records and no control messages.
    bool wants_records = true;
  };

  RegistrationServer(RegistrationOptions options, Hooks hooks)
      : options_(std::move(options)), hooks_(std::move(hooks)) {}
  void accept_clients();
  // Why a new connection from `uid` may not take a slot now; "" when it may.
  [[nodiscard]] std::string_view refusal_for(uid_t uid) const;
  void refuse(int fd, const ucred& cred, std::string_view reason, const std::string& why);
  // Closes clients that have not registered within the timeout.
  void expire_unregistered(uint64_t now);
  // The client's routing as a traced process does something: forks join,
  // exits leave, a privileged exec leaves an unprivileged client's trace.
  void follow_process(Client& c, const ckpt_record_header& hdr, const void* data, size_t size);
  // False when the client is to be closed.
  bool read_requests(Client& c);
  bool handle_line(Client& c, const std::string& line);
  Expected<bool> handle_request(Client& c, const nlohmann::json& req, const std::string& line);
  // Counts a rejection and logs the client's first one (rate-limited).
  void reject(Client& c, std::string_view reason, const std::string& why);
  void reject_unaccepted(std::string_view reason, const std::string& why);
  [[nodiscard]] std::string describe_client(const Client& c) const;
  bool note_allowed();
  Expected<void> may_trace(const Client& c, uint32_t tgid) const;
  void queue(Client& c, ForwardRing ring, const void* data, size_t size, bool always);
  void queue_control(Client& c, const std::string& json);
  bool flush(Client& c);

  RegistrationOptions options_;
  Hooks hooks_;
  int listen_fd_ = -1;
  std::vector<std::unique_ptr<Client>> clients_;
  uint64_t last_drops_ns_ = 0;
  uint64_t notes_window_start_ns_ = 0;
  size_t notes_in_window_ = 0;
  uint64_t notes_suppressed_ = 0;
};

}  // namespace ckpt
