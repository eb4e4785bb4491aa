#include "apps/exporter/metrics_server.h"

#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <prometheus/text_serializer.h>

#include "apps/exporter/gzip.h"
#include "exporters/prometheus/http_metrics.h"

namespace ckpt {

HttpResponse metrics_response(const HttpRequest& request, const prometheus::Registry& registry,
                              const std::string& index_html) {
  if (request.path == "/metrics") {
    std::ostringstream text;
    prometheus::TextSerializer().Serialize(text, registry.Collect());
    HttpResponse response{200, std::string(kMetricsContentType), "", text.str()};
    if (request.accepts_gzip) {
      // Should zlib fail, the text goes as it is: a scrape is never lost to it.
      if (auto compressed = gzip_compress(response.body)) {
        response.body = std::move(*compressed);
        response.content_encoding = "gzip";
      }
    }
    return response;
  }
  if (request.path == "/") return {200, "text/html; charset=utf-8", "", index_html};
  return {404, "text/plain; charset=utf-8", "", "not found: the metrics are at /metrics\n"};
}

std::string exporter_index_html(const std::string& version) {
  return fmt::format(
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>ckptscope exporter</title></head>\n<body>\n<h1>ckptscope exporter</h1>\n"
      "<p>Checkpoint I/O of every job on this node, from the job's calls to the NFS "
      "server, as Prometheus metrics.</p>\n"
      "<p><a href=\"/metrics\">/metrics</a></p>\n<p>Version {}.</p>\n</body></html>\n",
      version);
}

Expected<std::unique_ptr<MetricsServer>> MetricsServer::start(
    const ListenAddress& address, const std::shared_ptr<prometheus::Registry>& registry,
    std::string index_html, const HttpLimits& limits) {
  std::vector<int> codes = {200, 404};
  codes.insert(codes.end(), kHttpServerStatuses.begin(), kHttpServerStatuses.end());
  std::vector<std::string_view> reasons;
  reasons.reserve(kHttpCloseReasons.size());
  for (HttpCloseReason reason : kHttpCloseReasons) reasons.push_back(close_reason_name(reason));
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->metrics_ = std::make_unique<HttpMetrics>(*registry, codes, reasons);

  HttpMetrics* metrics = server->metrics_.get();
  HttpServerHooks hooks;
  hooks.answered = [metrics](int status) { metrics->count_request(status); };
  hooks.closed = [metrics](HttpCloseReason reason) {
    metrics->count_closed(close_reason_name(reason));
  };
  hooks.open_connections = [metrics](size_t open) { metrics->set_open_connections(open); };
  auto handler = [registry, page = std::move(index_html)](const HttpRequest& request) {
    return metrics_response(request, *registry, page);
  };
  auto http = HttpServer::start(address, std::move(handler), limits, std::move(hooks));
  if (!http) return http.error();
  server->server_ = std::move(*http);
  metrics->set_connection_limit(server->server_->connection_limit());
  return server;
}

MetricsServer::~MetricsServer() = default;

size_t MetricsServer::connection_limit() const { return server_->connection_limit(); }

}  // namespace ckpt
