// A client for Prometheus's HTTP API (https://prometheus.io/docs/prometheus/latest/querying/api/):
// the fleet analyses' only way to read a fleet's metrics. Prometheus stays the
// store and the query engine; nothing here keeps more than one chunk of one
// query in memory.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/expected.h"

namespace ckpt::fleet {

using Labels = std::map<std::string, std::string>;  // including __name__

struct Sample {
  double time_s = 0;  // Unix seconds (the API's own unit)
  double value = 0;   // NaN/Inf as Prometheus sent them
};

// One series' samples from one chunk of a range query, in time order.
struct SeriesChunk {
  Labels labels;
  std::vector<Sample> samples;
};

struct TimeRange {
  double from_s = 0;  // Unix seconds, inclusive
  double to_s = 0;    // inclusive
};

// A day: longer than any Prometheus query may run, and small enough that the
// milliseconds handed to libcurl (a long) cannot overflow.
inline constexpr double kMaxTimeoutSeconds = 86400;

struct PrometheusOptions {
  double timeout_s = 60;  // per HTTP request, in (0, kMaxTimeoutSeconds]
  // The API refuses a range query whose series would exceed 11,000 points
  // (web/api/v1/api.go): chunks are at most this many steps long.
  int max_points_per_chunk = 11000;
};

class PrometheusClient {
 public:
  // Checks that URL (http://host:port, optionally with a path prefix) answers
  // as a Prometheus (/api/v1/status/buildinfo); the error names the URL and
  // why (connection refused, timeout, HTTP status, not a Prometheus).
  static Expected<PrometheusClient> connect(const std::string& url,
                                            const PrometheusOptions& options = {});

  // /api/v1/series: the label sets matching any of the selectors in range.
  Expected<std::vector<Labels>> series(const std::vector<std::string>& selectors,
                                       const TimeRange& range) const;
  // /api/v1/label/NAME/values, optionally restricted by selectors.
  Expected<std::vector<std::string>> label_values(const std::string& name,
                                                  const std::vector<std::string>& selectors,
                                                  const TimeRange& range) const;
  // /api/v1/metadata: metric family name -> type ("counter", "gauge",
  // "histogram", "summary", "unknown", ...).
  Expected<std::map<std::string, std::string>> metric_types() const;
  // /api/v1/query at one time: the instant vector (one sample per series).
  Expected<std::vector<SeriesChunk>> query(const std::string& promql, double at_s) const;
  // /api/v1/query_range over range at step_s, split into chunks of at most
  // max_points_per_chunk steps, so a long range never hits the API's cap and
  // never sits in memory whole: on_chunk gets each series of each chunk, chunks
  // in time order (a series appears once per chunk it has samples in). An
  // error from on_chunk (or the server) stops the query and is returned.
  Expected<void> query_range(
      const std::string& promql, const TimeRange& range, double step_s,
      const std::function<Expected<void>(const SeriesChunk&)>& on_chunk) const;

  [[nodiscard]] const std::string& url() const { return url_; }

 private:
  PrometheusClient(std::string url, PrometheusOptions options)
      : url_(std::move(url)), options_(options) {}
  std::string url_;
  PrometheusOptions options_;
};

// --from/--to values: RFC 3339 / ISO 8601 ("2026-01-31T12:00:00Z", offsets
// allowed, no zone = UTC; parse_iso8601_unix_s), Unix seconds ("1769860800",
// "1769860800.5", "1.7698608e9"; parse_unix_s), or "now" / "now-6h" /
// "now+30m" (now plus or minus a parse_duration_s duration: s, m, h, d, w).
// The error names the value, why, and the forms accepted.
Expected<double> parse_time(const std::string& text, double now_s);

}  // namespace ckpt::fleet
