// The exporter's own HTTP server as Prometheus metrics (deploy/metrics.md):
// answers by status code, connections closed by why, connections open and
// the bound on them. Registered in the registry /metrics serves, so a
// scrape shows what idle, slow or hostile clients cost (issue 36).
//
// Counted from the server's thread while scrapes read them: prometheus-cpp's
// families and metrics are safe for that.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace ckpt {

class HttpMetrics {
 public:
  // Each status of `codes` and reason of `reasons` exists at 0 from the
  // start, so rate() and alerts see them before the first one happens.
  HttpMetrics(prometheus::Registry& registry, const std::vector<int>& codes,
              const std::vector<std::string_view>& reasons);

  void count_request(int code);
  void count_closed(std::string_view reason);
  void set_open_connections(size_t open);
  void set_connection_limit(size_t limit);

 private:
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Counter>& closed_;
  prometheus::Gauge& open_;
  prometheus::Gauge& limit_;
};

}  // namespace ckpt
