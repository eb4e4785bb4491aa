// Decoded events: what sources hand to the stitcher. Sources turn kernel
// records (bpf/*.h) into these, resolving paths and addresses, so nothing
// downstream depends on a BPF record layout.
#pragma once

#include <algorithm>
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
  Stat,
  // Page faults on a mapped file: a read (load) of the pages they mapped.
  Mmap
};
std::string_view to_string(IoOp op);
// Metadata calls: the metadata stage. Data calls (read, write, fsync, close,
// ftruncate, mmap) are host_io: fsync and the flush at close move data.
bool is_metadata_op(IoOp op);
// Calls that move bytes of the file: read, write and mmap (a read).
inline bool moves_bytes(IoOp op) {
  return op == IoOp::Read || op == IoOp::Write || op == IoOp::Mmap;
}
// The direction a data call moves bytes in: mmap faults read the file.
inline bool is_read_direction(IoOp op) { return op == IoOp::Read || op == IoOp::Mmap; }

// How a data call reached the file (bpf/jobio.h enum ckpt_io_via).
// Summed: calls the kernel summed on a file it was told was no checkpoint's,
// which a rename into a checkpoint's name then made one (docs/stitching.md,
// "Decided late"): their bytes and count are exact, their time is the span
// the sums were taken over (an upper bound of the calls' own).
// Aio: a Linux AIO request (io_submit, as libaio makes), from its submission
// to its reaping by io_getevents (bpf/jobio_aio.bpf.h).
// ServerCopy, Reflink: copies the storage made without the bytes crossing
// this node: a copy_file_range an NFS 4.2 server served (COPY, CLONE), an
// ioctl(FICLONE) (bpf/jobio_storage_copies.bpf.h). Their bytes are the
// checkpoint's; no host or network stage moved them.
enum class IoVia : uint8_t {
  Syscall,
  IoUring,
  CopyFileRange,
  Sendfile,
  Mmap,
  Summed,
  Aio,
  ServerCopy,
  Reflink
};
inline constexpr size_t kIoVias = 9;
// "syscall", "io_uring", "copy_file_range", "sendfile", "mmap", "summed", "aio",
// "server_copy", "reflink"
std::string_view to_string(IoVia via);
// A call that reads one file and writes another (a copy record's two halves).
inline bool is_copy_via(IoVia via) {
  return via == IoVia::CopyFileRange || via == IoVia::Sendfile || via == IoVia::ServerCopy ||
         via == IoVia::Reflink;
}
// The storage copied the bytes itself: none crossed this node.
inline bool storage_copied(IoVia via) { return via == IoVia::ServerCopy || via == IoVia::Reflink; }

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

// The pages an mmap event mapped (bpf/jobio.h struct ckpt_mmap_record): the
// stitcher turns them into bytes, each page of a file once per checkpoint.
struct MmapPages {
  uint64_t first_page = 0;  // page indexes in the file, inclusive
  uint64_t last_page = 0;
  uint64_t file_size = 0;      // no byte at or past it counts
  uint64_t storage_pages = 0;  // read from storage into the page cache by these faults
  uint32_t page_shift = 12;
  // Non-zero: the pages the faults installed, counted, not placed (syscall
  // mode, bpf/jobio.h); the range then spans only the faulting pages.
  uint64_t installed_pages = 0;
};

// The pages [first_page, last_page] clipped to the file: the ones wholly
// past file_size are dropped, the last one counts up to file_size.
struct PageRange {
  uint64_t first_page = 0;
  uint64_t last_page = 0;
  bool empty = true;
};
inline PageRange pages_within_file(uint64_t first_page, uint64_t last_page, uint64_t file_size,
                                   uint32_t page_shift) {
  const uint64_t mask = (uint64_t{1} << page_shift) - 1;
  const uint64_t pages_in_file = (file_size >> page_shift) + ((file_size & mask) != 0 ? 1 : 0);
  if (first_page > last_page || first_page >= pages_in_file) return {};
  return PageRange{first_page, std::min(last_page, pages_in_file - 1), false};
}
// Bytes of the file in pages [first_page, last_page], clipped to file_size.
inline uint64_t page_range_bytes(uint64_t first_page, uint64_t last_page, uint64_t file_size,
                                 uint32_t page_shift) {
  PageRange r = pages_within_file(first_page, last_page, file_size, page_shift);
  if (r.empty) return 0;
  const uint64_t start = r.first_page << page_shift;
  // (last + 1) << shift may pass 2^64 - 1 for a file that large: the end is
  // never past file_size anyway.
  const unsigned __int128 end_of_pages = static_cast<unsigned __int128>(r.last_page + 1)
                                         << page_shift;
  const uint64_t end = end_of_pages < file_size ? static_cast<uint64_t>(end_of_pages) : file_size;
  return end - start;
}
inline uint64_t mapped_bytes(const MmapPages& m) {
  if (m.installed_pages != 0) {
    // Counted pages: at most the file's size (the last page is partial).
    const uint64_t bytes = m.installed_pages >= (UINT64_MAX >> m.page_shift)
                               ? UINT64_MAX
                               : m.installed_pages << m.page_shift;
    return std::min(bytes, m.file_size);
  }
  return page_range_bytes(m.first_page, m.last_page, m.file_size, m.page_shift);
}

