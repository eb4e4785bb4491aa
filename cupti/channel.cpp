#include "channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "cupti_api.h"

// The wire layouts (cupti/gpu_copy_record.h), as the collector decodes them.
static_assert(sizeof(ckpt_gpu_msg_header) == 16);
static_assert(sizeof(ckpt_gpu_hello) == 296);
static_assert(offsetof(ckpt_gpu_hello, clock_offset_ns) == 32);
static_assert(offsetof(ckpt_gpu_hello, message) == 40);
static_assert(sizeof(ckpt_gpu_copy_record) == 88);
static_assert(offsetof(ckpt_gpu_copy_record, start_ns) == 16);
static_assert(offsetof(ckpt_gpu_copy_record, copy_kind) == 48);
static_assert(offsetof(ckpt_gpu_copy_record, correlation_id) == 84);
static_assert(sizeof(ckpt_gpu_device_record) == 120);
static_assert(offsetof(ckpt_gpu_device_record, global_memory_bytes) == 32);
static_assert(offsetof(ckpt_gpu_device_record, uuid) == 104);
static_assert(sizeof(ckpt_gpu_drops) == 56);
static_assert(offsetof(ckpt_gpu_drops, send_dropped) == 32);
static_assert(offsetof(ckpt_gpu_drops, records_sent) == 48);

namespace ckpt::cupti {

Channel::Channel(int fd, uint32_t pid, size_t spool_bytes)
    : fd_(fd), pid_(pid), spool_limit_(spool_bytes) {
  batch_.bytes.reserve(CKPT_GPU_MAX_DATAGRAM);
}

Channel::~Channel() {
  if (fd_ >= 0) ::close(fd_);
}

bool Channel::in_owner_process() const { return static_cast<uint32_t>(::getpid()) == pid_; }

template <typename T>
void Channel::append(uint32_t kind, T msg, bool is_copy, bool is_device) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= CKPT_GPU_MAX_DATAGRAM);
  msg.hdr.kind = kind;
  msg.hdr.size = sizeof(T);
  msg.hdr.pid = pid_;
  msg.hdr.version = CKPT_GPU_PROTOCOL_VERSION;
  if (gone_ || fd_ < 0) {
    if (is_copy || is_device) ++send_dropped_;
    return;
  }
  if (batch_.bytes.size() + sizeof(T) > CKPT_GPU_MAX_DATAGRAM) {
    seal();
    transmit();
    if (gone_) {
      if (is_copy || is_device) ++send_dropped_;
      return;
    }
  }
  const size_t at = batch_.bytes.size();
  batch_.bytes.resize(at + sizeof(T));
  std::memcpy(batch_.bytes.data() + at, &msg, sizeof(T));
  if (is_copy) ++batch_.copies;
  if (is_device) ++batch_.devices;
  if (kind == CKPT_GPU_MSG_DROPS) {
    batch_.drops_at = static_cast<long>(at);
    seal();  // a DROPS message ends its datagram: its figures are filled in as that one leaves
  }
}

void Channel::hello(ckpt_gpu_hello msg) {
  std::lock_guard lock(mu_);
  msg.hdr = {CKPT_GPU_MSG_HELLO, sizeof(msg), pid_, CKPT_GPU_PROTOCOL_VERSION};
  if (gone_ || fd_ < 0 || hello_sent_) return;
  Datagram d;
  d.bytes.resize(sizeof(msg));
  std::memcpy(d.bytes.data(), &msg, sizeof(msg));
  spool_bytes_ += d.bytes.size();
  spool_.push_front(std::move(d));
  hello_sent_ = true;
  transmit();
}

void Channel::copy(ckpt_gpu_copy_record msg) {
  std::lock_guard lock(mu_);
  append(CKPT_GPU_MSG_COPY, msg, true, false);
}

void Channel::device(ckpt_gpu_device_record msg) {
  std::lock_guard lock(mu_);
  append(CKPT_GPU_MSG_DEVICE, msg, false, true);
}

void Channel::drops(ckpt_gpu_drops msg) {
  std::lock_guard lock(mu_);
  append(CKPT_GPU_MSG_DROPS, msg, false, false);
}

void Channel::seal() {
  if (batch_.bytes.empty()) return;
  Datagram d = std::move(batch_);
  batch_ = Datagram{};
  batch_.bytes.reserve(CKPT_GPU_MAX_DATAGRAM);
  if (spool_bytes_ + d.bytes.size() > spool_limit_) {
    // The collector has not read for a while: keep what is queued (in
    // order) and drop the newest, counted.
    send_dropped_ += d.copies + d.devices;
    return;
  }
  spool_bytes_ += d.bytes.size();
  spool_.push_back(std::move(d));
}

void Channel::lose_everything() {
  if (!gone_) log_line("the collector is gone: copies from here on are counted as send_dropped");
  gone_ = true;
  for (const Datagram& d : spool_) send_dropped_ += d.copies + d.devices;
  spool_.clear();
  spool_bytes_ = 0;
  send_dropped_ += batch_.copies + batch_.devices;
  batch_ = Datagram{};
}

