// Decoded events: what sources hand to the stitcher. Sources turn kernel
// records (bpf/*.h) into these, resolving paths and addresses, so nothing
// downstream depends on a BPF record layout.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ckpt {

enum class IoOp : uint8_t {
  Read,
  Write,
  Fsync,
  Close,
  Ftruncate,
  Open,
  Rename,
  Mkdir,
  Unlink,
  Stat
};
std::string_view to_string(IoOp op);
// Metadata calls: the metadata stage. Data calls (read, write, fsync, close,
// ftruncate) are host_io: fsync and the flush at close move data.
bool is_metadata_op(IoOp op);

struct FileId {
  uint64_t dev = 0;
  uint64_t ino = 0;
  bool operator==(const FileId&) const = default;
  [[nodiscard]] bool known() const { return dev != 0 || ino != 0; }
};

struct FileIdHash {
  size_t operator()(const FileId& f) const {
    return std::hash<uint64_t>()(f.ino * 0x9E3779B97F4A7C15ull ^ f.dev);
  }
};

// One traced call, with its path resolved when possible.
struct IoEvent {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t tgid = 0;
  uint32_t tid = 0;
  IoOp op = IoOp::Read;
  int64_t ret = 0;         // bytes moved, fd, 0, or -errno
  uint64_t requested = 0;  // count argument when the call has one
  FileId file;             // the file's identity when known
  bool is_directory = false;
  std::string path;    // absolute when it could be resolved
  std::string path2;   // rename: the new name
  uint32_t flags = 0;  // open(2) flags, or the AT_/RENAME_ flags of a path call
  // The thread's on-CPU time outside traced calls, in [cpu_window_start_ns, start_ns).
  uint64_t cpu_window_start_ns = 0;
  uint64_t cpu_ns = 0;

  [[nodiscard]] uint64_t bytes_moved() const {
    return (op == IoOp::Read || op == IoOp::Write) && ret > 0 ? static_cast<uint64_t>(ret) : 0;
  }
};

// A flush call (fsync, close, ftruncate) has started and not yet returned:
// on NFS a close can flush for seconds, and a hung one is a stall.
struct CallStartEvent {
  uint64_t start_ns = 0;
  uint32_t tgid = 0;
  uint32_t tid = 0;
  IoOp op = IoOp::Fsync;
  FileId file;
  std::string path;
};

// On-CPU time outside traced calls, reported when a traced thread leaves the CPU.
struct CpuEvent {
  uint64_t window_start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t tgid = 0;
  uint32_t tid = 0;
  uint64_t cpu_ns = 0;
};

struct ProcEvent {
  enum class Kind : uint8_t { Fork, Exit, ThreadExit };
  Kind kind = Kind::Fork;
  uint64_t time_ns = 0;
  uint32_t tgid = 0;
  uint32_t tid = 0;
  uint32_t child_tgid = 0;
  int32_t exit_code = 0;
  std::string comm;
  // Exit by a signal: the regular files the process still had open for
  // writing (the kernel listed them before closing them), when the list is
  // complete.
  std::optional<std::vector<FileId>> open_for_write;
};

struct TcpEvent {
  enum class Kind : uint8_t { Sample, State, Retransmit, ResetSent, ResetReceived };
  Kind kind = Kind::Sample;
  uint64_t time_ns = 0;
  uint64_t cookie = 0;
  std::string local;   // "addr:port"
  std::string remote;  // "addr:port"
  int32_t old_state = 0;
  int32_t new_state = 0;
  uint64_t bytes_acked = 0;
  uint64_t bytes_received = 0;
  uint64_t bytes_sent = 0;
  uint32_t total_retrans = 0;
  uint32_t snd_nxt = 0;
  uint32_t snd_una = 0;
  uint32_t snd_cwnd = 0;
  uint32_t srtt_us = 0;
  uint32_t snd_wnd = 0;
  uint64_t zero_window_ns = 0;
  uint32_t in_flight = 0;  // snd_nxt - snd_una: sent, not yet acknowledged
  uint32_t backlog = 0;    // write_seq - snd_una: queued or in flight, not yet acknowledged
};
std::string_view to_string(TcpEvent::Kind kind);

enum class NfsIoKind : uint8_t { Read, Write, Commit };
std::string_view to_string(NfsIoKind kind);  // "read", "write", "commit"

