#include "sources/gpu_copy_source.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "cupti/gpu_copy_record.h"

namespace ckpt {
namespace {

GpuCopyKind copy_kind(uint32_t k) {
  switch (k) {
    case CKPT_GPU_COPY_HTOD:
      return GpuCopyKind::HtoD;
    case CKPT_GPU_COPY_DTOH:
      return GpuCopyKind::DtoH;
    case CKPT_GPU_COPY_DTOD:
      return GpuCopyKind::DtoD;
    case CKPT_GPU_COPY_HTOH:
      return GpuCopyKind::HtoH;
    case CKPT_GPU_COPY_PTOP:
      return GpuCopyKind::PtoP;
    case CKPT_GPU_COPY_OTHER:
      return GpuCopyKind::Other;
    default:
      return GpuCopyKind::Unknown;
  }
}

GpuMemoryKind memory_kind(uint32_t k) {
  switch (k) {
    case CKPT_GPU_MEM_PAGEABLE:
      return GpuMemoryKind::Pageable;
    case CKPT_GPU_MEM_PINNED:
      return GpuMemoryKind::Pinned;
    case CKPT_GPU_MEM_DEVICE:
      return GpuMemoryKind::Device;
    case CKPT_GPU_MEM_MANAGED:
      return GpuMemoryKind::Managed;
    case CKPT_GPU_MEM_ARRAY:
      return GpuMemoryKind::Array;
    default:
      return GpuMemoryKind::Unknown;
  }
}

std::string c_string(const char* s, size_t max) { return std::string(s, strnlen(s, max)); }

}  // namespace

std::vector<std::string> GpuCopySource::device_pci_addresses() const {
  std::vector<std::string> out;
  for (const auto& [device, pci] : pci_by_device_) out.push_back(pci);
  return out;
}

std::string gpu_pci_address(uint32_t domain, uint32_t bus, uint32_t device) {
  return fmt::format("{:04x}:{:02x}:{:02x}.0", domain, bus, device);
}

Expected<std::unique_ptr<GpuCopySource>> GpuCopySource::listen(EventSink& sink,
                                                               const std::string& parent) {
  std::unique_ptr<GpuCopySource> s(new GpuCopySource(sink));
  std::string tmpl = parent + "/ckptscope-cupti-XXXXXX";
  if (!mkdtemp(tmpl.data()))
    return make_error(fmt::format("gpu_copy socket: cannot create a directory in {}: {}", parent,
                                  std::strerror(errno)));
  s->dir_ = tmpl;
  s->socket_path_ = s->dir_ + "/copies.sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (s->socket_path_.size() >= sizeof(addr.sun_path))
    return make_error(fmt::format("gpu_copy socket: {} is too long a path", s->socket_path_));
  std::memcpy(addr.sun_path, s->socket_path_.c_str(), s->socket_path_.size() + 1);
  s->listen_fd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s->listen_fd_ < 0 ||
      bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(s->listen_fd_, 64) != 0)
    return make_error(fmt::format("gpu_copy socket {}: {}", s->socket_path_, std::strerror(errno)));
  return s;
}

GpuCopySource::~GpuCopySource() {
  for (int fd : clients_) close(fd);
  if (listen_fd_ >= 0) close(listen_fd_);
  if (!socket_path_.empty()) unlink(socket_path_.c_str());
  if (!dir_.empty()) rmdir(dir_.c_str());
}

