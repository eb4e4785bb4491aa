#include "analysis/fleet/prometheus/api_decode.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "json/json_io.h"

namespace ckpt::fleet::api {

using nlohmann::json;

Expected<json> decode_envelope(std::string_view body, long http_status, const std::string& what) {
  auto parsed = parse_json(body, what);
  if (!parsed || !parsed->is_object()) {
    // The start of whatever answered (an HTML page, a proxy's error): bytes
    // from the network, made valid UTF-8 for the terminal and any JSON.
    std::string start = valid_utf8(body.substr(0, 120));
    for (char& c : start)
      if (c == '\n' || c == '\r') c = ' ';
    return make_error(fmt::format("{}: HTTP {} and not a Prometheus API answer (not JSON): \"{}\"",
                                  what, http_status, start));
  }
  json& answer = *parsed;
  const auto status = answer.contains("status") && answer["status"].is_string()
                          ? answer["status"].get<std::string>()
                          : std::string();
  if (status == "success" && http_status / 100 == 2) {
    if (!answer.contains("data"))
      return make_error(fmt::format("{}: answer has no \"data\"", what));
    return std::move(answer["data"]);
  }
  // Errors: HTTP 400 bad_data, 422 execution, 503 timeout/canceled, ... with
  // the reason in "error" (API docs, "Format overview").
  std::string reason = answer.contains("error") && answer["error"].is_string()
                           ? answer["error"].get<std::string>()
                           : std::string("no \"error\" field");
  std::string type = answer.contains("errorType") && answer["errorType"].is_string()
                         ? answer["errorType"].get<std::string>()
                         : std::string("?");
  return make_error(
      fmt::format("{}: HTTP {}, Prometheus error ({}): {}", what, http_status, type, reason));
}

Expected<double> decode_sample_value(const json& value) {
  if (value.is_number()) return value.get<double>();
  if (!value.is_string())
    return make_error(
        fmt::format("sample value {} is neither a string nor a number", dump_json(value)));
  const auto& text = value.get_ref<const std::string&>();
  // Go's strconv.FormatFloat(v, 'f', -1, 64) gives "NaN", "+Inf", "-Inf".
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "+Inf" || text == "Inf") return std::numeric_limits<double>::infinity();
  if (text == "-Inf") return -std::numeric_limits<double>::infinity();
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE)
    return make_error(fmt::format("sample value \"{}\" is not a number", text));
  return parsed;
}

namespace {

Expected<Sample> decode_pair(const json& pair) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number())
    return make_error(fmt::format("sample {} is not [time, \"value\"]", dump_json(pair)));
  auto value = decode_sample_value(pair[1]);
  if (!value) return value.error();
  return Sample{pair[0].get<double>(), *value};
}

Expected<Labels> decode_labels(const json& metric) {
  if (!metric.is_object())
    return make_error(fmt::format("label set {} is not an object", dump_json(metric)));
  Labels labels;
  for (const auto& [name, value] : metric.items()) {
    if (!value.is_string())
      return make_error(fmt::format("label {} has a non-string value {}", name, dump_json(value)));
    labels.emplace(name, value.get<std::string>());
  }
  return labels;
}

}  // namespace

Expected<std::vector<SeriesChunk>> decode_query_data(const json& data) {
  if (!data.is_object() || !data.contains("resultType") || !data["resultType"].is_string() ||
      !data.contains("result"))
    return make_error("query answer has no resultType/result");
  const auto type = data["resultType"].get<std::string>();
  const auto& result = data["result"];
  std::vector<SeriesChunk> chunks;
  if (type == "scalar") {
    auto sample = decode_pair(result);
    if (!sample) return sample.error();
    chunks.push_back({{}, {*sample}});
    return chunks;
  }
  if (type != "matrix" && type != "vector")
    return make_error(
        fmt::format("query answer has resultType \"{}\" (expected matrix, "
                    "vector or scalar)",
                    type));
  if (!result.is_array()) return make_error("query answer's result is not a list");
  chunks.reserve(result.size());
  for (const auto& item : result) {
    if (!item.is_object())
      return make_error(fmt::format("query answer's series {} is not an object", dump_json(item)));
    SeriesChunk chunk;
    auto labels = decode_labels(item.value("metric", json::object()));
    if (!labels) return labels.error();
    chunk.labels = std::move(*labels);
    if (type == "vector") {
      auto sample = decode_pair(item.value("value", json()));
      if (!sample) return sample.error();
      chunk.samples.push_back(*sample);
    } else {
      const auto values = item.find("values");
      if (values != item.end()) {
        if (!values->is_array()) return make_error("a matrix series' values is not a list");
        chunk.samples.reserve(values->size());
        for (const auto& pair : *values) {
          auto sample = decode_pair(pair);
          if (!sample) return sample.error();
          chunk.samples.push_back(*sample);
        }
      }
    }
    chunks.push_back(std::move(chunk));
  }
  return chunks;
}

Expected<std::vector<Labels>> decode_series_data(const json& data) {
  if (!data.is_array()) return make_error("series answer is not a list");
  std::vector<Labels> out;
  out.reserve(data.size());
  for (const auto& item : data) {
    auto labels = decode_labels(item);
    if (!labels) return labels.error();
    out.push_back(std::move(*labels));
  }
  return out;
}

Expected<std::vector<std::string>> decode_label_values_data(const json& data) {
  if (!data.is_array()) return make_error("label values answer is not a list");
  std::vector<std::string> out;
  for (const auto& item : data) {
    if (!item.is_string())
      return make_error(fmt::format("label value {} is not a string", dump_json(item)));
    out.push_back(item.get<std::string>());
  }
  return out;
}

Expected<std::map<std::string, std::string>> decode_metadata_data(const json& data) {
  if (!data.is_object()) return make_error("metadata answer is not an object");
  std::map<std::string, std::string> types;
  for (const auto& [name, entries] : data.items()) {
    // One entry per distinct (type, help, unit) among targets: the first type wins.
    if (!entries.is_array() || entries.empty() || !entries[0].is_object()) continue;
    const auto type = entries[0].find("type");
    types[name] = type != entries[0].end() && type->is_string() ? type->get<std::string>()
                                                                : std::string("unknown");
  }
  return types;
}

}  // namespace ckpt::fleet::api
