// The exporter's HTTP side: prometheus-cpp's Exposer serves /metrics from
// the registry (its civetweb threads call Collect; the metric objects are
// thread-safe), and a civetweb begin_request callback serves the short
// index page on "/", as node_exporter does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <prometheus/registry.h>

#include "apps/exporter/listen_address.h"
#include "common/expected.h"

namespace prometheus {
class Exposer;
}

namespace ckpt {

// How the HTTP side stays responsive to Prometheus with idle, slow or
// hostile clients around (issue 22; docs/exporter.md "HTTP limits"). civetweb
// serves one connection per worker thread: with too few threads, a handful
// of connections that never finish their request starve every scrape.
struct HttpLimits {
  // Connections served at once (one worker thread each, all started up front).
  int worker_threads = 64;
  // Accepted connections waiting for a worker; past it the kernel's listen
  // backlog holds them, and past that they are refused.
  int connection_queue = 64;
  int listen_backlog = 128;
  // A connection that has not sent its whole request (or not read the
  // answer) within this long is closed: idle and slow clients give their
  // thread back.
  int request_timeout_ms = 5000;
  // Keep-alive is off (one request per connection: a thread is never held
  // between scrapes); the timeout is set anyway, should it be turned on.
  bool keep_alive = false;
  int keep_alive_timeout_ms = 500;
  // The largest request header accepted.
  int max_request_bytes = 16384;
};

// civetweb's options for an Exposer at `address` with `limits`.
std::vector<std::string> civetweb_options(const ListenAddress& address, const HttpLimits& limits);

class MetricsServer {
 public:
  // One per process (civetweb's request callback has no user data to find
  // its server by). An error names the address and why.
  static Expected<std::unique_ptr<MetricsServer>> start(
      const ListenAddress& address, const std::shared_ptr<prometheus::Registry>& registry,
      std::string index_html, const HttpLimits& limits = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

 private:
  MetricsServer() = default;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

// Whether the HTTP server can listen there: Debian's civetweb (1.15) is built
// without IPv6, so an IPv6 address is refused up front with the reason (and
// ":PORT" means every IPv4 address there).
Expected<void> check_http_supports(const ListenAddress& address);

// The page on "/": what this is and where the metrics are.
std::string exporter_index_html(const std::string& version);

}  // namespace ckpt
