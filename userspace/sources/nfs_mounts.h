// The NFS mounts as /proc/self/mountstats shows them, turned into what the
// trace keeps: each mount's activity between two snapshots (the fallback when
// eBPF cannot load) next to what eBPF saw of its RPCs (the cross-check), and
// the storage servers the transport probes should follow.
#pragma once

#include <optional>
#include <vector>

#include "config/config.h"
#include "model/records.h"
#include "sources/mountstats.h"

namespace ckpt {

// The mount's server: its addr= option, else the host part of its device
// ("10.0.0.9:/export", "[fd00::9]:/export"); "" when neither names one.
std::string nfs_mount_server(const NfsMountStats& mount);

// Each mount's server, when it is an address, and NFS port (port=, else 2049).
std::vector<StorageEndpoint> nfs_mount_endpoints(const std::vector<NfsMountStats>& mounts);
// Whether `followed` already covers `ep` ("*:2049" covers every server on 2049).
bool endpoint_covered(const std::vector<StorageEndpoint>& followed, const StorageEndpoint& ep);

// What each mount of `after` did since `before` (see delta()), with the eBPF
// RPC totals of the same server and RPC version when `ebpf` is given. When
// several mounts share a server and version their RPCs cannot be told apart
// by eBPF here, so those mounts get no ebpf_ops rather than wrong ones.
std::vector<NfsMountRecord> nfs_mount_records(const std::vector<NfsMountStats>& before,
                                              const std::vector<NfsMountStats>& after,
                                              const std::optional<std::vector<RpcTotals>>& ebpf);

}  // namespace ckpt
