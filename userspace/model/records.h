// Stitched records: what exporters and analysis see. They never see BPF maps
// or raw ring-buffer records (Pixie's stirling habit): sources decode into
// events (events.h), the stitcher turns events into these.
//
// All times are CLOCK_MONOTONIC nanoseconds; JobRecord carries the one
// wall-clock anchor (start_wall_ns at start_mono_ns), applied at the edge.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/vocabulary.h"

namespace ckpt {

enum class Direction { Save, Load };
std::string_view to_string(Direction d);
std::optional<Direction> direction_from_string(std::string_view s);

struct StageRecord {
  std::string name;
  uint64_t bytes = 0;
  uint64_t busy_ns = 0;           // wall time the stage was active (union of intervals)
  std::optional<double> max_Bps;  // the stage's maximum bandwidth, when known
  std::string max_source;         // where max_Bps came from, e.g. "config:storage.write_Bps",
                                  // "sysfs:/sys/class/net/eth0/speed", "unknown"
  // Of busy_ns, the time no stage below it explains on the same files
  // (docs/stitching.md "Exclusive time"): what the bottleneck is chosen by.
  // Unknown in traces from before it was measured.
  std::optional<uint64_t> exclusive_ns;

  [[nodiscard]] double bandwidth_Bps() const;                   // bytes / busy time; 0 when idle
  [[nodiscard]] std::optional<double> fraction_of_max() const;  // bandwidth / max, when max known

  bool operator==(const StageRecord&) const = default;
};

struct FailureRecord {
  std::string kind;  // e.g. "enospc", "edquot", "estale", "eio", "io_error",
                     // "tcp_reset", "tcp_retransmit_storm", "tcp_zero_window",
                     // "rpc_error", "nfs_server_not_responding", "stall", "partial_save";
                     // from the kernel log: "gpu_xid", "oom_kill", "kernel_nfs_not_responding"
  uint64_t time_ns = 0;
  std::string evidence;  // human-readable: the call, the file, the errno
  std::optional<uint64_t> checkpoint_id;

  bool operator==(const FailureRecord&) const = default;
};

// Per file, per checkpoint.
struct FileIoRecord {
  std::string path;
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t bytes_written = 0;
  uint64_t bytes_read = 0;
  uint64_t write_calls = 0;  // calls, folded ones each counted
  uint64_t read_calls = 0;   // reads, and mmap page faults
  uint64_t other_calls = 0;  // fsync, close, ftruncate, metadata calls
  uint64_t errors = 0;
  uint64_t busy_ns = 0;  // summed call time (may exceed wall time with parallel calls)
  uint64_t first_ns = 0;
  uint64_t last_ns = 0;
  // Of bytes_read: the distinct pages mapped through mmap (each page once
  // per checkpoint, clipped to the file's size), and of those the bytes the
  // faults had to read from storage (not already in the page cache).
  uint64_t mmap_bytes = 0;
  uint64_t storage_bytes = 0;

  bool operator==(const FileIoRecord&) const = default;
};

// RPCs of one procedure ("WRITE", "READ", "COMMIT", "GETATTR", ...), as
// eBPF saw them finish: the same figures /proc/self/mountstats sums per op.
struct RpcOpStats {
  std::string op;
  uint64_t count = 0;           // RPCs finished
  uint64_t errors = 0;          // finished with an error status
  uint64_t major_timeouts = 0;  // major timeouts ("server not responding"), finished or not
  uint64_t transmissions = 0;   // transmissions, retransmissions included
  uint64_t bytes_sent = 0;      // request bytes on the wire, headers included
  uint64_t bytes_received = 0;  // reply bytes, headers included
  uint64_t queue_ns = 0;        // sum of start -> transmission (the last one, if resent)
  uint64_t rtt_ns = 0;          // sum of transmission -> reply
  uint64_t execute_ns = 0;      // sum of start -> done

  RpcOpStats& operator+=(const RpcOpStats& o);  // every counter; `op` stays

  bool operator==(const RpcOpStats&) const = default;
};

// What eBPF saw of one RPC client's traffic over the whole trace, by op: the
// side of the /proc/self/mountstats cross-check. Keyed by server and RPC
// version, the two things a mount's mountstats entry also names.
struct RpcTotals {
  std::string server;  // "addr:port"
  uint32_t vers = 0;   // 3 or 4
  std::vector<RpcOpStats> ops;

