#include "sources/nfs_source.h"

#include <cstring>
#include <optional>

#include "nfs.h"
#include "sources/jobio_source.h"
#include "sources/tcp_source.h"

namespace ckpt {
namespace {

// An NFS I/O that has not completed after this long was abandoned (its task
// killed): hard mounts retry forever, but not for ten minutes unseen.
constexpr uint64_t kForgetPendingNs = 600'000'000'000ull;

std::optional<NfsIoKind> io_kind(uint32_t k) {
  switch (k) {
    case CKPT_NFS_READ:
      return NfsIoKind::Read;
    case CKPT_NFS_WRITE:
      return NfsIoKind::Write;
    case CKPT_NFS_COMMIT:
      return NfsIoKind::Commit;
    default:
      return std::nullopt;
  }
}

FileId file_of(const ckpt_nfs_record& r) { return FileId{kernel_dev_to_user(r.dev), r.ino}; }

}  // namespace

void NfsSource::on_record(const void* data, size_t size) {
  if (size < sizeof(ckpt_nfs_record)) {
    ++malformed_;
    return;
  }
  ckpt_nfs_record r;
  std::memcpy(&r, data, sizeof(r));
  switch (r.event) {
    case CKPT_NFS_IO_START:
    case CKPT_NFS_IO_DONE: {
      auto kind = io_kind(r.io_kind);
      if (!kind) {
        ++malformed_;
        return;
      }
      if (r.event == CKPT_NFS_IO_START)
        on_io_start(r, *kind);
      else
        on_io_done(r, *kind);
      return;
    }
    case CKPT_RPC_DONE:
    case CKPT_RPC_TIMEOUT:
    case CKPT_RPC_ABANDONED:
      on_rpc(r);
      return;
    default:
      ++malformed_;
  }
}

void NfsSource::on_io_start(const ckpt_nfs_record& r, NfsIoKind kind) {
  pending_[r.task_id] = Pending{kind, r.time_ns, file_of(r), r.offset, r.count};
  NfsIoEvent ev;
  ev.kind = kind;
  ev.start_ns = r.time_ns;
  ev.file = file_of(r);
  ev.offset = r.offset;
  ev.count = r.count;
  ev.id = r.task_id;
  ev.started = true;
  emit(Event(ev));
}

void NfsSource::on_io_done(const ckpt_nfs_record& r, NfsIoKind kind) {
  NfsIoEvent ev;
  ev.kind = kind;
  ev.end_ns = r.time_ns;
  ev.start_ns = r.time_ns;
  ev.file = file_of(r);
  ev.offset = r.offset;
  ev.count = r.count;
  ev.result_count = r.result_count;
  ev.status = r.status;
  ev.id = r.task_id;
  auto it = pending_.find(r.task_id);
  // The same task carries one I/O at a time; a retried RPC keeps its start.
  if (it != pending_.end() && it->second.file == ev.file && it->second.kind == kind) {
    ev.start_ns = it->second.start_ns;
    pending_.erase(it);
  }
  emit(Event(ev));
}

void NfsSource::on_rpc(const ckpt_nfs_record& r) {
  RpcEvent ev;
  ev.kind = r.event == CKPT_RPC_DONE      ? RpcEvent::Kind::Done
            : r.event == CKPT_RPC_TIMEOUT ? RpcEvent::Kind::Timeout
                                          : RpcEvent::Kind::Abandoned;
  ev.time_ns = r.time_ns;
  ev.execute_ns = r.execute_ns;
  ev.start_ns = r.time_ns - std::min(r.time_ns, r.execute_ns);
  ev.queue_ns = std::min(r.backlog_ns, r.execute_ns);
  ev.rtt_ns = std::min(r.rtt_ns, r.execute_ns);
  ev.op = std::string(r.proc_name, strnlen(r.proc_name, sizeof(r.proc_name)));
  if (ev.op.empty()) ev.op = r.proc == 0 ? "NULL" : "proc " + std::to_string(r.proc);
  ev.vers = r.vers;
  ev.client_id = r.client_id;
  ev.xid = r.xid;
  ev.task_pid = r.task_pid;
  ev.timeouts = r.timeouts;
  ev.ntrans = r.ntrans;
  ev.status = r.status;
  ev.bytes_sent = r.bytes_sent;
  ev.bytes_recv = r.bytes_recv;
  for (size_t i = 0; i < kRpcQueues; ++i) ev.wait_ns[i] = r.wait_ns[i];
  if (r.family != 0) ev.server = format_endpoint(r.family, r.addr, r.port);
  if (auto it = pending_.find(r.task_id); it != pending_.end()) {
    ev.io = it->second.kind;
    ev.file = it->second.file;
    ev.io_offset = it->second.offset;
    ev.io_count = it->second.count;
  }
  emit(std::move(ev));
}

void NfsSource::poll(uint64_t now_ns) {
  if (now_ns < kForgetPendingNs) return;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.start_ns < now_ns - kForgetPendingNs) {
      ++unfinished_;
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace ckpt