// One traced call (or several folded into one record by the kernel), with its
// path resolved when possible.
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
  // A copy's end that is neither a regular file nor a directory (a
  // sendfile's socket, a splice's pipe): it holds no file data.
  bool not_a_file = false;
  std::string path;    // absolute when it could be resolved
  std::string path2;   // rename: the new name
  uint32_t flags = 0;  // open(2) flags, or the AT_/RENAME_ flags of a path call
  // The thread's on-CPU time outside traced calls, in [cpu_window_start_ns, start_ns).
  // A folded record's window ends at its last call's start: 0 = at start_ns.
  uint64_t cpu_window_start_ns = 0;
  uint64_t cpu_ns = 0;
  uint64_t cpu_window_end_ns = 0;
  // Calls in this event: 1, or how many small calls the kernel folded (for
  // mmap: the faults). ret and requested are then sums over them.
  uint32_t calls = 1;
  IoVia via = IoVia::Syscall;
  // The calls' durations summed; 0 = end_ns - start_ns (a single call).
  uint64_t busy_ns = 0;
  // mmap: the pages mapped, and (set by the stitcher) the bytes of them read
  // from storage; ret is the bytes newly counted for the checkpoint.
  std::optional<MmapPages> mmap;
  // What the storage did inside the calls (bpf/jobio.h ckpt_io_record): the
  // bytes read from or written to the file's block device (all of them on a
  // file open O_DIRECT), the page-cache bytes they left dirty, and the time
  // they were throttled for dirty pages.
  uint64_t storage_bytes = 0;
  uint64_t dirtied_bytes = 0;
  uint64_t throttle_ns = 0;
  // The destination half of a copy (copy_file_range, sendfile): its source file.
  std::optional<FileId> copy_source;

  [[nodiscard]] uint64_t bytes_moved() const {
    return moves_bytes(op) && ret > 0 ? static_cast<uint64_t>(ret) : 0;
  }
  // Time in the calls: their summed durations when folded.
  [[nodiscard]] uint64_t call_time_ns() const {
    return calls > 1 || busy_ns > 0 ? busy_ns : end_ns - start_ns;
  }
  // Where the calls' time ends, placed from the first start: folded calls
  // count their summed durations, not the span the thread computed across.
  [[nodiscard]] uint64_t busy_end_ns() const {
    return calls > 1 ? start_ns + std::min(busy_ns, end_ns - start_ns) : end_ns;
  }
  [[nodiscard]] uint64_t cpu_window_end() const {
    return cpu_window_end_ns != 0 ? cpu_window_end_ns : start_ns;
  }
};

// A call on a file that is, or may be, a checkpoint's has started and not
// yet returned (bpf/jobio.h CKPT_REC_*_START): the probes announce a flush
// or a large data call as it starts, any other such call when it first
// leaves the CPU. Its record, or any later record of the thread but an mmap
// one, ends it; until then it holds its checkpoint open, and a hung one is a
// stall.
struct CallStartEvent {
  uint64_t start_ns = 0;
  uint32_t tgid = 0;
  uint32_t tid = 0;
  IoOp op = IoOp::Fsync;  // a copy: Write (of its destination)
  FileId file;            // unknown for a path call
  std::string path;
  IoVia via = IoVia::Syscall;
  std::string path2;  // rename: the new name
  // A copy (via copy_file_range or sendfile): the file it reads.
  std::optional<FileId> copy_source;
  std::string copy_source_path;
};

// A call announced in flight (CallStartEvent) returned without a record of
// its own to end it (bpf/jobio.h CKPT_REC_CALL_END: a Linux AIO submission or
// wait that reported nothing).
struct CallEndEvent {
  uint64_t time_ns = 0;
  uint32_t tgid = 0;
  uint32_t tid = 0;
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
  // Exit, ThreadExit: the exiting thread's own I/O counters, its whole life
  // (task->ioac), when the kernel keeps them.
  struct ThreadIo {
    uint64_t read_bytes = 0;             // read from storage
    uint64_t write_bytes = 0;            // page-cache bytes dirtied, O_DIRECT bytes written
    uint64_t cancelled_write_bytes = 0;  // dirty bytes dropped before writeback
  };
  std::optional<ThreadIo> thread_io;
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

// What one thread moved through one regular file the stitcher ruled out (no
// checkpoint: bpf/jobio.h ckpt_other_io_record), summed in the kernel: those
// calls have no IoEvent of their own. Only the unrecognised-I/O notice counts
// them (docs/stitching.md); they are nobody's checkpoint and no call in flight.
struct OtherIoEvent {
  uint64_t start_ns = 0;  // the first call summed returned
  uint64_t end_ns = 0;    // the kernel reported the sums
  uint32_t tgid = 0;
  uint32_t tid = 0;
  FileId file;
  std::string path;  // the name it was opened under; "" when not known
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t read_calls = 0;
  uint64_t write_calls = 0;
};

// A block device had the job's bios in flight over [start_ns, end_ns]
// (bpf/jobio.h ckpt_storage_busy_record): the storage stage's time on a
// local file system, readahead and writeback that outlive their call included.
struct StorageBusyEvent {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t tgid = 0;  // the thread whose bio opened the interval
  uint32_t tid = 0;
  uint64_t dev = 0;  // the device, in user space's encoding (= its files' FileId::dev)
  uint64_t bytes = 0;
  uint32_t bios = 0;
};

using Event = std::variant<IoEvent, CpuEvent, ProcEvent, TcpEvent, CallStartEvent, NfsIoEvent,
                           RpcEvent, GpuCopyEvent, OtherIoEvent, CallEndEvent, StorageBusyEvent>;

uint64_t event_time_ns(const Event& e);  // the time the stitcher orders by (the end of a call)

}  // namespace ckpt