  bool operator==(const RpcTotals&) const = default;
};

// A duration distribution over a set of RPCs (nearest-rank percentiles).
struct DurationStats {
  uint64_t count = 0;
  uint64_t mean_ns = 0;
  uint64_t p50_ns = 0;
  uint64_t p90_ns = 0;
  uint64_t p99_ns = 0;
  uint64_t max_ns = 0;

  bool operator==(const DurationStats&) const = default;
};

// The NFS side of one checkpoint: the RPCs that carried its files' pages,
// the other RPCs of the same RPC clients meanwhile, and the TCP transport
// to their servers.
struct NfsCheckpointRecord {
  std::vector<std::string> servers;  // "addr:port" of the RPCs' transports
  uint64_t io_rpcs = 0;              // READ/WRITE/COMMIT RPCs on the checkpoint's files
  uint64_t io_bytes = 0;             // payload bytes of those (the nfs_client stage's bytes)
  std::vector<RpcOpStats> rpc_ops;   // every RPC of those clients in the window, by op
  DurationStats queue_wait;          // per-RPC queue time of the checkpoint's I/O RPCs
  DurationStats rtt;                 // per-RPC round trip of the same RPCs
  // Time those RPCs slept, by transport queue: "backlog" (no free slot),
  // "sending" (transport busy), "pending" (awaiting the reply), "other".
  std::vector<std::pair<std::string, uint64_t>> wait_by_queue_ns;
  // The transport to those servers during the checkpoint (absent when the
  // transport probes were off).
  std::optional<uint64_t> tcp_in_flight_max;  // bytes sent and not yet acknowledged
  std::optional<double> tcp_in_flight_mean;
  // Bytes handed to TCP and not yet acknowledged (queued in the socket plus
  // in flight: write_seq - snd_una): the transport's backlog.
  std::optional<uint64_t> tcp_backlog_max;
  std::optional<double> tcp_backlog_mean;
  std::optional<uint64_t> tcp_retransmits;

  bool operator==(const NfsCheckpointRecord&) const = default;
};

// The gpu_copy stage's detail: how the checkpoint's GPU copies were staged.
// torch.save and safetensors copy through pageable memory (the driver stages
// it through a pinned buffer of its own, at a fraction of the link), PyTorch's
// async DCP through pinned memory.
struct CheckpointGpuRecord {
  uint64_t copies = 0;      // activity records claimed
  uint64_t copy_count = 0;  // copies they stand for (batched copies count each)
  uint64_t pageable_bytes = 0;
  uint64_t pinned_bytes = 0;
  uint64_t other_bytes = 0;  // managed, device-to-device, unknown
  uint64_t async_copies = 0;
  uint64_t first_ns = 0;             // the first copy's start
  uint64_t last_ns = 0;              // the last copy's end
  std::vector<std::string> devices;  // PCI addresses (or "device N"), sorted

  bool operator==(const CheckpointGpuRecord&) const = default;
};

struct CheckpointRecord {
  uint64_t id = 0;  // 1, 2, ... in start order
  Direction direction = Direction::Save;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t bytes = 0;               // bytes moved by the calls, never file sizes
  uint32_t files = 0;               // distinct checkpoint files touched
  std::string bottleneck;           // a stage name, or "" when nothing was measured
  std::vector<StageRecord> stages;  // present stages only, in kAllStages order
  std::vector<FailureRecord> failures;
  std::vector<FileIoRecord> file_io;
  std::optional<NfsCheckpointRecord> nfs;  // when the NFS probes ran and saw its files' RPCs
  std::optional<CheckpointGpuRecord> gpu;  // when the CUPTI library ran in the job
  // Which interfaces moved `bytes`: ("syscall", N), ("io_uring", M),
  // ("copy_file_range", ...), ("sendfile", ...), ("mmap", ...), ("summed", ...); only the
  // non-zero ones, in that order. Sums to `bytes`.
  std::vector<std::pair<std::string, uint64_t>> bytes_by_via;
  // A save: the page-cache bytes its writes left dirty on local files that
  // none of its calls wrote back (no fsync): writeback owed them to the
  // storage when it ended. Unknown when no write dirtied a page (tmpfs, NFS,
  // O_DIRECT) or in traces from before it was measured.
  std::optional<uint64_t> dirty_at_end_bytes;

