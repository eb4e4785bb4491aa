// The local socket between the node exporter and `run`/`attach` (which then
// load no probes of their own). docs/exporter.md describes it.
//
// Client -> exporter: JSON lines.
//   {"op":"register","tgids":[N,...],"client":"ckptscope run"}  first, once
//   {"op":"trace","tgid":N}     follow one more process (and its children)
//   {"op":"sync","seq":K}       answer once every record up to now is sent
//   {"op":"failure","kind":"log_anomaly","evidence":"...","time_ns":N}
//                               a failure found on the node (root only; counted
//                               under workload="node"); time_ns optional; kind
//                               log_anomaly or a known node fault's
//                               (model/vocabulary.h kNodeLogFaultKinds)
//   {"op":"held_back","lines":N}  anomalous node-log lines logwatch's alert
//                               budget held back (root only; counted in
//                               ckptscope_log_anomalies_held_back_total)
// A client that only reports failures registers with "tgids":[] and
// "records":false: it is then sent no records and no control messages.
// Exporter -> client: one JSON line answering register,
//   {"ok":true,"tcp":B,"nfs":B,"version":"..."} or {"ok":false,"error":"..."},
// then frames: a ForwardFrameHeader and `size` bytes. Rings 1-3 carry kernel
// records exactly as bpf/*.h lays them out (the job's own jobio records;
// every tcp and nfs record: they are the node's, see node_collector.h);
// ring 16 carries a JSON object: {"sync":K}, {"nfs":true},
// {"drops":[{"source":S,"cause":C,"count":N},...]} (cumulative).
#pragma once

#include <cstdint>

namespace ckpt {

enum class ForwardRing : uint32_t { Jobio = 1, Tcp = 2, Nfs = 3, Control = 16 };

struct ForwardFrameHeader {
  uint32_t ring;  // ForwardRing
  uint32_t size;  // bytes that follow
};
static_assert(sizeof(ForwardFrameHeader) == 8);

// A record larger than this is malformed (the largest, a path record, is
// about 600 bytes; control messages stay small).
inline constexpr uint32_t kMaxForwardFrame = 1u << 20;

inline constexpr const char* kDefaultExporterSocket = "/run/ckptscope/exporter.sock";

}  // namespace ckpt
