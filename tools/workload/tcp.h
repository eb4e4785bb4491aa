// The TCP side: a client stream that emulates checkpoint traffic to a storage
// server (--tcp-sink) and the `sink` subcommand that plays the server.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "tools/workload/options.h"
#include "tools/workload/results.h"

namespace ckpt::workload {

// One connection per process, shared by that process's writer threads.
class TcpStream {
 public:
  // Connects to the first address of endpoint that accepts.
  static std::unique_ptr<TcpStream> connect(const Endpoint& endpoint,
                                            std::optional<IoFailure>& failure);
  ~TcpStream();
  TcpStream(const TcpStream&) = delete;
  TcpStream& operator=(const TcpStream&) = delete;

  // Sends all of data, looping over short sends. bytes_sent and send_calls
  // grow by what the kernel took, also when a send fails part way.
  std::optional<IoFailure> send_all(std::span<const std::byte> data, uint64_t& bytes_sent,
                                    uint64_t& send_calls);

  // Closes the socket, reporting a failed close; idempotent.
  std::optional<IoFailure> close();

  [[nodiscard]] const std::string& peer() const { return peer_; }

 private:
  TcpStream(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}

  int fd_;
  std::string peer_;  // "tcp HOST:PORT", the path used in failures
  // Writer threads send whole blocks under the lock so that bytes of one
  // block are contiguous on the wire and counts stay per shard.
  std::mutex mutex_;
};

// Runs the sink until all connections closed and the expected bytes arrived
// (or SIGTERM/SIGINT); prints {"bytes_received":N} on stdout and returns the
// exit code: 0, 1 on a socket error or a byte count other than expected.
int run_sink(const SinkOptions& options);

}  // namespace ckpt::workload
