#include "apps/exporter/metrics_server.h"

#include <cstring>
#include <mutex>
#include <stdexcept>

#include <CivetServer.h>
#include <civetweb.h>
#include <fmt/format.h>
#include <prometheus/exposer.h>

namespace ckpt {
namespace {

// civetweb's callbacks carry no pointer of ours: the page and the last
// error live here (MetricsServer is one per process).
std::mutex g_mutex;
std::string g_index_html;
std::string g_last_error;

int on_begin_request(mg_connection* conn) {
  const mg_request_info* info = mg_get_request_info(conn);
  if (!info || !info->local_uri || std::strcmp(info->local_uri, "/") != 0) return 0;
  std::string page;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    page = g_index_html;
  }
  mg_printf(conn,
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            "Content-Length: %zu\r\nConnection: close\r\n\r\n",
            page.size());
  if (std::strcmp(info->request_method, "HEAD") != 0) mg_write(conn, page.data(), page.size());
  return 200;  // handled
}

int on_log_message(const mg_connection* /*conn*/, const char* message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_last_error = message ? message : "";
  return 1;  // civetweb prints nothing itself
}

}  // namespace

Expected<void> check_http_supports(const ListenAddress& address) {
  constexpr unsigned kIpv6Feature = 8;  // civetweb.h, mg_check_feature
  if (address.v6 && mg_check_feature(kIpv6Feature) == 0)
    return make_error(fmt::format(
        "'{}': this build's HTTP server (civetweb as the distribution built it) has no IPv6; "
        "give an IPv4 address, or :{} for every IPv4 address",
        address.display(), address.port));
  return {};
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

std::vector<std::string> civetweb_options(const ListenAddress& address, const HttpLimits& limits) {
  return {"listening_ports",       address.civetweb(),
          "num_threads",           std::to_string(limits.worker_threads),
          "connection_queue",      std::to_string(limits.connection_queue),
          "listen_backlog",        std::to_string(limits.listen_backlog),
          "request_timeout_ms",    std::to_string(limits.request_timeout_ms),
          "enable_keep_alive",     limits.keep_alive ? "yes" : "no",
          "keep_alive_timeout_ms", std::to_string(limits.keep_alive_timeout_ms),
          "max_request_size",      std::to_string(limits.max_request_bytes)};
}

Expected<std::unique_ptr<MetricsServer>> MetricsServer::start(
    const ListenAddress& address, const std::shared_ptr<prometheus::Registry>& registry,
    std::string index_html, const HttpLimits& limits) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_index_html = std::move(index_html);
    g_last_error.clear();
  }
  static CivetCallbacks callbacks;
  callbacks.begin_request = on_begin_request;
  callbacks.log_message = on_log_message;
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  try {
    server->exposer_ =
        std::make_unique<prometheus::Exposer>(civetweb_options(address, limits), &callbacks);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(g_mutex);
    return make_error(fmt::format("cannot listen on {}: {}", address.display(),
                                  g_last_error.empty() ? e.what() : g_last_error));
  }
  server->exposer_->RegisterCollectable(registry, "/metrics");
  return server;
}

MetricsServer::~MetricsServer() = default;

}  // namespace ckpt
