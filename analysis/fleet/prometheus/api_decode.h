// Decoding Prometheus HTTP API answers (https://prometheus.io/docs/prometheus/latest/querying/api/
// "Format overview" and "Expression query result formats"), apart from the
// HTTP so it can be tested on real answers.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/fleet/prometheus/prometheus_client.h"
#include "common/expected.h"

namespace ckpt::fleet::api {

// The envelope every endpoint answers with: {"status":"success","data":...}
// or {"status":"error","errorType":...,"error":...}. `what` names the request
// (URL and endpoint) in errors; http_status is the answer's status code.
Expected<nlohmann::json> decode_envelope(std::string_view body, long http_status,
                                         const std::string& what);

// A sample value: the API sends floats as strings, "NaN", "+Inf", "-Inf" included.
Expected<double> decode_sample_value(const nlohmann::json& value);

// data of /api/v1/query or /api/v1/query_range: resultType "matrix",
// "vector" or "scalar" as SeriesChunks (a scalar as one chunk without labels).
Expected<std::vector<SeriesChunk>> decode_query_data(const nlohmann::json& data);

// data of /api/v1/series: a list of label sets.
Expected<std::vector<Labels>> decode_series_data(const nlohmann::json& data);
// data of /api/v1/label/NAME/values: a list of strings.
Expected<std::vector<std::string>> decode_label_values_data(const nlohmann::json& data);
// data of /api/v1/metadata: {"name":[{"type":...,"help":...,"unit":...}, ...]}.
Expected<std::map<std::string, std::string>> decode_metadata_data(const nlohmann::json& data);

}  // namespace ckpt::fleet::api
