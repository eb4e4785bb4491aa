#include "analysis/fleet/prometheus/prometheus_client.h"

#include <fmt/format.h>

#include "analysis/fleet/prometheus/api_decode.h"
#include "analysis/fleet/prometheus/chunk_plan.h"
#include "analysis/fleet/prometheus/http.h"

namespace ckpt::fleet {
namespace {

std::string format_time(double t_s) { return fmt::format("{:.3f}", t_s); }

std::string strip_trailing_slashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// One request: the answer's "data", or an error naming the endpoint and why.
Expected<nlohmann::json> call(const std::string& base, const std::string& endpoint,
                              const http::Form& form, bool post, double timeout_s) {
  const std::string url = base + endpoint;
  auto response = post ? http::post_form(url, form, timeout_s) : http::get(url, form, timeout_s);
  if (!response) return make_error("Prometheus at " + response.error().message);
  return api::decode_envelope(response->body, response->status, "Prometheus at " + url);
}

}  // namespace

Expected<PrometheusClient> PrometheusClient::connect(const std::string& url,
                                                     const PrometheusOptions& options) {
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    return make_error(
        fmt::format("Prometheus URL \"{}\" must start with http:// or https://", url));
  if (options.max_points_per_chunk < 1 || !(options.timeout_s > 0) ||
      !(options.timeout_s <= kMaxTimeoutSeconds))
    return make_error(
        fmt::format("Prometheus options: points per chunk must be positive and the timeout in "
                    "(0, {}] s",
                    kMaxTimeoutSeconds));
  std::string base = strip_trailing_slashes(url);
  auto data = call(base, "/api/v1/status/buildinfo", {}, false, options.timeout_s);
  if (!data) return data.error();
  if (!data->is_object() || !data->contains("version"))
    return make_error(
        fmt::format("{} answered /api/v1/status/buildinfo without a version: not "
                    "a Prometheus?",
                    base));
  return PrometheusClient(std::move(base), options);
}

Expected<std::vector<Labels>> PrometheusClient::series(const std::vector<std::string>& selectors,
                                                       const TimeRange& range) const {
  http::Form form;
  for (const auto& s : selectors) form.emplace_back("match[]", s);
  form.emplace_back("start", format_time(range.from_s));
  form.emplace_back("end", format_time(range.to_s));
  auto data = call(url_, "/api/v1/series", form, true, options_.timeout_s);
  if (!data) return data.error();
  return api::decode_series_data(*data);
}

Expected<std::vector<std::string>> PrometheusClient::label_values(
    const std::string& name, const std::vector<std::string>& selectors,
    const TimeRange& range) const {
  http::Form form;
  for (const auto& s : selectors) form.emplace_back("match[]", s);
  form.emplace_back("start", format_time(range.from_s));
  form.emplace_back("end", format_time(range.to_s));
  auto data = call(url_, "/api/v1/label/" + name + "/values", form, false, options_.timeout_s);
  if (!data) return data.error();
  return api::decode_label_values_data(*data);
}

Expected<std::map<std::string, std::string>> PrometheusClient::metric_types() const {
  auto data = call(url_, "/api/v1/metadata", {}, false, options_.timeout_s);
  if (!data) return data.error();
  return api::decode_metadata_data(*data);
}

Expected<std::vector<SeriesChunk>> PrometheusClient::query(const std::string& promql,
                                                           double at_s) const {
  auto data = call(url_, "/api/v1/query", {{"query", promql}, {"time", format_time(at_s)}}, true,
                   options_.timeout_s);
  if (!data) return make_error(fmt::format("query {}: {}", promql, data.error().message));
  return api::decode_query_data(*data);
}

Expected<void> PrometheusClient::query_range(
    const std::string& promql, const TimeRange& range, double step_s,
    const std::function<Expected<void>(const SeriesChunk&)>& on_chunk) const {
  auto chunks = plan_chunks(range, step_s, options_.max_points_per_chunk);
  if (!chunks) return chunks.error();
  for (const auto& chunk : *chunks) {
    auto data = call(url_, "/api/v1/query_range",
                     {{"query", promql},
                      {"start", format_time(chunk.from_s)},
                      {"end", format_time(chunk.to_s)},
                      {"step", fmt::format("{}", step_s)}},
                     true, options_.timeout_s);
    if (!data) return make_error(fmt::format("query_range {}: {}", promql, data.error().message));
    auto series = api::decode_query_data(*data);
    if (!series)
      return make_error(fmt::format("query_range {}: {}", promql, series.error().message));
    data->clear();  // one chunk's JSON and its decoded form at a time, at most
    for (const auto& s : *series) {
      if (s.samples.empty()) continue;
      auto handled = on_chunk(s);
      if (!handled) return handled;
    }
  }
  return {};
}

}  // namespace ckpt::fleet
