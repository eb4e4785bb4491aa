// The projection's renderings: JSON (the contract, docs/projection.md), a
// terminal table, Markdown and HTML. Each shows the same figures: the
// forecast per N with its range, beside what the traces measured.
#include <fmt/format.h>

#include "analysis/format.h"
#include "analysis/projection/projection.h"
#include "analysis/report/markdown.h"
#include "analysis/report/svg.h"

namespace ckpt::projection {
namespace {

nlohmann::json range_json(const Range& r) {
  return {{"value", r.value}, {"low", r.low}, {"high", r.high}};
}

nlohmann::json optional_json(const std::optional<uint32_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json sample_json(const Sample& s) {
  return {{"node", s.node},
          {"scale", s.scale},
          {"checkpoint", s.checkpoint},
          {"bytes", s.bytes},
          {"duration_s", static_cast<double>(s.duration_ns) / 1e9},
          {"rpcs", s.rpcs},
          {"rpc_payload_bytes", s.rpc_payload},
          {"rpc_window_s", static_cast<double>(s.rpc_window_ns) / 1e9},
          {"in_flight", s.in_flight},
          {"rpc_execute_ms", s.execute_ms},
          {"rpc_queue_ms", s.queue_ms},
          {"rpc_rtt_ms", s.rtt_ms},
          {"node_delay_ms", s.node_delay_ms},
          {"above_max", s.above_max},
          {"bottleneck", s.bottleneck}};
}

nlohmann::json measured_json(const Measured& m) {
  return {{"nodes", m.nodes},
          {"checkpoints", m.checkpoints},
          {"duration_s", m.duration_s},
          {"aggregate_Bps", m.aggregate_Bps},
          {"rpcs", m.rpcs},
          {"rpc_execute_ms", m.rpc_execute_ms},
          {"rpc_queue_ms", m.rpc_queue_ms},
          {"rpc_rtt_ms", m.rpc_rtt_ms},
          {"rpc_wait_ms", m.rpc_wait_ms},
          {"rpc_wait_rise_ms", m.rpc_wait_rise_ms},
          {"efficiency", m.efficiency},
          {"side", m.side},
          {"bottleneck", m.bottleneck}};
}

nlohmann::json forecast_json(const Forecast& f) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : f.stages)
    stages.push_back({{"stage", s.name}, {"busy_s", range_json(s.busy_s)}});
  return {{"nodes", f.nodes},
          {"duration_s", range_json(f.duration_s)},
          {"aggregate_Bps", range_json(f.aggregate_Bps)},
          {"fraction_of_max", range_json(f.fraction_of_max)},
          {"rpc_execute_ms", range_json(f.rpc_execute_ms)},
          {"rpc_wait_ms", range_json(f.rpc_wait_ms)},
          {"rpc_wait_rise_ms", range_json(f.rpc_wait_rise_ms)},
          {"efficiency", range_json(f.efficiency)},
          {"shared_utilisation", range_json(f.shared_utilisation)},
          {"stages", stages},
          {"side", f.side},
          {"bottleneck", f.bottleneck}};
}

// "3.40 s (3.31-3.52)": a figure and its range, in one unit.
std::string seconds(const Range& r) {
  if (r.high - r.low < 0.005) return fmt::format("{:.2f} s", r.value);
  return fmt::format("{:.2f} s ({:.2f}-{:.2f})", r.value, r.low, r.high);
}
std::string millis(const Range& r) {
  if (r.high - r.low < 0.05) return fmt::format("{:.1f} ms", r.value);
  return fmt::format("{:.1f} ms ({:.1f}-{:.1f})", r.value, r.low, r.high);
}
std::string percent(const Range& r) {
  return r.high - r.low < 0.0005 ? format_percent(r.value)
                                 : fmt::format("{} ({}-{})", format_percent(r.value),
                                               format_percent(r.low), format_percent(r.high));
}

std::string crossover_text(const DirectionProjection& d) {
  std::string out;
  if (d.crossover) {
    out = fmt::format("the shared side holds it back from N={}", *d.crossover);
    if (d.crossover_low != d.crossover || d.crossover_high != d.crossover)
      out += fmt::format(" ({}-{})", d.crossover_low.value_or(0),
                         d.crossover_high ? std::to_string(*d.crossover_high) : "none");
  } else {
    out = fmt::format("the shared side does not hold it back below N={}", kMaxCrossoverNodes);
  }
  out += d.measured_crossover ? fmt::format("; measured: from N={}", *d.measured_crossover)
                              : "; measured: not at the scales traced";
  return out;
}

std::string heading(const DirectionProjection& d) {
  if (!d.supported) return fmt::format("{}: no forecast: {}", to_string(d.direction), d.why);
  return fmt::format(
      "{}: {} per node, {:.1f} RPCs in flight per node; shared maximum {} ({}), {:.2f} ms per "
      "RPC; the node's own time {:.2f} ms per RPC",
      to_string(d.direction), format_bytes(d.bytes_per_node), d.in_flight_per_node,
      format_bandwidth(d.shared_max_Bps.value_or(0)), d.shared_max_source, d.service_ms,
      d.node_delay_ms);
}

std::vector<std::string> forecast_header() {
  return {"N", "duration", "aggregate", "of max", "RPC wait", "efficiency", "side", "bottleneck"};
}
std::vector<std::string> forecast_cells(const Forecast& f) {
  return {std::to_string(f.nodes),
          seconds(f.duration_s),
          format_bandwidth(f.aggregate_Bps.value),
          percent(f.fraction_of_max),
          millis(f.rpc_wait_ms),
          percent(f.efficiency),
          f.side,
          f.bottleneck};
}
std::vector<std::string> measured_header() {
  return {"N",        "checkpoints", "duration", "aggregate",
          "RPC wait", "efficiency",  "side",     "bottleneck"};
}
std::vector<std::string> measured_cells(const Measured& m) {
  return {std::to_string(m.nodes),
          std::to_string(m.checkpoints),
          fmt::format("{:.2f} s", m.duration_s),
          format_bandwidth(m.aggregate_Bps),
          fmt::format("{:.1f} ms", m.rpc_wait_ms),
          format_percent(m.efficiency),
          m.side,
          m.bottleneck};
}

std::string text_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = " ";
    for (size_t i = 0; i < cells.size(); ++i)
      out += " " + cells[i] + std::string(width[i] - cells[i].size() + 1, ' ');
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header);
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string md_table(const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& rows) {
  auto line = [](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const auto& c : cells) out += " " + report::markdown_cell(c) + " |";
    return out + "\n";
  };
  std::string out = line(header) + "|";
  for (size_t i = 0; i < header.size(); ++i) out += i == 0 ? "---:|" : "---|";
  out += "\n";
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string html_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows) {
  std::string out = "<table><tr>";
  for (const auto& h : header) out += "<th>" + report::svg::escape(h) + "</th>";
  out += "</tr>\n";
  for (const auto& r : rows) {
    out += "<tr>";
    for (const auto& c : r) out += "<td>" + report::svg::escape(c) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// `escape` makes outside text (node names in notes) safe for the format.
template <class Table, class Escape>
std::string render_direction(const DirectionProjection& d, Table table, Escape escape,
                             const char* item, const char* para_open, const char* para_close) {
  std::vector<std::vector<std::string>> forecasts;
  for (const auto& f : d.forecasts) forecasts.push_back(forecast_cells(f));
  std::vector<std::vector<std::string>> measured;
  for (const auto& m : d.measured) measured.push_back(measured_cells(m));
  std::string out;
  if (d.supported) {
    out += fmt::format("{}forecast{}", para_open, para_close);
    out += table(forecast_header(), forecasts);
    out += fmt::format("{}{}{}", para_open, escape(crossover_text(d)), para_close);
  }
  if (!measured.empty()) {
    out += fmt::format("{}measured{}", para_open, para_close);
    out += table(measured_header(), measured);
  }
  for (const auto& n : d.notes) out += fmt::format("{}{}{}", item, escape(n), para_close);
  return out;
}

}  // namespace

nlohmann::json projection_json(const Projection& p) {
  nlohmann::json dirs = nlohmann::json::array();
  for (const auto& d : p.directions) {
    nlohmann::json j;
    j["direction"] = to_string(d.direction);
    j["supported"] = d.supported;
    j["why"] = d.why.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.why);
    j["notes"] = d.notes;
    j["bytes_per_node"] = d.bytes_per_node;
    j["in_flight_per_node"] = d.in_flight_per_node;
    j["shared_max_Bps"] =
        d.shared_max_Bps ? nlohmann::json(*d.shared_max_Bps) : nlohmann::json(nullptr);
    j["shared_max_source"] = d.shared_max_source;
    j["service_ms"] = d.service_ms;
    j["node_delay_ms"] = d.node_delay_ms;
    j["shared_stage"] = d.shared_stage;
    j["crossover"] = {{"nodes", optional_json(d.crossover)},
                      {"low", optional_json(d.crossover_low)},
                      {"high", optional_json(d.crossover_high)},
                      {"on_grid", optional_json(d.crossover_on_grid)},
                      {"measured", optional_json(d.measured_crossover)}};
    j["forecasts"] = nlohmann::json::array();
    for (const auto& f : d.forecasts) j["forecasts"].push_back(forecast_json(f));
    j["measured"] = nlohmann::json::array();
    for (const auto& m : d.measured) j["measured"].push_back(measured_json(m));
    j["samples"] = nlohmann::json::array();
    for (const auto& s : d.samples) j["samples"].push_back(sample_json(s));
    dirs.push_back(std::move(j));
  }
  return {{"job", p.job_name}, {"traces", p.traces}, {"nodes", p.nodes}, {"directions", dirs}};
}

