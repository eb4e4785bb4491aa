// One RPC as the record traces and metrics keep of it: its timings, bytes
// and outcome as the NFS probes reported them. The stitcher and the node
// collector convert alike. The record keeps the truth: server "" when the
// probes could not name it (the Prometheus layer labels that "unknown").
// What a checkpoint adds (payload_bytes, major_timeouts, checkpoint_io,
// checkpoint_id) is left to the stitcher.
#pragma once

#include <string>
#include <utility>

#include "model/events.h"
#include "model/records.h"

namespace ckpt {

RpcCallRecord rpc_call_record(const RpcEvent& ev);

// The same for any RPC that carries an RpcEvent's figures under the same
// names (the stitcher's compact copy, whose op and server are interned):
// `op` and `server` are given apart.
template <typename Rpc>
RpcCallRecord rpc_call_record(const Rpc& rpc, std::string op, std::string server) {
  RpcCallRecord r;
  r.start_ns = rpc.start_ns;
  r.end_ns = rpc.time_ns;
  r.queue_ns = rpc.queue_ns;
  r.rtt_ns = rpc.rtt_ns;
  r.execute_ns = rpc.execute_ns;
  r.op = std::move(op);
  r.server = std::move(server);
  r.bytes_sent = rpc.bytes_sent;
  r.bytes_received = rpc.bytes_recv;
  r.status = rpc.status;
  r.transmissions = rpc.ntrans;
  return r;
}

}  // namespace ckpt