void GpuCopySource::poll(uint64_t /*now_ns*/) {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;
    clients_.push_back(fd);
  }
  std::vector<char> buf(CKPT_GPU_MAX_DATAGRAM);
  for (auto it = clients_.begin(); it != clients_.end();) {
    bool closed = false;
    for (;;) {
      const ssize_t n = recv(*it, buf.data(), buf.size(), MSG_TRUNC);
      if (n > 0) {
        if (static_cast<size_t>(n) > buf.size())
          ++malformed_;  // larger than the protocol allows: cut, so skipped whole
        else
          on_datagram(buf.data(), static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      closed = n == 0 || (n < 0 && errno != EAGAIN);
      break;
    }
    if (closed) {
      close(*it);
      it = clients_.erase(it);
    } else {
      ++it;
    }
  }
}

void GpuCopySource::on_datagram(const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  size_t at = 0;
  while (at < size) {
    if (size - at < sizeof(ckpt_gpu_msg_header)) {
      ++malformed_;
      return;
    }
    ckpt_gpu_msg_header h{};
    std::memcpy(&h, p + at, sizeof(h));
    if (h.size < sizeof(h) || h.size > size - at) {
      ++malformed_;
      return;  // the rest of this datagram cannot be framed
    }
    on_message(p + at, h.size);
    at += h.size;
  }
}

void GpuCopySource::on_message(const void* data, size_t size) {
  ckpt_gpu_msg_header h{};
  std::memcpy(&h, data, sizeof(h));
  if (h.version != CKPT_GPU_PROTOCOL_VERSION) {
    ++malformed_;
    return;
  }
  switch (h.kind) {
    case CKPT_GPU_MSG_HELLO: {
      if (size != sizeof(ckpt_gpu_hello)) break;
      ckpt_gpu_hello m{};
      std::memcpy(&m, data, sizeof(m));
      ProcessStatus st{h.pid, m.status == CKPT_GPU_OK, c_string(m.message, sizeof(m.message))};
      if (!st.ok && st.message.empty()) st.message = fmt::format("status {}", m.status);
      statuses_.push_back(st);
      if (on_status_) on_status_(st);
      return;
    }
    case CKPT_GPU_MSG_DEVICE: {
      if (size != sizeof(ckpt_gpu_device_record)) break;
      ckpt_gpu_device_record d{};
      std::memcpy(&d, data, sizeof(d));
      // The library sends 0xffffffff for an address it could not find
      // (CUpti_ActivityDevice5 has none; it asks procfs and the driver).
      if (d.pci_domain != UINT32_MAX && d.pci_bus != UINT32_MAX && d.pci_device != UINT32_MAX)
        pci_by_device_[d.device_id] = gpu_pci_address(d.pci_domain, d.pci_bus, d.pci_device);
      return;
    }
    case CKPT_GPU_MSG_COPY: {
      if (size != sizeof(ckpt_gpu_copy_record)) break;
      ckpt_gpu_copy_record r{};
      std::memcpy(&r, data, sizeof(r));
      if (r.end_ns < r.start_ns) break;
      if (r.start_ns == 0 && r.end_ns == 0) {
        ++untimed_;  // CUPTI could not time it: no place on the timeline
        return;
      }
      GpuCopyEvent ev;
      ev.start_ns = r.start_ns;
      ev.end_ns = r.end_ns;
      ev.tgid = h.pid;
      ev.bytes = r.bytes;
      ev.copy_count = r.copy_count == 0 ? 1 : r.copy_count;
      ev.kind = copy_kind(r.copy_kind);
      ev.src = memory_kind(r.src_kind);
      ev.dst = memory_kind(r.dst_kind);
      ev.async = (r.flags & CKPT_GPU_COPY_ASYNC) != 0;
      ev.device_id = r.device_id;
      ev.stream_id = r.stream_id;
      if (auto it = pci_by_device_.find(r.device_id); it != pci_by_device_.end())
        ev.pci_address = it->second;
      ++copies_;
      emit(std::move(ev));
      return;
    }
    case CKPT_GPU_MSG_DROPS: {
      if (size != sizeof(ckpt_gpu_drops)) break;
      ckpt_gpu_drops d{};
      std::memcpy(&d, data, sizeof(d));
      library_drops_[h.pid] = {d.cupti_dropped, d.buffers_refused, d.send_dropped,
                               d.unknown_records};
      return;
    }
    default:
      break;
  }
  ++malformed_;
}

std::vector<DropRecord> GpuCopySource::drops() const {
  LibraryDrops sum;
  for (const auto& [pid, d] : library_drops_) {
    sum.cupti_dropped += d.cupti_dropped;
    sum.buffers_refused += d.buffers_refused;
    sum.send_dropped += d.send_dropped;
    sum.unknown_records += d.unknown_records;
  }
  // buffers_refused is not a count of records: CUPTI counts the records it
  // then dropped in activity_dropped.
  return {DropRecord{"cupti", "activity_dropped", sum.cupti_dropped},
          DropRecord{"cupti", "send_dropped", sum.send_dropped},
          DropRecord{"cupti", "malformed_message", malformed_},
          DropRecord{"cupti", "untimed_copy", untimed_}};
}

}  // namespace ckpt
