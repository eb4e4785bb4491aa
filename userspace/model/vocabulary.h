// The words every output shares: stage names and failure kinds. The trace,
// the JSON summary, the Prometheus labels, the report and the Perfetto
// timeline all print them, and alert rules and scripts match on them, so each
// is spelled once, here; code names a constant and never retypes the string.
#pragma once

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>

namespace ckpt {

// The fixed stage vocabulary, in pipeline order. Every output uses these
// names; stages a build cannot measure yet are absent, never zero.
inline constexpr std::string_view kStageGpuCopy = "gpu_copy";
inline constexpr std::string_view kStageSerialize = "serialize";
inline constexpr std::string_view kStageHostIo = "host_io";
inline constexpr std::string_view kStageMetadata = "metadata";
// What the storage itself did for the checkpoint's files, apart from the
// page-cache copies host_io times (stitch/storage_stage.h).
inline constexpr std::string_view kStageStorage = "storage";
inline constexpr std::string_view kStageNfsClient = "nfs_client";
inline constexpr std::string_view kStageRpcQueue = "rpc_queue";
inline constexpr std::string_view kStageRpcRtt = "rpc_rtt";
inline constexpr std::string_view kStageTransport = "transport";
inline constexpr std::string_view kAllStages[] = {kStageGpuCopy,  kStageSerialize, kStageHostIo,
                                                  kStageMetadata, kStageStorage,   kStageNfsClient,
                                                  kStageRpcQueue, kStageRpcRtt,    kStageTransport};

// --- NFS RPCs that carry a file's pages (RpcCallRecord::op) -----------------

inline constexpr std::string_view kRpcWrite = "WRITE";
inline constexpr std::string_view kRpcRead = "READ";
// NFSv4.2's read (RFC 7862 section 15.10): the 6.x client sends it instead of
// READ when the server offers it, as Linux's nfsd does.
inline constexpr std::string_view kRpcReadPlus = "READ_PLUS";
inline constexpr std::string_view kRpcCommit = "COMMIT";
inline constexpr bool is_read_rpc(std::string_view op) {
  return op == kRpcRead || op == kRpcReadPlus;
}

// --- failure kinds (FailureRecord::kind; docs/stitching.md "Failures") -------

// A call on a checkpoint file returned this errno.
inline constexpr std::string_view kFailureEnospc = "enospc";
inline constexpr std::string_view kFailureEdquot = "edquot";
inline constexpr std::string_view kFailureEstale = "estale";
inline constexpr std::string_view kFailureEio = "eio";
inline constexpr std::string_view kFailureErofs = "erofs";
inline constexpr std::string_view kFailureEtimedout = "etimedout";
// The errnos that name a failure of their own: a failed call with any other
// errno is an io_error (data calls) or not a failure at all.
inline constexpr std::string_view kErrnoFailureKinds[] = {
    kFailureEnospc, kFailureEdquot, kFailureEstale, kFailureEio, kFailureErofs, kFailureEtimedout};

inline constexpr std::string_view kFailureIoError = "io_error";  // any other failed data call
inline constexpr std::string_view kFailureStall = "stall";
inline constexpr std::string_view kFailurePartialSave = "partial_save";

// The storage connections (TCP).
inline constexpr std::string_view kFailureTcpReset = "tcp_reset";
inline constexpr std::string_view kFailureTcpRetransmitStorm = "tcp_retransmit_storm";
inline constexpr std::string_view kFailureTcpZeroWindow = "tcp_zero_window";

// NFS: a major RPC timeout, and RPCs that finished with one of the errnos
// above, named "rpc_" + that errno's kind ("rpc_enospc").
inline constexpr std::string_view kFailureNfsServerNotResponding = "nfs_server_not_responding";
inline constexpr std::string_view kRpcFailurePrefix = "rpc_";
inline constexpr std::string_view kFailureRpcEnospc = "rpc_enospc";
inline constexpr std::string_view kFailureRpcEdquot = "rpc_edquot";
inline constexpr std::string_view kFailureRpcEstale = "rpc_estale";
inline constexpr std::string_view kFailureRpcEio = "rpc_eio";
inline constexpr std::string_view kFailureRpcErofs = "rpc_erofs";
inline constexpr std::string_view kFailureRpcEtimedout = "rpc_etimedout";
inline constexpr std::string_view kRpcFailureKinds[] = {kFailureRpcEnospc, kFailureRpcEdquot,
                                                        kFailureRpcEstale, kFailureRpcEio,
                                                        kFailureRpcErofs,  kFailureRpcEtimedout};
// The generic RPC failure kind the exporter counts at node level and
// deploy/metrics.md lists. No source emits it today (RPC errors are the
// rpc_<errno> kinds above); it is named so that list keeps its meaning.
inline constexpr std::string_view kFailureRpcError = "rpc_error";

// "rpc_" + errno_kind: the kind of an NFS RPC that failed with that errno.
inline std::string rpc_failure_kind(std::string_view errno_kind) {
  std::string kind(kRpcFailurePrefix);
  kind += errno_kind;
  return kind;
}
// True when `rpc_kind` is "rpc_" + `errno_kind` (checks the table above).
constexpr bool is_rpc_failure_of(std::string_view rpc_kind, std::string_view errno_kind) {
  return rpc_kind.size() == kRpcFailurePrefix.size() + errno_kind.size() &&
         rpc_kind.substr(0, kRpcFailurePrefix.size()) == kRpcFailurePrefix &&
         rpc_kind.substr(kRpcFailurePrefix.size()) == errno_kind;
}
static_assert(std::size(kRpcFailureKinds) == std::size(kErrnoFailureKinds));
static_assert([] {
  for (size_t i = 0; i < std::size(kRpcFailureKinds); ++i)
    if (!is_rpc_failure_of(kRpcFailureKinds[i], kErrnoFailureKinds[i])) return false;
  return true;
}());

// From the kernel log while `run` watches it (docs/failures.md).
inline constexpr std::string_view kFailureGpuXid = "gpu_xid";
inline constexpr std::string_view kFailureOomKill = "oom_kill";
inline constexpr std::string_view kFailureKernelNfsNotResponding = "kernel_nfs_not_responding";
// A pid-less Xid on a GPU that is not one of the job's: the node's failure,
// shown, never the job's cause.
inline constexpr std::string_view kFailureNodeGpuXid = "node_gpu_xid";

// `run`'s job log could not be written whole (a full disk): docs/failures.md.
inline constexpr std::string_view kFailureJobLogIncomplete = "job_log_incomplete";

// An anomalous node-log line (`ckptscope logwatch`, `run --logwatch-model`).
inline constexpr std::string_view kFailureLogAnomaly = "log_anomaly";

// Known node faults in a node log (`ckptscope logwatch`, `run
// --logwatch-model`; analysis/logwatch/known_faults.json names each line
// format): always an alarm, whatever the budget. The kernel-log watcher's
// own kinds (gpu_xid, kernel_nfs_not_responding, oom_kill) are the ones
// above; these are the hardware and system faults every GPU-node operator
// watches besides.
inline constexpr std::string_view kFailureNvswitchError = "nvswitch_error";
inline constexpr std::string_view kFailureMachineCheck = "machine_check";
inline constexpr std::string_view kFailurePcieAerUncorrectable = "pcie_aer_uncorrectable";
inline constexpr std::string_view kFailureMemoryEccUncorrectable = "memory_ecc_uncorrectable";
inline constexpr std::string_view kFailureNicLinkDown = "nic_link_down";
inline constexpr std::string_view kFailureNicHealth = "nic_health";
inline constexpr std::string_view kFailureStorageServerTimeout = "storage_server_timeout";
inline constexpr std::string_view kFailureFilesystemError = "filesystem_error";
inline constexpr std::string_view kFailureDiskIoError = "disk_io_error";
inline constexpr std::string_view kFailureNvmeControllerError = "nvme_controller_error";
inline constexpr std::string_view kFailureHungTask = "hung_task";
inline constexpr std::string_view kFailureCpuLockup = "cpu_lockup";
inline constexpr std::string_view kFailureRcuStall = "rcu_stall";
inline constexpr std::string_view kFailureKernelOops = "kernel_oops";
// Every kind a known node fault can have: the watcher's three and the above.
inline constexpr std::string_view kNodeLogFaultKinds[] = {
    kFailureGpuXid,
    kFailureKernelNfsNotResponding,
    kFailureOomKill,
    kFailureNvswitchError,
    kFailureMachineCheck,
    kFailurePcieAerUncorrectable,
    kFailureMemoryEccUncorrectable,
    kFailureNicLinkDown,
    kFailureNicHealth,
    kFailureStorageServerTimeout,
    kFailureFilesystemError,
    kFailureDiskIoError,
    kFailureNvmeControllerError,
    kFailureHungTask,
    kFailureCpuLockup,
    kFailureRcuStall,
    kFailureKernelOops,
};
constexpr bool is_node_log_fault_kind(std::string_view kind) {
  for (std::string_view k : kNodeLogFaultKinds)
    if (k == kind) return true;
  return false;
}

// Every failure kind, each once.
inline constexpr std::string_view kAllFailureKinds[] = {
    kFailureEnospc,
    kFailureEdquot,
    kFailureEstale,
    kFailureEio,
    kFailureErofs,
    kFailureEtimedout,
    kFailureIoError,
    kFailureStall,
    kFailurePartialSave,
    kFailureTcpReset,
    kFailureTcpRetransmitStorm,
    kFailureTcpZeroWindow,
    kFailureNfsServerNotResponding,
    kFailureRpcEnospc,
    kFailureRpcEdquot,
    kFailureRpcEstale,
    kFailureRpcEio,
    kFailureRpcErofs,
    kFailureRpcEtimedout,
    kFailureRpcError,
    kFailureGpuXid,
    kFailureOomKill,
    kFailureKernelNfsNotResponding,
    kFailureLogAnomaly,
    kFailureNodeGpuXid,
    kFailureJobLogIncomplete,
    kFailureNvswitchError,
    kFailureMachineCheck,
    kFailurePcieAerUncorrectable,
    kFailureMemoryEccUncorrectable,
    kFailureNicLinkDown,
    kFailureNicHealth,
    kFailureStorageServerTimeout,
    kFailureFilesystemError,
    kFailureDiskIoError,
    kFailureNvmeControllerError,
    kFailureHungTask,
    kFailureCpuLockup,
    kFailureRcuStall,
    kFailureKernelOops,
};

static_assert(
    [] {
      for (size_t i = 0; i < std::size(kAllFailureKinds); ++i)
        for (size_t j = i + 1; j < std::size(kAllFailureKinds); ++j)
          if (kAllFailureKinds[i] == kAllFailureKinds[j]) return false;
      return true;
    }(),
    "a failure kind is listed twice");

constexpr bool is_failure_kind(std::string_view kind) {
  for (std::string_view k : kAllFailureKinds)
    if (k == kind) return true;
  return false;
}

}  // namespace ckpt
