#include <cmath>

#include "analysis/fleet/checkpoints/checkpoints.h"

namespace ckpt::fleet::checkpoints {
namespace {

using nlohmann::json;

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json numbers(const std::vector<double>& values) {
  json out = json::array();
  for (double v : values) out.push_back(number(v));
  return out;
}

json to_json(const Percentiles& p) {
  return {{"mean", number(p.mean)},
          {"p50", number(p.p50)},
          {"p90", number(p.p90)},
          {"p99", number(p.p99)},
          {"max", number(p.max)}};
}

json to_json(const DuringOutside& d) {
  return {{"during", number(d.during)}, {"outside", number(d.outside)}};
}

json to_json(const DirectionMax& m) {
  return {{"bytes_per_second", m.bytes_per_second ? json(*m.bytes_per_second) : json(nullptr)},
          {"source", m.source}};
}

}  // namespace

json to_json(const Report& report) {
  json checkpoints = json::array();
  for (const auto& c : report.checkpoints) {
    json j = {
        {"direction", c.direction},
        {"start_unix_s", c.start_unix_s},
        {"end_unix_s", c.end_unix_s},
        {"duration_s", c.end_unix_s - c.start_unix_s},
        {"bytes", c.bytes},
        {"bytes_per_second", to_json(c.bytes_per_second)},
        {"fraction_of_max", c.fraction_of_max ? to_json(*c.fraction_of_max) : json(nullptr)},
        {"rpc_queue_seconds_per_rpc", to_json(c.rpc_queue_seconds_per_rpc)},
        {"rpc_backlog", to_json(c.rpc_backlog)},
        {"tcp_backlog_bytes", c.tcp_backlog_bytes ? to_json(*c.tcp_backlog_bytes) : json(nullptr)}};
    if (report.source == "ckptscope") {
      j["workload"] = c.workload;
      j["nodes"] = c.nodes;
    }
    checkpoints.push_back(std::move(j));
  }
  const auto& tl = report.timeline;
  return {{"prometheus", report.prometheus_url},
          {"source", report.source},
          {"from_unix_s", report.range.from_s},
          {"to_unix_s", report.range.to_s},
          {"step_s", report.step_s},
          {"storage_max", {{"load", to_json(report.load_max)}, {"save", to_json(report.save_max)}}},
          {"checkpoints", std::move(checkpoints)},
          {"notes", report.notes},
          {"timeline",
           {{"time_unix_s", numbers(tl.time_unix_s)},
            {"load_bytes_per_second", numbers(tl.load_bytes_per_second)},
            {"save_bytes_per_second", numbers(tl.save_bytes_per_second)},
            {"rpc_queue_seconds_per_rpc", numbers(tl.rpc_queue_seconds_per_rpc)},
            {"rpc_backlog", numbers(tl.rpc_backlog)},
            {"tcp_backlog_bytes", numbers(tl.tcp_backlog_bytes)}}}};
}

}  // namespace ckpt::fleet::checkpoints
