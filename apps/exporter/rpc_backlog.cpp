#include "apps/exporter/rpc_backlog.h"

#include <set>

#include "sources/nfs_mounts.h"

namespace ckpt {

std::string mount_server_label(const NfsMountStats& mount) {
  for (const auto& ep : nfs_mount_endpoints({mount}))
    return ep.host.find(':') != std::string::npos ? "[" + ep.host + "]:" + std::to_string(ep.port)
                                                  : ep.host + ":" + std::to_string(ep.port);
  return "";
}

std::map<std::string, double> RpcBacklogDepth::update(const std::vector<NfsMountStats>& mounts) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> per_server;  // sends, waiting
  std::map<std::tuple<std::string, std::string, uint64_t>, Counters> now;
  for (const auto& m : mounts) {
    const std::string server = mount_server_label(m);
    if (server.empty()) continue;
    per_server.try_emplace(server, 0, 0);
    for (const auto& x : m.xprts) {
      auto key = std::make_tuple(server, x.proto, x.port);
      if (now.contains(key)) continue;  // a transport shared by several mounts
      Counters c{x.sends, x.backlog_u + x.sending_u};
      now.emplace(key, c);
      auto before = last_.find(key);
      if (before == last_.end()) continue;  // the first snapshot is the baseline
      // These never wrap in practice (64-bit): smaller means a new transport
      // on the same client port (an unmount and mount between snapshots).
      if (c.sends < before->second.sends || c.waiting < before->second.waiting) continue;
      auto& [sends, waiting] = per_server[server];
      sends += c.sends - before->second.sends;
      waiting += c.waiting - before->second.waiting;
    }
  }
  last_ = std::move(now);  // transports that went away are forgotten
  std::map<std::string, double> out;
  for (const auto& [server, sw] : per_server)
    out[server] = sw.first == 0 ? 0.0 : static_cast<double>(sw.second) / sw.first;
  return out;
}

}  // namespace ckpt
