// The client end of the exporter's socket (probes/forward_protocol.h), shared
// by ExporterFeed (`run`/`attach`: records) and FailureReporter (`logwatch`:
// failures): connect, send the register request, read its one-line answer.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.h"

namespace ckpt {

struct ExporterConnection {
  int fd = -1;            // the caller's to close; non-blocking once returned
  nlohmann::json answer;  // {"ok":true,...}
  std::string pending;    // bytes after the answer line (the first frames)
};

// Connects to `socket_path`, sends `hello` (a register request), and waits up
// to `timeout_ms` for the answer. An error when nothing listens there, it
// does not answer, or it refused (with its reason); the fd is closed then.
Expected<ExporterConnection> connect_to_exporter(const std::string& socket_path,
                                                 const nlohmann::json& hello, int timeout_ms);

// Sends one JSON line (a newline is added), waiting at most 2 s on a full
// socket. The error names the socket.
Expected<void> send_exporter_line(int fd, const std::string& socket_path, const std::string& line);

// Milliseconds left until `deadline_ns` (CLOCK_MONOTONIC), rounded up; 0 when past.
int exporter_ms_left(uint64_t deadline_ns);

}  // namespace ckpt
