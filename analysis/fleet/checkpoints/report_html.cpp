#include <cmath>

#include <fmt/format.h>

#include "analysis/fleet/checkpoints/checkpoints.h"
#include "analysis/fleet/html/fleet_html.h"
#include "analysis/format.h"

namespace ckpt::fleet::checkpoints {
namespace {

std::string percent(double fraction) {
  return std::isfinite(fraction) ? format_percent(fraction) : "–";
}
std::string plain(double v, int digits = 3) {
  return std::isfinite(v) ? fmt::format("{:.{}g}", v, digits) : "–";
}
std::string gbps(double bytes_per_second) {
  return std::isfinite(bytes_per_second) ? fmt::format("{:.1f}", bytes_per_second / 1e9) : "–";
}

html::Series series_of(std::string name, const std::vector<double>& time,
                       const std::vector<double>& values, double divide_by) {
  html::Series s{std::move(name), {}};
  for (size_t k = 0; k < time.size(); ++k)
    if (std::isfinite(values[k])) s.points.emplace_back(time[k], values[k] / divide_by);
  return s;
}

}  // namespace

std::string to_html(const Report& report) {
  const auto& tl = report.timeline;
  html::Page page;
  page.title = "Checkpoint bandwidth against the storage maximum";
  page.subtitle = fmt::format("{} metrics from {}, {} to {} UTC, step {} s", report.source,
                              report.prometheus_url, format_unix_time_utc(report.range.from_s),
                              format_unix_time_utc(report.range.to_s), report.step_s);
  std::vector<std::pair<std::string, std::string>> figures;
  for (const auto& [name, max] :
       {std::pair{"load", &report.load_max}, std::pair{"save", &report.save_max}}) {
    int count = 0;
    double worst_p99 = NAN;
    for (const auto& c : report.checkpoints)
      if (c.direction == name) {
        ++count;
        if (c.fraction_of_max && !(c.fraction_of_max->p99 <= worst_p99))
          worst_p99 = c.fraction_of_max->p99;
      }
    figures.emplace_back(fmt::format("{} checkpoints", name), std::to_string(count));
    figures.emplace_back(fmt::format("{} maximum (GB/s)", name),
                         max->bytes_per_second ? gbps(*max->bytes_per_second) : "unknown");
    figures.emplace_back(fmt::format("highest {} p99", name), percent(worst_p99));
  }
  page.sections.push_back(html::figures(figures));

  const bool fractions = report.load_max.bytes_per_second || report.save_max.bytes_per_second;
  std::vector<html::Series> bandwidth;
  html::LineChartOptions chart;
  chart.x_is_unix_time = true;
  chart.x_label = "time (UTC)";
  if (fractions) {
    if (report.load_max.bytes_per_second)
      bandwidth.push_back(series_of("load (read)", tl.time_unix_s, tl.load_bytes_per_second,
                                    *report.load_max.bytes_per_second));
    if (report.save_max.bytes_per_second)
      bandwidth.push_back(series_of("save (write)", tl.time_unix_s, tl.save_bytes_per_second,
                                    *report.save_max.bytes_per_second));
    chart.title = "Fleet checkpoint bandwidth as a fraction of the storage maximum";
    chart.y_label = "fraction of maximum";
    chart.y_reference_lines = {{1.0, "maximum"}};
  } else {
    bandwidth.push_back(series_of("load (read)", tl.time_unix_s, tl.load_bytes_per_second, 1e9));
    bandwidth.push_back(series_of("save (write)", tl.time_unix_s, tl.save_bytes_per_second, 1e9));
    chart.title = "Fleet checkpoint bandwidth (GB/s; storage maximum unknown)";
    chart.y_label = "GB/s";
  }
  page.sections.push_back(html::section(
      "Bandwidth over time",
      "The fleet's aggregate checkpoint bandwidth per step, against the storage's aggregate "
      "maximum (line at 1.0).",
      html::line_chart(bandwidth, chart)));

  std::vector<std::vector<std::string>> rows;
  for (const auto& c : report.checkpoints) {
    const auto f = c.fraction_of_max.value_or(Percentiles{NAN, NAN, NAN, NAN, NAN});
    rows.push_back(
        {c.direction, c.workload.empty() ? "–" : c.workload, format_unix_time_utc(c.start_unix_s),
         fmt::format("{:.0f}", c.end_unix_s - c.start_unix_s), fmt::format("{:.1f}", c.bytes / 1e9),
         gbps(c.bytes_per_second.mean), percent(f.mean), percent(f.p50), percent(f.p90),
         percent(f.p99), percent(f.max), plain(c.rpc_queue_seconds_per_rpc.during * 1e3),
         plain(c.rpc_queue_seconds_per_rpc.outside * 1e3), plain(c.rpc_backlog.during),
         plain(c.rpc_backlog.outside)});
  }
  page.sections.push_back(html::section(
      "Checkpoints",
      "Per checkpoint: the fleet-aggregate bandwidth's percentiles over the steps it spans, as a "
      "fraction of the maximum; the mean RPC queue time per RPC and the transport backlog during "
      "it and outside all checkpoints.",
      html::table({"direction", "workload", "start (UTC)", "seconds", "GB", "mean GB/s", "mean",
                   "p50", "p90", "p99", "max", "RPC queue ms", "outside", "backlog", "outside"},
                  rows)));

  html::LineChartOptions queue_chart;
  queue_chart.x_is_unix_time = true;
  queue_chart.x_label = "time (UTC)";
  queue_chart.title = "NFS RPC queue time per RPC (ms)";
  queue_chart.y_label = "ms";
  html::LineChartOptions backlog_chart = queue_chart;
  backlog_chart.title = "Transport backlog (RPCs waiting per send)";
  backlog_chart.y_label = "RPCs";
  std::string body =
      html::line_chart({series_of("RPC queue", tl.time_unix_s, tl.rpc_queue_seconds_per_rpc, 1e-3)},
                       queue_chart) +
      html::line_chart({series_of("backlog", tl.time_unix_s, tl.rpc_backlog, 1)}, backlog_chart);
  if (report.source == "ckptscope") {
    html::LineChartOptions tcp_chart = queue_chart;
    tcp_chart.title = "TCP backlog toward the storage, fleet total (MB)";
    tcp_chart.y_label = "MB";
    body += html::line_chart({series_of("TCP backlog", tl.time_unix_s, tl.tcp_backlog_bytes, 1e6)},
                             tcp_chart);
  }
  page.sections.push_back(html::section(
      "RPC queue and transport backlog",
      "Queueing in the NFS client and the transport alongside the bandwidth: rising together with "
      "checkpoints means the path, not the storage, sets the pace.",
      body));
  std::string notes;
  for (const auto& n : report.notes) notes += "<p>" + html::escape(n) + "</p>";
  if (!notes.empty()) page.sections.push_back(html::section("Notes", "", notes));
  return html::render_page(page);
}

}  // namespace ckpt::fleet::checkpoints
