#include <fmt/format.h>

#include "analysis/projection/projection.h"
#include "analysis/report/report.h"
#include "apps/cli/commands.h"
#include "apps/cli/report_io.h"
#include "config/config.h"
#include "json/json_io.h"

namespace ckpt::cli {

int project_command(const ProjectCommandOptions& options) {
  std::string format =
      options.format.empty() ? format_from_path(options.out_path, "table") : options.format;
  if (format == "markdown") format = "md";
  if (format != "table" && format != "json" && format != "html" && format != "md") {
    warn(fmt::format("project: unknown --format '{}' (known: table, json, html, md)",
                     options.format));
    return 2;
  }
  projection::ProjectionOptions po;
  auto nodes = projection::parse_node_counts(options.nodes);
  if (!nodes) {
    warn("project: " + nodes.error().message);
    return 2;
  }
  po.nodes = std::move(*nodes);
  // The maxima: the flags, else --config's storage section.
  if (!options.config_path.empty()) {
    auto config = load_config(options.config_path);
    if (!config) {
      warn("project: --config " + config.error().message);
      return 2;
    }
    const auto& m = config->maxima;
    if (m.storage_write_Bps) {
      po.storage_write_max_Bps = m.storage_write_Bps;
      po.storage_write_max_source = "config:" + options.config_path + " (storage.write_bandwidth)";
    }
    if (m.storage_read_Bps) {
      po.storage_read_max_Bps = m.storage_read_Bps;
      po.storage_read_max_source = "config:" + options.config_path + " (storage.read_bandwidth)";
    }
  }
  auto read_max = bandwidth_flag("project", "--storage-read-max", options.storage_read_max);
  auto write_max = bandwidth_flag("project", "--storage-write-max", options.storage_write_max);
  for (const auto* e : {&read_max, &write_max})
    if (!*e) {
      warn(e->error().message);
      return 2;
    }
  if (*read_max) {
    po.storage_read_max_Bps = *read_max;
    po.storage_read_max_source = "--storage-read-max";
  }
  if (*write_max) {
    po.storage_write_max_Bps = *write_max;
    po.storage_write_max_source = "--storage-write-max";
  }

  auto traces = read_node_traces(options.traces);
  if (!traces) {
    warn(traces.error().message);
    return 1;
  }
  report::ReportOptions ro;
  ro.keep_timelines = false;  // a projection draws none
  auto built = report::build_report(std::move(*traces), ro);
  if (!built) {
    warn("project: " + built.error().message);
    return 1;
  }
  auto p = projection::project(*built, po);
  if (!p) {
    warn(p.error().message);
    return 1;
  }
  std::string text;
  if (format == "json")
    text = dump_json(projection::projection_json(*p), 2) + "\n";
  else if (format == "md")
    text = projection::projection_markdown(*p);
  else if (format == "html")
    text = projection::projection_html_page(*p);
  else
    text = projection::projection_table(*p);
  if (auto written = write_output(options.out_path, text); !written) {
    warn("project: " + written.error().message);
    return 1;
  }
  return 0;
}

}  // namespace ckpt::cli