  bool operator==(const CheckpointRecord&) const = default;
};

// One traced call on a checkpoint file, kept for timelines and reports.
struct IoCallRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t tgid = 0;
  uint32_t tid = 0;
  std::string op;      // "read", "write", "fsync", "close", "ftruncate", "open",
                       // "rename", "mkdir", "unlink", "stat", "mmap"
  int64_t ret = 0;     // bytes, fd, 0 or -errno
  uint64_t bytes = 0;  // bytes moved (ret when a read/write succeeded)
  std::string path;
  std::optional<uint64_t> checkpoint_id;
  uint32_t calls = 1;           // calls folded into this row (mmap: faults)
  std::string via = "syscall";  // "syscall", "io_uring", "copy_file_range", "sendfile",
                                // "mmap", "summed"
  uint64_t busy_ns = 0;         // the calls' durations summed
  uint64_t storage_bytes = 0;   // mmap: of bytes, read from storage by the faults

  bool operator==(const IoCallRecord&) const = default;
};

// One RPC of a checkpoint's RPC clients during the checkpoint, as the NFS
// probes saw it finish: the per-RPC rows behind NfsCheckpointRecord::rpc_ops
// (per op, as many as rpc_ops[op].count) and its queue_wait and rtt (the
// calls with checkpoint_io, as many as io_rpcs), kept for timelines.
struct RpcCallRecord {
  uint64_t start_ns = 0;        // rpc_task start (CLOCK_MONOTONIC)
  uint64_t end_ns = 0;          // done, or failed before it was sent
  uint64_t queue_ns = 0;        // start -> (last) transmission
  uint64_t rtt_ns = 0;          // transmission -> reply
  uint64_t execute_ns = 0;      // start -> done
  std::string op;               // "WRITE", "READ", "COMMIT", "GETATTR", ...
  std::string server;           // "addr:port"
  uint64_t bytes_sent = 0;      // request bytes on the wire, headers included
  uint64_t bytes_received = 0;  // reply bytes, headers included
  // The page I/O's requested payload (nfs_pgio count) of a READ/WRITE that
  // carried a checkpoint file's pages, else 0 (COMMIT and every other RPC).
  uint64_t payload_bytes = 0;
  int32_t status = 0;  // 0 or -errno
  uint32_t transmissions = 0;
  uint32_t major_timeouts = 0;
  bool checkpoint_io = false;  // carried pages of the checkpoint's files (counted in nfs.io_rpcs)
  std::optional<uint64_t> checkpoint_id;

  bool operator==(const RpcCallRecord&) const = default;
};

// A TCP connection to a storage server, as seen over the trace.
struct ConnectionRecord {
  uint64_t cookie = 0;
  std::string local;   // "addr:port"
  std::string remote;  // "addr:port"
  uint64_t first_ns = 0;
  uint64_t last_ns = 0;
  uint64_t bytes_sent = 0;      // acked bytes over the trace (delta of tcp_sock.bytes_acked)
  uint64_t bytes_received = 0;  // delta of tcp_sock.bytes_received
  uint64_t retransmits = 0;     // delta of tcp_sock.total_retrans
  uint64_t zero_window_ns = 0;
  uint64_t resets = 0;
  std::optional<double> link_max_Bps;
  std::string link_max_source;

  bool operator==(const ConnectionRecord&) const = default;
};

struct TcpSampleRecord {
  uint64_t time_ns = 0;
  uint64_t cookie = 0;
  std::string event;  // "sample", "state", "retransmit", "reset_sent", "reset_received"
  uint64_t bytes_acked = 0;
  uint64_t bytes_received = 0;
  uint32_t in_flight = 0;  // snd_nxt - snd_una
  uint32_t backlog = 0;    // write_seq - snd_una: queued in the socket and in flight
  uint32_t cwnd = 0;
  uint32_t srtt_us = 0;
  uint32_t snd_wnd = 0;
  uint32_t total_retrans = 0;
  uint64_t zero_window_ns = 0;
  int32_t new_state = 0;

  bool operator==(const TcpSampleRecord&) const = default;
};

// One NFS mount over the trace, from /proc/self/mountstats snapshots at the
// start and end (the kernel's own counters: the fallback when eBPF cannot
// load, and the cross-check of what eBPF saw).
struct NfsMountOpRecord {
  std::string op;
  uint64_t ops = 0;
  uint64_t transmissions = 0;
  uint64_t major_timeouts = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  uint64_t queue_ms = 0;
  uint64_t rtt_ms = 0;
  uint64_t execute_ms = 0;
  std::optional<uint64_t> errors;  // iostats 1.1 and later