std::string projection_table(const Projection& p) {
  std::string out = fmt::format("scale projection{} from {} trace{} (docs/projection.md)\n",
                                p.job_name.empty() ? "" : " of " + p.job_name, p.traces.size(),
                                p.traces.size() == 1 ? "" : "s");
  for (const auto& d : p.directions) {
    out += "\n" + heading(d) + "\n";
    out += render_direction(
        d, text_table, [](const std::string& x) { return x; }, "  note: ", "  ", "\n");
  }
  return out;
}

std::string projection_markdown(const Projection& p) {
  std::string out;
  for (const auto& d : p.directions) {
    out += "### " + report::markdown_cell(heading(d)) + "\n\n";
    out += render_direction(
        d, md_table, [](const std::string& x) { return report::markdown_cell(x); }, "- ", "\n",
        "\n\n");
    out += "\n";
  }
  return out;
}

std::string projection_html_section(const Projection& p) {
  std::string out;
  for (const auto& d : p.directions) {
    out += "<h3>" + report::svg::escape(heading(d)) + "</h3>\n";
    out += render_direction(
        d, html_table, [](const std::string& x) { return report::svg::escape(x); },
        "<p class=\"muted\">", "<p>", "</p>\n");
  }
  return out;
}

std::string projection_html_page(const Projection& p) {
  std::string title = p.job_name.empty() ? "scale projection" : "scale projection: " + p.job_name;
  std::string out = report::svg::page_preamble();
  out += "<title>" + report::svg::escape(title) + "</title>\n<style>" +
         "body{font-family:system-ui,sans-serif;margin:2rem;max-width:72rem}"
         "table{border-collapse:collapse;margin:.5rem 0}td,th{padding:.2rem .6rem;"
         "border-bottom:1px solid #8884;text-align:left}.muted{opacity:.7}"
         "</style></head>\n<body>\n<h1>" +
         report::svg::escape(title) + "</h1>\n";
  out += projection_html_section(p);
  out +=
      "<footer class=\"muted\"><p>The model: docs/projection.md of ckptscope.</p></footer>\n"
      "</body></html>\n";
  return out;
}

}  // namespace ckpt::projection
