#include <fmt/format.h>

#include "analysis/projection/projection.h"
#include "analysis/report/report.h"
#include "apps/cli/commands.h"
#include "apps/cli/report_io.h"
#include "json/json_io.h"

namespace ckpt::cli {

int report_command(const ReportCommandOptions& options) {
  std::string format =
      options.format.empty() ? format_from_path(options.out_path, "html") : options.format;
  if (format == "markdown") format = "md";
  if (format != "html" && format != "md" && format != "json") {
    warn(fmt::format("report: unknown --format '{}' (known: html, md, json)", options.format));
    return 2;
  }
  report::ReportOptions ro;
  ro.keep_timelines = false;  // each built as the rendering reaches its checkpoint
  auto read_max = bandwidth_flag("report", "--storage-read-max", options.storage_read_max);
  auto write_max = bandwidth_flag("report", "--storage-write-max", options.storage_write_max);
  for (const auto* e : {&read_max, &write_max})
    if (!*e) {
      warn(e->error().message);
      return 2;
    }
  ro.storage_read_max_Bps = *read_max;
  ro.storage_write_max_Bps = *write_max;
  projection::ProjectionOptions po;
  if (!options.project.empty()) {
    auto nodes = projection::parse_node_counts(options.project);
    if (!nodes) {
      warn("report: --project " + nodes.error().message);
      return 2;
    }
    po.nodes = std::move(*nodes);
    po.storage_read_max_Bps = *read_max;
    po.storage_write_max_Bps = *write_max;
  }

  auto traces = read_node_traces(options.traces);
  if (!traces) {
    warn(traces.error().message);
    return 1;
  }
  auto built = report::build_report(std::move(*traces), ro);
  if (!built) {
    warn(built.error().message);
    return 1;
  }
  std::optional<projection::Projection> projected;
  if (!po.nodes.empty()) {
    auto p = projection::project(*built, po);
    if (!p) {
      warn("report: --project: " + p.error().message);
      return 1;
    }
    projected = std::move(*p);
    built->extra_sections.push_back({"projection", "Scale projection",
                                     projection::projection_html_section(*projected),
                                     projection::projection_markdown(*projected)});
  }
  // HTML and JSON are written as they are made, a checkpoint at a time:
  // for a long job they are the size of the trace or more (issue 36).
  Expected<void> written;
  if (format == "json") {
    nlohmann::json extra = nlohmann::json::object();
    if (projected) extra["projection"] = projection::projection_json(*projected);
    written = write_output_pieces(options.out_path, [&](const report::TextSink& sink) {
      report::write_report_json(*built, extra, sink);
    });
  } else if (format == "md") {
    written = write_output(options.out_path, report::report_markdown(*built));
  } else {
    written = write_output_pieces(options.out_path, [&](const report::TextSink& sink) {
      report::write_report_html(*built, sink);
    });
  }
  if (!written) {
    warn("report: " + written.error().message);
    return 1;
  }
  return 0;
}

}  // namespace ckpt::cli