  bool operator==(const NfsMountOpRecord&) const = default;
};

struct NfsMountRecord {
  std::string device;  // "server:/export"
  std::string mount_point;
  std::string fstype;              // "nfs" or "nfs4"
  std::string version;             // the vers= option, e.g. "4.2"
  std::string server;              // the addr= option
  uint64_t interval_s = 0;         // between the snapshots, at one-second resolution
  bool since_mount = false;        // mounted during the trace: figures are its totals
  uint64_t normal_read_bytes = 0;  // what applications read(2)/write(2) through the page cache
  uint64_t normal_write_bytes = 0;
  uint64_t direct_read_bytes = 0;
  uint64_t direct_write_bytes = 0;
  uint64_t server_read_bytes = 0;  // READ/WRITE payload on the wire
  uint64_t server_write_bytes = 0;
  // Transports (summed): sends, and the queue depths a send saw on average.
  uint64_t xprt_sends = 0;
  uint64_t xprt_receives = 0;
  double avg_backlog_queue = 0;
  double avg_sending_queue = 0;
  double avg_pending_queue = 0;
  std::vector<NfsMountOpRecord> ops;  // ops with activity in the interval
  // What the eBPF probes saw for this mount's RPC client over the same trace
  // (absent when they did not run): the per-op cross-check.
  std::optional<std::vector<RpcOpStats>> ebpf_ops;

  bool operator==(const NfsMountRecord&) const = default;
};

struct DropRecord {
  std::string source;  // "jobio", "tcp", "collector"
  std::string cause;   // "ringbuf_full", "inflight_full", ...
  uint64_t count = 0;

  bool operator==(const DropRecord&) const = default;
};

// One line that made the failure classifier decide (analysis/classifier);
// the classifier and the notifier use the same type.
struct JobEvidence {
  uint64_t line = 0;  // 1-based line in `source`; 0 when not from a log (the exit status)
  std::string text;
  std::string source;  // the job log's path, "kmsg" (the kernel log), or "exit_status"

  bool operator==(const JobEvidence&) const = default;
};
// Where an evidence line is, as every output says it: "line N" in the log
// being shown (own_log), "SOURCE:N" elsewhere (the kernel log), "SOURCE" for
// what is not a line of any log (the exit status).
std::string evidence_where(uint64_t line, std::string_view source, bool own_log);

// Why the job failed: the classifier's root cause (docs/classifier.md).
struct JobFailure {
  std::string cls;   // "cuda_oom", "gpu_lost", "storage_io", ..., "unknown"
  std::string rule;  // the rule that fired; empty for unknown
  std::vector<JobEvidence> evidence;
  std::vector<std::string> symptoms;  // other classes seen, e.g. "nccl (rule nccl) at line 8"

  bool operator==(const JobFailure&) const = default;
};

struct JobRecord {
  std::vector<std::string> command;
  std::string name;    // the job name, e.g. "train"
  std::string mode;    // "run" or "attach"
  std::string node;    // hostname
  std::string kernel;  // uname -r
  std::string ckptscope_version;
  std::string config_json;     // the effective config
  uint64_t start_wall_ns = 0;  // CLOCK_REALTIME at start_mono_ns: the one wall anchor
  uint64_t start_mono_ns = 0;
  uint64_t end_mono_ns = 0;
  std::optional<int> exit_code;    // the job's exit status
  std::optional<int> exit_signal;  // when a signal ended it
  bool traced = false;             // false when eBPF could not be loaded
  std::string trace_warning;       // why nothing (or less) was traced
  // How the job's file I/O was traced: "syscall" (raw_syscalls, the fallback)
  // or "file_layer" (fentry/fexit on the VFS); "" when not traced or not known.
  std::string probe_mode;
  std::vector<uint32_t> root_pids;
  std::string log_path;               // the durable log `run` wrote; empty when none
  std::optional<JobFailure> failure;  // set only when the job failed: non-zero exit or a signal

  bool operator==(const JobRecord&) const = default;
};