void Channel::transmit() {
  if (!hello_sent_ || gone_ || fd_ < 0 || !in_owner_process()) return;
  while (!spool_.empty()) {
    Datagram& d = spool_.front();
    if (d.drops_at >= 0) {
      // Filled in now: exactly what reached the socket before this message.
      ckpt_gpu_drops m;
      std::memcpy(&m, d.bytes.data() + d.drops_at, sizeof(m));
      m.send_dropped = send_dropped_;
      m.records_sent = records_sent_ + d.copies;
      std::memcpy(d.bytes.data() + d.drops_at, &m, sizeof(m));
    }
    const ssize_t n = ::send(fd_, d.bytes.data(), d.bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) {
      // SOCK_SEQPACKET sends a datagram whole or not at all.
      records_sent_ += d.copies;
      ++datagrams_sent_;
      spool_bytes_ -= d.bytes.size();
      spool_.pop_front();
      continue;
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS || err == ENOMEM)
      return;  // the collector is behind: retried at the next flush
    if (err == EPIPE || err == ECONNREFUSED || err == ECONNRESET || err == ENOTCONN) {
      lose_everything();
      return;
    }
    // Anything else is about this datagram, not the socket: drop it, counted.
    static std::atomic<bool> logged{false};
    if (!logged.exchange(true))
      log_line(std::string("send to the collector failed: ") + std::strerror(err) +
               " (that datagram's records are counted as send_dropped)");
    send_dropped_ += d.copies + d.devices;
    spool_bytes_ -= d.bytes.size();
    spool_.pop_front();
  }
}

void Channel::flush() {
  std::lock_guard lock(mu_);
  seal();
  transmit();
}

bool Channel::drain(std::chrono::milliseconds budget) {
  std::lock_guard lock(mu_);
  seal();
  transmit();
  const auto deadline = std::chrono::steady_clock::now() + budget;
  while (!spool_.empty() && !gone_ && fd_ >= 0 && hello_sent_ && in_owner_process()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd_, POLLOUT, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno != EINTR) break;
    transmit();
  }
  return spool_.empty() && batch_.bytes.empty();
}

void Channel::close() {
  std::lock_guard lock(mu_);
  for (const Datagram& d : spool_) send_dropped_ += d.copies + d.devices;
  spool_.clear();
  spool_bytes_ = 0;
  send_dropped_ += batch_.copies + batch_.devices;
  batch_ = Datagram{};
  gone_ = true;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

uint64_t Channel::send_dropped() const {
  std::lock_guard lock(mu_);
  return send_dropped_;
}
uint64_t Channel::records_sent() const {
  std::lock_guard lock(mu_);
  return records_sent_;
}
uint64_t Channel::datagrams_sent() const {
  std::lock_guard lock(mu_);
  return datagrams_sent_;
}
size_t Channel::spooled_bytes() const {
  std::lock_guard lock(mu_);
  return spool_bytes_;
}
bool Channel::peer_gone() const {
  std::lock_guard lock(mu_);
  return gone_;
}

namespace {

template <typename T>
bool take(const uint8_t* p, size_t size, std::vector<Message>& out) {
  if (size != sizeof(T)) return false;
  T m;
  std::memcpy(&m, p, sizeof(T));
  out.emplace_back(m);
  return true;
}

}  // namespace

ParsedDatagram parse_datagram(const uint8_t* data, size_t size) {
  ParsedDatagram r;
  size_t at = 0;
  while (at < size) {
    if (size - at < sizeof(ckpt_gpu_msg_header)) {
      r.error = "a partial header at byte " + std::to_string(at);
      return r;
    }
    ckpt_gpu_msg_header h;
    std::memcpy(&h, data + at, sizeof(h));
    if (h.size < sizeof(h) || h.size > size - at) {
      r.error = "message size " + std::to_string(h.size) + " at byte " + std::to_string(at);
      return r;
    }
    if (h.version != CKPT_GPU_PROTOCOL_VERSION) {
      r.error = "protocol version " + std::to_string(h.version);
      return r;
    }
    bool ok = false;
    switch (h.kind) {
      case CKPT_GPU_MSG_HELLO:
        ok = take<ckpt_gpu_hello>(data + at, h.size, r.messages);
        break;
      case CKPT_GPU_MSG_COPY:
        ok = take<ckpt_gpu_copy_record>(data + at, h.size, r.messages);
        break;
      case CKPT_GPU_MSG_DEVICE:
        ok = take<ckpt_gpu_device_record>(data + at, h.size, r.messages);
        break;
      case CKPT_GPU_MSG_DROPS:
        ok = take<ckpt_gpu_drops>(data + at, h.size, r.messages);
        break;
      default:
        break;
    }
    if (!ok) {
      r.error = "kind " + std::to_string(h.kind) + " of size " + std::to_string(h.size);
      return r;
    }
    at += h.size;
  }
  return r;
}

}  // namespace ckpt::cupti
