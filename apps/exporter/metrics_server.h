// The exporter's HTTP side: "/metrics", the registry in the text format
// (gzip'd when the scraper allows it), and "/", a short page saying what
// this is, as node_exporter's. Served by the event-driven HttpServer
// (apps/exporter/http_server.h): idle and slow clients cost no thread, so
// none can delay a scrape. The server's own counts (answers by status,
// connections closed by why, connections open) are metrics in the same
// registry (exporters/prometheus/http_metrics.h).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <prometheus/registry.h>

#include "apps/exporter/http_server.h"
#include "apps/exporter/listen_address.h"
#include "common/expected.h"

namespace ckpt {

class HttpMetrics;

// The text exposition format's media type (version 0.0.4).
inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

class MetricsServer {
 public:
  // Serves `registry` at `address` from now on: start it once the first
  // collection is done, so a scrape never sees a partial set of families.
  // An error names the address and why ("in use", "not one of this host's").
  static Expected<std::unique_ptr<MetricsServer>> start(
      const ListenAddress& address, const std::shared_ptr<prometheus::Registry>& registry,
      std::string index_html, const HttpLimits& limits = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The bound on connections held at once (HttpLimits::max_connections).
  [[nodiscard]] size_t connection_limit() const;

 private:
  MetricsServer() = default;
  std::unique_ptr<HttpMetrics> metrics_;
  // Declared after metrics_, so destroyed first: its thread counts into them.
  std::unique_ptr<HttpServer> server_;
};

// The answer to a GET of `request.path`: "/metrics", "/", or 404.
HttpResponse metrics_response(const HttpRequest& request, const prometheus::Registry& registry,
                              const std::string& index_html);

// The page on "/": what this is and where the metrics are.
std::string exporter_index_html(const std::string& version);

}  // namespace ckpt
