#include "model/events.h"

namespace ckpt {

std::string_view to_string(IoOp op) {
  switch (op) {
    case IoOp::Read:
      return "read";
    case IoOp::Write:
      return "write";
    case IoOp::Fsync:
      return "fsync";
    case IoOp::Close:
      return "close";
    case IoOp::Ftruncate:
      return "ftruncate";
    case IoOp::Open:
      return "open";
    case IoOp::Rename:
      return "rename";
    case IoOp::Mkdir:
      return "mkdir";
    case IoOp::Unlink:
      return "unlink";
    case IoOp::Stat:
      return "stat";
    case IoOp::Mmap:
      return "mmap";
  }
  return "unknown";
}

std::string_view to_string(IoVia via) {
  switch (via) {
    case IoVia::Syscall:
      return "syscall";
    case IoVia::IoUring:
      return "io_uring";
    case IoVia::CopyFileRange:
      return "copy_file_range";
    case IoVia::Sendfile:
      return "sendfile";
    case IoVia::Mmap:
      return "mmap";
    case IoVia::Summed:
      return "summed";
    case IoVia::Aio:
      return "aio";
    case IoVia::ServerCopy:
      return "server_copy";
    case IoVia::Reflink:
      return "reflink";
  }
  return "unknown";
}

bool is_metadata_op(IoOp op) {
  switch (op) {
    case IoOp::Open:
    case IoOp::Rename:
    case IoOp::Mkdir:
    case IoOp::Unlink:
    case IoOp::Stat:
      return true;
    default:
      return false;
  }
}

std::string_view to_string(TcpEvent::Kind kind) {
  switch (kind) {
    case TcpEvent::Kind::Sample:
      return "sample";
    case TcpEvent::Kind::State:
      return "state";
    case TcpEvent::Kind::Retransmit:
      return "retransmit";
    case TcpEvent::Kind::ResetSent:
      return "reset_sent";
    case TcpEvent::Kind::ResetReceived:
      return "reset_received";
  }
  return "unknown";
}

std::string_view to_string(NfsIoKind kind) {
  switch (kind) {
    case NfsIoKind::Read:
      return "read";
    case NfsIoKind::Write:
      return "write";
    case NfsIoKind::Commit:
      return "commit";
  }
  return "unknown";
}

std::string_view rpc_queue_name(size_t queue) {
  static constexpr std::string_view kNames[kRpcQueues] = {"backlog", "sending", "pending", "other"};
  return queue < kRpcQueues ? kNames[queue] : "unknown";
}

std::string_view to_string(RpcEvent::Kind kind) {
  switch (kind) {
    case RpcEvent::Kind::Done:
      return "done";
    case RpcEvent::Kind::Timeout:
      return "timeout";
    case RpcEvent::Kind::Abandoned:
      return "abandoned";
  }
  return "unknown";
}

std::string_view to_string(GpuCopyKind kind) {
  switch (kind) {
    case GpuCopyKind::HtoD:
      return "htod";
    case GpuCopyKind::DtoH:
      return "dtoh";
    case GpuCopyKind::DtoD:
      return "dtod";
    case GpuCopyKind::HtoH:
      return "htoh";
    case GpuCopyKind::PtoP:
      return "ptop";
    case GpuCopyKind::Other:
      return "other";
    case GpuCopyKind::Unknown:
      break;
  }
  return "unknown";
}

std::string_view to_string(GpuMemoryKind kind) {
  switch (kind) {
    case GpuMemoryKind::Pageable:
      return "pageable";
    case GpuMemoryKind::Pinned:
      return "pinned";
    case GpuMemoryKind::Device:
      return "device";
    case GpuMemoryKind::Managed:
      return "managed";
    case GpuMemoryKind::Array:
      return "array";
    case GpuMemoryKind::Unknown:
      break;
  }
  return "unknown";
}

uint64_t event_time_ns(const Event& e) {
  struct Visitor {
    uint64_t operator()(const IoEvent& x) const { return x.end_ns; }
    uint64_t operator()(const CpuEvent& x) const { return x.end_ns; }
    uint64_t operator()(const ProcEvent& x) const { return x.time_ns; }
    uint64_t operator()(const TcpEvent& x) const { return x.time_ns; }
    uint64_t operator()(const CallStartEvent& x) const { return x.start_ns; }
    uint64_t operator()(const NfsIoEvent& x) const { return x.end_ns; }
    uint64_t operator()(const RpcEvent& x) const { return x.time_ns; }
    uint64_t operator()(const GpuCopyEvent& x) const { return x.end_ns; }
    uint64_t operator()(const OtherIoEvent& x) const { return x.end_ns; }
    uint64_t operator()(const CallEndEvent& x) const { return x.time_ns; }
    uint64_t operator()(const StorageBusyEvent& x) const { return x.end_ns; }
  };
  return std::visit(Visitor{}, e);
}

}  // namespace ckpt
