// Shared by the cupti unit tests: real SOCK_SEQPACKET socket pairs, reading
// and decoding what the library sent, and activity buffers laid out as the
// CUDA 13 headers define them.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <variant>
#include <vector>

#include "channel.h"
#include "gpu_copy_record.h"

namespace ckpt::cupti::test {

// fds[0] for the library, fds[1] for the "collector".
struct SocketPair {
  int lib = -1;
  int peer = -1;
  SocketPair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds), 0);
    lib = fds[0];
    peer = fds[1];
  }
  ~SocketPair() {
    if (peer >= 0) ::close(peer);
    // `lib` belongs to the Channel under test.
  }
  void close_peer() {
    ::close(peer);
    peer = -1;
  }
};

struct Received {
  std::vector<Message> messages;
  size_t datagrams = 0;
  size_t largest = 0;
  bool eof = false;
  bool parse_ok = true;
};

// Everything readable now on `fd` (non-blocking), every datagram checked to
// be within CKPT_GPU_MAX_DATAGRAM and to decode whole.
inline Received receive_all(int fd, Received r = {}) {
  std::vector<uint8_t> buf(2 * CKPT_GPU_MAX_DATAGRAM);
  for (;;) {
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n == 0) {
      r.eof = true;
      break;
    }
    if (n < 0) break;
    ++r.datagrams;
    r.largest = std::max(r.largest, static_cast<size_t>(n));
    EXPECT_LE(static_cast<size_t>(n), size_t{CKPT_GPU_MAX_DATAGRAM});
    ParsedDatagram p = parse_datagram(buf.data(), std::min(static_cast<size_t>(n), buf.size()));
    if (!p.error.empty()) {
      r.parse_ok = false;
      ADD_FAILURE() << "datagram " << r.datagrams << ": " << p.error;
    }
    for (auto& m : p.messages) r.messages.push_back(m);
  }
  return r;
}

template <typename T>
std::vector<T> only(const std::vector<Message>& ms) {
  std::vector<T> out;
  for (const auto& m : ms)
    if (const T* t = std::get_if<T>(&m)) out.push_back(*t);
  return out;
}

// Writes activity records back to back from the start of `buffer`, as CUPTI
// does: each record's size is a multiple of ACTIVITY_RECORD_ALIGNMENT.
class BufferWriter {
 public:
  BufferWriter(uint8_t* buffer, size_t size) : buffer_(buffer), size_(size) {}
  template <typename T>
  bool add(const T& record) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 8 == 0);
    if (used_ + sizeof(T) > size_) return false;
    std::memcpy(buffer_ + used_, &record, sizeof(T));
    used_ += sizeof(T);
    return true;
  }
  [[nodiscard]] size_t used() const { return used_; }
  [[nodiscard]] bool room_for(size_t bytes) const { return used_ + bytes <= size_; }

 private:
  uint8_t* buffer_;
  size_t size_;
  size_t used_ = 0;
};

inline uint64_t mono_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace ckpt::cupti::test
