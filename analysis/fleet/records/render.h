// What `fleet exclusions` and `fleet retries` print: a table for people,
// JSON for scripts (the keys in docs/fleet/records.md are a contract:
// extended, never renamed) and an --html page with the charts.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/fleet/records/statistics.h"

namespace ckpt::fleet::records {

nlohmann::json exclusions_json(const ExclusionStats& stats);
// top_n: node rows shown (the JSON and the page list every node).
std::string exclusions_table(const ExclusionStats& stats, int top_n);
std::string exclusions_html(const ExclusionStats& stats, const std::string& inputs, int top_n);

nlohmann::json retries_json(const RetryStats& stats);
std::string retries_table(const RetryStats& stats, int chains_shown);
std::string retries_html(const RetryStats& stats, const std::string& inputs);

}  // namespace ckpt::fleet::records