// One regular file the job moved data through that no checkpoint pattern
// recognised (and exclude_globs did not rule out).
struct UnrecognisedFileRecord {
  std::string path;  // as the job opened it; "" when not known (dev and ino name it)
  uint64_t dev = 0;  // st_dev
  uint64_t ino = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  // What would include it (docs/frameworks.md): a name glob for
  // --checkpoint-glob / checkpoint.name_globs, always set when the path is
  // known; and a directory for --checkpoint-dir / checkpoint.dir_globs, set
  // only when its name is a generic one (file_globs), which a checkpoint
  // directory is enough for. "" when there is none.
  std::string checkpoint_glob;
  std::string checkpoint_dir;

  [[nodiscard]] uint64_t bytes() const { return bytes_read + bytes_written; }
  bool operator==(const UnrecognisedFileRecord&) const = default;
};

// The job's data through regular files that were not recognised as
// checkpoints: what the unrecognised-I/O notice says (docs/stitching.md) so
// that a checkpoint layout the patterns miss is never silent. Reads and
// writes (syscalls, io_uring, copies) that succeeded; not page faults.
struct UnrecognisedIoRecord {
  uint64_t bytes_read = 0;  // all such files
  uint64_t bytes_written = 0;
  uint64_t files = 0;  // distinct files
  // checkpoint.unrecognised_notice_mib when traced: the notice is shown when
  // bytes() is above it.
  uint64_t notice_bytes = 0;
  // The largest (bytes read + written), largest first, at most
  // kUnrecognisedFilesKept; ties by path.
  std::vector<UnrecognisedFileRecord> largest;

  [[nodiscard]] uint64_t bytes() const { return bytes_read + bytes_written; }
  [[nodiscard]] bool notice() const { return bytes() > notice_bytes; }
  bool operator==(const UnrecognisedIoRecord&) const = default;
};
inline constexpr size_t kUnrecognisedFilesKept = 5;

// End-of-run accounting (docs/stitching.md, "End-of-run accounting"): the
// bytes the kernel counted the job's threads writing (task->ioac, summed
// over every traced thread as it exited) against the bytes the trace
// attributed (the checkpoints' writes and the unrecognised files'), so a
// write by a way no probe sees is named, never silent. Reads are shown,
// not compared: readahead and the pages of the programs' own libraries
// count there too.
struct IoAccountingRecord {
  uint64_t threads = 0;  // exited threads whose counters are summed
  // The job's processes still running when the trace ended: their threads'
  // bytes are not in the sums, so nothing is compared (0: all counted).
  uint64_t processes_running = 0;
  uint64_t kernel_read_bytes = 0;     // from storage
  uint64_t kernel_written_bytes = 0;  // dirtied (or O_DIRECT), less the dirty bytes dropped
  uint64_t traced_written_bytes = 0;  // checkpoints' and unrecognised files' writes
  uint64_t files_written = 0;         // files the trace saw written
  // Slack for what the kernel counts in whole pages: two per file written.
  uint64_t page_bytes = 4096;
  // checkpoint.unrecognised_notice_mib: a difference above it (and the
  // pages' slack) is told.
  uint64_t notice_bytes = 0;

  [[nodiscard]] uint64_t unseen_written_bytes() const {
    return kernel_written_bytes > traced_written_bytes ? kernel_written_bytes - traced_written_bytes
                                                       : 0;
  }
  [[nodiscard]] uint64_t allowance_bytes() const {
    return notice_bytes + 2 * page_bytes * files_written;
  }
  [[nodiscard]] bool notice() const {
    return processes_running == 0 && threads > 0 && unseen_written_bytes() > allowance_bytes();
  }
  bool operator==(const IoAccountingRecord&) const = default;
};

struct Trace {
  JobRecord job;
  std::vector<CheckpointRecord> checkpoints;
  std::vector<FailureRecord> failures;  // outside any checkpoint
  std::vector<IoCallRecord> io_calls;
  std::vector<RpcCallRecord> rpc_calls;
  std::vector<ConnectionRecord> connections;
  std::vector<TcpSampleRecord> tcp_samples;
  std::vector<DropRecord> drops;
  std::vector<NfsMountRecord> nfs_mounts;
  // Absent when not known: untraced, or a trace from before schema version 8.
  std::optional<UnrecognisedIoRecord> unrecognised_io;
  // Absent when not counted: untraced, a kernel without the counters, or a
  // trace from before schema version 9.
  std::optional<IoAccountingRecord> io_accounting;

  bool operator==(const Trace&) const = default;
};

}  // namespace ckpt
