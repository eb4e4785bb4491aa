// The exporter's HTTP/1.1 server (issue 36): one thread, one epoll loop,
// non-blocking sockets. A connection that is idle, slow or unfinished costs
// a file descriptor and its buffered bytes, never a thread, and a complete
// request is answered in the loop turn that reads it: however many
// connections sit idle, a scrape waits for none of them
// (docs/exporter.md, "HTTP limits").
//
// The connections the process can hold are bounded (HttpLimits::
// max_connections, by default from RLIMIT_NOFILE): at the bound, or when
// accept() finds no file descriptor left, the connection idle longest
// without a complete request is closed to admit the new one; when none can
// be closed, a descriptor kept in reserve lets the new one be accepted and
// closed at once, so the listen queue never wedges.
#pragma once

#include <sys/resource.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "apps/exporter/listen_address.h"
#include "common/expected.h"

namespace ckpt {

struct HttpLimits {
  // Connections held at once; 0 = connection_limit_for(RLIMIT_NOFILE).
  size_t max_connections = 0;
  // A connection that has not sent a whole request head this long after
  // it connected (or after the first byte of its next request) is closed.
  uint64_t request_timeout_ms = 5000;
  // An answer the client has not read whole within this long: closed.
  uint64_t write_timeout_ms = 10000;
  // A kept-alive connection's wait for its next request. Longer than
  // Prometheus's default scrape interval (1 m), so its connection is reused.
  uint64_t keep_alive_timeout_ms = 120000;
  // After the last answer on a connection, the wait for the client to close
  // (what it still sends is read and dropped): closing with unread bytes
  // would reset the connection, which can destroy the answer in flight.
  uint64_t linger_ms = 1000;
  // A request head (request line and header fields) past this: 431.
  size_t max_request_head_bytes = 16384;
  int listen_backlog = 1024;
};

// Descriptors left to the rest of the process (probes, maps, /proc reads,
// registration clients) when the bound comes from RLIMIT_NOFILE.
inline constexpr size_t kFdsKeptForTheRest = 256;
// At most this many connections whatever the limit: each may hold up to a
// request head's bytes (64 MiB at 4096 × 16 KiB).
inline constexpr size_t kMaxConnectionLimit = 4096;
inline constexpr size_t kMinConnectionLimit = 16;

// The default bound for a process allowed `open_files` descriptors: what
// is left beyond kFdsKeptForTheRest (half of them when fewer), within
// [kMinConnectionLimit, kMaxConnectionLimit].
size_t connection_limit_for(rlim_t open_files);

struct HttpRequest {
  std::string_view method;  // GET or HEAD: the server answers any other itself (405)
  std::string_view path;    // without the query
  bool accepts_gzip = false;
};

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string content_encoding;  // "gzip" when the body is
  std::string body;              // left out of the answer to a HEAD
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// Why a connection was closed: the `reason` label values of
// ckptscope_http_connections_closed_total (deploy/metrics.md).
enum class HttpCloseReason {
  kAnswered,          // after its last answer (Connection: close, HTTP/1.0, a request body)
  kPeerClosed,        // the client closed or reset it
  kRequestTimeout,    // no whole request head within request_timeout_ms
  kKeepAliveTimeout,  // no next request within keep_alive_timeout_ms
  kWriteTimeout,      // the answer not read within write_timeout_ms
  kEvicted,           // closed to admit a new connection (the bound, or no descriptor left)
  kRefused,           // a new connection accepted and closed at once: nothing could be evicted
  kTooLarge,          // a request head past max_request_head_bytes (answered 431)
  kMalformed,         // a request that is not HTTP/1.x (answered 400 or 505)
};
inline constexpr std::array kHttpCloseReasons = {
    HttpCloseReason::kAnswered,       HttpCloseReason::kPeerClosed,
    HttpCloseReason::kRequestTimeout, HttpCloseReason::kKeepAliveTimeout,
    HttpCloseReason::kWriteTimeout,   HttpCloseReason::kEvicted,
    HttpCloseReason::kRefused,        HttpCloseReason::kTooLarge,
    HttpCloseReason::kMalformed};
std::string_view close_reason_name(HttpCloseReason reason);

// Every status the server answers with (a handler adds its own).
inline constexpr std::array kHttpServerStatuses = {400, 405, 431, 500, 505};

// What the server tells its owner, from its thread.
struct HttpServerHooks {
  std::function<void(int status)> answered;
  std::function<void(HttpCloseReason)> closed;
  std::function<void(size_t open)> open_connections;  // when the count changed in a turn
};

class HttpServer {
 public:
  // Listens on `address` (an error names it and why: "in use", "not one of
  // this host's") and serves from a thread of its own, calling `handler`
  // on that thread for each GET or HEAD.
  static Expected<std::unique_ptr<HttpServer>> start(const ListenAddress& address,
                                                     HttpHandler handler,
                                                     const HttpLimits& limits = {},
                                                     HttpServerHooks hooks = {});
  // Stops the loop and closes every connection.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  [[nodiscard]] size_t connection_limit() const;

 private:
  struct Loop;
  explicit HttpServer(std::unique_ptr<Loop> loop);
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace ckpt