// One NFS page-I/O RPC of the NFS client (nfs_initiate_* to *_done): it ran
// in a writeback or rpciod thread, so it is tied to the job by its file.
// Reported twice: when initiated (started) and when done.
struct NfsIoEvent {
  NfsIoKind kind = NfsIoKind::Write;
  uint64_t start_ns = 0;  // initiated (the done time when the start was missed)
  uint64_t end_ns = 0;
  FileId file;
  uint64_t offset = 0;
  uint64_t count = 0;         // requested
  uint64_t result_count = 0;  // bytes the server took or returned (0 for a commit)
  int32_t status = 0;         // 0 or -errno
  // The carrying rpc_task (an opaque id): pairs a start with its completion.
  uint64_t id = 0;
  // Initiated and not yet completed (end_ns 0): the NFS client still owes
  // these bytes to the server.
  bool started = false;
  [[nodiscard]] uint64_t bytes() const {
    return status >= 0 && kind != NfsIoKind::Commit ? result_count : 0;
  }
};

// Where an RPC waited, by transport queue (bpf/nfs.h enum ckpt_rpc_queue).
enum RpcQueue : uint8_t { kRpcQueueBacklog, kRpcQueueSending, kRpcQueuePending, kRpcQueueOther };
inline constexpr size_t kRpcQueues = 4;
std::string_view rpc_queue_name(size_t queue);  // "backlog", "sending", "pending", "other"

// One NFS RPC: finished (with the latencies mountstats sums), at a major
// timeout (the server is not responding), or failed before it was sent.
struct RpcEvent {
  enum class Kind : uint8_t { Done, Timeout, Abandoned };
  Kind kind = Kind::Done;
  uint64_t time_ns = 0;   // finished, or when the timeout fired
  uint64_t start_ns = 0;  // the task started (time_ns - execute_ns)
  uint64_t queue_ns = 0;  // start to first transmission ("backlog" in rpc_stats_latency)
  uint64_t rtt_ns = 0;    // last transmission to reply
  uint64_t execute_ns = 0;
  std::string op;  // the procedure: "WRITE", "READ", "COMMIT", "GETATTR", ...
  uint32_t vers = 0;
  uint32_t client_id = 0;
  uint32_t xid = 0;
  uint32_t task_pid = 0;
  uint32_t timeouts = 0;  // major timeouts so far
  uint32_t ntrans = 0;    // transmissions
  int32_t status = 0;     // 0 or -errno
  uint64_t bytes_sent = 0;
  uint64_t bytes_recv = 0;
  std::array<uint64_t, kRpcQueues> wait_ns{};
  std::string server;  // "addr:port"
  // The NFS I/O this RPC carried, when it carried page I/O.
  std::optional<NfsIoKind> io;
  FileId file;
  uint64_t io_offset = 0;
  uint64_t io_count = 0;
};
std::string_view to_string(RpcEvent::Kind kind);

// One copy between host and GPU memory (or between GPUs), timed by CUPTI in
// the job (cupti/gpu_copy_record.h), on CLOCK_MONOTONIC.
enum class GpuCopyKind : uint8_t { Unknown, HtoD, DtoH, DtoD, HtoH, PtoP, Other };
enum class GpuMemoryKind : uint8_t { Unknown, Pageable, Pinned, Device, Managed, Array };
std::string_view to_string(GpuCopyKind kind);    // "htod", "dtoh", ...
std::string_view to_string(GpuMemoryKind kind);  // "pageable", "pinned", ...

struct GpuCopyEvent {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t tgid = 0;
  uint64_t bytes = 0;
  uint64_t copy_count = 1;  // copies batched into this one (cudaMemcpyBatchAsync)
  GpuCopyKind kind = GpuCopyKind::Unknown;
  GpuMemoryKind src = GpuMemoryKind::Unknown;
  GpuMemoryKind dst = GpuMemoryKind::Unknown;
  bool async = false;
  uint32_t device_id = 0;
  uint32_t stream_id = 0;
  std::string pci_address;  // "0000:3b:00.0" when the device told it, else ""
  // The host side of a HtoD or DtoH copy.
  [[nodiscard]] GpuMemoryKind host_memory() const {
    return kind == GpuCopyKind::HtoD   ? src
           : kind == GpuCopyKind::DtoH ? dst
                                       : GpuMemoryKind::Unknown;
  }
};

using Event = std::variant<IoEvent, CpuEvent, ProcEvent, TcpEvent, CallStartEvent, NfsIoEvent,
                           RpcEvent, GpuCopyEvent>;

uint64_t event_time_ns(const Event& e);  // the time the stitcher orders by (the end of a call)

}  // namespace ckpt
