#include "sources/nfs_mounts.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "common/endpoint.h"

namespace ckpt {
namespace {

constexpr uint16_t kNfsPort = 2049;

std::string option(const NfsMountStats& m, const std::string& key) {
  auto it = m.opts.find(key);
  return it == m.opts.end() ? std::string() : it->second;
}

// "4.2" -> 4, "3" -> 3: the RPC program version the mount speaks.
uint32_t rpc_version(const std::string& vers) {
  uint32_t v = 0;
  std::from_chars(vers.data(), vers.data() + vers.size(), v);
  return v;
}

}  // namespace

std::string nfs_mount_server(const NfsMountStats& m) {
  std::string addr = option(m, "addr");
  if (!addr.empty()) return addr;
  // mountstats prints no addr= option: the device is "server:/export".
  auto split = m.device.find(":/");
  if (split == std::string::npos) return {};
  return endpoint_host(std::string_view(m.device).substr(0, split));
}

bool endpoint_covered(const std::vector<StorageEndpoint>& followed, const StorageEndpoint& ep) {
  return std::any_of(followed.begin(), followed.end(), [&](const StorageEndpoint& e) {
    return e.port == ep.port && (e.host.empty() || e.host == ep.host);
  });
}

std::vector<StorageEndpoint> nfs_mount_endpoints(const std::vector<NfsMountStats>& mounts) {
  std::vector<StorageEndpoint> out;
  for (const auto& m : mounts) {
    std::string addr = nfs_mount_server(m);
    in6_addr a6{};
    // A server named by host name would need resolving; the default *:2049
    // endpoint already covers the standard port.
    if (addr.empty() ||
        (inet_pton(AF_INET, addr.c_str(), &a6) != 1 && inet_pton(AF_INET6, addr.c_str(), &a6) != 1))
      continue;
    uint16_t port = kNfsPort;
    std::string p = option(m, "port");
    uint16_t parsed = 0;
    if (!p.empty() && std::from_chars(p.data(), p.data() + p.size(), parsed).ec == std::errc() &&
        parsed != 0)
      port = parsed;
    StorageEndpoint ep{addr, port};
    if (std::find(out.begin(), out.end(), ep) == out.end()) out.push_back(ep);
  }
  return out;
}

std::vector<NfsMountRecord> nfs_mount_records(const std::vector<NfsMountStats>& before,
                                              const std::vector<NfsMountStats>& after,
                                              const std::optional<std::vector<RpcTotals>>& ebpf) {
  std::vector<NfsMountDelta> deltas = delta(before, after);
  std::map<std::pair<std::string, uint32_t>, int> sharing;
  for (const auto& m : after) ++sharing[{nfs_mount_server(m), rpc_version(option(m, "vers"))}];

  std::vector<NfsMountRecord> out;
  for (size_t i = 0; i < deltas.size() && i < after.size(); ++i) {
    const NfsMountDelta& d = deltas[i];
    const NfsMountStats& m = after[i];
    NfsMountRecord r;
    r.device = d.device;
    r.mount_point = d.mount_point;
    r.fstype = d.fstype;
    r.version = option(m, "vers");
    r.server = nfs_mount_server(m);
    r.interval_s = d.interval_s;
    r.since_mount = d.since_mount;
    r.normal_read_bytes = d.normal_read_bytes();
    r.normal_write_bytes = d.normal_write_bytes();
    r.direct_read_bytes = d.direct_read_bytes();
    r.direct_write_bytes = d.direct_write_bytes();
    r.server_read_bytes = d.server_read_bytes();
    r.server_write_bytes = d.server_write_bytes();
    uint64_t backlog = 0, sending = 0, pending = 0;
    for (const auto& x : d.xprts) {
      r.xprt_sends += x.sends;
      r.xprt_receives += x.receives;
      backlog += x.backlog_u;
      sending += x.sending_u;
      pending += x.pending_u;
    }
    if (r.xprt_sends > 0) {
      const double sends = static_cast<double>(r.xprt_sends);
      r.avg_backlog_queue = static_cast<double>(backlog) / sends;
      r.avg_sending_queue = static_cast<double>(sending) / sends;
      r.avg_pending_queue = static_cast<double>(pending) / sends;
    }
    for (const auto& op : d.ops) {
      if (op.ops == 0 && op.transmissions == 0 && op.major_timeouts == 0) continue;
      r.ops.push_back(NfsMountOpRecord{op.op, op.ops, op.transmissions, op.major_timeouts,
                                       op.bytes_sent, op.bytes_received, op.queue_ms, op.rtt_ms,
                                       op.execute_ms, op.errors});
    }
    const uint32_t vers = rpc_version(r.version);
    if (ebpf && sharing[{r.server, vers}] == 1) {
      std::vector<RpcOpStats> ops;
      for (const auto& t : *ebpf)
        if (t.vers == vers && endpoint_host(t.server) == r.server)
          for (const auto& op : t.ops) {
            auto it = std::find_if(ops.begin(), ops.end(),
                                   [&](const RpcOpStats& o) { return o.op == op.op; });
            if (it == ops.end()) {
              ops.push_back(op);
            } else {
              *it += op;
            }
          }
      r.ebpf_ops = std::move(ops);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace ckpt
