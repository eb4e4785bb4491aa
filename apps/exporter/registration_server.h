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
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/expected.h"
#include "model/records.h"
#include "probes/forward_protocol.h"

namespace ckpt {

struct RegistrationOptions {
  std::string socket_path = kDefaultExporterSocket;
  std::string proc_root = "/proc";
  size_t client_buffer_bytes = 32u << 20;
  size_t max_clients = 64;
};

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
  };

  // Creates the socket (mode 0666: any local user may register processes it
  // owns); a socket file left by a dead exporter is replaced, a live one is
  // an error.
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
  // The fds to wake up for (the listening socket and every client), so a
  // request is answered at once rather than at the exporter's next tick.
  [[nodiscard]] std::vector<int> wait_fds() const;
  [[nodiscard]] const std::string& path() const { return options_.socket_path; }

 private:
  struct Client {
    int fd = -1;
    uid_t uid = 0;
    bool registered = false;
    std::set<uint32_t> tgids;
    std::string in;
    std::string out;
    uint64_t dropped = 0;
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
  // False when the client is to be closed.
  bool read_requests(Client& c);
  bool handle_line(Client& c, const std::string& line);
  Expected<void> may_trace(const Client& c, uint32_t tgid) const;
  void queue(Client& c, ForwardRing ring, const void* data, size_t size, bool always);
  void queue_control(Client& c, const std::string& json);
  bool flush(Client& c);

  RegistrationOptions options_;
  Hooks hooks_;
  int listen_fd_ = -1;
  std::vector<std::unique_ptr<Client>> clients_;
  uint64_t last_drops_ns_ = 0;
};

}  // namespace ckpt
