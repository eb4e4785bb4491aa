#include "analysis/fleet/attribution/render.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/fleet/html/fleet_html.h"
#include "analysis/format.h"
#include "json/json_io.h"

namespace ckpt::fleet::attribution {

std::string signed_duration(double seconds) {
  const char sign = seconds < 0 ? '-' : '+';
  const auto total = static_cast<long long>(std::llround(std::abs(seconds)));
  const long long h = total / 3600;
  const long long m = total % 3600 / 60;
  const long long s = total % 60;
  if (h > 0) return fmt::format("{}{}h{:02}m{:02}s", sign, h, m, s);
  if (m > 0) return fmt::format("{}{}m{:02}s", sign, m, s);
  return fmt::format("{}{}s", sign, s);
}

namespace {

// The table names a series by what tells it apart on its node: the scrape
// job and dcgm-exporter's host and GPU UUID add only width (--json has all).
std::string short_series_name(const MetricScore& m) {
  Labels shown = m.labels;
  for (const char* label : {"job", "Hostname", "UUID"}) shown.erase(label);
  return shown.empty() ? m.metric : m.metric + format_labels(shown, false);
}

std::string number(double v, int digits = 2) {
  if (!std::isfinite(v)) return "-";
  return fmt::format("{:.{}f}", v, digits);
}

std::string optional_number(const std::optional<double>& v, int digits = 3) {
  return v ? number(*v, digits) : "n/a";
}

std::string sign_text(int sign) { return sign > 0 ? "up" : (sign < 0 ? "down" : "flat"); }

std::string event_title(const FailureEvent& e) {
  return fmt::format("{} {} {} {}", format_unix_time_rfc3339(e.time_unix_s), e.node,
                     e.source == "xid" ? "XID" : "type", e.type);
}

nlohmann::json json_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nullptr; }

nlohmann::json json_or_null(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::string render_table(const Attribution& a, const RenderContext& context) {
  const auto k = context.options.top_k;
  std::string out = fmt::format("{} failures from {} ({}), top {} metrics each\n", a.events.size(),
                                a.event_source, context.prometheus_url, k);
  std::size_t width = 6;
  for (const auto& e : a.events)
    for (std::size_t i = 0; i < e.ranked.size() && i < k; ++i)
      width = std::max(width, short_series_name(e.ranked[i]).size());
  for (const auto& e : a.events) {
    out += fmt::format("\n{}  ({} series, {} scored, {} calibration windows)\n",
                       event_title(e.event), e.series_seen, e.series_scored, e.calibration_windows);
    out += fmt::format("  {:>4}  {:<{}} {:>10} {:>9} {:>6} {:>10} {:>5}\n", "rank", "metric", width,
                       "calibrated", "score", "p", "lead", "sign");
    for (std::size_t i = 0; i < e.ranked.size() && i < k; ++i) {
      const auto& m = e.ranked[i];
      out += fmt::format("  {:>4}  {:<{}} {:>10} {:>9} {:>6} {:>10} {:>5}\n", i + 1,
                         short_series_name(m), width, number(m.calibration.calibrated),
                         number(m.raw.score), number(m.calibration.p_value, 3),
                         signed_duration(m.raw.lead_s), sign_text(m.raw.sign));
    }
  }
  if (!a.standings.empty()) {
    out += fmt::format("\nMetrics in a top {} ({} failures)\n", k, a.dominance.events);
    out += fmt::format("  {:<40} {:>8} {:>7} {:>7} {:>10}\n", "metric", fmt::format("in top {}", k),
                       "share", "rank 1", "mean rank");
    for (const auto& s : a.standings)
      out += fmt::format("  {:<40} {:>8} {:>6.0f}% {:>7} {:>10.1f}\n", s.metric, s.top_k_count,
                         100 * s.top_k_share, s.rank1_count, s.mean_rank);
  }
  if (a.dominance.events > 0) {
    const auto& d = a.dominance;
    out += "\nDominance\n";
    out += fmt::format("  largest share of rank-1 places held by one metric: {:.0f}% ({})\n",
                       100 * d.max_rank1_share, d.max_rank1_metric);
    out += fmt::format("  mean pairwise overlap (Jaccard) of top-{} sets across {} types: {}\n",
                       d.k, d.types.size(), optional_number(d.mean_top_k_overlap));
    out += fmt::format("  Kendall's W across {} failures over the {} metrics common to all: {}\n",
                       d.events, d.kendall_w_metrics, optional_number(d.kendall_w));
  }
  return out;
}

std::string render_json(const Attribution& a, const RenderContext& context) {
  const auto& o = context.options;
  nlohmann::json j;
  j["prometheus"] = context.prometheus_url;
  j["from_unix_s"] = o.range.from_s;
  j["to_unix_s"] = o.range.to_s;
  j["event_source"] = a.event_source;
  j["settings"] = {{"node_label", o.node_label},
                   {"top_k", o.top_k},
                   {"baseline_s", o.windows.baseline_s},
                   {"gap_s", o.windows.gap_s},
                   {"before_s", o.windows.before_s},
                   {"after_s", o.windows.after_s},
                   {"step_s", o.step_s},
                   {"event_step_s", o.event_step_s},
                   {"rate_window_s", o.rate_window_s},
                   {"calibration_windows", o.calibration_windows},
                   {"seed", o.seed}};
  j["events"] = nlohmann::json::array();
  for (const auto& e : a.events) {
    nlohmann::json top = nlohmann::json::array();
    for (std::size_t i = 0; i < e.ranked.size() && i < o.top_k; ++i) {
      const auto& m = e.ranked[i];
      top.push_back({{"rank", i + 1},
                     {"metric", m.metric},
                     {"labels", m.labels},
                     {"through_rate", m.through_rate},
                     {"score", m.raw.score},
                     {"calibrated_score", json_or_null(m.calibration.calibrated)},
                     {"p_value", json_or_null(m.calibration.p_value)},
                     {"lead_s", m.raw.lead_s},
                     {"peak_unix_s", m.raw.peak_time_s},
                     {"sign", m.raw.sign},
                     {"baseline_median", m.raw.baseline_median},
                     {"baseline_scale", m.raw.baseline_scale}});
    }
    j["events"].push_back({{"node", e.event.node},
                           {"time_unix_s", e.event.time_unix_s},
                           {"time", format_unix_time_rfc3339(e.event.time_unix_s)},
                           {"type", e.event.type},
                           {"source", e.event.source},
                           {"where", e.event.where},
                           {"series_seen", e.series_seen},
                           {"series_scored", e.series_scored},
                           {"metrics_ranked", e.ranked.size()},
                           {"calibration_windows", e.calibration_windows},
                           {"top", std::move(top)}});
  }
  j["metrics"] = nlohmann::json::array();
  for (const auto& s : a.standings)
    j["metrics"].push_back({{"metric", s.metric},
                            {"top_k_count", s.top_k_count},
                            {"top_k_share", s.top_k_share},
                            {"rank1_count", s.rank1_count},
                            {"mean_rank", s.mean_rank},
                            {"events_ranked", s.events_ranked}});
  const auto& d = a.dominance;
  nlohmann::json types = nlohmann::json::array();
  for (const auto& t : d.types)
    types.push_back({{"type", t.type}, {"events", t.events}, {"top", t.top}});
  j["dominance"] = {{"events", d.events},
                    {"max_rank1_share", d.max_rank1_share},
                    {"max_rank1_metric", d.max_rank1_metric},
                    {"k", d.k},
                    {"mean_top_k_overlap_jaccard", json_or_null(d.mean_top_k_overlap)},
                    {"types", std::move(types)},
                    {"kendall_w", json_or_null(d.kendall_w)},
                    {"kendall_w_metrics", d.kendall_w_metrics}};
  j["warnings"] = a.warnings;
  return dump_json(j, 2) + "\n";
}

std::string render_html(const Attribution& a, const RenderContext& context) {
  const auto k = context.options.top_k;
  const auto& d = a.dominance;
  html::Page page;
  page.title = "Which metrics move before GPU failures";
  page.subtitle =
      fmt::format("{} failures ({}) from {}, {} to {}", a.events.size(), a.event_source,
                  context.prometheus_url, format_unix_time_rfc3339(context.options.range.from_s),
                  format_unix_time_rfc3339(context.options.range.to_s));
  page.sections.push_back(html::figures({
      {"failures", std::to_string(a.events.size())},
      {"largest rank-1 share", fmt::format("{:.0f}%", 100 * d.max_rank1_share)},
      {fmt::format("top-{} overlap across types (Jaccard)", d.k),
       optional_number(d.mean_top_k_overlap)},
      {"Kendall's W", optional_number(d.kendall_w)},
  }));

  // Failures x metrics: 1 for rank 1, falling to 1/k at rank k; empty outside the top k.
  std::vector<std::string> columns;
  for (const auto& s : a.standings) columns.push_back(s.metric);
  std::vector<std::string> rows;
  std::vector<std::vector<double>> cells;
  for (const auto& e : a.events) {
    rows.push_back(fmt::format("{} {} {}", e.event.node, e.event.type,
                               format_unix_time_rfc3339(e.event.time_unix_s).substr(5, 11)));
    std::vector<double> row(columns.size(), std::nan(""));
    for (std::size_t i = 0; i < e.ranked.size() && i < k; ++i)
      for (std::size_t c = 0; c < columns.size(); ++c)
        if (columns[c] == e.ranked[i].metric)
          row[c] = 1.0 - static_cast<double>(i) / static_cast<double>(k);
    cells.push_back(std::move(row));
  }
  page.sections.push_back(html::section(
      fmt::format("Failures x top-{} metrics", k),
      "Rows: node, type, failure time (UTC). Darker is a higher rank (rank 1 darkest); an empty "
      "cell is outside that failure's top k.",
      html::heat_map(rows, columns, cells, "rank of each metric per failure")));

  std::vector<std::pair<std::string, double>> shares;
  for (const auto& s : a.standings) shares.emplace_back(s.metric, s.top_k_share);
  page.sections.push_back(html::section(
      fmt::format("How often each metric is in a top {}", k),
      "The share of failures whose ranking has the metric in its top k. No bar near 100% means no "
      "single metric is dominant.",
      html::bar_chart(shares, {.title = "share of failures",
                               .value_label = fmt::format("in top {}", k),
                               .values_are_fractions = true})));

  std::vector<std::vector<std::string>> standing_rows;
  for (const auto& s : a.standings)
    standing_rows.push_back(
        {s.metric, std::to_string(s.top_k_count), fmt::format("{:.0f}%", 100 * s.top_k_share),
         std::to_string(s.rank1_count), number(s.mean_rank, 1), std::to_string(s.events_ranked)});
  page.sections.push_back(html::section("Metrics",
                                        "Mean rank is over the failures whose node had the metric.",
                                        html::table({"metric", fmt::format("in top {}", k), "share",
                                                     "rank 1", "mean rank", "failures ranked"},
                                                    standing_rows)));

  std::vector<std::vector<std::string>> type_rows;
  for (const auto& t : d.types)
    type_rows.push_back(
        {t.type, std::to_string(t.events), fmt::format("{}", fmt::join(t.top, ", "))});
  page.sections.push_back(html::section(
      "Dominance",
      fmt::format("Largest share of rank-1 places held by one metric: {:.0f}% ({}). Mean pairwise "
                  "Jaccard overlap of the types' top-{} sets (each type's metrics of smallest "
                  "mean rank): {}. Kendall's W across the {} failures over the {} metrics common "
                  "to all (1 = every failure ranks them alike, 0 = no agreement): {}.",
                  100 * d.max_rank1_share, d.max_rank1_metric, d.k,
                  optional_number(d.mean_top_k_overlap), d.events, d.kendall_w_metrics,
                  optional_number(d.kendall_w)),
      html::table({"type", "failures", fmt::format("top {}", d.k)}, type_rows)));

  for (const auto& e : a.events) {
    std::vector<std::vector<std::string>> top_rows;
    for (std::size_t i = 0; i < e.ranked.size() && i < k; ++i) {
      const auto& m = e.ranked[i];
      top_rows.push_back({std::to_string(i + 1), short_series_name(m),
                          number(m.calibration.calibrated), number(m.raw.score),
                          number(m.calibration.p_value, 3), signed_duration(m.raw.lead_s),
                          sign_text(m.raw.sign)});
    }
    page.sections.push_back(html::section(
        event_title(e.event),
        fmt::format("{} series, {} scored, {} calibration windows. Lead is the failure time minus "
                    "the time of the largest deviation (positive: before the failure).",
                    e.series_seen, e.series_scored, e.calibration_windows),
        html::table({"rank", "metric", "calibrated", "score", "p", "lead", "sign"}, top_rows)));
  }
  if (!a.warnings.empty()) {
    std::vector<std::vector<std::string>> warning_rows;
    for (const auto& w : a.warnings) warning_rows.push_back({w});
    page.sections.push_back(html::section("Warnings", "", html::table({"warning"}, warning_rows)));
  }
  return html::render_page(page);
}

}  // namespace ckpt::fleet::attribution
