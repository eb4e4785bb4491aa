// The library's side of the socket to the collector (cupti/gpu_copy_record.h):
// messages batched into datagrams of at most CKPT_GPU_MAX_DATAGRAM bytes,
// sent without ever blocking the job.
//
// - Sends are MSG_DONTWAIT | MSG_NOSIGNAL: a full socket answers EAGAIN, a
//   gone collector EPIPE (never SIGPIPE in the job).
// - EAGAIN (the collector is behind): the datagram waits in a bounded spool,
//   retried at the next flush, in order. A datagram that would take the
//   spool past its bound is dropped and its records counted in send_dropped.
// - EPIPE, ECONNREFUSED, ECONNRESET, ENOTCONN (the collector is gone): the
//   channel stops sending; what is spooled and every later record count as
//   send_dropped.
// - The HELLO always goes first, whatever was queued before it.
// - A DROPS message's records_sent and send_dropped are filled in at the
//   moment its datagram is sent, so records_sent is exactly the number of
//   copy records that reached the socket before it.
//
// A process forked from the job inherits the socket and this object; it
// never sends (its copy of the spool would duplicate the parent's records).
//
// Thread-safe: CUPTI's completion callback and the flush thread both use it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "gpu_copy_record.h"

namespace ckpt::cupti {

class Channel {
 public:
  static constexpr size_t kDefaultSpoolBytes = size_t{8} << 20;

  // Takes the connected SOCK_SEQPACKET socket (closed by close() or the
  // destructor). `pid` goes in every header.
  Channel(int fd, uint32_t pid, size_t spool_bytes = kDefaultSpoolBytes);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // The header (kind, size, pid, version) is filled in here.
  void hello(ckpt_gpu_hello msg);
  void copy(ckpt_gpu_copy_record msg);
  void device(ckpt_gpu_device_record msg);
  // cupti_dropped, buffers_refused and unknown_records from `msg`; the
  // channel's own send_dropped and records_sent when the datagram leaves.
  void drops(ckpt_gpu_drops msg);

  // Closes the datagram being filled and sends what the socket takes now.
  void flush();
  // flush(), then waits up to `budget` for the socket to take the rest (at
  // exit only: the job is leaving anyway). True when nothing is left.
  bool drain(std::chrono::milliseconds budget);
  // Counts what is still unsent as send_dropped and closes the socket.
  void close();

  [[nodiscard]] uint64_t send_dropped() const;
  [[nodiscard]] uint64_t records_sent() const;  // copy records that reached the socket
  [[nodiscard]] uint64_t datagrams_sent() const;
  [[nodiscard]] size_t spooled_bytes() const;
  [[nodiscard]] bool peer_gone() const;

 private:
  struct Datagram {
    std::vector<uint8_t> bytes;
    uint32_t copies = 0;   // copy records in it
    uint32_t devices = 0;  // device records in it
    long drops_at = -1;    // offset of its DROPS message (always the last), or -1
  };

  template <typename T>
  void append(uint32_t kind, T msg, bool is_copy, bool is_device);
  void seal();      // the batch into the spool (or dropped past the bound)
  void transmit();  // the spool into the socket, as far as it goes
  void lose_everything();
  [[nodiscard]] bool in_owner_process() const;

  mutable std::mutex mu_;
  int fd_;
  const uint32_t pid_;
  const size_t spool_limit_;
  Datagram batch_;
  std::deque<Datagram> spool_;
  size_t spool_bytes_ = 0;
  bool hello_sent_ = false;  // nothing leaves before the HELLO is queued
  bool gone_ = false;
  uint64_t send_dropped_ = 0;
  uint64_t records_sent_ = 0;
  uint64_t datagrams_sent_ = 0;
};

// Decoding, for tests and tools: the messages of one datagram, in order.
using Message =
    std::variant<ckpt_gpu_hello, ckpt_gpu_copy_record, ckpt_gpu_device_record, ckpt_gpu_drops>;
struct ParsedDatagram {
  std::vector<Message> messages;
  std::string error;  // empty when every byte was framed and every message known
};
ParsedDatagram parse_datagram(const uint8_t* data, size_t size);

}  // namespace ckpt::cupti
