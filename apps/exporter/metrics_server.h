// The exporter's HTTP side: prometheus-cpp's Exposer serves /metrics from
// the registry (its civetweb threads call Collect; the metric objects are
// thread-safe), and a civetweb begin_request callback serves the short
// index page on "/", as node_exporter does.
#pragma once

#include <memory>
#include <string>

#include <prometheus/registry.h>

#include "apps/exporter/listen_address.h"
#include "common/expected.h"

namespace prometheus {
class Exposer;
}

namespace ckpt {

class MetricsServer {
 public:
  // One per process (civetweb's request callback has no user data to find
  // its server by). An error names the address and why.
  static Expected<std::unique_ptr<MetricsServer>> start(
      const ListenAddress& address, const std::shared_ptr<prometheus::Registry>& registry,
      std::string index_html);
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
