// RPC backlog depth per NFS server from mountstats' transport counters: at
// every transmission the kernel adds the lengths of the transport's backlog
// (tasks waiting for a request slot) and sending (waiting for the socket)
// queues to bklog_u and sending_u (net/sunrpc/xprt.c, xprt_transmit's
// stats), so between two snapshots
//   depth = (delta bklog_u + delta sending_u) / delta sends
// is the number of RPCs waiting, as each transmission saw it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "sources/mountstats.h"

namespace ckpt {

class RpcBacklogDepth {
 public:
  // One snapshot of every mount. Returns each server's ("addr:port") depth
  // averaged over the transmissions since the previous snapshot; 0 when it
  // sent nothing. Mounts of one server that share a transport (the same
  // client port) count once.
  std::map<std::string, double> update(const std::vector<NfsMountStats>& mounts);

 private:
  struct Counters {
    uint64_t sends = 0;
    uint64_t waiting = 0;  // bklog_u + sending_u
  };
  std::map<std::tuple<std::string, std::string, uint64_t>, Counters> last_;
};

// The server of a mount as the metrics name it: "10.0.0.5:2049", "[fd00::5]:2049".
std::string mount_server_label(const NfsMountStats& mount);

}  // namespace ckpt
