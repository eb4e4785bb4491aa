#include "exporters/prometheus/http_metrics.h"

namespace ckpt {

using prometheus::BuildCounter;
using prometheus::BuildGauge;

HttpMetrics::HttpMetrics(prometheus::Registry& registry, const std::vector<int>& codes,
                         const std::vector<std::string_view>& reasons)
    : requests_(BuildCounter()
                    .Name("ckptscope_http_requests_total")
                    .Help("HTTP requests the exporter answered, by status code")
                    .Register(registry)),
      closed_(BuildCounter()
                  .Name("ckptscope_http_connections_closed_total")
                  .Help("HTTP connections the exporter closed, by why")
                  .Register(registry)),
      open_(BuildGauge()
                .Name("ckptscope_http_connections_open")
                .Help("HTTP connections the exporter holds now")
                .Register(registry)
                .Add({})),
      limit_(BuildGauge()
                 .Name("ckptscope_http_connections_limit")
                 .Help("HTTP connections the exporter holds at most; past it the one idle "
                       "longest is closed")
                 .Register(registry)
                 .Add({})) {
  for (int code : codes) requests_.Add({{"code", std::to_string(code)}});
  for (std::string_view reason : reasons) closed_.Add({{"reason", std::string(reason)}});
}

void HttpMetrics::count_request(int code) {
  requests_.Add({{"code", std::to_string(code)}}).Increment();
}

void HttpMetrics::count_closed(std::string_view reason) {
  closed_.Add({{"reason", std::string(reason)}}).Increment();
}

void HttpMetrics::set_open_connections(size_t open) { open_.Set(static_cast<double>(open)); }

void HttpMetrics::set_connection_limit(size_t limit) { limit_.Set(static_cast<double>(limit)); }

}  // namespace ckpt
